"""Turns and the cards' functions, compiled: ``Game._resolve`` and the turn order around it.

:func:`resolve` applies the pending card's function (R4, R5, R9), going out (R6.1) and the
next turn; :func:`begin_turn` pays a pending one-card penalty instead of a turn (R7.1);
:func:`after_call` asks the one-card declaration first; :func:`apply_starter` plays the
starter in the dealer's name (R2.5). Statement for statement the Python engine's methods
of the same names (``True``: the hand ended).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..actions import PHASE_CALL_SUIT, PHASE_COUNT, PHASE_DECLARE, PHASE_PLAY
from ..cards import NUM_RANKS
from ..game_state import CTX_COUNT, CTX_FREE, CTX_STARTER
from .card_tables import EIGHT, FIVE, FOUR, JACK, KING, NINE, QUEEN_OF_SPADES, SEVEN, SIX, TEN, TWO
from .hand_scoring import end_hand
from .jit import inline, inner
from .layout import (
    I_COUNT,
    I_CURRENT,
    I_DEALER,
    I_DIRECTION,
    I_EXTRA_PLAY,
    I_JACK_RUN,
    I_KING_LEFT,
    I_PEND_CARD,
    I_PEND_CTX,
    I_PHASE,
    I_TOP,
    ONE_CARD_DECLARE,
    P_COUNT_OUT_CAN_RETURN,
    P_FACE_CARDS,
    P_ONE_CARD,
    P_PLAYERS,
    P_SEVEN_FAR,
    S_HAND_LEN,
    S_PENDING,
)
from .piles import append_out, draw, next_seat


@inline
def begin_turn(st: Any, cd: Any, p: Any, b: int, q: int) -> bool:
    """``Game._begin_turn``: a pending one-card penalty is paid instead of the turn (R7.1)."""
    returning = p[P_COUNT_OUT_CAN_RETURN] != 0
    while st[b, S_PENDING + q] != 0:
        st[b, S_PENDING + q] = 0
        if draw(st, cd, p, b, q, np.int64(2)):
            return True
        q = next_seat(st, p, b, q)
        if st[b, I_COUNT] != 0 and not returning:
            while st[b, S_HAND_LEN + q] == 0:
                q = next_seat(st, p, b, q)
    st[b, I_CURRENT] = q
    st[b, I_PHASE] = PHASE_COUNT if st[b, I_COUNT] != 0 else PHASE_PLAY
    st[b, I_EXTRA_PLAY] = 0
    return False


@inline
def same_turn(st: Any, b: int, q: int) -> None:
    """Another play in the same turn (a 6, a king's sequence): not a new turn (R7.1)."""
    st[b, I_CURRENT] = q
    st[b, I_PHASE] = PHASE_PLAY
    st[b, I_EXTRA_PLAY] = 1


@inner
def continue_count(st: Any, cd: Any, p: Any, b: int, q: int) -> bool:
    """``Game._continue_count``: going out in the count (R6.2), then the next player."""
    if st[b, S_HAND_LEN + q] == 0:
        append_out(st, b, q)
        anyone = False
        for r in range(p[P_PLAYERS]):
            if st[b, S_HAND_LEN + r] != 0:
                anyone = True
        if not anyone:
            end_hand(st, cd, p, b)
            return True
    r = next_seat(st, p, b, q)
    if p[P_COUNT_OUT_CAN_RETURN] == 0:
        while st[b, S_HAND_LEN + r] == 0:
            r = next_seat(st, p, b, r)
    return begin_turn(st, cd, p, b, r)


@inner
def resolve(st: Any, cd: Any, p: Any, b: int, q: int) -> bool:
    """``Game._resolve``: the pending card's function (R4, R5, R9), going out (R6.1), the turn."""
    ctx = st[b, I_PEND_CTX]
    if ctx == CTX_COUNT:
        return continue_count(st, cd, p, b, q)
    if ctx == CTX_FREE:  # R9.3: the sequence goes on
        same_turn(st, b, q)
        return False
    card = st[b, I_PEND_CARD]
    rank = card % NUM_RANKS
    face = p[P_FACE_CARDS] != 0
    if rank == TWO:  # R5.1
        st[b, I_COUNT] = 2
        return continue_count(st, cd, p, b, q)
    if rank == SIX:  # R4.1
        same_turn(st, b, q)
        return False
    if rank == KING and face:  # R9.3
        st[b, I_KING_LEFT] = 3
        same_turn(st, b, q)
        return False
    if rank == TEN:  # R3.5: reverse first
        st[b, I_DIRECTION] = -st[b, I_DIRECTION]
    nxt = next_seat(st, p, b, q)
    if rank == FOUR:  # R4, R4.2
        nxt = next_seat(st, p, b, nxt)
    elif rank == FIVE:  # every other player, in turn order from the next one
        r = nxt
        for _ in range(p[P_PLAYERS] - 1):
            if draw(st, cd, p, b, r, np.int64(1)):
                return True
            r = next_seat(st, p, b, r)
    elif rank == SEVEN:  # R4.3
        far = p[P_SEVEN_FAR] != 0 and p[P_PLAYERS] > 3
        hit = next_seat(st, p, b, nxt) if far else nxt
        if draw(st, cd, p, b, hit, np.int64(1)):
            return True
    elif face:
        if rank == JACK:  # R9.1, R9.4
            if draw(st, cd, p, b, nxt, 2 * st[b, I_JACK_RUN]):
                return True
            nxt = next_seat(st, p, b, nxt)
        elif card == QUEEN_OF_SPADES:  # R9.2
            if draw(st, cd, p, b, nxt, np.int64(5)):
                return True
            nxt = next_seat(st, p, b, nxt)
    if st[b, S_HAND_LEN + q] == 0:  # R6.1
        append_out(st, b, q)
        end_hand(st, cd, p, b)
        return True
    return begin_turn(st, cd, p, b, nxt)


@inline
def after_call(st: Any, cd: Any, p: Any, b: int, q: int) -> bool:
    """After the suit call (if any): the one-card declaration (R7.1), then the function."""
    if (
        st[b, S_HAND_LEN + q] == 1
        and st[b, I_PEND_CTX] != CTX_STARTER
        and p[P_ONE_CARD] == ONE_CARD_DECLARE
    ):
        st[b, I_PHASE] = PHASE_DECLARE
        return False
    return resolve(st, cd, p, b, q)


@inner
def apply_starter(st: Any, cd: Any, p: Any, b: int) -> bool:
    """R2.5: the starter counts as played by the dealer."""
    d = st[b, I_DEALER]
    st[b, I_CURRENT] = d
    starter = st[b, I_TOP]
    st[b, I_PEND_CARD] = starter
    st[b, I_PEND_CTX] = CTX_STARTER
    if starter % NUM_RANKS in (EIGHT, NINE):
        st[b, I_PHASE] = PHASE_CALL_SUIT
        st[b, I_EXTRA_PLAY] = 1
        return False
    return resolve(st, cd, p, b, d)
