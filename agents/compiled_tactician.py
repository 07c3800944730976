"""``TacticianAgent`` compiled: its decisions over a VectorGame row, :func:`tactician_action`.

Statement for statement :class:`craits.agents.heuristics.TacticianAgent`: the table of a
decision (:func:`fill_table`, its ``_Table``), every playable card's value
(:func:`play_values`, with :mod:`craits.agents.compiled_values`), the count and the suit call.
:mod:`craits.agents.compiled_expert` builds the expert on the same pieces.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from craits_env.actions import CALL_BASE, DECLARE, DRAW, PHASE_CALL_SUIT, PHASE_COUNT, PHASE_DECLARE
from craits_env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from craits_env.vector import rows
from craits_env.vector.jit import entry, inner, unowned
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
    P_SEVEN_FAR,
    S_HAND_LEN,
)

from .compiled_cards import (
    CARDS,
    PLAIN_BITS,
    POINTS,
    RANK_BITS,
    SUIT_BITS,
    THREE,
    copies,
    lowest_bit,
)
from .compiled_values import (
    F_P_NO_COUNTER,
    T_DANGER,
    T_DIRECTION,
    T_EXPERT,
    T_FACE,
    T_JACK_RUN,
    T_ME,
    T_N,
    T_NXT,
    T_PRV,
    T_SEVEN_NEXT,
    T_SIZES,
    TABLE_FLOATS,
    TABLE_INTS,
    W_CALL_BASE_WEIGHT,
    W_THREAT,
    W_THREAT_LEN,
    count_ranks,
    hand_points,
    p_no_counter,
    play_value,
    shed_value,
)

NO_ACTION = -1
SCRATCH_INTS = TABLE_INTS + 32  # the entries' scratch space (the expert's counts after the table)
SCRATCH_FLOATS = TABLE_FLOATS + NUM_CARDS  # the table's floats, then a value per card


@inner
def fill_table(st: Any, p: Any, w: Any, b: int, tb: Any, ft: Any) -> None:
    """``_Table`` of row ``b``'s acting seat: ``tb`` and ``ft`` (the tactician's, ``T_EXPERT``
    off: the expert sets its own ``F_P_NO_COUNTER`` and the flag after this)."""
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
    tb[T_EXPERT] = 0
    last = np.int64(w[W_THREAT_LEN]) - 1
    danger = 1 << 30
    for q in range(n):
        h = st[b, S_HAND_LEN + q]
        tb[T_SIZES + q] = h
        ft[q] = w[W_THREAT + h] if h < last else w[W_THREAT + last]
        if q != me and h < danger:
            danger = h
    ft[me] = 0.0
    tb[T_DANGER] = danger
    ft[F_P_NO_COUNTER] = p_no_counter(w, tb[T_SIZES + tb[T_NXT]])


@inner
def play_values(st: Any, p: Any, w: Any, b: int, cards: int, tb: Any, ft: Any, values: Any) -> None:
    """``values[c]`` := the value of playing each card ``c`` of ``cards`` (two or more, held by
    row ``b``'s acting seat; ``tb``, ``ft`` filled): ``TacticianAgent.play``'s list."""
    q = st[b, I_CURRENT]
    one, two = st[b, HELD1 + q], st[b, HELD2 + q]
    king = st[b, I_KING_LEFT]
    threes = copies(one, two, RANK_BITS[THREE]) > 0
    now = 0
    if threes:
        count_ranks(tb, one, two)
        now = hand_points(p, tb, -1)
    x = cards
    while x:
        c = lowest_bit(x)
        x &= x - 1
        shed = shed_value(p, tb, c, now) if threes else float(POINTS[c])
        values[c] = play_value(w, tb, ft, one, two, c, shed, king)


@inner
def first_best(cards: int, values: Any) -> int:
    """The card of ``cards`` of highest value, the lowest id on a tie (``_choose``)."""
    best, best_value = NO_ACTION, 0.0
    x = cards
    while x:
        c = lowest_bit(x)
        x &= x - 1
        if best == NO_ACTION or values[c] > best_value:
            best, best_value = c, values[c]
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
def call_weights(st: Any, w: Any, b: int, weight: Any) -> None:
    """``weight[suit]`` := ``TacticianAgent.call``'s weight: per non-wild card held in the
    suit, ``CALL_BASE_WEIGHT`` plus its points (exact integers in floats: any order)."""
    q = st[b, I_CURRENT]
    one, two = st[b, HELD1 + q], st[b, HELD2 + q]
    for suit in range(NUM_SUITS):
        total = 0.0
        x = one & PLAIN_BITS[suit]
        while x:
            c = lowest_bit(x)
            x &= x - 1
            for _ in range(2 if (two >> c) & 1 else 1):
                total += w[W_CALL_BASE_WEIGHT] + POINTS[c]
        weight[suit] = total


@inner
def best_call(legal: int, weight: Any) -> int:
    """The legal suit call of highest weight, the lowest suit on a tie."""
    best, best_w = NO_ACTION, -1e18
    for suit in range(NUM_SUITS):
        if (legal >> (CALL_BASE + suit)) & 1 and weight[suit] > best_w:
            best, best_w = CALL_BASE + suit, weight[suit]
    return best


@inner
def tactician_action(st: Any, p: Any, w: Any, b: int, tb: Any, ft: Any, work: Any) -> int:
    """``TacticianAgent.act`` for row ``b``'s acting seat (``NO_ACTION`` once it is over);
    ``work``: NUM_CARDS floats of scratch."""
    legal = rows.legal_bits(st, p, b)
    if legal == 0:
        return NO_ACTION
    if legal & (legal - 1) == 0:  # every decision is asked, even a single one (R3.6)
        return lowest_bit(legal)
    phase = st[b, I_PHASE]
    if phase == PHASE_DECLARE:
        return DECLARE  # R7.1
    if phase == PHASE_CALL_SUIT:
        call_weights(st, w, b, work)
        return best_call(legal, work)
    if phase == PHASE_COUNT:
        return tactician_count(st, b, legal)
    cards = legal & CARDS
    if cards == 0:
        return DRAW
    if cards & (cards - 1) == 0:  # never a voluntary draw: playing sheds a card
        return lowest_bit(cards)
    fill_table(st, p, w, b, tb, ft)
    play_values(st, p, w, b, cards, tb, ft, work)
    return first_best(cards, work)


@entry
def tactician_actions(st: Any, p: Any, w: Any, which: Any, out: Any, si: Any, sf: Any) -> None:
    """``out[i]`` := :func:`tactician_action` of row ``which[i]``; ``si``, ``sf``: int64 and
    float64 scratch space (``SCRATCH_INTS``, ``SCRATCH_FLOATS``) that the caller keeps."""
    st, p, w, si, sf = unowned(st), unowned(p), unowned(w), unowned(si), unowned(sf)
    tb, ft, work = si[:TABLE_INTS], sf[:TABLE_FLOATS], sf[TABLE_FLOATS:]
    for i in range(which.shape[0]):
        out[i] = tactician_action(st, p, w, which[i], tb, ft, work)
