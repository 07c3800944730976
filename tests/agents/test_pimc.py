"""PIMC search bot (agents/pimc.py): no peeking, legal actions, strength, consistent sampling."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from craits.agents import search_sampling
from craits.agents.arena import engine_table
from craits.agents.base import RandomAgent
from craits.agents.heuristics import ExpertAgent
from craits.agents.hidden_cards import UNLIMITED, sample_hidden
from craits.agents.pimc import DEFAULT_SIMULATIONS, ENDGAME, PIMCAgent
from craits.agents.rollout_policy import greedy_rollout_action
from craits.agents.specs import make_agent
from craits_env import (
    DECLARE,
    DRAW,
    NUM_CARDS,
    Game,
    Phase,
    Rules,
    parse_card,
)
from craits_env.cards import RANK_OF, SUIT_OF, Rank
from craits_env.public import PublicGame, SeatView
from craits_env.testing.scenario import stacked_game

from ..craits_env.test_env import hide

_HEARTS = 2


def searched_positions(
    game: Game, r: random.Random, limit: int
) -> Iterator[tuple[PublicGame, SeatView]]:
    """Positions of a random game where PIMC really searches (several actions, no declaration)."""
    pub = PublicGame(game)
    found = 0
    while not game.is_over and found < limit:
        seat = game.current_player
        legal = game.legal_actions()
        if len(legal) > 1 and game.phase != Phase.DECLARE:
            found += 1
            yield pub, pub.view(seat)
        pub.apply(legal[r.randrange(len(legal))])


# ---------------------------------------------------------------------------- no peeking


@pytest.mark.slow
def test_decision_does_not_depend_on_the_hidden_cards() -> None:
    """Permuting the opponents' hands and the stock never changes PIMC's values or choice."""
    r = random.Random(7)
    rng = np.random.default_rng(7)
    checked = 0
    for n, rules in ((2, Rules()), (3, Rules(face_cards=True)), (4, Rules(hand_sizes=(5, 2)))):
        game = Game(n, rules, seed=n)
        for pub, view in searched_positions(game, r, 40):
            seat = view.seat
            other = PublicGame(hide(game, seat, rng))
            other.tracker = pub.tracker  # the same public record (draw counters are public)
            seen = other.view(seat)
            assert seen.unseen_cards() == view.unseen_cards()
            seed = r.randrange(1 << 30)
            values = PIMCAgent(9, seed=seed).action_values(view)
            assert PIMCAgent(9, seed=seed).action_values(seen) == values
            assert PIMCAgent(9, seed=seed).act(seen) == PIMCAgent(9, seed=seed).act(view)
            for kw in ({"endgame": None}, {"prior": None}):  # search at every decision
                bot_a, bot_b = PIMCAgent(9, seed=seed, **kw), PIMCAgent(9, seed=seed, **kw)
                assert bot_a.act(seen) == bot_b.act(view)
            checked += 1
    assert checked == 120


def test_swapped_deals_give_the_same_first_decision() -> None:
    """Two stacked deals differing only in which opponent holds which cards (and the stock)."""
    hands = [["7c", "Kd", "8h", "5c"], ["2d", "3s", "Qh", "Tc"], ["4h", "9s", "Ac", "6d"]]
    swapped = [hands[0], hands[2], hands[1]]
    a = PublicGame(stacked_game(hands, starter="Jc", stock=["5s", "5h"], dealer=2))
    b = PublicGame(stacked_game(swapped, starter="Jc", stock=["5h", "5s"], dealer=2))
    assert a.game.current_player == b.game.current_player == 0  # a J has no function here
    assert len(a.view(0).legal_actions) == 3
    for seed in range(20):
        assert PIMCAgent(16, seed=seed).act(a.view(0)) == PIMCAgent(16, seed=seed).act(b.view(0))


@pytest.mark.slow
def test_plays_the_expert_move_before_the_endgame_and_searches_in_it() -> None:
    """Until some player holds ENDGAME cards or fewer the prior's move is played without
    search; from then on every decision with a choice is searched."""
    r = random.Random(11)
    before = during = 0
    for seed in range(4):
        game = Game(4, Rules(hand_sizes=(8, 5)), seed=seed)
        for _, view in searched_positions(game, r, 200):
            bot = PIMCAgent(8, seed=seed)
            searched: list[int] = []
            search = bot._search

            def spy(v: SeatView, legal: list[int], log: list[int] = searched) -> int:
                log.append(1)
                return search(v, legal)  # noqa: B023 (called at once, in this iteration)

            bot._search = spy  # type: ignore[method-assign]
            action = bot.act(view)
            if min(view.hand_sizes) > ENDGAME:
                assert action == ExpertAgent().act(view) and not searched
                before += 1
            else:
                assert searched and action in view.legal_actions
                during += 1
    assert before > 50 and during > 20, (before, during)


def test_without_prior_the_rollout_choice_is_the_default() -> None:
    """``prior=None``: one sample means no search, so the rollout policy's move is played."""
    game = Game(3, Rules(hand_sizes=(6,)), seed=5)
    for _, view in searched_positions(game, random.Random(1), 30):
        root = view.determinize(
            *sample_hidden(
                view.unseen_cards(),
                {s: k for s, k in enumerate(view.hand_sizes) if s != view.seat},
                {},
                np.random.default_rng(0),
            ),
            np.random.default_rng(0),
        )
        bot = PIMCAgent(1, prior=None)  # 1 rollout: a single sample, no search
        assert bot.act(view) == greedy_rollout_action(root)


def test_bad_prior_is_refused() -> None:
    with pytest.raises(ValueError, match="prior"):
        PIMCAgent(4, prior="tactician")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- legality

_CONFIGS: list[tuple[int, dict[str, Any]]] = [
    (2, {}),
    (2, {"remove_kings_queens": True, "face_cards": True}),
    (3, {"voluntary_draw": True}),
    (3, {"seven_hits": "next_but_one", "idiot_penalty": "draw_one"}),
    (4, {"face_cards": True, "count_out_can_return": True}),
    (4, {"one_card_on_deal": True, "dealer_follows_direction": True}),
    (5, {"one_card": "auto", "going_out_bonus": True, "punitive_threes": True}),
    (6, {"face_cards": True, "voluntary_draw": True}),
]


@pytest.mark.parametrize(("n", "options"), _CONFIGS)
def test_only_legal_actions(n: int, options: dict[str, Any]) -> None:
    rules = Rules(hand_sizes=(5, 1, 3), **options)
    r = random.Random(n)
    for seed in range(3):
        game = Game(n, rules, seed=seed)
        pub = PublicGame(game)
        bot = PIMCAgent(6, seed=seed)
        while not game.is_over:
            seat = game.current_player
            legal = game.legal_actions()
            if seat == seed % n:
                action = bot.act(pub.view(seat))
                assert type(action) is int and action in legal
                if game.phase == Phase.DECLARE:
                    assert action == DECLARE
            else:
                action = legal[r.randrange(len(legal))]
            pub.apply(action)


def test_spec_strings_and_arguments() -> None:
    bot = make_agent("pimc", seed=1)
    assert isinstance(bot, PIMCAgent) and bot.simulations == DEFAULT_SIMULATIONS
    bot = make_agent("pimc:8", seed=1)
    assert isinstance(bot, PIMCAgent) and bot.simulations == 8 and bot.name == "pimc:8"
    for bad in ("pimc:x", "pimc:0", "pimc:-3"):
        with pytest.raises(ValueError, match="pimc"):
            make_agent(bad)
    mask = np.zeros(59, np.int8)
    mask[[3, 5]] = 1
    with pytest.raises(TypeError, match="SeatView"):
        PIMCAgent(4).act({"observation": np.zeros(3), "action_mask": mask})


def test_same_seed_same_choices_and_reset() -> None:
    game = Game(3, Rules(hand_sizes=(6,)), seed=3)
    positions = list(searched_positions(game.clone(), random.Random(0), 1))
    view = positions[0][1]
    a, b = PIMCAgent(12, seed=5), PIMCAgent(12, seed=6)
    first = a.action_values(view)
    b.reset(5)
    assert b.action_values(view) == first


# ---------------------------------------------------------------------------- strength


def duplicate_margin(hero: Any, opponent: Any, deals: int) -> float:
    """Mean over one-hand duplicate deals (2 players, both seatings, hand sizes 8 … 1) of the
    hero's hand points minus the opponent's: negative means the hero is better."""
    diffs = []
    for deal in range(deals):
        rules = Rules(hand_sizes=(8 - deal % 8,))
        for hero_seat in (0, 1):
            game = Game(2, rules, seed=9000 + deal, dealer=0)
            pub = PublicGame(game)
            hero.reset(deal)
            opponent.reset(deal)
            seats = [hero, opponent] if hero_seat == 0 else [opponent, hero]
            engine_table(game, seats, public=pub).run()  # the arena
            points = game.hand_points[0]
            diffs.append(points[hero_seat] - points[1 - hero_seat])
    return float(np.mean(diffs))


def test_beats_random_clearly() -> None:
    margin = duplicate_margin(PIMCAgent(16), RandomAgent(), deals=40)
    assert margin < -15, margin


@pytest.mark.slow
def test_beats_greedy_clearly() -> None:
    greedy = make_agent("greedy")
    baseline = duplicate_margin(greedy, RandomAgent(), deals=8)  # the opponent is no dummy
    assert baseline < -10, baseline
    margin = duplicate_margin(PIMCAgent(32), greedy, deals=160)
    assert margin < -5, margin


# ---------------------------------------------------------------------------- sampling


def _count(cards: list[int], pred: Any) -> int:
    return sum(1 for c in cards if pred(c))


def test_sampler_respects_voids_and_deals_exactly_the_unseen_cards() -> None:
    unseen = list(range(NUM_CARDS))[:40]  # hearts are 26-38
    sizes = {1: 6, 2: 5, 3: 7}
    no = [UNLIMITED] * 6
    caps = {
        1: [no[0], no[1], 0, no[3], 0, no[5]],  # no heart, no 8 or 9
        2: [no[0], no[1], 1, no[3], no[4], 0],  # at most one heart, no ace or two
        3: no,
    }
    rng = np.random.default_rng(3)
    hearts_seen_by = {2: 0, 3: 0}
    for _ in range(500):
        hands, stock = sample_hidden(unseen, sizes, caps, rng)
        assert sorted([*stock, *(c for h in hands.values() for c in h)]) == unseen
        assert {s: len(h) for s, h in hands.items()} == sizes
        assert _count(hands[1], lambda c: SUIT_OF[c] == _HEARTS) == 0
        assert _count(hands[1], lambda c: RANK_OF[c] in (Rank.EIGHT, Rank.NINE)) == 0
        assert _count(hands[2], lambda c: SUIT_OF[c] == _HEARTS) <= 1
        assert _count(hands[2], lambda c: RANK_OF[c] in (Rank.ACE, Rank.TWO)) == 0
        for s in (2, 3):
            hearts_seen_by[s] += _count(hands[s], lambda c: SUIT_OF[c] == _HEARTS)
    assert hearts_seen_by[2] > 0 and hearts_seen_by[3] > 0  # caps bound, they do not forbid


def test_sampler_falls_back_when_the_caps_cannot_be_met() -> None:
    unseen = [parse_card(c) for c in ("Ah", "2h", "3h", "4h")]
    caps = {1: [UNLIMITED, UNLIMITED, 0, UNLIMITED, UNLIMITED, UNLIMITED]}
    hands, stock = sample_hidden(unseen, {1: 3}, caps, np.random.default_rng(0))
    assert len(hands[1]) == 3 and sorted(hands[1] + stock) == unseen


def test_determinizations_respect_the_tracker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Player 1 draws on 3h (no heart, no 8 or 9): in every sample it holds at most the one
    card it drew since among hearts, 8s and 9s."""
    g = stacked_game(
        [["Kh", "Qh", "4d"], ["2c", "Kc", "Ts"]], starter="3h", stock=["5s", "6d", "7c"], dealer=0
    )
    pub = PublicGame(g)
    pub.apply(DRAW)
    assert pub.tracker.void_draws(1, _HEARTS) == 1 and g.current_player == 0
    samples: list[list[int]] = []
    real = search_sampling.compiled_samples

    def recording(*args: Any) -> np.ndarray:
        rows = real(*args)
        samples.extend(row[:4] for row in rows.tolist())  # seat 1's hand, then the stock
        return rows

    monkeypatch.setattr(search_sampling, "compiled_samples", recording)
    PIMCAgent(400, seed=0).act(pub.view(0))
    assert len(samples) == 200  # two legal plays (Kh, Qh)
    for hand in samples:
        assert len(hand) == 4
        hearts = _count(hand, lambda c: SUIT_OF[c] == _HEARTS)
        wild = _count(hand, lambda c: RANK_OF[c] in (Rank.EIGHT, Rank.NINE))
        assert (
            hearts <= 1
            and wild <= 1
            and _count(
                hand, lambda c: SUIT_OF[c] == _HEARTS or RANK_OF[c] in (Rank.EIGHT, Rank.NINE)
            )
            <= 1
        )


def test_the_decision_hash_repeats_and_tells_play_apart() -> None:
    """``experiments/decision_hash.py``, the proof a searcher's refactor plays alike: the same
    games give the same hash; another agent's moves another (the spec's name is not hashed)."""
    from experiments.decision_hash import decision_hash

    first, spent = decision_hash(["pimc:64"], 1, 900)
    assert decision_hash(["pimc:64"], 1, 900)[0] == first and spent["pimc:64"] > 0
    assert decision_hash(["random"], 1, 900)[0] != first
