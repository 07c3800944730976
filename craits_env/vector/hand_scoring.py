"""Scoring a hand and ending it, compiled: ``scoring.score_ranks`` and ``Game._end_hand``.

A seat's leftover cards score by R8.2-R8.4 (:func:`score_hand`); :func:`end_hand` adds
them to the scores, records the hand's points in the row's ``POINTS`` area (card points
and the pressures at the deal and now: ``layout`` explains the exact representation) and
moves the deal (R2.4).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..actions import PHASE_GAME_OVER
from ..cards import NUM_RANKS
from ..scoring import GOING_OUT_BONUS, LONELY_THREE_POINTS, ONLY_THREES_POINTS
from .card_tables import ACE, CANCEL_ORDER, EIGHT, RANK_POINTS, THREE
from .jit import inner
from .layout import (
    DIRTY_ALL,
    HELD1,
    HELD2,
    HP_CARDS,
    HP_K0,
    HP_K1,
    I_DEALER,
    I_DIRECTION,
    I_DIRTY,
    I_HAND_INDEX,
    I_PHASE,
    P_DEALER_FOLLOWS_DIRECTION,
    P_GOING_OUT_BONUS,
    P_PLAYERS,
    P_PUNITIVE_THREES,
    P_THREE_POINTS,
    P_THREES_CANCEL_EIGHTS,
    POINTS,
    S_HAND_LEN,
    S_OUT,
    S_POINTS,
    S_PRESSURES,
    S_PRESSURES_AT_DEAL,
)


@inner
def _can_cancel(p: Any, rank: int) -> bool:
    if rank == EIGHT:
        return p[P_THREES_CANCEL_EIGHTS] != 0
    if rank == ACE:
        return p[P_PUNITIVE_THREES] == 0
    return True


@inner
def _rank_count(st: Any, b: int, q: int, rank: int) -> int:
    """Copies of cards of ``rank`` in seat ``q``'s hand."""
    k = 0
    for suit in range(4):
        bit = 1 << (suit * NUM_RANKS + rank)
        if st[b, HELD1 + q] & bit:
            k += 1
        if st[b, HELD2 + q] & bit:
            k += 1
    return k


@inner
def score_hand(st: Any, p: Any, b: int, q: int) -> int:
    """``scoring.score_ranks`` of seat ``q``'s hand (R8.2-R8.4)."""
    held = st[b, S_HAND_LEN + q]
    if held == 0:
        return 0
    threes = _rank_count(st, b, q, np.int64(THREE))
    if threes == held:
        return ONLY_THREES_POINTS * threes
    total = 0
    skip = threes  # each three cancels one of the highest cancellable cards
    for i in range(CANCEL_ORDER.shape[0]):
        rank = CANCEL_ORDER[i]
        k = _rank_count(st, b, q, rank)
        if threes > 0 and _can_cancel(p, rank):
            gone = min(skip, k)
            skip -= gone
            k -= gone
        total += RANK_POINTS[rank] * k
    if threes > 0:
        cancelled = threes - skip
        if p[P_PUNITIVE_THREES] != 0:
            total += cancelled * p[P_THREE_POINTS] + skip * LONELY_THREE_POINTS
        else:
            total += threes * p[P_THREE_POINTS]
    return total


@inner
def end_hand(st: Any, cd: Any, p: Any, b: int) -> None:
    """``Game._end_hand``: score the hand (R8), move the deal (R2.4); the hand is over."""
    n = p[P_PLAYERS]
    h = st[b, I_HAND_INDEX]
    out_points = GOING_OUT_BONUS if p[P_GOING_OUT_BONUS] != 0 else 0
    for q in range(n):
        card_points = out_points if st[b, S_OUT + q] == 1 else score_hand(st, p, b, q)
        st[b, S_POINTS + q] += card_points
        k = POINTS + 3 * (h * n + q)
        st[b, k + HP_CARDS] = card_points
        st[b, k + HP_K0] = st[b, S_PRESSURES_AT_DEAL + q]
        st[b, k + HP_K1] = st[b, S_PRESSURES + q]
    st[b, I_DIRTY] = DIRTY_ALL
    st[b, I_HAND_INDEX] = h + 1
    if p[P_DEALER_FOLLOWS_DIRECTION] != 0 and st[b, I_DIRECTION] == -1:
        st[b, I_DEALER] = (st[b, I_DEALER] - 1 + n) % n
    else:
        st[b, I_DEALER] = (st[b, I_DEALER] + 1) % n
        st[b, I_DIRECTION] = 1
    st[b, I_PHASE] = PHASE_GAME_OVER
