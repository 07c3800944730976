"""The heuristic ladder (agents/heuristics.py): scripted decisions, legality, the ladder.

Scripted positions are stacked decks (:func:`stacked_game`) driven through
:class:`PublicGame`; the bots are asked for the decision the strategy in their
docstring dictates. Then every bot plays thousands of decisions under random
rule options, and a duplicate-style check shows the ladder
``expert < tactician < greedy < random`` on mean game score.

The measurements for tuning the bots (the ladder's margins, their speed) are printed,
not asserted, by ``python experiments/tune_heuristics.py``.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence

import numpy as np
import pytest

from craits.agents.arena import engine_table
from craits.agents.base import Agent
from craits.agents.duplicate_tournament import GamePlayer, TournamentConfig, identify, plan
from craits.agents.heuristics import ExpertAgent, GreedyAgent, TacticianAgent, _shed_values
from craits.agents.specs import known_specs, make_agent
from craits.agents.stats import summarize
from craits_env import CALL_BASE, DECLARE, DRAW, STAY_SILENT, Game, Phase, Rules, parse_card
from craits_env.cards import RANK_OF
from craits_env.public import PublicGame
from craits_env.scoring import score_ranks
from craits_env.testing.scenario import stacked_game

from ..craits_env.test_env import hide

BOTS = ("greedy", "tactician", "expert")
LADDER = ("random", "greedy", "tactician", "expert")


def c(card: str) -> int:
    return parse_card(card)


def call(suit: str) -> int:
    return CALL_BASE + "cdhs".index(suit)


def decide(spec: str, pg: PublicGame) -> int:
    """What ``spec`` plays for the current player of ``pg``."""
    seat = pg.game.current_player
    return make_agent(spec, 0).act(pg.view(seat))


def points(hand: list[int], rules: Rules) -> int:
    return score_ranks([RANK_OF[x] for x in hand], rules)


def public(g: Game, *actions: str | int) -> PublicGame:
    """``g`` driven through a PublicGame, after the scripted ``actions`` (cards or ids)."""
    pg = PublicGame(g)
    for a in actions:
        pg.apply(c(a) if isinstance(a, str) else a)
    return pg


# ---------------------------------------------------------------- the registry


def test_import_registers_the_ladder() -> None:
    assert set(BOTS) <= set(known_specs())
    for spec, cls in zip(BOTS, (GreedyAgent, TacticianAgent, ExpertAgent), strict=True):
        bot = make_agent(spec, 3)
        assert type(bot) is cls and bot.name == spec and isinstance(bot, Agent)
    with pytest.raises(ValueError, match="takes no argument"):
        make_agent("expert:7")


def test_bots_need_the_seat_view() -> None:
    g = Game(4, seed=0)
    obs = PublicGame(g).view(g.current_player)
    for spec in BOTS:
        with pytest.raises(TypeError, match="SeatView"):
            make_agent(spec).act(
                {"observation": obs["observation"], "action_mask": obs["action_mask"]}
            )


# ---------------------------------------------------------------- scripted decisions


def test_greedy_sheds_the_highest_points_and_draws_only_when_stuck() -> None:
    # Seat 1 acts first (dealer 0); on Kh it may play 4h (15), Th (25), Kc (10) or 8s (50).
    g = stacked_game([["2c", "3c", "4c", "5c", "6c"], ["4h", "Th", "Kc", "8s", "Ad"]], starter="Kh")
    pg = public(g)
    assert decide("greedy", pg) == c("8s")
    g = stacked_game([["2c", "3c", "4c", "5c", "6c"], ["4h", "Th", "Kc", "Qd", "Ad"]], starter="Kh")
    assert decide("greedy", public(g)) == c("Th")
    # Nothing playable: the only action is DRAW; with voluntary_draw it still plays.
    g = stacked_game([["2c", "3c"], ["4d", "Js"]], starter="Kh")
    assert decide("greedy", public(g)) == DRAW
    g = stacked_game([["2c", "3c"], ["4h", "Js"]], starter="Kh", voluntary_draw=True)
    assert g.legal_actions() == (c("4h"), DRAW)
    for spec in BOTS:
        assert decide(spec, public(g)) == c("4h")


def test_greedy_calls_the_suit_it_holds_most_of() -> None:
    g = stacked_game([["2c", "3c", "4c", "5c"], ["8h", "Qs", "Js", "Ad"]], starter="Kh")
    pg = public(g, "8h")
    assert pg.game.phase == Phase.CALL_SUIT
    assert decide("greedy", pg) == call("s")  # two spades, one diamond
    g = stacked_game([["2c", "3c", "4c", "5c"], ["9d", "Qh", "Jc", "Ac"]], starter="Kd")
    pg = public(g, "9d")
    assert pg.game.legal_actions() == (call("d"), call("h"))
    assert decide("greedy", pg) == call("h")  # a 9 calls its suit or the same colour's (R4)


def test_every_bot_declares_one_card_and_answers_the_count() -> None:
    g = stacked_game([["2c", "3c"], ["Qh", "Js"]], starter="Kh")
    pg = public(g, "Qh")
    assert pg.game.legal_actions() == (DECLARE, STAY_SILENT)
    for spec in BOTS:
        assert decide(spec, pg) == DECLARE
    # The starter 2 opens the count at seat 1, which holds an ace and a two (R5.2).
    g = stacked_game([["5c", "6c", "7c"], ["Ad", "2s", "Kh"]], starter="2h")
    pg = public(g)
    assert pg.game.phase == Phase.COUNT and pg.game.legal_actions() == (c("Ad"), c("2s"))
    for spec in BOTS:
        assert decide(spec, pg) == c("2s")  # a two first; the ace stays as defence


def test_tactician_aims_a_seven_at_the_next_player_holding_one_card() -> None:
    # Two players; seat 1 goes down to one card (and declares), then seat 0 holds 7h and Th.
    g = stacked_game([["7h", "Th"], ["Qh", "Kc"]], starter="Jh")
    pg = public(g, "Qh", DECLARE)
    assert pg.game.current_player == 0 and pg.view(0).hand_sizes == [2, 1]
    assert decide("greedy", pg) == c("Th")  # 25 points
    assert decide("tactician", pg) == c("7h")  # the next player draws: no going out
    assert decide("expert", pg) == c("7h")


def test_tactician_skips_the_next_player_holding_one_card() -> None:
    # Three players: seats 1 and 2 go down to one card; seat 0 holds 4h and Th.
    g = stacked_game([["4h", "Th"], ["Qh", "2c"], ["Jh", "3c"]], starter="Kh")
    pg = public(g, "Qh", DECLARE, "Jh", DECLARE)
    assert pg.game.current_player == 0 and pg.view(0).hand_sizes == [2, 1, 1]
    assert decide("greedy", pg) == c("Th")
    assert decide("tactician", pg) == c("4h")
    assert decide("expert", pg) == c("4h")


def test_tactician_keeps_an_eight_while_another_card_is_playable() -> None:
    g = stacked_game([["2c", "3c", "4c", "5c"], ["8c", "Th", "5s", "Jd"]], starter="Qh")
    pg = public(g)
    assert decide("greedy", pg) == c("8c")
    assert decide("tactician", pg) == c("Th")
    assert decide("expert", pg) == c("Th")
    # Stuck but for the 8: it plays it.
    g = stacked_game([["2c", "3c", "4c", "5c"], ["8c", "Ks", "5s", "Td"]], starter="Qh")
    assert g.legal_actions() == (c("8c"),)
    assert decide("tactician", public(g)) == c("8c")


def test_tactician_keeps_a_three_that_cancels_a_high_card() -> None:
    # 3h, Ah and Tc: the 3 cancels the ten (R8.3); the ace is the card to shed.
    g = stacked_game([["2c", "4c", "5c"], ["3h", "Ah", "Tc"]], starter="Qh")
    pg = public(g)
    assert decide("greedy", pg) == c("3h")  # 3 points beat 1
    assert decide("tactician", pg) == c("Ah")
    assert decide("expert", pg) == c("Ah")
    # punitive_threes: a 3 cancels no ace nor 8, and alone it costs 100 (R8.4): shed it.
    g = stacked_game([["2c", "4c", "5c"], ["3h", "Ah", "8c"]], starter="Qh", punitive_threes=True)
    assert decide("tactician", public(g)) == c("3h")


def test_tactician_plays_a_six_with_a_follow_up_and_not_without() -> None:
    # 6h then Kh in the same turn (R4); a lone 6 would only bring a draw.
    g = stacked_game([["2c", "4c", "5c"], ["6h", "Kh", "Tc"]], starter="Qh")
    assert decide("tactician", public(g)) == c("6h")
    g = stacked_game([["2c", "4c", "5c"], ["6h", "Jh", "Tc"]], starter="Qh")
    pg = public(g, "6h")
    assert pg.game.legal_actions() == (c("Jh"),) and pg.game.current_player == 1
    g = stacked_game([["2c", "4c", "5c", "7c"], ["6s", "Qh", "Tc", "Jd"]], starter="Qs")
    pg = public(g)
    assert decide("greedy", pg) == c("6s")
    assert decide("tactician", pg) == c("Qh")  # after 6s no spade, 6 or wild: a draw


def test_tactician_starts_the_count_at_a_next_player_short_of_aces_and_twos() -> None:
    # Two players: the next player holds one card (probably no ace or two): 2h over Th.
    g = stacked_game([["2h", "Th"], ["Qh", "Kc"]], starter="Jh")
    pg = public(g, "Qh", DECLARE)
    assert decide("greedy", pg) == c("Th")
    assert decide("tactician", pg) == c("2h")
    # The next player holds six cards: the count would likely come back; Th.
    g = stacked_game(
        [["2h", "Th", "4c", "5c", "6c", "7c", "Jc"], ["Qh", "Kc", "Qc", "Jd", "Js", "Kd", "Ks"]],
        starter="Jh",
    )
    assert decide("tactician", public(g, "Qh")) == c("Th")


def test_tactician_plays_a_king_sequence_only_with_its_follow_ups() -> None:
    # face_cards: a K demands three more cards (R9.3); 4h, 7h, Jh follow it here.
    hands = [["2c", "3c", "4c", "5c", "6c"], ["Kh", "4h", "7h", "Jh", "Qc"]]
    g = stacked_game(hands, starter="Qh", face_cards=True)
    assert decide("greedy", public(g)) == c("7h")
    assert decide("tactician", public(g)) == c("Kh")
    # Only 4h after it: the sequence would end in a draw.
    hands = [["2c", "3c", "4c", "5c", "6c"], ["Kh", "4h", "Tc", "Js", "Qc"]]
    g = stacked_game(hands, starter="Qh", face_cards=True)
    assert decide("tactician", public(g)) != c("Kh")


def test_tactician_keeps_a_wild_as_its_last_card() -> None:
    g = stacked_game([["2c", "4c"], ["9s", "Kh"]], starter="Qh")
    pg = public(g)
    assert decide("greedy", pg) == c("9s")
    assert decide("tactician", pg) == c("Kh")  # the 9 plays next turn whatever the suit


def test_expert_calls_a_suit_the_next_player_is_void_in() -> None:
    # Seat 1 cannot follow the starter Kd and draws (void in diamonds, R3.3); seat 0 plays
    # an 8 and keeps only another 8, so it holds no suit to call for itself.
    g = stacked_game([["8c", "8s"], ["Qh", "3c"]], starter="Kd", stock=["Js"])
    pg = public(g, DRAW, "8c")
    view = pg.view(0)
    assert view.tracker.void_draws(1, 1) == 1 and view.phase == Phase.CALL_SUIT
    assert decide("tactician", pg) == call("c")  # no preference: the first suit
    assert decide("expert", pg) == call("d")


def test_expert_plays_into_the_suit_the_next_player_lacks() -> None:
    # Seat 1 draws on Kd (void in diamonds), seat 0 plays Kh, seat 1 plays Qh:
    # seat 0 holds Qc and Qd, both playable by rank.
    g = stacked_game([["Kh", "Qc", "Qd"], ["Qh", "3c", "3s"]], starter="Kd", stock=["Js"])
    pg = public(g, DRAW, "Kh", "Qh")
    view = pg.view(0)
    assert view.legal_actions == (c("Qc"), c("Qd")) and view.tracker.void_draws(1, 1) == 1
    assert decide("tactician", pg) == c("Qc")  # a tie: the lower card
    assert decide("expert", pg) == c("Qd")


@pytest.mark.slow
def test_decisions_use_only_what_the_seat_may_know() -> None:
    """Permuting the hidden cards (other hands, stock) never changes a bot's decision."""
    r = random.Random(5)
    rng = np.random.default_rng(5)
    bots = {spec: make_agent(spec, 1) for spec in BOTS}
    for seed in range(6):
        g = Game(4, Rules.short_game(face_cards=seed % 2 == 1), seed=seed)
        pg = PublicGame(g)
        while not g.is_over:
            seat = g.current_player
            other = PublicGame(hide(g, seat, rng))
            other.tracker = copy.copy(pg.tracker)
            other.tracker._game = other.game  # same public record, other hidden cards
            for bot in bots.values():
                assert bot.act(pg.view(seat)) == bot.act(other.view(seat))
            pg.apply(r.choice(g.legal_actions()))


# ---------------------------------------------------------------- legality, determinism


@pytest.mark.slow
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"punitive_threes": True},
        {"threes_cancel_eights": True, "three_points": 0},
        {"punitive_threes": True, "threes_cancel_eights": True, "three_points": 7},
    ],
)
def test_shed_values_agree_with_the_scoring(options: dict[str, object]) -> None:
    """The bots' fast hand scoring (R8.2-R8.4) is ``score_ranks`` minus each card."""
    rules = Rules(**options)  # type: ignore[arg-type]
    r = random.Random(2)
    threes = [c("3c"), c("3d"), c("3h"), c("3s")]
    for _ in range(3000):
        hand = sorted(r.choice([r.randrange(52), r.choice(threes)]) for _ in range(r.randint(1, 9)))
        got = _shed_values(hand, sorted(set(hand)), rules)
        for card, value in zip(sorted(set(hand)), got, strict=True):
            rest = hand[:]
            rest.remove(card)
            assert value == points(hand, rules) - points(rest, rules), (hand, card)


def random_rules(r: random.Random, n: int) -> Rules:
    sizes = tuple(r.randint(1, 5) for _ in range(r.randint(1, 3)))
    return Rules(
        hand_sizes=sizes,
        num_decks=r.choice([None, None, 2]),
        dealer_follows_direction=r.random() < 0.3,
        remove_kings_queens=n <= 3 and r.random() < 0.3,
        voluntary_draw=r.random() < 0.2,
        seven_hits=r.choice(["next", "next_but_one"]),
        count_out_can_return=r.random() < 0.3,
        one_card=r.choice(["declare", "declare", "auto", "off"]),
        idiot_penalty=r.choice(["forfeit", "draw_one"]),
        one_card_on_deal=r.random() < 0.3,
        going_out_bonus=r.random() < 0.3,
        threes_cancel_eights=r.random() < 0.3,
        three_points=r.choice([3, 3, 0, 7]),
        punitive_threes=r.random() < 0.3,
        face_cards=r.random() < 0.5,
        hand_decision_limit=r.choice([5000, 5000, 60]),
    )


@pytest.mark.slow
def test_bots_play_only_legal_actions_under_random_options() -> None:
    r = random.Random(11)
    decisions = dict.fromkeys(BOTS, 0)
    games = 0
    while min(decisions.values()) < 10000:
        n = r.randint(2, 10)
        rules = random_rules(r, n)
        try:
            g = Game(n, rules, seed=r.randrange(2**31))
        except ValueError:  # cannot be dealt (R1.5)
            continue
        pg = PublicGame(g)
        specs = [r.choice((*BOTS, "random")) for _ in range(n)]
        seats = [make_agent(spec, r.randrange(100)) for spec in specs]

        def apply(action: int, pg: PublicGame = pg) -> None:
            assert type(action) is int, action
            pg.apply(action)  # the engine refuses an illegal action: IllegalAction

        def count(p: int, action: int, specs: list[str] = specs) -> None:
            if specs[p] in decisions:
                decisions[specs[p]] += 1

        engine_table(g, seats, public=pg, apply=apply, on_move=count, names=specs).run()
        games += 1
    assert games > 20


def test_bots_are_deterministic() -> None:
    def actions(seed: int) -> list[int]:
        g = Game(4, Rules.short_game(face_cards=True), seed=seed)
        bots = [make_agent(spec, seed) for spec in (*BOTS, "greedy")]
        out: list[int] = []
        engine_table(g, bots, on_move=lambda p, a: out.append(a)).run()
        return out

    assert actions(3) == actions(3)


# ---------------------------------------------------------------- the ladder


def ladder(specs: Sequence[str], deals: int, rules: Rules, seed: int = 0) -> dict[str, float]:
    """Each spec's mean game score over ``deals`` duplicate deals, every seat rotation
    (the duplicate tournament core, played in memory)."""
    config = identify(TournamentConfig(tuple(specs), len(specs), deals, seed, rules))
    player = GamePlayer(config)
    games = [player.play(task) for task in plan(config)]
    return {row["spec"]: row["mean_score"] for row in summarize(games, list(specs), seed)["agents"]}


@pytest.mark.slow
def test_the_ladder_holds_in_short_four_player_games() -> None:
    score = ladder(LADDER, 300, Rules.short_game(), seed=1000)
    rnd, greedy, tactician, expert = (score[spec] for spec in LADDER)
    assert expert < tactician < greedy < rnd, (rnd, greedy, tactician, expert)
    assert greedy < rnd - 100 and tactician < greedy - 25
