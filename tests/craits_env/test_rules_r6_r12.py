"""Scripted games for docs/rules.md R6–R12: going out, "one card", scoring, face cards,
shuffle pressure, the snapshot and the decision limit.

Every test plays a stacked deal (``stacked_game``: hands by seat, the starter,
then the stock next-card-first; unlisted cards follow in index order) with moves
by name and asserts exact hands, turns and points, in the dialect of
:mod:`tests.scripting`. Seat 0 deals unless said otherwise, so seat 1 plays first.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from craits_env import DRAW, Game, Rules, parse_action, score_hand
from craits_env.testing.scenario import deal_order, stacked_game

from ..scripting import (
    ALL_CALLS,
    ALL_CARDS,
    act,
    assert_hands,
    legal,
    points,
    sizes,
    turn,
)

# ==================================================================== R6.1 going out


def test_r6_1_last_card_goes_out_and_scores_zero() -> None:
    # R6.1: a played last card without function: its player goes out at once.
    g = stacked_game([["9h"], ["Kc"]], starter="3c")
    act(g, "Kc")
    assert points(g) == [30, 0]
    assert g.snapshot()["current_player"] is None


def test_r6_1_last_five_makes_everyone_draw_before_scoring() -> None:
    # R6.1: the last 5's function applies first: P2 then P0 draw one each (R4 turn order).
    g = stacked_game([["9h"], ["5c"], ["Th"]], starter="3c", stock=["Ad", "Kh"])
    act(g, "5c")
    assert points(g) == [30 + 10, 0, 25 + 1]


def test_r6_1_last_seven_makes_the_next_player_draw() -> None:
    # R6.1: the last 7 makes the next player (P2) draw before the hand is scored.
    g = stacked_game([["9h"], ["7c"], ["Th"]], starter="3c", stock=["5d"])
    act(g, "7c")
    assert points(g) == [30, 0, 25 + 30]


def test_r6_1_nobody_goes_out_on_a_six() -> None:
    # R6.1 / §14.4: a last 6 demands another play; with no card, a DRAW decision follows.
    g = stacked_game([["9h"], ["6c"]], starter="3c", stock=["Qd"])
    act(g, "6c")
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["went_out"]) == (1, "play", [])
    assert g.legal_actions() == legal("draw")
    act(g, "draw")
    assert turn(g) == (0, "play")
    assert_hands(g, {1: ["Qd"]})


def test_r6_1_nobody_goes_out_on_a_face_card_king() -> None:
    # R6.1 / R9.3: with face_cards a last K demands three more cards: a DRAW decision instead.
    g = stacked_game([["9h"], ["Kc"]], starter="3c", stock=["Qd"], face_cards=True)
    act(g, "Kc")
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["went_out"]) == (1, "play", [])
    assert g.legal_actions() == legal("draw")
    act(g, "draw")
    assert g.snapshot()["current_player"] == 0
    assert_hands(g, {1: ["Qd"]})


@pytest.mark.parametrize(
    ("hands", "expected"),
    [
        ([["9h"], ["7c"]], [30 + 10, 0]),  # two players: P0, the next player, draws Qd
        ([["9h"], ["7c"], ["Th"]], [30, 0, 25 + 10]),  # three: P2, the next player
        ([["9h"], ["7c"], ["Th"], ["4h"]], [30, 0, 25, 15 + 10]),  # four: P3, next but one
    ],
)
def test_r6_1_next_but_one_last_seven_never_hits_its_own_player(
    hands: list[list[str]], expected: list[int]
) -> None:
    # R6.1 / R4.3: a next_but_one 7 hits the next player at two or three players and the
    # next but one at four, never its own player: its player goes out on a last 7.
    g = stacked_game(hands, starter="3c", stock=["Qd"], seven_hits="next_but_one")
    act(g, "7c")
    assert g.snapshot()["went_out"] == [1]
    assert points(g) == expected


def test_r6_1_next_seven_with_two_players_goes_out() -> None:
    # R6.1 / R4.3 default "next": the opponent draws, the 7's player goes out.
    g = stacked_game([["9h"], ["7c"]], starter="3c", stock=["Qd"])
    act(g, "7c")
    assert points(g) == [30 + 10, 0]


@pytest.mark.parametrize(
    ("card", "starter", "face_cards", "p0_points"),
    [
        ("4c", "3c", False, 30),
        ("Jc", "3c", True, 30 + 10 + 10),  # P0 draws Kd Qd
        ("Qs", "3s", True, 30 + 10 + 10 + 10 + 25 + 30),  # P0 draws Kd Qd Jd Td 9d
    ],
)
def test_r6_1_skip_or_forfeit_at_two_players_goes_out(
    card: str, starter: str, face_cards: bool, p0_points: int
) -> None:
    # R6.1 / §14.4: a 4, J or Q♠ handing the same player a new turn does not stop them going
    # out: the card is resolved (draws included) and the hand is over.
    g = stacked_game(
        [["9h"], [card]],
        starter=starter,
        stock=["Kd", "Qd", "Jd", "Td", "9d"],
        face_cards=face_cards,
    )
    act(g, card)
    assert points(g) == [p0_points, 0]


def test_r6_1_last_eight_still_calls_a_suit() -> None:
    # R6.1 / R3.4: the suit call of a last 8 is still made, then the player goes out.
    g = stacked_game([["9h"], ["8c"]], starter="3c")
    act(g, "8c")
    assert turn(g) == (1, "call_suit")
    act(g, "call h")
    assert points(g) == [30, 0]


# ==================================================================== R6.2 the count


def test_r6_2_going_out_on_the_two_that_starts_the_count() -> None:
    # R6.2: P1 goes out on the 2 that starts the count; the count goes on to P2.
    g = stacked_game([["9h"], ["2c"], ["Th"]], starter="3c", stock=["Kd", "Qd"])
    act(g, "2c")
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["count"], s["went_out"]) == (2, "count", 2, [1])
    assert g.legal_actions() == legal("draw")
    act(g, "draw")  # P2 takes the count: the hand ends (R5.3, R6.2)
    assert points(g) == [30, 0, 25 + 10 + 10]


def _count_game(**options: object) -> Game:
    # P1 plays Kc; P2 and P0 cannot play and draw; P1 goes out on 2c, starting the count.
    g = stacked_game(
        [["As", "Th"], ["Kc", "2c"], ["Ad", "Ah"]],
        starter="3c",
        stock=["Qd", "Jd", "Kd", "Ks", "Qs", "Js", "Jc"],
        one_card="off",
        **options,
    )
    act(g, "Kc", "draw", "draw", "2c")
    return g


def test_r6_2_count_continues_after_going_out() -> None:
    # R6.2: the count goes on among the players holding cards; P1 is passed over.
    g = _count_game()
    assert g.snapshot()["went_out"] == [1]
    act(g, "Ad", "As")  # P2 (count 3), P0 (count 4)
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["count"]) == (2, "count", 4)  # P1 passed over
    act(g, "Ah")  # P2: count 5
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["count"]) == (0, "count", 5)


def test_r6_2_hand_ends_when_the_count_is_taken() -> None:
    # R6.2: P0 takes the count of 5 (Kd Ks Qs Js Jc); then the hand ends.
    g = _count_game()
    act(g, "Ad", "As", "Ah", "draw")
    # P0: Th Jd + five drawn = 25 + 10 + 50; P2: Qd = 10
    assert points(g) == [85, 0, 10]


def test_r6_2_several_players_out_in_one_count() -> None:
    # R6.2: P1 goes out on the 2, P2 on an ace; P0 takes the count of 3; each out scores 0.
    g = stacked_game([["9h"], ["2c"], ["Ad"]], starter="3c", stock=["Kd", "Qd", "Jd"])
    act(g, "2c", "Ad")
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["count"], s["went_out"]) == (0, "count", 3, [1, 2])
    act(g, "draw")
    assert points(g) == [30 + 30, 0, 0]


def test_r6_2_no_player_holding_a_card_ends_the_hand_at_once() -> None:
    # R6.2: after P0 goes out too, nobody holds a card: the hand ends, nobody takes the count.
    g = stacked_game([["Ad"], ["2c"]], starter="3c", stock=["Kd", "Qd", "Jd"])
    act(g, "2c", "Ad")
    assert points(g) == [0, 0]


def test_r6_2_count_out_can_return_on_the_count_is_taken_by_an_empty_player() -> None:
    # R6.2 option: P1 goes out on 2c, P2 on Ad; P0 plays Ah and still holds cards, so the
    # count reaches P1 (out, but in the rotation), who must take it and is back in the hand.
    # The count ends with P2 still empty: the hand ends, P2 the only one out.
    g = stacked_game(
        [["Ah", "Kh"], ["Qc", "2c"], ["Jc", "Ad"]],
        starter="3c",
        stock=["Td", "Kd", "Qd", "Jd", "9d"],
        one_card="off",
        count_out_can_return=True,
    )
    act(g, "Qc", "Jc", "draw")  # P0 cannot play on Jc and draws Td
    act(g, "2c", "Ad", "Ah")  # count 2, 3, 4
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["count"], s["went_out"]) == (1, "count", 4, [1, 2])
    assert g.legal_actions() == legal("draw")
    act(g, "draw")  # P1 draws Kd Qd Jd 9d
    s = g.snapshot()
    assert s["went_out"] == [2]
    assert_hands(g, {1: ["Kd", "Qd", "Jd", "9d"]})
    assert points(g) == [10 + 25, 10 + 10 + 10 + 30, 0]


@pytest.mark.parametrize("returning", [False, True])
def test_r6_2_nobody_holding_a_card_ends_the_hand_at_once_with_or_without_the_option(
    returning: bool,
) -> None:
    # R6.2: the turned-up 2c starts the count; P1 goes out on As (3), P0 on 2d (5). Nobody
    # holds a card: the hand ends at once, with count_out_can_return too; nobody draws.
    g = stacked_game([["2d"], ["As"]], starter="2c", count_out_can_return=returning)
    stock = g.snapshot()["stock"]
    act(g, "As")
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["count"], s["went_out"]) == (0, "count", 3, [1])
    act(g, "2d")
    s = g.snapshot()
    assert (s["went_out"], s["stock"], s["drawn"]) == ([1, 0], stock, [0, 0])
    assert points(g) == [0, 0]


def _silent_out_in_the_count(**options: object) -> Game:
    # P1 plays 6c leaving 2c and stays silent (R7.1), then goes out on 2c, the 6's extra play:
    # the count starts at 2 with P1's penalty pending. P0 plays Ad (count 3) and declares.
    g = stacked_game(
        [["Ad", "Kh"], ["6c", "2c"]],
        starter="3c",
        stock=["Kd", "Qd", "Jd", "Td", "9d"],
        count_out_can_return=True,
        **options,
    )
    act(g, "6c", "silent", "2c")
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["count"], s["went_out"]) == (0, "count", 2, [1])
    assert s["one_card_penalty_pending"] == [False, True]
    act(g, "Ad", "declare")
    return g


def test_r6_2_count_out_can_return_a_one_card_penalty_brings_a_went_out_player_back() -> None:
    # R6.2 option / R7.1: the count reaches P1 (out, in the rotation) on a penalty turn: P1
    # draws Kd Qd, is back in the hand (leaves went_out) and the count (3) passes on to P0.
    g = _silent_out_in_the_count()
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["count"], s["went_out"]) == (0, "count", 3, [])
    assert s["one_card_penalty_pending"] == [False, False]
    assert_hands(g, {1: ["Kd", "Qd"]})
    act(g, "draw")  # P0 takes the count: Jd Td 9d; nobody is empty, so the hand goes on
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["count"], s["top"]) == (1, "play", 0, "Ad")
    assert (s["went_out"], s["hand_points"]) == ([], [])
    assert_hands(g, {0: ["Kh", "Jd", "Td", "9d"]})
    assert g.legal_actions() == legal("Kd", "Qd")


def test_r6_2_count_out_can_return_a_player_back_by_a_penalty_scores_their_cards() -> None:
    # R6.2 option / R7.1 / R12: the hand is cut off right after P1's penalty draw (decision
    # 5, P0's declaration): P1 is no longer out and scores Kd Qd; P0 scores Kh.
    g = _silent_out_in_the_count(hand_decision_limit=5)
    s = g.snapshot()
    assert s["went_out"] == []
    assert points(g) == [10, 10 + 10]


def _two_player_count_game(**options: object) -> Game:
    # P1 plays Kc, P0 cannot play and draws Qd, P1 goes out on 2c: the count is 2.
    g = stacked_game(
        [["Ad", "Th"], ["Kc", "2c"]],
        starter="3c",
        stock=["Qd", "Jd", "Kd", "Ks"],
        one_card="off",
        **options,
    )
    act(g, "Kc", "draw", "2c")
    return g


def test_r6_2_count_out_can_return_on_the_hand_goes_on() -> None:
    # R6.2 option: P1 takes the count of 3 and is back; nobody is empty, so play resumes (R5.3).
    g = _two_player_count_game(count_out_can_return=True)
    act(g, "Ad")  # P0 plays an ace: count 3
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["count"]) == (1, "count", 3)
    assert g.legal_actions() == legal("draw")
    act(g, "draw")
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["count"]) == (0, "play", 0)
    assert (s["top"], s["active_suit"], s["went_out"]) == ("Ad", "d", [])
    assert_hands(g, {1: ["Jd", "Kd", "Ks"]})


def test_r6_2_count_out_can_return_off_player_passed_over() -> None:
    # R6.2 default, same deal: P1 is passed over, P0 plays again and takes the count of 3.
    g = _two_player_count_game(count_out_can_return=False)
    act(g, "Ad")
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["count"]) == (0, "count", 3)
    act(g, "draw")  # Th Qd + Jd Kd Ks
    assert points(g) == [25 + 10 + 30, 0]


# ==================================================================== R6.3 other endings


def test_r6_3_hand_ends_at_once_at_the_decision_limit() -> None:
    # R6.3 / R12: the decision limit ends the hand at once, even with the count on.
    g = stacked_game(
        [["Ad", "Th"], ["2c", "Kh"]], starter="3c", one_card="off", hand_decision_limit=1
    )
    act(g, "2c")
    assert points(g) == [1 + 25, 10]


def test_r6_3_hand_ends_at_once_when_a_draw_cannot_be_made() -> None:
    # R6.3 / R10.2: stock and discard exhausted: the drawing player takes a pressure, hand over.
    g = _drained([["Js", "Qh", "Ks", "Ac", "Ad"], ["Jh", "Kh", "As", "Ah", "2h"]])
    act(g, "draw")
    s = g.snapshot()
    assert s["phase"] == "game_over"
    assert s["shuffle_pressures"] == [1, 0]


# ==================================================================== R7.1 one card


STOCK = ["Kd", "Qd", "Jd", "Td", "9s", "7s", "6s", "5s", "4s", "3s"]


def _silent_game(p0: list[str], p2: list[str] | None = None, **options: object) -> Game:
    """Three players; P1 holds Kc Qh, so playing Kc leaves one card (R7.1)."""
    return stacked_game(
        [p0, ["Kc", "Qh"], p2 or ["Ad", "Jh"]],
        starter="3c",
        stock=STOCK,
        **options,
    )


def test_r7_1_declare_phase_after_a_play_leaving_one_card() -> None:
    # R7.1 declare: after a play leaving one card, the player chooses DECLARE or STAY SILENT.
    g = _silent_game(["Ah", "Th"])
    act(g, "Kc")
    assert turn(g) == (1, "declare")
    assert g.legal_actions() == legal("declare", "silent")


def test_r7_1_declare_keeps_no_penalty() -> None:
    # R7.1: a declared one card costs nothing; P1 plays normally at the next turn.
    g = _silent_game(["Ah", "Th"])
    act(g, "Kc", "declare", "draw", "draw")  # P2 and P0 cannot play
    s = g.snapshot()
    assert turn(g) == (1, "play")
    assert s["one_card_penalty_pending"] == [False, False, False]
    assert_hands(g, {1: ["Qh"]})


def test_r7_1_stay_silent_draws_two_instead_of_the_next_turn() -> None:
    # R7.1: silence is caught; at P1's next turn P1 draws two and the turn passes to P2.
    g = _silent_game(["Ah", "Th"])
    act(g, "Kc", "silent")
    s = g.snapshot()
    assert s["one_card_penalty_pending"] == [False, True, False]
    assert s["current_player"] == 2
    assert_hands(g, {1: ["Qh"]})  # nothing drawn yet
    act(g, "draw", "draw")  # P2 draws Kd, P0 draws Qd
    s = g.snapshot()
    assert turn(g) == (2, "play")
    assert_hands(g, {1: ["Qh", "Jd", "Td"]})
    assert s["one_card_penalty_pending"] == [False, False, False]


def test_r7_1_four_consumes_the_penalty_turn() -> None:
    # R7.1: a skip (4) that falls on the penalty turn consumes it; the penalty waits.
    g = _silent_game(["4c", "Th"])
    act(g, "Kc", "silent", "draw")  # P2 draws Kd
    act(g, "4c", "declare")  # P0's 4 skips P1
    s = g.snapshot()
    assert s["current_player"] == 2
    assert s["one_card_penalty_pending"] == [False, True, False]
    assert_hands(g, {1: ["Qh"]})
    act(g, "draw", "draw")  # P2 draws Qd, P0 draws Jd; P1's next turn: pays Td 9s
    s = g.snapshot()
    assert s["current_player"] == 2
    assert_hands(g, {1: ["Qh", "Td", "9s"]})
    assert s["one_card_penalty_pending"] == [False, False, False]


@pytest.mark.parametrize(("forfeit_card", "drawn"), [("Jc", 2), ("Qs", 5)])
def test_r7_1_forfeit_consumes_the_penalty_turn(forfeit_card: str, drawn: int) -> None:
    # R7.1 / R9.1 / R9.2: a forfeit (J, Q♠) falling on the penalty turn consumes it.
    g = stacked_game(
        [[forfeit_card, "Th"], ["Qc", "Qh"], ["Ad", "5h"]],
        starter="3c",
        stock=STOCK,
        face_cards=True,
    )
    act(g, "Qc", "silent", "draw")  # P1 silent; P2 draws Kd
    act(g, forfeit_card, "declare")  # P1 draws and forfeits
    s = g.snapshot()
    assert s["current_player"] == 2
    assert s["one_card_penalty_pending"] == [False, True, False]
    assert sizes(g)[1] == 1 + drawn
    act(g, "draw", "draw")  # P2 and P0 draw one each; then P1's new turn: the penalty
    s = g.snapshot()
    assert s["current_player"] == 2
    assert sizes(g)[1] == 1 + drawn + 2
    assert s["one_card_penalty_pending"] == [False, False, False]
    # P1 holds Qh, the forfeit's cards (after P2's Kd) and the penalty (after P2's and P0's draws)
    expected = ["Qh", *STOCK[1 : 1 + drawn], *STOCK[3 + drawn : 5 + drawn]]
    assert_hands(g, {1: expected})


def test_r7_1_four_with_two_players_is_a_new_turn_that_pays() -> None:
    # R7.1 / R4.2: P1's 4 gives P1 a new turn at a two-player table: P1 pays at once.
    g = stacked_game([["Ad", "Jh"], ["4c", "Kh"]], starter="3c", stock=["Kd", "Qd"])
    act(g, "4c", "silent")
    s = g.snapshot()
    assert turn(g) == (0, "play")
    assert_hands(g, [["Ad", "Jh"], ["Kh", "Kd", "Qd"]])
    assert s["one_card_penalty_pending"] == [False, False]


def test_r7_1_six_extra_play_is_not_a_new_turn() -> None:
    # R7.1: the 6's extra play continues the turn: no penalty; P1 then goes out on Kc.
    g = stacked_game([["Ad", "Th"], ["6c", "Kc"]], starter="3c", stock=["Kd", "Qd"])
    act(g, "6c", "silent")
    s = g.snapshot()
    assert turn(g) == (1, "play")
    assert s["one_card_penalty_pending"] == [False, True]
    assert_hands(g, {1: ["Kc"]})
    act(g, "Kc")
    assert points(g) == [26, 0]


def test_r7_1_kings_sequence_is_not_a_new_turn() -> None:
    # R7.1 / R9.3: silence inside a king's sequence; the sequence goes on without a penalty.
    g = stacked_game(
        [["Ad", "Th", "Ah"], ["Kc", "Qc", "Jc"]],
        starter="3c",
        stock=["Kd", "Qd", "5d", "4d"],
        face_cards=True,
    )
    act(g, "Kc", "Qc")  # Qc: first card of the sequence, leaves one card
    assert turn(g) == (1, "declare")
    act(g, "silent")
    assert turn(g) == (1, "play")
    assert_hands(g, {1: ["Jc"]})
    act(g, "Jc")  # second card; no card is left for the third: a DRAW decision
    assert g.legal_actions() == legal("draw")
    act(g, "draw")  # P1 draws Kd, turn passes
    act(g, "draw")  # P0 cannot play: draws Qd; P1's new turn: pays 5d 4d
    s = g.snapshot()
    assert s["current_player"] == 0
    assert_hands(g, {1: ["Kd", "5d", "4d"]})


def test_r7_1_seven_hits_silent_player_who_draws_then_pays() -> None:
    # R7.1: a player hit by a 7 first draws its card (Qd), then pays two (Jd Td) instead of playing.
    g = _silent_game(["7c", "Th"])
    act(g, "Kc", "silent", "draw")  # P2 draws Kd
    act(g, "7c", "declare")
    s = g.snapshot()
    assert turn(g) == (2, "play")
    assert_hands(g, {1: ["Qh", "Qd", "Jd", "Td"], 2: ["Ad", "Jh", "Kd"]})
    assert s["one_card_penalty_pending"] == [False, False, False]


def test_r7_1_penalty_in_the_count_passes_the_count_on() -> None:
    # R7.1: the penalty turn comes in the count: P1 draws two, the count (3) passes on to P2.
    g = _silent_game(["Ac", "Th"], p2=["2c", "Ah"])
    act(g, "Kc", "silent")
    act(g, "2c")  # P2 starts the count, leaving one card: declaration asked in the count too
    assert (g.snapshot()["phase"], g.snapshot()["current_player"]) == ("declare", 2)
    act(g, "declare", "Ac", "declare")  # P0: count 3
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["count"]) == (2, "count", 3)
    assert_hands(g, {1: ["Qh", "Kd", "Qd"]})
    assert s["one_card_penalty_pending"] == [False, False, False]


def test_r7_1_hand_ends_first_no_penalty() -> None:
    # R7.1: P0 goes out before P1's next turn: P1's pending penalty is never paid.
    g = stacked_game([["6c", "Jc"], ["Kc", "Qh"]], starter="3c", stock=["Kd", "Qd"])
    act(g, "Kc", "silent")
    act(g, "6c", "declare", "Jc")
    assert points(g) == [0, 10]


@pytest.mark.parametrize(("eight", "calls"), [("8c", ALL_CALLS), ("9c", legal("call c", "call s"))])
def test_r7_1_suit_call_comes_before_the_declaration(eight: str, calls: tuple[int, ...]) -> None:
    # R3.4 / R7.1 / §14.8: after an 8 or 9: the suit call, the declaration, then the turn.
    g = stacked_game([["Ah", "Th"], [eight, "Qh"], ["Ad", "Jh"]], starter="3c", stock=["Kd", "Qd"])
    act(g, eight)
    assert g.snapshot()["phase"] == "call_suit"
    assert g.legal_actions() == calls
    act(g, "call s")
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["active_suit"]) == (1, "declare", "s")
    act(g, "declare")
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["active_suit"]) == (2, "play", "s")


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_r7_1_one_card_auto_and_off_have_no_declare_phase(mode: str) -> None:
    # R7.1 auto / off: no decision after a play leaving one card, and no penalty later.
    g = _silent_game(["Ah", "Th"], one_card=mode)
    act(g, "Kc")
    assert turn(g) == (2, "play")
    act(g, "draw", "draw")
    s = g.snapshot()
    assert turn(g) == (1, "play")
    assert_hands(g, {1: ["Qh"]})
    assert s["one_card_penalty_pending"] == [False, False, False]


# ==================================================================== R7.2 idiot_penalty


def test_r7_2_draw_one_penalty_is_drawn_before_the_function() -> None:
    # R7.2 draw_one: P1 draws Kd at once, then the 5 makes P2 (Qd) and P0 (Jd) draw.
    g = stacked_game(
        [["Ah", "Th"], ["5c", "Qh"], ["Ad", "Jh"]],
        starter="3c",
        stock=["Kd", "Qd", "Jd", "Td", "9s"],
        idiot_penalty="draw_one",
    )
    act(g, "5c", "silent")
    s = g.snapshot()
    assert_hands(g, [["Ah", "Th", "Jd"], ["Qh", "Kd"], ["Ad", "Jh", "Qd"]])
    assert s["one_card_penalty_pending"] == [False, False, False]
    assert s["current_player"] == 2


def test_r7_2_draw_one_keeps_the_turn() -> None:
    # R7.2 draw_one: no forfeited turn afterwards: P1 plays at the next turn.
    g = _silent_game(["Ah", "Th"], idiot_penalty="draw_one")
    act(g, "Kc", "silent")  # P1 draws Kd at once
    assert_hands(g, {1: ["Qh", "Kd"]})
    act(g, "draw", "draw")  # P2, P0
    assert turn(g) == (1, "play")
    assert_hands(g, {1: ["Qh", "Kd"]})


def test_r7_2_forfeit_default_draws_nothing_at_once() -> None:
    # R7.2 default forfeit: the silence costs nothing immediately.
    g = _silent_game(["Ah", "Th"], idiot_penalty="forfeit")
    act(g, "Kc", "silent")
    assert_hands(g, {1: ["Qh"]})
    assert g.snapshot()["one_card_penalty_pending"] == [False, True, False]


# ==================================================================== R7.3 one card on the deal


def _one_card_deal(**options: object) -> Game:
    # Dealer P1: the deal goes P2, P0, P1; the starter 7c will hit P2.
    return stacked_game(
        [["Qh"], ["Jd"], ["Kc"]], starter="7c", stock=["Ad", "Kd", "Qd"], dealer=1, **options
    )


def test_r7_3_one_card_on_deal_declarations_in_deal_order() -> None:
    # R7.3: every player declares after the deal, left of the dealer first, the dealer last;
    # the starter is turned but its function (7: P2 draws) waits for the declarations.
    g = _one_card_deal(one_card_on_deal=True)
    order = []
    for move in ("declare", "silent", "declare"):
        s = g.snapshot()
        assert s["phase"] == "declare"
        assert s["top"] == "7c"
        assert_hands(g, {2: ["Kc"]})  # the 7 has not hit yet
        order.append(s["current_player"])
        act(g, move)
    assert order == [2, 0, 1]
    s = g.snapshot()
    assert turn(g) == (2, "play")
    assert_hands(g, {2: ["Kc", "Ad"]})
    assert s["one_card_penalty_pending"] == [True, False, False]


def test_r7_3_one_card_on_deal_silence_is_caught() -> None:
    # R7.3 / R7.1: P0 stayed silent on the deal and pays at P0's first turn.
    g = _one_card_deal(one_card_on_deal=True)
    act(g, "declare", "silent", "declare")
    act(g, "Kc", "declare")  # P2 plays, one card left: declares
    assert turn(g) == (1, "play")
    assert_hands(g, {0: ["Qh", "Kd", "Qd"]})


@pytest.mark.parametrize(
    "options",
    [{"one_card_on_deal": False}, {"one_card_on_deal": True, "one_card": "auto"}],
)
def test_r7_3_one_card_on_deal_off_no_declarations(options: dict[str, object]) -> None:
    # R7.3 off (or with one_card="auto"): the starter applies at once, no declare phase.
    g = _one_card_deal(**options)
    assert turn(g) == (2, "play")
    assert_hands(g, {2: ["Kc", "Ad"]})


def test_r7_3_one_card_on_deal_only_for_one_card_hands() -> None:
    # R7.3: the declarations on the deal are for hands dealt one card each.
    g = stacked_game([["Qh", "Th"], ["Jd", "Td"]], starter="3c", one_card_on_deal=True)
    assert turn(g) == (1, "play")


def test_r7_3_dealer_decisions_forced_by_the_starter_are_not_a_new_turn() -> None:
    # R7.3: the silent dealer's extra play for a starter 6 is not a new turn: no penalty there.
    g = stacked_game(
        [["Qh"], ["Kd"]], starter="6c", stock=["Jd", "Td", "9s", "7s"], one_card_on_deal=True
    )
    act(g, "declare", "silent")  # P1, then the dealer P0
    assert turn(g) == (0, "play")
    assert_hands(g, {0: ["Qh"]})
    assert g.legal_actions() == legal("draw")
    act(g, "draw", "draw")  # P0 draws Jd (turn passes), P1 cannot play: draws Td
    s = g.snapshot()
    assert s["current_player"] == 1  # P0's new turn was the penalty: 9s 7s
    assert_hands(g, {0: ["Qh", "Jd", "9s", "7s"]})


# ==================================================================== R8 scoring a hand


def test_r8_1_going_out_scores_zero() -> None:
    # R8.1: the player who went out scores 0.
    g = stacked_game([["9h"], ["Kc"]], starter="3c", going_out_bonus=False)
    act(g, "Kc")
    assert points(g) == [30, 0]
    assert g.snapshot()["scores"] == [30, 0]


def test_r8_1_going_out_bonus() -> None:
    # R8.1 option going_out_bonus: the player who went out scores -10.
    g = stacked_game([["9h"], ["Kc"]], starter="3c", going_out_bonus=True)
    act(g, "Kc")
    assert points(g) == [30, -10]
    assert g.snapshot()["scores"] == [30, -10]


def test_r8_1_going_out_bonus_for_several_players_in_one_count() -> None:
    # R8.1 / R6.2: each player who went out in the count gets the bonus.
    g = stacked_game(
        [["9h"], ["2c"], ["Ad"]], starter="3c", stock=["Kd", "Qd", "Jd"], going_out_bonus=True
    )
    act(g, "2c", "Ad", "draw")
    assert points(g) == [60, -10, -10]


def _cut_after_one_draw(p0: list[str], p1: list[str], **options: object) -> Game:
    # P1 cannot play on the starter Qs and draws Ah; the decision limit then ends the hand (R12).
    g = stacked_game([p0, p1], starter="Qs", stock=["Ah"], hand_decision_limit=1, **options)
    act(g, "draw")
    return g


def test_r8_2_every_rank_scores_its_table_value() -> None:
    # R8.2: the leftover hands are charged by the table.
    p0 = ["Ac", "2c", "4c", "5c", "6c", "7c", "8c", "9c", "Tc", "Jc", "Qc", "Kc"]
    p1 = ["Ad", "2d", "4d", "5d", "6d", "7d", "Td", "Jd", "Kd", "2h", "4h", "5h"]
    g = _cut_after_one_draw(p0, p1)
    # P0: 1+20+15+30+30+20+50+30+25+10+10+10; P1: 1+20+15+30+30+20+25+10+10+20+15+30 + Ah 1
    assert points(g) == [251, 227]


def test_r8_3_threes_in_a_played_hand() -> None:
    # R8.3: the worked example left in P0's hand scores 37; P1: 1+20+15+30+25+10+10 + Ah 1.
    g = _cut_after_one_draw(
        ["Ac", "3d", "3h", "6s", "7c", "9d", "Kh"], ["Ad", "2d", "4d", "5d", "Td", "Jd", "Kd"]
    )
    assert points(g) == [37, 112]


def test_r8_3_only_threes_left() -> None:
    # R8.3: a hand of only threes scores -50 each.
    g = _cut_after_one_draw(["3c", "3d"], ["Ad", "Kd"])
    assert points(g) == [-100, 1 + 10 + 1]


@pytest.mark.parametrize(
    ("options", "p0_points"),
    [
        ({}, 3 + 50),  # the 3 cancels the ace
        ({"threes_cancel_eights": True}, 3 + 1),
        ({"threes_cancel_eights": True, "three_points": 0}, 1),
        ({"three_points": 0}, 50),
        ({"punitive_threes": True}, 100 + 1 + 50),
        ({"punitive_threes": True, "threes_cancel_eights": True}, 3 + 1),
    ],
)
def test_r8_4_scoring_options_apply_in_play(options: dict[str, object], p0_points: int) -> None:
    # R8.4: the engine scores leftover hands with the game's scoring options (P0: 3 A 8).
    g = _cut_after_one_draw(["3c", "Ad", "8h"], ["Kd", "Jd", "Td"], **options)
    assert points(g) == [p0_points, 10 + 10 + 25 + 1]


def test_r8_4_polish_example_in_play() -> None:
    # R8.4: `3 2 8` with threes_cancel_eights and three_points=0 scores 20 at the table.
    g = _cut_after_one_draw(
        ["3c", "2d", "8h"], ["Kd", "Jd", "Td"], threes_cancel_eights=True, three_points=0
    )
    assert points(g)[0] == 20


def test_r8_6_lowest_total_wins() -> None:
    # R8.6: two hands; totals 30 and 25: the lower one wins.
    g = _two_hand_game(p1_second_hand="Ts")
    s = g.snapshot()
    assert s["phase"] == "game_over"
    assert s["hand_points"] == [[30, 0], [0, 25]]
    assert s["scores"] == [30, 25]
    assert s["winners"] == [1]


def test_r8_6_tied_players_share_the_win() -> None:
    # R8.6: totals 30 and 30: both players share the win.
    g = _two_hand_game(p1_second_hand="9s")
    s = g.snapshot()
    assert s["scores"] == [30, 30]
    assert s["winners"] == [0, 1]


def _two_hand_game(p1_second_hand: str) -> Game:
    # Hand 1 (dealer 0): P1 goes out on Kc, P0 keeps 9h (30). Hand 2 (dealer 1): P0 goes out.
    rules = Rules(hand_sizes=(1, 1))
    deals = [
        deal_order([["9h"], ["Kc"]], "3c", dealer=0, rules=rules),
        deal_order([["Kh"], [p1_second_hand]], "3h", dealer=1, rules=rules),
    ]
    g = Game(2, rules, dealer=0, deals=deals)
    act(g, "Kc")
    assert g.snapshot()["hand_index"] == 1
    assert g.snapshot()["dealer"] == 1
    act(g, "Kh")
    return g


def test_r8_6_winners_among_three_players() -> None:
    # R8.6: the lowest total wins; two of three players tie on 0.
    g = stacked_game([["9h"], ["2c"], ["Ad"]], starter="3c", stock=["Kd", "Qd", "Jd"])
    act(g, "2c", "Ad", "draw")
    s = g.snapshot()
    assert s["scores"] == [60, 0, 0]
    assert s["winners"] == [1, 2]


# ==================================================================== R9 face cards


def _face(hands: list[list[str]], starter: str = "3c", **options: object) -> Game:
    stock = ["2d", "3d", "4d", "5d", "6d", "7d", "8d", "9d", "Td", "Jd", "Qd", "Kd"]
    stock = [c for c in stock if all(c not in h for h in hands) and c != starter]
    return stacked_game(
        hands, starter=starter, stock=stock, face_cards=True, one_card="off", **options
    )


FILLER = ["Ad", "Ah", "As", "Th", "Ts"]  # P0 in the five-card deals: nothing to play on clubs
HEARTS = ["2h", "4h", "5h", "6h", "7h"]  # P2 in the five-card deals


def test_r9_1_jacks_in_a_row_draw_two_four_six() -> None:
    # R9.1: each jack in the run adds two: the next players draw 2, 4, 6 and forfeit.
    g = _face([["Jd", "Ad"], ["Jc", "Ah"], ["Jh", "As"]])
    stock0 = len(g.snapshot()["stock"])
    act(g, "Jc")  # P2 draws 2, forfeits
    s = g.snapshot()
    assert (s["current_player"], s["jack_run"]) == (0, 1)
    assert sizes(g) == [2, 1, 4]
    act(g, "Jd")  # run of 2: P1 draws 4, forfeits
    assert g.snapshot()["current_player"] == 2
    assert sizes(g) == [1, 5, 4]
    act(g, "Jh")  # run of 3: P0 draws 6, forfeits
    s = g.snapshot()
    assert (s["current_player"], s["jack_run"]) == (1, 3)
    assert sizes(g) == [7, 5, 3]
    assert len(s["stock"]) == stock0 - 12


def test_r9_1_starter_jack_counts_in_the_run() -> None:
    # R9.1 / R2.5: a starter jack makes P1 draw 2 and forfeit; the next jack makes a run of 2.
    g = _face([["Ad", "Kh"], ["As", "Ah"], ["Jh", "Qs"]], starter="Jc")
    s = g.snapshot()
    assert (s["current_player"], s["jack_run"]) == (2, 1)
    assert sizes(g) == [2, 4, 2]
    act(g, "Jh")  # run of 2: P0 draws 4
    assert g.snapshot()["current_player"] == 1
    assert sizes(g) == [6, 4, 1]


def test_r9_1_jack_in_a_kings_sequence_counts_in_the_run() -> None:
    # R9.1 / R9.3: a jack played without function in a king's sequence still counts.
    g = _face([FILLER, ["Kc", "Qc", "Jc", "Jh", "Ac"], HEARTS])
    act(g, "Kc", "Qc", "Jc")  # first two cards of the sequence: no function
    s = g.snapshot()
    assert (s["current_player"], s["jack_run"], s["king_cards_left"]) == (1, 1, 1)
    assert sizes(g) == [5, 2, 5]
    act(g, "Jh")  # the third card: a run of 2, P2 draws 4 and forfeits
    s = g.snapshot()
    assert (s["current_player"], s["jack_run"]) == (0, 2)
    assert sizes(g) == [5, 1, 9]


def test_r9_1_a_reshuffle_does_not_break_the_jack_run() -> None:
    # R9.1 / R10.1: two players are dealt 23 cards each, so the stock holds five. P1 plays
    # 6c 6d 6h 6s (extra plays) and 3s, P0 plays 3h, then P1 plays three jacks in a row. P0
    # draws 2 for Jh; for Jd (a run of 2) P0 draws 3, the stock runs out and the pile under Jd
    # (Jh included) is reshuffled; Js still makes a run of 3: P0 draws six.
    p1 = ["6c", "6d", "6h", "6s", "3s", "Jh", "Jd", "Js"]
    stock = ["Kd", "Qd", "Td", "9d", "8d"]
    rest = [c for c in ALL_CARDS if c not in [*p1, *stock, "3c", "3h"]]
    p0 = ["3h", *rest[15:]]
    p1 = [*p1, *rest[:15]]
    reshuffle = ["Jh", "3c", "6c", "6d", "6h", "6s", "3s", "3h"]  # next-first
    g = stacked_game(
        [p0, p1],
        starter="3c",
        stock=stock,
        face_cards=True,
        one_card="off",
        reshuffles=[[reshuffle]],
    )
    act(g, "6c", "6d", "6h", "6s", "3s", "3h", "Jh")
    s = g.snapshot()
    assert (s["current_player"], s["jack_run"], s["stock"]) == (1, 1, ["Td", "9d", "8d"])
    act(g, "Jd")  # P0 draws Td 9d 8d, reshuffle (P0's pressure), then Jh
    s = g.snapshot()
    assert (s["current_player"], s["jack_run"], s["discard"]) == (1, 2, ["Jd"])
    assert (s["reshuffles"], s["stock"]) == ([reshuffle], reshuffle[1:])
    assert (s["shuffle_pressures"], s["scores"]) == ([1, 0], [5, 0])
    act(g, "Js")  # a run of 3: P0 draws 3c 6c 6d 6h 6s 3s and forfeits
    s = g.snapshot()
    assert (s["current_player"], s["jack_run"], s["stock"]) == (1, 3, ["3h"])
    assert s["discard"] == ["Jd", "Js"]
    drawn = ["Kd", "Qd", "Td", "9d", "8d", "Jh", "3c", "6c", "6d", "6h", "6s", "3s"]
    assert_hands(g, [[*rest[15:], *drawn], rest[:15]])


def test_r9_2_queen_of_spades_draw_five_and_forfeit() -> None:
    # R9.2: the queen of spades: the next player draws five cards and forfeits.
    g = _face([["Ad", "Ah"], ["Qs", "Kh"], ["2h", "4h"]], starter="3s")
    act(g, "Qs")
    s = g.snapshot()
    assert s["current_player"] == 0
    assert sizes(g) == [2, 1, 7]


@pytest.mark.parametrize("queen", ["Qc", "Qd", "Qh"])
def test_r9_2_other_queens_have_no_function(queen: str) -> None:
    # R9.2: other queens: none.
    g = _face([["Ad", "Ah"], [queen, "Kh"], ["2h", "4h"]], starter="3" + queen[1])
    act(g, queen)
    s = g.snapshot()
    assert s["current_player"] == 2
    assert sizes(g) == [2, 1, 2]


def test_r9_3_first_two_cards_have_no_function_third_does() -> None:
    # R9.3: 7c and 2c (no draw, no count) then the third card 5c: P2 and P0 draw one each.
    g = _face([FILLER, ["Kc", "7c", "2c", "5c", "Qh"], HEARTS])
    act(g, "Kc")
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["king_cards_left"]) == (1, "play", 3)
    act(g, "7c")
    assert sizes(g) == [5, 3, 5]  # the 7 made nobody draw
    act(g, "2c")
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["count"]) == (1, "play", 0)  # no count
    act(g, "5c")
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["king_cards_left"]) == (2, "play", 0)
    assert sizes(g) == [6, 1, 6]


def test_r9_3_suit_calls_inside_the_sequence() -> None:
    # R9.3: an 8 or 9 among the first two cards still makes its player call a suit.
    g = _face([FILLER, ["Kc", "8c", "9h", "Qd", "Ac"], HEARTS])
    act(g, "Kc", "8c")
    assert g.snapshot()["phase"] == "call_suit"
    assert g.legal_actions() == ALL_CALLS
    act(g, "call h", "9h")
    assert g.legal_actions() == legal("call d", "call h")  # 9h: hearts or diamonds
    act(g, "call d")
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["active_suit"]) == (1, "play", "d")
    act(g, "Qd")  # third card, no function
    s = g.snapshot()
    assert (s["current_player"], s["king_cards_left"]) == (2, 0)


def test_r9_3_third_card_king_starts_three_more() -> None:
    # R9.3: a king as the third card: three more follow; with no card left P1 draws, not out.
    g = _face([FILLER, ["Kc", "Qc", "Qd", "Kd", "Jd"], HEARTS])
    act(g, "Kc", "Qc", "Qd", "Kd")
    s = g.snapshot()
    assert (s["current_player"], s["king_cards_left"]) == (1, 3)
    act(g, "Jd")
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["went_out"]) == (1, "play", [])
    assert g.legal_actions() == legal("draw")
    act(g, "draw")
    s = g.snapshot()
    assert (s["current_player"], s["king_cards_left"]) == (2, 0)
    assert sizes(g) == [5, 1, 5]


def test_r9_3_cannot_play_in_the_sequence_draws_one() -> None:
    # R9.3: a player who cannot play during the sequence draws one card and the turn passes.
    g = _face(
        [
            ["Ad", "As", "Ts", "2h", "4h"],
            ["Kc", "Ah", "5d", "Th", "Td"],
            ["5h", "6h", "7h", "9s", "2s"],
        ]
    )
    act(g, "Kc")
    assert g.legal_actions() == legal("draw")
    act(g, "draw")
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["king_cards_left"]) == (2, "play", 0)
    assert sizes(g) == [5, 5, 5]


def test_r9_4_forfeited_turn_does_not_carry_over() -> None:
    # R9.4: P2's turn is consumed by the jack; at the next round P2 plays normally.
    g = _face([["Ah", "As"], ["Jc", "Ts"], ["4h", "5h"]])
    act(g, "Jc")  # P2 draws 2d 3d, forfeits
    assert g.snapshot()["current_player"] == 0
    act(g, "draw", "draw")  # P0, P1 cannot play on Jc
    assert turn(g) == (2, "play")
    assert sizes(g) == [3, 2, 4]


@pytest.mark.parametrize(("card", "starter"), [("Jc", "3c"), ("Qs", "3s"), ("Kc", "3c")])
def test_r9_face_cards_off_have_no_function(card: str, starter: str) -> None:
    # R4 / R9 off: J, Q and K have no function; the turn passes to P2 with nothing drawn.
    g = stacked_game([["Ad", "Ah"], [card, "Kh"], ["2h", "4h"]], starter=starter, one_card="off")
    act(g, card)
    s = g.snapshot()
    assert (s["current_player"], s["phase"], s["king_cards_left"]) == (2, "play", 0)
    assert sizes(g) == [2, 1, 2]


# ==================================================================== R10 shuffle pressure

# Two players, five cards each: the stock holds 52 - 11 = 41 cards; with voluntary_draw the
# players empty it by drawing. _drained returns the game with P0 to act and the stock empty.


def _drained(hands: list[list[str]], *, rules: Rules | None = None, **options: object) -> Game:
    opts = {"voluntary_draw": True, "one_card": "off", **options}
    g = stacked_game(hands, starter="Qs", rules=rules, **opts)
    for _ in range(41):
        act(g, "draw")
    s = g.snapshot()
    assert (s["stock"], s["discard"], s["current_player"]) == ([], ["Qs"], 0)
    return g


def _drained_draws(hands: list[list[str]], starter: str) -> tuple[list[str], list[str]]:
    """The cards P0 and P1 took while emptying the stock (P1 draws first)."""
    rest = [c for c in ALL_CARDS if c != starter and all(c not in h for h in hands)]
    return rest[1::2], rest[0::2]


TEN = [["Js", "Qh", "Ks", "Ac", "Ad"], ["Jh", "Kh", "As", "Ah", "2h"]]


def test_r10_1_pressure_falls_on_the_drawing_player() -> None:
    # R10.1: P0's 7 makes P1 draw from an empty stock: P1, who draws, takes the pressure.
    g = _drained([["7s", "Qh", "Ks", "Ac", "Ad"], ["Jh", "Kh", "As", "Ah", "2h"]])
    act(g, "7s")
    s = g.snapshot()
    assert s["shuffle_pressures"] == [0, 1]
    assert s["scores"] == [0, 5]
    assert s["reshuffles"] == [["Qs"]]
    assert (s["stock"], s["discard"]) == ([], ["7s"])
    assert "Qs" in s["hands"][1]
    assert turn(g) == (1, "play")  # then P1 plays normally


def test_r10_1_reshuffle_records_the_new_stock_next_first() -> None:
    # R10.1: the discard except its top becomes the stock; snapshot reshuffles lists it
    # next-first: the first card is drawn, the rest is the stock.
    g = _drained(TEN)
    act(g, "Js", "Jh")
    before = Counter(g.snapshot()["hands"][0])
    act(g, "draw")
    s = g.snapshot()
    (new_stock,) = s["reshuffles"]
    assert sorted(new_stock) == ["Js", "Qs"]
    drawn = Counter(s["hands"][0]) - before
    assert list(drawn) == [new_stock[0]]
    assert s["stock"] == new_stock[1:]
    assert s["discard"] == ["Jh"]
    assert s["shuffle_pressures"] == [1, 0]


def _three_reshuffles(hand_decision_limit: int = 5000) -> tuple[Game, list[str]]:
    """P0 reshuffles three times (scripted orders); returns the game and P0's hand before the
    last draw."""
    orders = [["Js", "Qs"], ["Qh", "Jh"], ["Ks", "Kh"]]
    g = _drained(TEN, reshuffles=[orders], hand_decision_limit=hand_decision_limit)
    act(g, "Js", "Jh", "draw")  # reshuffle Qs Js: P0 draws Js
    s = g.snapshot()
    assert (s["reshuffles"], s["stock"], s["scores"]) == (orders[:1], ["Qs"], [5, 0])
    act(g, "draw", "Qh", "Kh", "draw")  # P1 draws Qs; reshuffle Jh Qh: P0 draws Qh
    s = g.snapshot()
    assert (s["reshuffles"], s["stock"], s["scores"]) == (orders[:2], ["Jh"], [15, 0])
    act(g, "draw", "Ks", "As")  # P1 draws Jh
    p0_before = g.snapshot()["hands"][0]
    act(g, "draw")  # reshuffle Kh Ks: P0 draws Ks
    return g, p0_before


def test_r10_1_pressure_costs_5_10_20_with_scripted_reshuffles() -> None:
    # R10.1: P0's 1st, 2nd and 3rd pressures cost 5, 10, 20; the scripted orders are honoured.
    g, _ = _three_reshuffles()
    s = g.snapshot()
    assert s["reshuffles"] == [["Js", "Qs"], ["Qh", "Jh"], ["Ks", "Kh"]]
    assert s["stock"] == ["Kh"]
    assert s["shuffle_pressures"] == [3, 0]
    assert s["scores"] == [35, 0]


def test_r8_5_hand_points_include_the_pressures() -> None:
    # R8.5 / §14.12: pressures are added when they happen and are part of the hand's points;
    # the decision limit (R12) cuts the hand right after P0's third pressure (decision 52).
    g, p0_before = _three_reshuffles(hand_decision_limit=52)
    s = g.snapshot()
    assert s["phase"] == "game_over"
    p0 = score_hand([*p0_before, "Ks"]) + 35
    p1 = score_hand(s["hands"][1])
    assert s["hand_points"] == [[p0, p1]]
    assert s["scores"] == [p0, p1]
    assert s["shuffle_pressures"] == [3, 0]


def test_r10_1_pressures_count_through_the_game() -> None:
    # R10.1: counts run through the game: P0's pressure in hand 2 is P0's 2nd (10 points).
    rules = Rules(hand_sizes=(5, 5), voluntary_draw=True, one_card="off")
    h1 = TEN
    h2 = [["Ac", "Ad", "Ah", "2c", "2d"], ["Js", "Kh", "As", "Th", "2h"]]
    deals = [
        deal_order(h1, "Qs", dealer=0, rules=rules),
        deal_order(h2, "Qs", dealer=1, rules=rules),
    ]
    g = Game(2, rules, dealer=0, deals=deals, seed=0)
    for _ in range(41):
        act(g, "draw")
    p0, p1 = _drained_draws(h1, "Qs")
    hand1 = [score_hand(h1[0] + p0) + 5, score_hand(h1[1] + p1)]
    act(g, "draw")  # P0 draws from an empty stock, discard [Qs]: R10.2, pressure #1
    s = g.snapshot()
    assert (s["hand_index"], s["hand_points"], s["shuffle_pressures"]) == (1, [hand1], [1, 0])
    assert s["scores"] == hand1
    # Hand 2, dealer 1: P0 draws first and takes the 41st card; P1 to act.
    for _ in range(41):
        act(g, "draw")
    assert g.snapshot()["current_player"] == 1
    act(g, "Js", "draw")  # P0: reshuffle of Qs, pressure #2 costs 10
    s = g.snapshot()
    assert (s["shuffle_pressures"], s["scores"][0]) == ([2, 0], hand1[0] + 10)
    hands2 = s["hands"]
    act(g, "draw")  # P1: stock empty, discard [Js]: R10.2, P1's pressure #1, game over
    s = g.snapshot()
    hand2 = [score_hand(hands2[0]) + 10, score_hand(hands2[1]) + 5]
    assert s["phase"] == "game_over"
    assert s["shuffle_pressures"] == [2, 1]
    assert s["hand_points"] == [hand1, hand2]
    assert s["scores"] == [hand1[0] + hand2[0], hand1[1] + hand2[1]]


def test_r10_2_empty_stock_and_lone_top_card_ends_the_hand() -> None:
    # R10.2: P0 must draw, the stock is empty and the discard holds only Qs: P0 takes a
    # pressure (5) and the hand ends; both players score the cards they hold.
    g = _drained(TEN)
    act(g, "draw")
    p0, p1 = _drained_draws(TEN, "Qs")
    s = g.snapshot()
    assert s["phase"] == "game_over"
    assert s["shuffle_pressures"] == [1, 0]
    expected = [score_hand(TEN[0] + p0) + 5, score_hand(TEN[1] + p1)]
    assert s["hand_points"] == [expected]
    assert s["scores"] == expected


# ==================================================================== R11 snapshot

SNAPSHOT_KEYS = {
    "num_players", "hand_index", "dealer", "current_player", "phase", "direction", "top",
    "active_suit", "count", "hands", "stock", "discard", "scores", "shuffle_pressures",
    "hand_points", "went_out", "deal", "reshuffles",
}  # fmt: skip


def test_r11_snapshot_has_the_interface_keys_and_is_json() -> None:
    # R11 / docs/interface.md: the snapshot holds every listed key and is JSON-serialisable,
    # during play, after a reshuffle and at the end of the game.
    g = _drained(TEN)
    act(g, "Js", "Jh", "draw")
    snaps = [g.snapshot()]
    act(g, "draw", "draw")
    snaps.append(g.snapshot())
    for s in snaps:
        assert set(s) >= SNAPSHOT_KEYS
        assert json.loads(json.dumps(s)) == s
    assert snaps[0]["reshuffles"]
    assert snaps[-1]["phase"] == "game_over"


def test_r11_snapshot_values() -> None:
    # R11 / docs/interface.md: the public values of a fresh stacked deal.
    g = stacked_game([["9h", "Kd"], ["7d", "2s"]], starter="3c", stock=["As", "5c"])
    s = g.snapshot()
    assert (s["num_players"], s["hand_index"], s["dealer"], s["current_player"]) == (2, 0, 0, 1)
    assert (s["phase"], s["direction"], s["top"], s["active_suit"], s["count"]) == (
        "play",
        1,
        "3c",
        "c",
        0,
    )
    assert_hands(g, [["9h", "Kd"], ["7d", "2s"]])
    assert s["stock"][:2] == ["As", "5c"] and len(s["stock"]) == 47
    assert (s["discard"], s["scores"], s["shuffle_pressures"]) == (["3c"], [0, 0], [0, 0])
    assert (s["hand_points"], s["went_out"], s["reshuffles"]) == ([], [], [])
    assert s["deal"] == deal_order([["9h", "Kd"], ["7d", "2s"]], "3c", ["As", "5c"])
    assert json.dumps(s)


def test_r11_deal_and_reshuffles_replay_the_hand() -> None:
    # R11 / docs/interface.md: deal + reshuffles + the actions replay a hand without a generator.
    g = _drained(TEN, seed=7)
    act(g, "Js", "Jh", "draw", "draw")
    s = g.snapshot()
    actions = [DRAW] * 41 + [parse_action(m) for m in ("Js", "Jh", "draw", "draw")]
    replay = Game(2, g.rules, dealer=0, deals=[s["deal"]], reshuffles=[s["reshuffles"]])
    for a in actions:
        replay.apply(a)
    assert replay.snapshot() == s


# ==================================================================== R12 decision limit


def _limited(limit: int) -> Game:
    return stacked_game(
        [["Ah", "Th"], ["Ad", "Jh"]],
        starter="3c",
        stock=["Kd", "Qd", "Jd", "9s", "5h"],
        voluntary_draw=True,
        hand_decision_limit=limit,
    )


def test_r12_hand_ends_after_exactly_the_limit() -> None:
    # R12: with hand_decision_limit=5 the hand ends right after the 5th decision, scored
    # like R10.2 without a pressure. Draws: P1 Kd, P0 Qd, P1 Jd, P0 9s, P1 5h.
    g = _limited(5)
    for _ in range(4):
        act(g, "draw")
    s = g.snapshot()
    assert (s["phase"], s["hand_decisions"]) == ("play", 4)
    act(g, "draw")
    s = g.snapshot()
    assert s["phase"] == "game_over"
    assert s["shuffle_pressures"] == [0, 0]
    assert s["hand_points"] == [[1 + 25 + 10 + 30, 1 + 10 + 10 + 10 + 30]]
    assert s["scores"] == [66, 61]


def test_r12_limit_decision_applies_its_automatic_effects_first() -> None:
    # R12: the limit falls on P1's 7; its automatic effect (P0 draws Qd) is applied first.
    g = stacked_game(
        [["9h", "Th"], ["7c", "Kd"]],
        starter="3c",
        stock=["Qd"],
        one_card="off",
        hand_decision_limit=1,
    )
    act(g, "7c")
    assert points(g) == [30 + 25 + 10, 10]


def test_r12_default_limit_lets_the_hand_go_on() -> None:
    # R12 default (5000): five decisions do not end the hand.
    g = _limited(Rules().hand_decision_limit)
    for _ in range(5):
        act(g, "draw")
    s = g.snapshot()
    assert (s["phase"], s["hand_decisions"], s["hand_points"]) == ("play", 5, [])


def test_r12_limit_counts_every_decision_including_declarations() -> None:
    # R12 / R3.6: the declaration is a decision too: play Kc (1), declare (2) ends the hand.
    g = stacked_game([["Ah", "Th"], ["Kc", "Qh"]], starter="3c", hand_decision_limit=2)
    act(g, "Kc")
    assert g.snapshot()["phase"] == "declare"
    act(g, "declare")
    assert points(g) == [26, 10]


def test_r12_limit_applies_to_each_hand() -> None:
    # R12: the count restarts with each hand; a two-hand game ends after 3 + 3 decisions.
    rules = Rules(hand_sizes=(2, 2), voluntary_draw=True, hand_decision_limit=3)
    g = stacked_game([["Ah", "Th"], ["Ad", "Jh"]], starter="3c", rules=rules, seed=3)
    for _ in range(3):
        g.apply(g.legal_actions()[-1])
    s = g.snapshot()
    assert (s["hand_index"], s["hand_decisions"], len(s["hand_points"])) == (1, 0, 1)
    for _ in range(3):
        g.apply(g.legal_actions()[-1])
    s = g.snapshot()
    assert s["phase"] == "game_over"
    assert len(s["hand_points"]) == 2
    assert s["shuffle_pressures"] == [0, 0]
