"""Scoring a hand's leftover cards (R8.2–R8.4) and shuffle-pressure costs (R10.1)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .cards import RANK_OF, Rank, parse_card
from .rules import Rules

# R8.2: points per rank, in rank order A 2 3 4 5 6 7 8 9 T J Q K.
CARD_POINTS: tuple[int, ...] = (1, 20, 3, 15, 30, 30, 20, 50, 30, 25, 10, 10, 10)
ONLY_THREES_POINTS = -50  # R8.3: per three, in a hand made only of threes
LONELY_THREE_POINTS = 100  # R8.4 punitive_threes: a three with nothing to cancel
GOING_OUT_BONUS = -10  # R8.1 option going_out_bonus
PRESSURE_BASE = 5  # R10.1: the k-th shuffle pressure costs 5 * 2**(k-1)

_DEFAULT_RULES = Rules()


def pressure_cost(k: int) -> int:
    """The cost of a player's ``k``-th shuffle pressure of the game (R10.1): 5, 10, 20, …"""
    if k < 1:
        raise ValueError(f"pressure number must be >= 1, got {k}")
    return PRESSURE_BASE << (k - 1)


def pressure_costs(before: int, after: int) -> int:
    """What a player's shuffle pressures number ``before + 1`` to ``after`` of the game cost
    together (R10.1): ``PRESSURE_BASE * (2**after - 2**before)``, the sum of their
    :func:`pressure_cost`; 0 when ``after == before``."""
    if not 0 <= before <= after:
        raise ValueError(f"pressures: got {before} to {after}, allowed 0 <= before <= after")
    return PRESSURE_BASE * ((1 << after) - (1 << before))


def score_hand(cards: Iterable[str | int], rules: Rules = _DEFAULT_RULES) -> int:
    """Points of the cards left in a hand, by R8.2–R8.4 (not R8.1).

    ``cards`` are card strings (``"As"``) or indices. Each 3 cancels one of
    the highest-valued cards it may cancel: never an 8 (unless
    ``threes_cancel_eights``) nor another 3, and with ``punitive_threes`` no
    ace either. A hand of only threes scores -50 per three; an empty hand 0.

    >>> score_hand(["Ac", "3d", "3h", "6s", "7c", "9d", "Kh"])
    37
    """
    return score_ranks([RANK_OF[parse_card(c)] for c in cards], rules)


def score_ranks(ranks: list[int], rules: Rules = _DEFAULT_RULES) -> int:
    """:func:`score_hand` on rank indices (the engine's fast path)."""
    if not ranks:
        return 0
    threes = ranks.count(Rank.THREE)
    if threes == len(ranks):
        return ONLY_THREES_POINTS * threes
    total = 0
    cancellable = []
    for r in ranks:
        if r == Rank.THREE:
            continue
        if threes and _can_cancel(r, rules):
            cancellable.append(CARD_POINTS[r])
        else:
            total += CARD_POINTS[r]
    if threes:
        cancellable.sort(reverse=True)
        cancelled = min(threes, len(cancellable))
        total += sum(cancellable[cancelled:])
        lonely = threes - cancelled
        if rules.punitive_threes:
            total += cancelled * rules.three_points + lonely * LONELY_THREE_POINTS
        else:
            total += threes * rules.three_points
    return total


def _can_cancel(rank: int, rules: Rules) -> bool:
    if rank == Rank.EIGHT:
        return rules.threes_cancel_eights
    if rank == Rank.ACE:
        return not rules.punitive_threes
    return True


@dataclass(frozen=True)
class HandScore:
    """A hand's points (R8.2–R8.4) with what its threes did, for showing a score to people.

    ``cancelled`` pairs each 3 with the card it cancelled (R8.3); ``lonely_threes`` are the
    threes that found nothing to cancel; ``only_threes`` is true for a hand made only of threes
    (-50 each). Cards are indices (R1.3). ``points`` always equals :func:`score_hand`.
    """

    points: int
    cancelled: tuple[tuple[int, int], ...]
    lonely_threes: tuple[int, ...]
    only_threes: bool


def explain_hand(cards: Iterable[str | int], rules: Rules = _DEFAULT_RULES) -> HandScore:
    """:func:`score_hand` with the threes' cancellations spelled out.

    Each 3 (in card order) cancels one of the highest-valued cards it may cancel (ties: the
    higher card index first), exactly the cards that :func:`score_hand` does not count.

    >>> from craits_env.cards import CARD_STRS
    >>> h = explain_hand(["Ac", "3d", "3h", "6s", "7c", "9d", "Kh"])
    >>> h.points, [(CARD_STRS[t], CARD_STRS[c]) for t, c in h.cancelled]
    (37, [('3d', '6s'), ('3h', '9d')])
    """
    hand = sorted(parse_card(c) for c in cards)
    points = score_ranks([RANK_OF[c] for c in hand], rules)
    threes = [c for c in hand if RANK_OF[c] == Rank.THREE]
    if not threes or len(threes) == len(hand):
        return HandScore(points, (), (), bool(threes))
    cancellable = sorted(
        (c for c in hand if RANK_OF[c] != Rank.THREE and _can_cancel(RANK_OF[c], rules)),
        key=lambda c: (CARD_POINTS[RANK_OF[c]], c),
        reverse=True,
    )
    pairs = tuple(zip(threes, cancellable, strict=False))
    return HandScore(points, pairs, tuple(threes[len(pairs) :]), False)
