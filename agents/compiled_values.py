"""The play values of ``TacticianAgent`` and ``ExpertAgent``, compiled: :func:`play_value`.

Statement for statement :class:`craits.agents.heuristics.TacticianAgent`'s ``_value`` and
``_continuation`` (read them beside this) — the same depth, the same order of float
operations, so the same doubles — with ``ExpertAgent``'s overrides where the table says
``expert`` (``_keep_wild``, ``_plan``, ``_p_no_counter``). :func:`shed_value` is
``_shed_values`` (exact integers). A hand is two card masks (``one``: held at least once,
``two``: held twice), every copy counted as the Python list holds it. A decision's
``_Table`` is two small arrays: ``tb`` (ints, ``T_*``) and ``ft`` (floats: each seat's
threat, then ``F_*``). The weights are not compiled in: :func:`weights` reads them from the
class when a bot is made (``w[W_*]``), so a twin follows a change of its Python bot's weights.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from craits_env.cards import NUM_RANKS
from craits_env.rules import MAX_PLAYERS
from craits_env.scoring import LONELY_THREE_POINTS, ONLY_THREES_POINTS
from craits_env.vector.jit import inner
from craits_env.vector.layout import P_PUNITIVE_THREES, P_THREE_POINTS, P_THREES_CANCEL_EIGHTS

from .compiled_cards import (
    ACE,
    COUNTER_BITS,
    EIGHT,
    FIVE,
    FOUR,
    JACK,
    KING,
    NINE,
    PLAIN_BITS,
    POINTS,
    QUEEN_SPADES,
    RANK_BITS,
    RANK_POINTS,
    SEVEN,
    SIX,
    SUIT_BITS,
    TEN,
    THREE,
    TWO,
    WILD_BITS,
    bit_count,
    copies,
    lowest_bit,
    without,
)

TACTICIAN_WEIGHTS = (
    "SKIP", "DRAW_OPPONENT", "DRAW_SELF", "REVERSE", "COUNT_RISK", "COUNTER_SHARE",
    "KEEP_EIGHT", "KEEP_NINE", "KEEP_SMALL", "KEEP_DANGER", "OUT", "LAST_WILD", "LAST_BAD",
    "LAST_COUNTER", "SUIT_KEEP", "CALL_BASE_WEIGHT",
)  # fmt: skip
"""The tactician's weights (class attributes), in the order of ``w[W_*]``."""
EXPERT_WEIGHTS = (
    "KEEP_WILD_SMALL", "KEEP_THREE", "KEEP_COUNTER", "KEEP_TWO", "BLOCK", "BLOCK_BASE",
    "CALL_BLOCK", "BLOCK_MAX_CARDS",
)  # fmt: skip
"""The expert's own weights, after them (0.0 for a class without them)."""
(
    W_SKIP, W_DRAW_OPPONENT, W_DRAW_SELF, W_REVERSE, W_COUNT_RISK, W_COUNTER_SHARE,
    W_KEEP_EIGHT, W_KEEP_NINE, W_KEEP_SMALL, W_KEEP_DANGER, W_OUT, W_LAST_WILD, W_LAST_BAD,
    W_LAST_COUNTER, W_SUIT_KEEP, W_CALL_BASE_WEIGHT,
    W_KEEP_WILD_SMALL, W_KEEP_THREE, W_KEEP_COUNTER, W_KEEP_TWO, W_BLOCK, W_BLOCK_BASE,
    W_CALL_BLOCK, W_BLOCK_MAX_CARDS,
) = range(len(TACTICIAN_WEIGHTS) + len(EXPERT_WEIGHTS))  # fmt: skip
W_THREAT_LEN = len(TACTICIAN_WEIGHTS) + len(EXPERT_WEIGHTS)  # then THREAT's length, entries
W_THREAT = W_THREAT_LEN + 1

# tb[T_*] (int64), then the hand sizes at T_SIZES + seat and the acting hand's cards per rank
# at T_RANKS + rank (when it holds a 3); T_EXPERT: the expert's overrides.
(
    T_N, T_ME, T_DIRECTION, T_NXT, T_PRV, T_DANGER, T_JACK_RUN, T_FACE, T_SEVEN_NEXT, T_EXPERT,
    T_SIZES,
) = range(11)  # fmt: skip
T_RANKS = T_SIZES + MAX_PLAYERS
TABLE_INTS = T_RANKS + NUM_RANKS
# ft[seat]: that seat's threat (0.0 for the acting seat); ft[F_P_NO_COUNTER]: the chance that
# the next player holds no ace or two (``_p_no_counter(t, t.nxt)``, the only one asked).
F_P_NO_COUNTER = MAX_PLAYERS
TABLE_FLOATS = F_P_NO_COUNTER + 1

# R4, R5: the ranks whose function acts on the others (and with face_cards J and Q♠, R9).
ACTIVE = np.array([r in (TWO, FOUR, FIVE, SEVEN, TEN) for r in range(NUM_RANKS)], np.bool_)
# The ranks in the order threes cancel them (R8.3): the most points first.
CANCEL_ORDER = np.array(sorted(range(NUM_RANKS), key=lambda r: -RANK_POINTS[r]), np.int64)


def weights(cls: Any) -> np.ndarray:
    """The weights of a bot class (``TacticianAgent`` or a subclass) as ``w[W_*]``, float64."""
    threat = [float(x) for x in cls.THREAT]
    values = [float(getattr(cls, name)) for name in TACTICIAN_WEIGHTS]
    values += [float(getattr(cls, name, 0.0)) for name in EXPERT_WEIGHTS]
    return np.array([*values, float(len(threat)), *threat], np.float64)


@inner
def p_no_counter(w: Any, size: int) -> float:
    """The tactician's ``_p_no_counter``: from the hand size alone."""
    # Python's float power is C's pow(), and so is math.pow here (numba's ``**`` with an int
    # exponent multiplies instead, which may differ in the last bit).
    return math.pow(1.0 - w[W_COUNTER_SHARE], float(size))


@inner
def can_cancel(p: Any, rank: int) -> bool:
    """A 3 may cancel a card of ``rank`` (R8.3, with threes_cancel_eights and punitive_threes)."""
    if rank == EIGHT:
        return p[P_THREES_CANCEL_EIGHTS] != 0
    if rank == ACE:
        return p[P_PUNITIVE_THREES] == 0
    return rank != THREE


@inner
def count_ranks(tb: Any, one: int, two: int) -> None:
    """``tb[T_RANKS + rank]`` := the hand's cards of each rank, every copy."""
    for r in range(NUM_RANKS):
        tb[T_RANKS + r] = copies(one, two, RANK_BITS[r])


@inner
def hand_points(p: Any, tb: Any, removed: int) -> int:
    """``heuristics._points`` of the hand counted in ``tb[T_RANKS:]`` less one card of rank
    ``removed`` (-1: none): its score (R8.2-R8.4)."""
    threes = tb[T_RANKS + THREE] - (removed == THREE)
    fixed = cancellable = count = 0
    for r in range(NUM_RANKS):
        if r == THREE:
            continue
        k = tb[T_RANKS + r] - (r == removed)
        if can_cancel(p, r):
            cancellable += k * RANK_POINTS[r]
            count += k
        else:
            fixed += k * RANK_POINTS[r]
    if not threes:
        return fixed + cancellable
    if not fixed and not count:
        return ONLY_THREES_POINTS * threes
    cancelled = threes if threes < count else count
    left = cancelled
    for i in range(NUM_RANKS):  # the highest cancellable cards are cancelled
        r = CANCEL_ORDER[i]
        if left == 0:
            break
        if r == THREE or not can_cancel(p, r):
            continue
        k = tb[T_RANKS + r] - (r == removed)
        k = k if k < left else left
        cancellable -= k * RANK_POINTS[r]
        left -= k
    total = fixed + cancellable
    if p[P_PUNITIVE_THREES] != 0:
        return total + cancelled * p[P_THREE_POINTS] + (threes - cancelled) * LONELY_THREE_POINTS
    return total + threes * p[P_THREE_POINTS]


@inner
def shed_value(p: Any, tb: Any, c: int, now: int) -> float:
    """``_shed_values``' entry for card ``c`` of a hand holding a 3 and scoring ``now`` (its
    ranks counted in ``tb``): the points that playing ``c`` takes off the hand's score."""
    return float(now - hand_points(p, tb, c % NUM_RANKS))


@inner
def keep_wild(w: Any, tb: Any, rank: int, left: int) -> float:
    """``_keep_wild``: keeping an 8 or 9 with ``left`` cards left after the play."""
    keep = w[W_KEEP_EIGHT] if rank == EIGHT else w[W_KEEP_NINE]
    if tb[T_EXPERT]:
        keep += w[W_KEEP_WILD_SMALL] / left
    if left <= 1:
        keep *= w[W_KEEP_SMALL]
    if tb[T_DANGER] <= 1:
        keep *= w[W_KEEP_DANGER]
    return keep


@inner
def plan(w: Any, one: int, two: int, c: int, rank: int, free: bool) -> float:
    """The expert's ``_plan``: what keeping ``c`` is worth for later (a 3 toward a hand of
    threes, the last ace or two against the count, a 2 as a weapon)."""
    if rank == THREE:
        others = bit_count(one) + bit_count(two) - copies(one, two, RANK_BITS[THREE])
        return w[W_KEEP_THREE] / (others if others > 1 else 1)
    if rank not in (ACE, TWO):
        return 0.0
    keep = w[W_KEEP_COUNTER] if copies(one, two, COUNTER_BITS) == 1 else 0.0
    return keep + w[W_KEEP_TWO] if rank == TWO and not free else keep


@inner
def count_value(w: Any, tb: Any, ft: Any, defended: bool) -> float:
    """``_count_value``: starting the count at the next player (R5.1)."""
    p_none = ft[F_P_NO_COUNTER]
    risk = 0.0 if defended else (1.0 - p_none) * w[W_COUNT_RISK]
    return p_none * w[W_DRAW_OPPONENT] * 2.0 * ft[tb[T_NXT]] - risk


@inner
def effect(w: Any, tb: Any, ft: Any, one: int, two: int, c: int, rank: int) -> float:
    """``_effect``: what the card's function does to the others (R4, R5, R9)."""
    n = tb[T_N]
    nxt = tb[T_NXT]
    if rank == FOUR:
        return w[W_SKIP] * ft[nxt] if n > 2 else 0.0
    if rank == FIVE:
        total = 0.0
        for q in range(n):
            total += ft[q]
        return w[W_DRAW_OPPONENT] * total
    if rank == SEVEN:
        if tb[T_SEVEN_NEXT]:
            return w[W_DRAW_OPPONENT] * ft[nxt]
        victim = (nxt + tb[T_DIRECTION]) % n if n > 3 else nxt
        return w[W_DRAW_OPPONENT] * ft[victim]
    if rank == TEN:
        return w[W_REVERSE] * (ft[nxt] - ft[tb[T_PRV]]) if n > 2 else 0.0
    if rank == TWO:
        return count_value(w, tb, ft, copies(one, two, COUNTER_BITS) > 1)
    if tb[T_FACE] and n > 2:
        if rank == JACK:
            run = tb[T_JACK_RUN] + 1
            return ft[nxt] * (w[W_SKIP] + w[W_DRAW_OPPONENT] * 2 * run)
        if c == QUEEN_SPADES:
            return ft[nxt] * (w[W_SKIP] + w[W_DRAW_OPPONENT] * 5)
    return 0.0


@inner
def turn_goes_on(tb: Any, c: int, king: int) -> tuple[bool, int]:
    """Whether the same player plays again after ``c``, and the king's sequence cards left
    then (``_value``'s ``again`` and ``nk``; ``king``: those left before it, R9.3)."""
    rank = c % NUM_RANKS
    face = tb[T_FACE] != 0
    if king > 1:  # first two cards of a king's sequence: no function (R9.3)
        return True, king - 1
    if rank == SIX:
        return True, 0
    if rank == KING and face:
        return True, 3
    if tb[T_N] == 2 and (rank == FOUR or (face and (rank == JACK or c == QUEEN_SPADES))):
        return True, 0  # R4.2, R9.4: a new turn for the same player
    return False, 0


@inner
def followers(rest: int, c: int) -> int:
    """The cards of ``rest`` (a hand's ``one`` mask) ``_continuation`` may play after ``c``."""
    rank = c % NUM_RANKS
    if rank == EIGHT:  # we call the suit we need (R4)
        return rest
    suit = c // NUM_RANKS
    bits = SUIT_BITS[suit] | RANK_BITS[rank] | WILD_BITS
    if rank == NINE:
        bits |= SUIT_BITS[3 - suit]  # the other suit of its colour
    return rest & bits


@inner
def value_after(
    w: Any, tb: Any, ft: Any, one: int, two: int, c: int, king: int, again: bool, v: float
) -> float:
    """``_value`` from ``v`` (the points shed, plus the turn's continuation when ``again``):
    the wild kept, the suit kept, the expert's plan, the card's function, the last card (the
    hand holds two or more cards)."""
    rank = c % NUM_RANKS
    face = tb[T_FACE] != 0
    free = king > 1
    left = bit_count(one) + bit_count(two) - 1
    if rank in (EIGHT, NINE):
        v -= keep_wild(w, tb, rank, left)
    elif not again:
        v += w[W_SUIT_KEEP] * (copies(one, two, PLAIN_BITS[c // NUM_RANKS]) - 1)
    if tb[T_EXPERT]:
        v -= plan(w, one, two, c, rank, free)
    if not free and (ACTIVE[rank] or (face and (rank == JACK or c == QUEEN_SPADES))):
        v += effect(w, tb, ft, one, two, c, rank)
    if left == 1 and not again:
        last_one, _ = without(one, two, c)
        last = lowest_bit(last_one) % NUM_RANKS
        if last in (EIGHT, NINE):
            v += w[W_LAST_WILD]
        elif last == SIX or (last == KING and face):
            v -= w[W_LAST_BAD]
        elif last in (ACE, TWO):
            v += w[W_LAST_COUNTER]
    return v


# ``_value`` and ``_continuation`` call each other, three plays deep: written out per depth
# (value_k reads next_k, the best of value_{k-1}), as numba's disk cache cannot hold a recursive
# function (loading one crashes). value_0's continuation is worth 0.0.


@inner
def value_0(w: Any, tb: Any, ft: Any, one: int, two: int, c: int, shed: float, king: int) -> float:
    again, _ = turn_goes_on(tb, c, king)
    if bit_count(one) + bit_count(two) == 1:  # going out (R6)
        return shed - w[W_DRAW_SELF] if again else shed + w[W_OUT]
    return value_after(w, tb, ft, one, two, c, king, again, shed + 0.0 if again else shed)


@inner
def next_1(w: Any, tb: Any, ft: Any, one: int, two: int, c: int, king: int) -> float:
    rest_one, rest_two = without(one, two, c)
    best = -w[W_DRAW_SELF]
    x = followers(rest_one, c)  # a second copy has the same value: one look is enough
    while x:
        y = lowest_bit(x)
        x &= x - 1
        v = value_0(w, tb, ft, rest_one, rest_two, y, float(POINTS[y]), king)
        if v > best:
            best = v
    return best


@inner
def value_1(w: Any, tb: Any, ft: Any, one: int, two: int, c: int, shed: float, king: int) -> float:
    again, nk = turn_goes_on(tb, c, king)
    if bit_count(one) + bit_count(two) == 1:
        return shed - w[W_DRAW_SELF] if again else shed + w[W_OUT]
    v = shed + next_1(w, tb, ft, one, two, c, nk) if again else shed
    return value_after(w, tb, ft, one, two, c, king, again, v)


@inner
def next_2(w: Any, tb: Any, ft: Any, one: int, two: int, c: int, king: int) -> float:
    rest_one, rest_two = without(one, two, c)
    best = -w[W_DRAW_SELF]
    x = followers(rest_one, c)
    while x:
        y = lowest_bit(x)
        x &= x - 1
        v = value_1(w, tb, ft, rest_one, rest_two, y, float(POINTS[y]), king)
        if v > best:
            best = v
    return best


@inner
def value_2(w: Any, tb: Any, ft: Any, one: int, two: int, c: int, shed: float, king: int) -> float:
    again, nk = turn_goes_on(tb, c, king)
    if bit_count(one) + bit_count(two) == 1:
        return shed - w[W_DRAW_SELF] if again else shed + w[W_OUT]
    v = shed + next_2(w, tb, ft, one, two, c, nk) if again else shed
    return value_after(w, tb, ft, one, two, c, king, again, v)


@inner
def next_3(w: Any, tb: Any, ft: Any, one: int, two: int, c: int, king: int) -> float:
    rest_one, rest_two = without(one, two, c)
    best = -w[W_DRAW_SELF]
    x = followers(rest_one, c)
    while x:
        y = lowest_bit(x)
        x &= x - 1
        v = value_2(w, tb, ft, rest_one, rest_two, y, float(POINTS[y]), king)
        if v > best:
            best = v
    return best


@inner
def play_value(
    w: Any, tb: Any, ft: Any, one: int, two: int, c: int, shed: float, king: int
) -> float:
    """``_value(t, h, c, shed, king_left, 3)``: playing ``c`` from the hand ``(one, two)``
    with ``king`` cards of a king's sequence left (R9.3), the turn's continuation looked at
    three plays deep."""
    again, nk = turn_goes_on(tb, c, king)
    if bit_count(one) + bit_count(two) == 1:
        return shed - w[W_DRAW_SELF] if again else shed + w[W_OUT]
    v = shed + next_3(w, tb, ft, one, two, c, nk) if again else shed
    return value_after(w, tb, ft, one, two, c, king, again, v)
