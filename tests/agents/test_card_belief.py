"""The belief over hidden cards (craits.agents.belief): consistent, normalised, seeded, blind,
and moved by the evidence the way the opponents' choices point."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from craits.agents.belief import (
    BeliefSample,
    PolicyBelief,
    legal_then,
    past_inferences,
    split_row,
    systematic_resample,
)
from craits.agents.heuristics import ExpertAgent
from craits.agents.hidden_cards import UNLIMITED
from craits.agents.pimc import PIMCAgent
from craits.agents.search_sampling import compiled_samples
from craits.agents.specs import resolve_agent
from craits_env import Game, Rules
from craits_env.actions import CALL_BASE, PHASE_CALL_SUIT
from craits_env.cards import RANK_OF, SUIT_OF, Rank
from craits_env.public import PublicGame, SeatView

RULES = Rules(hand_sizes=(8, 5, 3))
WILD = (Rank.EIGHT, Rank.NINE)
COUNTERS = (Rank.ACE, Rank.TWO)


def endgame_views(games: int, first_seed: int) -> Iterator[tuple[Game, PublicGame, SeatView]]:
    """Seat 0's decisions with a choice near the end of hands of 4 x expert games."""
    agents = [ExpertAgent() for _ in range(4)]
    for g in range(games):
        game = Game(4, RULES, seed=first_seed + g)
        public = PublicGame(game)
        while not game.is_over:
            p = game.current_player
            view = public.view(p)
            if p == 0 and len(view.legal_actions) > 1 and min(view.hand_sizes) <= 3:
                yield game, public, view
            public.apply(agents[p].act(view))


@pytest.mark.slow
def test_every_world_is_consistent_and_the_weights_are_normalised() -> None:
    belief = PolicyBelief("expert")
    rng = np.random.default_rng(3)
    checked = voids = 0
    for _, _, view in endgame_views(3, 41):
        pool = belief.candidates(view, 24, rng)
        assert pool.weights.sum() == pytest.approx(1.0) and (pool.weights >= 0).all()
        assert 1.0 <= pool.ess <= 24.0 + 1e-9
        worlds = belief.sample(view, 8, rng)
        assert worlds.rows.shape == (8, len(view.unseen_cards()))
        assert np.allclose(worlds.weights, 1 / 8)
        for row in worlds.rows.tolist():
            hands, stock = split_row(view, row)
            assert Counter(row) == Counter(view.unseen_cards())  # no seen card, none twice
            for s, cards in hands.items():
                assert len(cards) == view.hand_sizes[s]
                tracker = view.tracker  # a seat that showed it had no card of a kind holds
                bounds = [  # at most as many of them as it has drawn since
                    (tracker.void_draws(s, suit), [c for c in cards if SUIT_OF[c] == suit])
                    for suit in range(4)
                ] + [
                    (tracker.no_wild_draws(s), [c for c in cards if RANK_OF[c] in WILD]),
                    (tracker.no_count_draws(s), [c for c in cards if RANK_OF[c] in COUNTERS]),
                ]
                for cap, held in bounds:
                    if cap is not None and cap < len(cards):
                        assert len(held) <= cap
                        voids += 1
            view.determinize(hands, stock, np.random.default_rng(0))  # it checks the world
            checked += 1
    assert checked > 200 and voids > 20


def test_the_same_seed_gives_the_same_worlds() -> None:
    belief = PolicyBelief("expert")
    for k, (_, _, view) in enumerate(endgame_views(1, 7)):
        if k == 5:
            break
        a = belief.candidates(view, 32, np.random.default_rng(11))
        b = PolicyBelief("expert").candidates(view, 32, np.random.default_rng(11))
        assert np.array_equal(a.rows, b.rows) and np.array_equal(a.weights, b.weights)
        c = belief.sample(view, 8, np.random.default_rng(11))
        assert np.array_equal(c.rows, belief.sample(view, 8, np.random.default_rng(11)).rows)


@pytest.mark.slow
def test_permuting_the_hidden_cards_changes_nothing() -> None:
    """Blindness: the same public history over another deal of the hidden cards (opponents'
    hands and the stock permuted) gives the same candidates, weights and resampled worlds."""
    belief = PolicyBelief("expert")
    perm = np.random.default_rng(5)
    compared = informative = 0
    for game, public, view in endgame_views(2, 19):
        unseen = view.unseen_cards()
        shuffled = [int(c) for c in perm.permutation(unseen)]
        hands, stock = split_row(view, shuffled)
        other_game = view.determinize(hands, stock, np.random.default_rng(0))
        other = PublicGame(other_game)
        other.tracker = public.tracker.copy_for(other_game)
        other_view = other.view(view.seat)
        assert other_view.hand == view.hand and other_game.hands != game.hands
        a = belief.candidates(view, 16, np.random.default_rng(2))
        b = belief.candidates(other_view, 16, np.random.default_rng(2))
        assert np.array_equal(a.rows, b.rows) and np.array_equal(a.weights, b.weights)
        compared += 1
        informative += bool(a.weights.max() > a.weights.min())
    assert compared > 25 and informative > 10


@pytest.mark.slow
@pytest.mark.parametrize("players,voluntary", [(4, False), (3, False), (2, True)])
def test_the_past_inferences_are_what_the_tracker_knew_at_each_decision(
    players: int, voluntary: bool
) -> None:
    """Rebuilt from the decisions before it, the inferences at every decision of a hand are
    the live tracker's at that moment (void suits, no 8 or 9, no ace or two and the draws
    since), over whole random games, however the hand went on."""
    rules = Rules(voluntary_draw=voluntary, hand_sizes=(8, 6, 4))
    rng = np.random.default_rng(players)
    checked = known = 0
    for g in range(8):
        game = Game(players, rules, seed=4100 + g)
        public = PublicGame(game)
        live: list[tuple] = []  # the tracker's answers at each decision of the hand
        while not game.is_over:
            tracker = public.tracker
            steps = tracker.steps
            assert steps is not None and len(steps) == len(live)
            live.append(inferences(tracker, players))
            legal = game.legal_actions()
            hand = game.hand_index
            public.apply(int(legal[rng.integers(len(legal))]))
            if game.hand_index != hand or game.is_over:  # the hand is over: rebuild it
                rebuilt = past_inferences(steps, players, voluntary)
                assert [inferences(r, players) for r in rebuilt] == live[: len(steps)]
                checked += len(steps)
                known += sum(any(x is not None for y in a for x in (*y[0], *y[1:])) for a in live)
                live = []
    assert checked > 1000
    assert known == 0 if voluntary else known > 200


def inferences(tracker: object, players: int) -> tuple:
    t: Any = tracker
    return tuple(
        (tuple(t.void_draws(s, suit) for suit in range(4)), t.no_wild_draws(s), t.no_count_draws(s))
        for s in range(players)
    )


@pytest.mark.slow
def test_the_true_world_is_what_the_model_predicts_and_weighs_more() -> None:
    """With expert opponents, the expert model names the action they took at every decision it
    reads in the true world (its view of the past is exact: the inferences as they stood then),
    and the true world's weight beats the mean candidate's."""
    belief = PolicyBelief("expert")
    rng = np.random.default_rng(8)
    hits = misses = 0
    gains = []
    for game, _, view in endgame_views(3, 77):
        steps = view.tracker.steps
        assert steps is not None
        belief.scorer(view)  # the position the cached choices are for
        for i, step, later in belief.evidence(view, steps):
            hand = sorted(list(game.hands[step.seat]) + later)
            legal = legal_then(step, hand, False)
            assert step.action in legal  # the true world makes every decision legal
            if len(legal) > 1:
                chosen = belief._choose(i, step, hand, legal, view)
                hits += chosen == step.action
                misses += chosen != step.action
        true = belief.log_likelihood(view, {s: list(game.hands[s]) for s in range(1, 4)})
        pool = belief.candidates(view, 64, rng)
        scores = [belief.scorer(view)(row) for row in pool.rows.tolist()]
        gains.append(true - np.log(np.mean(np.exp(scores))))  # against the mean weight
    assert hits > 100 and misses == 0
    assert np.mean(gains) > 1.0  # nats: the true world weighs e times the mean candidate


def test_an_eight_called_against_the_held_suit_moves_the_weight() -> None:
    """Scripted: an opponent played an 8 and called a suit; a world in which it held more of
    another suit than of the called one is weighed less than one in which it held the called
    suit (the expert calls the suit it holds most)."""
    belief = PolicyBelief("expert")
    for game, _, view in endgame_views(6, 101):
        steps = view.tracker.steps
        assert steps is not None
        for _, step, later in belief.evidence(view, steps):
            if step.phase != PHASE_CALL_SUIT or later:  # a suit call, with no play since
                continue
            seat = step.seat
            held = sorted(game.hands[seat])
            if len(held) < 2 or RANK_OF[step.top] != Rank.EIGHT:
                continue
            called = step.action - CALL_BASE
            suits = Counter(SUIT_OF[c] for c in held if RANK_OF[c] not in WILD)
            if suits.get(called, 0) < 2:
                continue
            # A world where its called-suit cards went to the stock, replaced by another suit's.
            hands = {s: list(game.hands[s]) for s in range(1, 4) if s != view.seat}
            stock = list(game.stock)
            others = [c for c in stock if SUIT_OF[c] != called and RANK_OF[c] not in WILD]
            mine = [c for c in held if SUIT_OF[c] == called and RANK_OF[c] not in WILD]
            if len(others) < len(mine) or len({SUIT_OF[c] for c in others[: len(mine)]}) != 1:
                continue
            swapped = [c for c in held if c not in mine] + others[: len(mine)]
            moved = dict(hands) | {seat: swapped}
            true = belief.log_likelihood(view, hands)
            assert belief.log_likelihood(view, moved) < true
            return
    pytest.fail("no suit call to test in these games")


@pytest.mark.slow
def test_without_evidence_the_worlds_are_the_uniform_draw_itself() -> None:
    """Where no opponent decision is read, the belief's worlds are the uniform consistent
    sampler's from the same generator state, so PIMC on the belief searches exactly what PIMC
    on the uniform sampler does (``belief-search`` = ``champion-search`` there); with
    evidence, the draw differs."""
    belief = PolicyBelief("expert", temperature=2.0)
    bare = with_evidence = 0
    for _, _, view in endgame_views(4, 23):
        steps = view.tracker.steps
        assert steps is not None
        sizes, caps, unseen = belief.layout(view)
        worlds = belief.sample(view, 12, np.random.default_rng(4))
        uniform = compiled_samples(12, unseen, sizes, caps, np.random.default_rng(4))
        if belief.evidence(view, steps):
            with_evidence += 1
            assert worlds.candidates == 48
            continue
        bare += 1
        assert np.array_equal(worlds.rows, uniform) and worlds.ess == 12.0
        values = [
            PIMCAgent(24, seed=9, sampler=sampler).action_values(view) for sampler in (belief, None)
        ]
        assert values[0] == values[1]
    assert bare >= 3 and with_evidence > 20


def test_a_sampler_world_that_is_not_the_unseen_cards_is_refused() -> None:
    """The search checks every world a sampler returns (all at once in the compiled path):
    one card duplicated in the last world is a ``ValueError``, before any rollout."""

    class Broken(PolicyBelief):
        def sample(self, view: SeatView, n: int, rng: np.random.Generator) -> BeliefSample:
            worlds = super().sample(view, n, rng)
            rows = worlds.rows.copy()
            rows[-1, 0] = rows[-1, 1]
            return worlds._replace(rows=rows)

    _, _, view = next(endgame_views(1, 5))
    for engine in ("auto", "python"):
        with pytest.raises(ValueError, match="not the unseen cards"):
            PIMCAgent(32, seed=3, sampler=Broken(), engine=engine).act(view)


def test_the_cached_terms_are_the_uncached_weights() -> None:
    """The per-position cache of the decisions' terms changes no weight: a fresh belief per
    world gives each world the log-weight the shared one gives it."""
    belief = PolicyBelief("expert", temperature=2.0)
    rng = np.random.default_rng(6)
    for k, (_, _, view) in enumerate(endgame_views(1, 31)):
        if k == 12:
            break
        pool = belief.candidates(view, 16, rng)
        shared = belief.scorer(view)
        for row in pool.rows.tolist()[:4]:
            assert shared(row) == PolicyBelief("expert", temperature=2.0).scorer(view)(row)


def test_systematic_resampling_keeps_each_weight_to_within_one() -> None:
    weights = np.array([0.5, 0.25, 0.125, 0.125])
    picked = systematic_resample(weights, 8, np.random.default_rng(0))
    assert Counter(picked.tolist()) == {0: 4, 1: 2, 2: 1, 3: 1}


@pytest.mark.slow
def test_belief_search_is_a_distinct_agent_and_the_default_pimc_is_unchanged() -> None:
    agent, identity = resolve_agent("belief-search:64", 0, num_players=4)
    assert isinstance(agent, PIMCAgent) and agent.sampler is not None
    assert identity.startswith("belief-search:64@3+belief(expert,T=2,eps=0.1,x4,<=512)+ppo@")
    _, champion = resolve_agent("champion-search:64", 0, num_players=4)
    assert champion.startswith(f"champion-search:64@{PIMCAgent.version}+ppo@")
    assert PIMCAgent(64).sampler is None and resolve_agent("pimc", 1)[1] == "pimc@2"
    for python in (False, True):  # the compiled and the Python rollouts take its worlds
        search = PIMCAgent(
            32, seed=3, sampler=PolicyBelief(), engine="python" if python else "auto"
        )
        for k, (_, _, view) in enumerate(endgame_views(1, 5)):
            assert search.act(view) in view.legal_actions  # a live view: act while it holds
            if k == 2:
                break


@pytest.mark.slow
def test_the_held_out_tables_deal_nothing_used_in_training_tuning_or_the_benchmark() -> None:
    """The committed held-out tables of the belief's README (one seed): not a training
    config's seed, the training evaluation's, a tuning seed of the belief (555; the
    diagnostics' 31310000 and timing's 31320000 ranges), the distillation's or the information
    ceiling's (3131-3134) nor a benchmark set's; and none of
    their deals is a deal of the training evaluation."""
    import dataclasses
    import json
    from pathlib import Path

    from craits.agents.duplicate_tournament import config_from_dict, deal_cards
    from craits.benchmark.deal_sets import load
    from craits.benchmark.suite import V1
    from craits.training.config import load_config
    from craits.training.evaluate import EVAL_SEED

    root = Path(__file__).parents[2]
    tables = sorted((root / "experiments/results/belief/heldout").glob("*/tournament.json"))
    configs = [config_from_dict(json.loads(p.read_text())) for p in tables]
    assert len(configs) >= 3 and len({(c.seed, c.deals, c.rotations) for c in configs}) == 1
    held = configs[0]
    assert held.deals >= 1000 and held.rotations == "one"
    used = {load_config(p.stem).seed for p in (root / "training/configs").glob("*.toml")}
    used |= {EVAL_SEED, 555, 3131, 3132, 3133, 3134} | {  # 3131-4: distillation, ceiling
        d.seed for t in V1.tables for d in (load("v1", t.full), load("v1", t.search))
    }
    assert held.seed not in used and not 31310000 <= held.seed < 31330000
    ours = {bytes(deal_cards(held, d)[1][0]) for d in range(held.deals)}
    evaluation = dataclasses.replace(held, seed=EVAL_SEED)
    assert not ours & {bytes(deal_cards(evaluation, d)[1][0]) for d in range(300)}


@pytest.mark.slow
def test_the_learned_card_locations_are_marginals_of_the_public_view(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``experiments/card_locations.py``: labels are the true locations (relative seats, then
    the stock), the features never change with the hidden cards of a position (two views of
    the same public history), and the fitted marginals place each unseen card once, fill
    every hand to its size, leave the cards the seat sees out and keep what is proved (an
    opponent holding no card of a suit)."""
    from experiments import card_locations
    from experiments.card_locations import CardModel, collect, features, labels, sinkhorn

    # Its training games are none of the diagnostics' (31310000…) or timing's (31320000…).
    assert card_locations.TRAIN_SEED >= 31_330_000
    x, y = collect(2, card_locations.TRAIN_SEED)
    assert x.shape[0] == y.shape[0] > 100 and x.dtype == np.float32
    assert set(np.unique(y).tolist()) == {-1, 0, 1, 2, 3}

    rng = np.random.default_rng(0)
    hidden = rng.random((4, 3)) + 0.1
    fitted = sinkhorn(hidden, np.array([1.0, 1.0, 2.0]), np.array([1.0, 1.0, 1.0, 1.0]))
    assert np.allclose(fitted.sum(axis=1), 1) and np.allclose(fitted.sum(axis=0), [1, 1, 2])
    hidden[0, 0] = 0.0
    assert sinkhorn(hidden, np.array([1.0, 1.0, 2.0]), np.ones(4))[0, 0] == 0.0

    width, size = 8, x.shape[1]
    model = CardModel(
        [
            (rng.normal(size=(width, size)).astype(np.float32) * 0.1, np.zeros(width, np.float32)),
            (rng.normal(size=(52 * 4, width)).astype(np.float32), np.zeros(52 * 4, np.float32)),
        ]
    )
    learned = card_locations.LearnedBelief(model)
    checked = 0
    for game, public, view in endgame_views(3, 61):
        truth = labels(game, view.seat)
        unseen = view.unseen_cards()
        assert sorted(np.flatnonzero(truth >= 0).tolist()) == sorted(unseen)
        m = model.marginals(view)
        seen = np.setdiff1d(np.arange(52), unseen)
        assert np.allclose(m[unseen].sum(axis=1), 1, atol=1e-6) and not m[seen].any()
        sizes = [k for s, k in enumerate(view.hand_sizes) if s != view.seat]
        assert np.allclose(m.sum(axis=0)[:-1], sizes, atol=1e-3)
        # Blindness: the same public history over another deal of the hidden cards.
        hands, stock = split_row(view, [int(c) for c in rng.permutation(unseen)])
        other_game = view.determinize(hands, stock, np.random.default_rng(0))
        other = PublicGame(other_game)
        other.tracker = public.tracker.copy_for(other_game)
        other_view = other.view(view.seat)
        assert other_game.hands != game.hands
        assert np.array_equal(features(view), features(other_view))
        assert np.array_equal(m, model.marginals(other_view))
        # Its worlds (a search's sampler): consistent, seeded, blind.
        worlds = learned.sample(view, 8, np.random.default_rng(checked))
        assert worlds.rows.shape == (8, len(unseen)) and np.allclose(worlds.weights, 1 / 8)
        assert all(sorted(row) == sorted(unseen) for row in worlds.rows.tolist())
        assert 1 <= worlds.ess <= worlds.candidates == 32
        again = learned.sample(other_view, 8, np.random.default_rng(checked))
        assert np.array_equal(worlds.rows, again.rows)
        checked += 1
        if checked == 1:  # what is proved is kept: the first opponent shown to hold no club
            first = next(s for s in range(4) if s != view.seat)

            def no_club(tracker: Any, seat: int, first: int = first) -> list[int]:
                return [0 if seat == first else UNLIMITED] + [UNLIMITED] * 5

            with monkeypatch.context() as patch:
                patch.setattr(card_locations, "seat_caps", no_club)
                proved = model.marginals(view)
            clubs = [c for c in unseen if SUIT_OF[c] == 0]
            assert clubs and not proved[clubs, 0].any() and proved[clubs, 0].size == len(clubs)
            assert proved[clubs].sum() == pytest.approx(len(clubs)) and m[clubs, 0].any()
    assert checked > 40
