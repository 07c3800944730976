"""Scoring a hand's leftover cards (R8.2–R8.4) and shuffle-pressure costs (R10.1).

``score_hand`` follows docs/interface.md: it scores the cards left in a hand by
R8.2–R8.4 (R8.1, going out, is the caller's business).
"""

from __future__ import annotations

import pytest

import craits_env
from craits_env import Rules, score_hand

# R8.2: points per rank.
TABLE = {
    "A": 1, "2": 20, "3": 3, "4": 15, "5": 30, "6": 30, "7": 20,
    "8": 50, "9": 30, "T": 25, "J": 10, "Q": 10, "K": 10,
}  # fmt: skip


# ---------------------------------------------------------------- R8.2 the table


@pytest.mark.parametrize("rank", [r for r in TABLE if r != "3"])
def test_r8_2_single_card_scores_its_table_value(rank: str) -> None:
    # R8.2: every card's value, in every suit.
    for suit in "cdhs":
        assert score_hand([rank + suit]) == TABLE[rank]


def test_r8_2_hand_scores_the_sum_of_its_cards() -> None:
    # R8.2: a hand without threes scores the plain sum of the table.
    cards = [r + "c" for r in TABLE if r != "3"]
    assert score_hand(cards) == sum(v for r, v in TABLE.items() if r != "3") == 251


def test_r8_2_cards_may_be_any_iterable() -> None:
    # docs/interface.md: ``cards`` is an iterable of card strings.
    assert score_hand(c for c in ("Kh", "Td")) == 35
    assert score_hand(("5s", "5s")) == 60  # two decks: the same card twice


def test_r8_3_empty_hand_scores_zero() -> None:
    # R8.3: an empty hand scores 0.
    assert score_hand([]) == 0


# ---------------------------------------------------------------- R8.3 threes


def test_r8_3_worked_example() -> None:
    # R8.3 / docs/interface.md: A 3 3 6 7 9 K = 1 + 3 + 3 + 20 + 10 (threes cancel the 6, the 9).
    assert score_hand(["Ac", "3d", "3h", "6s", "7c", "9d", "Kh"]) == 37


@pytest.mark.parametrize(
    ("cards", "points"), [(["3c"], -50), (["3c", "3d"], -100), (["3c", "3d", "3h"], -150)]
)
def test_r8_3_only_threes_score_minus_fifty_each(cards: list[str], points: int) -> None:
    # R8.3: a hand made only of threes scores -50 per three.
    assert score_hand(cards) == points


def test_r8_3_a_three_cancels_the_highest_valued_card() -> None:
    # R8.3: the 3 cancels the 5 (30), not the 2 (20) or the A (1): 3 + 20 + 1.
    assert score_hand(["3c", "5d", "2h", "As"]) == 24


def test_r8_3_each_three_cancels_one_card() -> None:
    # R8.3: two threes cancel the two highest (9 and T); the J and the A remain.
    assert score_hand(["3c", "3d", "9h", "Ts", "Jc", "Ad"]) == 3 + 3 + 10 + 1


def test_r8_3_an_eight_is_never_cancelled_by_default() -> None:
    # R8.3: an 8 cannot be cancelled; the 3 cancels the K instead, or nothing at all.
    assert score_hand(["3c", "8d"]) == 3 + 50
    assert score_hand(["3c", "8d", "Kh"]) == 3 + 50
    assert score_hand(["3c", "8d", "5h"]) == 3 + 50


def test_r8_3_a_three_does_not_cancel_a_three() -> None:
    # R8.3: one 3 cancels the K; the other finds nothing (it may not cancel a 3).
    assert score_hand(["3c", "3d", "Kh"]) == 3 + 3
    assert score_hand(["3c", "3d", "3h", "Kh"]) == 3 + 3 + 3


def test_r8_3_surplus_threes_still_score_three() -> None:
    # R8.3: each 3 still scores 3, even with nothing left to cancel.
    assert score_hand(["3c", "3d", "3h", "8s"]) == 9 + 50


# ---------------------------------------------------------------- R8.4 options


def test_r8_4_threes_cancel_eights_on() -> None:
    # R8.4 threes_cancel_eights: the 8 is the highest card, so it is cancelled.
    rules = Rules(threes_cancel_eights=True)
    assert score_hand(["3c", "8d"], rules=rules) == 3
    assert score_hand(["3c", "8d", "5h"], rules=rules) == 3 + 30
    assert score_hand(["3c", "8d"], rules=Rules(threes_cancel_eights=False)) == 53


def test_r8_4_three_points_polish_example() -> None:
    # R8.4: the Polish rules, `3 2 8` with threes_cancel_eights and three_points=0, score 20.
    rules = Rules(threes_cancel_eights=True, three_points=0)
    assert score_hand(["3c", "2d", "8h"], rules=rules) == 20


def test_r8_4_three_points_variants() -> None:
    # R8.4: three_points is what each 3 scores in a hand holding other cards.
    cards = ["3c", "2d", "8h"]
    assert score_hand(cards) == 3 + 50  # default: the 3 cancels the 2, the 8 stays
    assert score_hand(cards, rules=Rules(threes_cancel_eights=True)) == 3 + 20
    assert score_hand(cards, rules=Rules(three_points=0)) == 50
    assert score_hand(["3c", "3d", "Kh"], rules=Rules(three_points=7)) == 14
    # a 3 with nothing to cancel scores three_points too
    assert score_hand(["3c", "8h"], rules=Rules(three_points=0)) == 50


def test_r8_4_three_points_does_not_change_only_threes() -> None:
    # R8.3/R8.4: a hand of only threes stays at -50 each, whatever three_points is.
    assert score_hand(["3c", "3d"], rules=Rules(three_points=0)) == -100
    assert score_hand(["3c"], rules=Rules(three_points=11)) == -50


def test_r8_4_punitive_threes_protect_aces() -> None:
    # R8.4 punitive_threes: aces cannot be cancelled, so the lonely 3 costs 100.
    rules = Rules(punitive_threes=True)
    assert score_hand(["3c", "Ad"], rules=rules) == 100 + 1
    assert score_hand(["3c", "Ad"]) == 3  # off: the 3 cancels the ace


def test_r8_4_punitive_threes_cancelled_three_scores_three_points() -> None:
    # R8.4 punitive_threes: one 3 cancels the K (scores 3), the other is lonely (100).
    rules = Rules(punitive_threes=True)
    assert score_hand(["3c", "Kd"], rules=rules) == 3
    assert score_hand(["3c", "3d", "Kh"], rules=rules) == 3 + 100
    assert score_hand(["3c", "Kd"], rules=Rules(punitive_threes=True, three_points=0)) == 0


def test_r8_4_punitive_threes_and_eights() -> None:
    # R8.4 punitive_threes: an 8 is still protected unless threes_cancel_eights.
    assert score_hand(["3c", "8d"], rules=Rules(punitive_threes=True)) == 100 + 50
    rules = Rules(punitive_threes=True, threes_cancel_eights=True)
    assert score_hand(["3c", "8d", "Ah"], rules=rules) == 3 + 1


def test_r8_4_punitive_threes_only_threes() -> None:
    # R8.4 punitive_threes: a hand of only threes still scores -50 each.
    rules = Rules(punitive_threes=True)
    assert score_hand(["3c"], rules=rules) == -50
    assert score_hand(["3c", "3d", "3h"], rules=rules) == -150


def test_r8_4_punitive_threes_worked_example() -> None:
    # R8.4 punitive_threes on the R8.3 example: the threes still cancel the 6 and the 9.
    cards = ["Ac", "3d", "3h", "6s", "7c", "9d", "Kh"]
    assert score_hand(cards, rules=Rules(punitive_threes=True)) == 37


# ---------------------------------------------------------------- input checks


@pytest.mark.parametrize("bad", ["Zc", "Ax", "", "1c", "A", "Acc", "3", "11h"])
def test_invalid_card_string_raises_value_error(bad: str) -> None:
    # R1.2: a card is a rank then a suit; anything else is rejected.
    with pytest.raises(ValueError):
        score_hand([bad])
    with pytest.raises(ValueError):
        score_hand(["Ac", bad, "Kd"])


# ---------------------------------------------------------------- R10.1 pressure costs


def test_r10_1_pressure_costs_double() -> None:
    # R10.1: the k-th shuffle pressure costs 5 * 2**(k-1): 5, 10, 20, 40 ...
    assert [craits_env.pressure_cost(k) for k in range(1, 7)] == [5, 10, 20, 40, 80, 160]


def test_r10_1_pressure_cost_is_exact_without_cap() -> None:
    # R10.1: exact integers, no cap (k = 80 is far beyond 64-bit).
    cost = craits_env.pressure_cost(80)
    assert type(cost) is int
    assert cost == 5 * 2**79 == 3022314549036572936765440
