"""``TacticianAgent`` compiled: its play values, count and suit call over a VectorGame row.

Statement for statement :class:`craits.agents.heuristics.TacticianAgent` (read it beside
this): :func:`play_value` is its ``_value`` and ``_continuation`` (the same depth, the same
order of float operations, so the same doubles), :func:`shed_value` its
``_shed_values`` (exact integers), :func:`tactician_action` its ``act``. The hand is the
acting seat's two masks (``HELD1``/``HELD2``, every copy counted as the Python list holds it);
the table (``_Table``) is :func:`fill_table`'s two small arrays. The weights are not compiled
in: :func:`weights` reads them from the class when a bot is made (``w[W_*]``), so the twin
follows a change of the Python bot's weights without a recompile.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from craits_env.actions import CALL_BASE, DECLARE, DRAW, PHASE_CALL_SUIT, PHASE_COUNT, PHASE_DECLARE
from craits_env.cards import NUM_RANKS, NUM_SUITS
from craits_env.rules import MAX_PLAYERS
from craits_env.scoring import LONELY_THREE_POINTS, ONLY_THREES_POINTS
from craits_env.vector import rows
from craits_env.vector.jit import entry, inner
from craits_env.vector.layout import (
    HELD1,
    HELD2,
    I_CURRENT,
    I_DIRECTION,
    I_JACK_RUN,
    I_KING_LEFT,
    I_PHASE,
    P_FACE_CARDS,
    P_PLAYERS,
    P_PUNITIVE_THREES,
    P_SEVEN_FAR,
    P_THREE_POINTS,
    P_THREES_CANCEL_EIGHTS,
    S_HAND_LEN,
)

from .compiled_cards import (
    ACE,
    CARDS,
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

NO_ACTION = -1

WEIGHT_NAMES = (
    "SKIP", "DRAW_OPPONENT", "DRAW_SELF", "REVERSE", "COUNT_RISK", "COUNTER_SHARE",
    "KEEP_EIGHT", "KEEP_NINE", "KEEP_SMALL", "KEEP_DANGER", "OUT", "LAST_WILD", "LAST_BAD",
    "LAST_COUNTER", "SUIT_KEEP", "CALL_BASE_WEIGHT",
)  # fmt: skip
"""The tactician's weights (class attributes), in the order of ``w[W_*]``."""
(
    W_SKIP, W_DRAW_OPPONENT, W_DRAW_SELF, W_REVERSE, W_COUNT_RISK, W_COUNTER_SHARE,
    W_KEEP_EIGHT, W_KEEP_NINE, W_KEEP_SMALL, W_KEEP_DANGER, W_OUT, W_LAST_WILD, W_LAST_BAD,
    W_LAST_COUNTER, W_SUIT_KEEP, W_CALL_BASE_WEIGHT,
) = range(len(WEIGHT_NAMES))  # fmt: skip
W_THREAT_LEN = len(WEIGHT_NAMES)  # then THREAT's length and its entries
W_THREAT = W_THREAT_LEN + 1

# The table of a decision (``_Table``): tb[T_*] (int64), then the hand sizes at T_SIZES + seat.
T_N, T_ME, T_DIRECTION, T_NXT, T_PRV, T_DANGER, T_JACK_RUN, T_FACE, T_SEVEN_NEXT = range(9)
T_SIZES = 9
TABLE_INTS = T_SIZES + MAX_PLAYERS

# R4, R5: the ranks whose function acts on the others (and with face_cards J and Q♠, R9).
ACTIVE = np.array([r in (TWO, FOUR, FIVE, SEVEN, TEN) for r in range(NUM_RANKS)], np.bool_)
# The ranks in the order threes cancel them (R8.3): the most points first.
CANCEL_ORDER = np.array(sorted(range(NUM_RANKS), key=lambda r: -RANK_POINTS[r]), np.int64)


def weights(cls: Any) -> np.ndarray:
    """The weights of a bot class (``TacticianAgent`` or a subclass) as ``w[W_*]``, float64."""
    threat = [float(x) for x in cls.THREAT]
    values = [float(getattr(cls, name)) for name in WEIGHT_NAMES]
    return np.array([*values, float(len(threat)), *threat], np.float64)


@inner
def fill_table(st: Any, p: Any, w: Any, b: int, tb: Any, threat: Any) -> None:
    """``_Table`` of row ``b``'s acting seat: ``tb`` (ints) and each seat's ``threat``."""
    n = p[P_PLAYERS]
    me = st[b, I_CURRENT]
    d = st[b, I_DIRECTION]
    tb[T_N] = n
    tb[T_ME] = me
    tb[T_DIRECTION] = d
    tb[T_NXT] = (me + d) % n
    tb[T_PRV] = (me - d) % n
    tb[T_JACK_RUN] = st[b, I_JACK_RUN]
    tb[T_FACE] = p[P_FACE_CARDS]
    tb[T_SEVEN_NEXT] = p[P_SEVEN_FAR] == 0
    last = np.int64(w[W_THREAT_LEN]) - 1
    danger = 1 << 30
    for q in range(n):
        h = st[b, S_HAND_LEN + q]
        tb[T_SIZES + q] = h
        threat[q] = w[W_THREAT + h] if h < last else w[W_THREAT + last]
        if q != me and h < danger:
            danger = h
    threat[me] = 0.0
    tb[T_DANGER] = danger


@inner
def can_cancel(p: Any, rank: int) -> bool:
    """A 3 may cancel a card of ``rank`` (R8.3, with threes_cancel_eights and punitive_threes)."""
    if rank == EIGHT:
        return p[P_THREES_CANCEL_EIGHTS] != 0
    if rank == ACE:
        return p[P_PUNITIVE_THREES] == 0
    return rank != THREE


@inner
def hand_points(p: Any, one: int, two: int) -> int:
    """``heuristics._points`` of the hand ``(one, two)``: its score (R8.2-R8.4)."""
    threes = copies(one, two, RANK_BITS[THREE])
    fixed = cancellable = count = 0
    for r in range(NUM_RANKS):
        if r == THREE:
            continue
        k = copies(one, two, RANK_BITS[r])
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
        k = copies(one, two, RANK_BITS[r])
        k = k if k < left else left
        cancellable -= k * RANK_POINTS[r]
        left -= k
    total = fixed + cancellable
    if p[P_PUNITIVE_THREES] != 0:
        return total + cancelled * p[P_THREE_POINTS] + (threes - cancelled) * LONELY_THREE_POINTS
    return total + threes * p[P_THREE_POINTS]


@inner
def shed_value(p: Any, one: int, two: int, c: int, now: int) -> float:
    """``_shed_values``' entry for card ``c`` of a hand holding a 3 and scoring ``now``."""
    rest_one, rest_two = without(one, two, c)
    return float(now - hand_points(p, rest_one, rest_two))


@inner
def keep_wild(w: Any, tb: Any, rank: int, left: int) -> float:
    """``_keep_wild``: keeping an 8 or 9 with ``left`` cards left after the play."""
    keep = w[W_KEEP_EIGHT] if rank == EIGHT else w[W_KEEP_NINE]
    if left <= 1:
        keep *= w[W_KEEP_SMALL]
    if tb[T_DANGER] <= 1:
        keep *= w[W_KEEP_DANGER]
    return keep


@inner
def count_value(w: Any, tb: Any, threat: Any, defended: bool) -> float:
    """``_count_value``: starting the count at the next player (R5.1)."""
    nxt = tb[T_NXT]
    # (1.0 - COUNTER_SHARE) ** size: Python's float power is C's pow(); so is math.pow here
    # (numba's ``**`` with an int exponent multiplies instead, which may differ in the last bit).
    p_none = math.pow(1.0 - w[W_COUNTER_SHARE], float(tb[T_SIZES + nxt]))
    risk = 0.0 if defended else (1.0 - p_none) * w[W_COUNT_RISK]
    return p_none * w[W_DRAW_OPPONENT] * 2.0 * threat[nxt] - risk


@inner
def effect(w: Any, tb: Any, threat: Any, one: int, two: int, c: int, rank: int) -> float:
    """``_effect``: what the card's function does to the others (R4, R5, R9)."""
    n = tb[T_N]
    nxt = tb[T_NXT]
    if rank == FOUR:
        return w[W_SKIP] * threat[nxt] if n > 2 else 0.0
    if rank == FIVE:
        total = 0.0
        for q in range(n):
            total += threat[q]
        return w[W_DRAW_OPPONENT] * total
    if rank == SEVEN:
        if tb[T_SEVEN_NEXT]:
            return w[W_DRAW_OPPONENT] * threat[nxt]
        victim = (nxt + tb[T_DIRECTION]) % n if n > 3 else nxt
        return w[W_DRAW_OPPONENT] * threat[victim]
    if rank == TEN:
        return w[W_REVERSE] * (threat[nxt] - threat[tb[T_PRV]]) if n > 2 else 0.0
    if rank == TWO:
        return count_value(w, tb, threat, copies(one, two, COUNTER_BITS) > 1)
    if tb[T_FACE] and n > 2:
        if rank == JACK:
            run = tb[T_JACK_RUN] + 1
            return threat[nxt] * (w[W_SKIP] + w[W_DRAW_OPPONENT] * 2 * run)
        if c == QUEEN_SPADES:
            return threat[nxt] * (w[W_SKIP] + w[W_DRAW_OPPONENT] * 5)
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
    w: Any, tb: Any, threat: Any, one: int, two: int, c: int, king: int, again: bool, v: float
) -> float:
    """``_value`` from ``v`` (the points shed, plus the turn's continuation when ``again``):
    the wild kept, the suit kept, the card's function, the last card (the hand holds two or
    more cards)."""
    rank = c % NUM_RANKS
    face = tb[T_FACE] != 0
    free = king > 1
    left = bit_count(one) + bit_count(two) - 1
    if rank in (EIGHT, NINE):
        v -= keep_wild(w, tb, rank, left)
    elif not again:
        v += w[W_SUIT_KEEP] * (copies(one, two, PLAIN_BITS[c // NUM_RANKS]) - 1)
    if not free and (ACTIVE[rank] or (face and (rank == JACK or c == QUEEN_SPADES))):
        v += effect(w, tb, threat, one, two, c, rank)
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
def value_0(
    w: Any, tb: Any, threat: Any, one: int, two: int, c: int, shed: float, king: int
) -> float:
    again, _ = turn_goes_on(tb, c, king)
    if bit_count(one) + bit_count(two) == 1:  # going out (R6)
        return shed - w[W_DRAW_SELF] if again else shed + w[W_OUT]
    return value_after(w, tb, threat, one, two, c, king, again, shed + 0.0 if again else shed)


@inner
def next_1(w: Any, tb: Any, threat: Any, one: int, two: int, c: int, king: int) -> float:
    rest_one, rest_two = without(one, two, c)
    best = -w[W_DRAW_SELF]
    x = followers(rest_one, c)  # a second copy has the same value: one look is enough
    while x:
        y = lowest_bit(x)
        x &= x - 1
        v = value_0(w, tb, threat, rest_one, rest_two, y, float(POINTS[y]), king)
        if v > best:
            best = v
    return best


@inner
def value_1(
    w: Any, tb: Any, threat: Any, one: int, two: int, c: int, shed: float, king: int
) -> float:
    again, nk = turn_goes_on(tb, c, king)
    if bit_count(one) + bit_count(two) == 1:
        return shed - w[W_DRAW_SELF] if again else shed + w[W_OUT]
    v = shed + next_1(w, tb, threat, one, two, c, nk) if again else shed
    return value_after(w, tb, threat, one, two, c, king, again, v)


@inner
def next_2(w: Any, tb: Any, threat: Any, one: int, two: int, c: int, king: int) -> float:
    rest_one, rest_two = without(one, two, c)
    best = -w[W_DRAW_SELF]
    x = followers(rest_one, c)
    while x:
        y = lowest_bit(x)
        x &= x - 1
        v = value_1(w, tb, threat, rest_one, rest_two, y, float(POINTS[y]), king)
        if v > best:
            best = v
    return best


@inner
def value_2(
    w: Any, tb: Any, threat: Any, one: int, two: int, c: int, shed: float, king: int
) -> float:
    again, nk = turn_goes_on(tb, c, king)
    if bit_count(one) + bit_count(two) == 1:
        return shed - w[W_DRAW_SELF] if again else shed + w[W_OUT]
    v = shed + next_2(w, tb, threat, one, two, c, nk) if again else shed
    return value_after(w, tb, threat, one, two, c, king, again, v)


@inner
def next_3(w: Any, tb: Any, threat: Any, one: int, two: int, c: int, king: int) -> float:
    rest_one, rest_two = without(one, two, c)
    best = -w[W_DRAW_SELF]
    x = followers(rest_one, c)
    while x:
        y = lowest_bit(x)
        x &= x - 1
        v = value_2(w, tb, threat, rest_one, rest_two, y, float(POINTS[y]), king)
        if v > best:
            best = v
    return best


@inner
def play_value(
    w: Any, tb: Any, threat: Any, one: int, two: int, c: int, shed: float, king: int
) -> float:
    """``_value(t, h, c, shed, king_left, 3)``: playing ``c`` from the hand ``(one, two)``
    with ``king`` cards of a king's sequence left (R9.3), the turn's continuation looked at
    three plays deep."""
    again, nk = turn_goes_on(tb, c, king)
    if bit_count(one) + bit_count(two) == 1:
        return shed - w[W_DRAW_SELF] if again else shed + w[W_OUT]
    v = shed + next_3(w, tb, threat, one, two, c, nk) if again else shed
    return value_after(w, tb, threat, one, two, c, king, again, v)


@inner
def tactician_play(st: Any, p: Any, w: Any, b: int, legal: int, tb: Any, threat: Any) -> int:
    """``TacticianAgent.play``: the playable card of highest value, the lowest id on a tie."""
    cards = legal & CARDS
    if cards == 0:
        return DRAW
    if cards & (cards - 1) == 0:  # never a voluntary draw: playing sheds a card
        return lowest_bit(cards)
    q = st[b, I_CURRENT]
    one, two = st[b, HELD1 + q], st[b, HELD2 + q]
    fill_table(st, p, w, b, tb, threat)
    king = st[b, I_KING_LEFT]
    threes = copies(one, two, RANK_BITS[THREE]) > 0
    now = hand_points(p, one, two) if threes else 0
    best, best_value = NO_ACTION, 0.0
    x = cards
    while x:
        c = lowest_bit(x)
        x &= x - 1
        shed = shed_value(p, one, two, c, now) if threes else float(POINTS[c])
        v = play_value(w, tb, threat, one, two, c, shed, king)
        if best == NO_ACTION or v > best_value:
            best, best_value = c, v
    return best


@inner
def tactician_count(st: Any, b: int, legal: int) -> int:
    """``TacticianAgent.count``: a two before an ace, then the longest suit, then the lowest id."""
    q = st[b, I_CURRENT]
    one, two = st[b, HELD1 + q], st[b, HELD2 + q]
    best, best_rank, best_held = DRAW, -1, -1
    x = legal & CARDS
    while x:
        c = lowest_bit(x)
        x &= x - 1
        rank, held = c % NUM_RANKS, copies(one, two, SUIT_BITS[c // NUM_RANKS])
        if rank > best_rank or (rank == best_rank and held > best_held):
            best, best_rank, best_held = c, rank, held
    return best


@inner
def tactician_call(st: Any, w: Any, b: int, legal: int) -> int:
    """``TacticianAgent.call``: per suit, its non-wild cards held, each ``CALL_BASE_WEIGHT``
    plus its points (exact integers as floats, so the order of the sum is immaterial)."""
    q = st[b, I_CURRENT]
    one, two = st[b, HELD1 + q], st[b, HELD2 + q]
    best, best_w = NO_ACTION, -1e18
    for suit in range(NUM_SUITS):
        if not (legal >> (CALL_BASE + suit)) & 1:
            continue
        weight = 0.0
        x = one & PLAIN_BITS[suit]
        while x:
            c = lowest_bit(x)
            x &= x - 1
            for _ in range(2 if (two >> c) & 1 else 1):
                weight += w[W_CALL_BASE_WEIGHT] + POINTS[c]
        if best == NO_ACTION or weight > best_w:
            best, best_w = CALL_BASE + suit, weight
    return best


@inner
def tactician_action(st: Any, p: Any, w: Any, b: int, tb: Any, threat: Any) -> int:
    """``TacticianAgent.act`` for row ``b``'s acting seat (``NO_ACTION`` once it is over)."""
    legal = rows.legal_bits(st, p, b)
    if legal == 0:
        return NO_ACTION
    if legal & (legal - 1) == 0:  # every decision is asked, even a single one (R3.6)
        return lowest_bit(legal)
    phase = st[b, I_PHASE]
    if phase == PHASE_DECLARE:
        return DECLARE  # R7.1
    if phase == PHASE_CALL_SUIT:
        return tactician_call(st, w, b, legal)
    if phase == PHASE_COUNT:
        return tactician_count(st, b, legal)
    return tactician_play(st, p, w, b, legal, tb, threat)


@entry
def tactician_actions(st: Any, p: Any, w: Any, which: Any, out: Any) -> None:
    """``out[i]`` := :func:`tactician_action` of row ``which[i]``."""
    tb = np.zeros(TABLE_INTS, np.int64)
    threat = np.zeros(MAX_PLAYERS, np.float64)
    for i in range(which.shape[0]):
        out[i] = tactician_action(st, p, w, which[i], tb, threat)
