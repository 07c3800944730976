"""A decision, compiled: the legal actions (R3, R4, R5, R7) and ``Game.apply``.

:func:`legal_bits` is the one source of the legal actions — bit ``a`` set when action ``a``
is in ``Game.legal_actions()`` — read by :func:`is_legal` (the step's check) and
:func:`write_mask` (the legal mask); :func:`apply` applies a legal action and every
automatic event after it, dealing the next hand when it ends one (:mod:`.deal`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..actions import (
    CALL_BASE,
    DECLARE,
    DRAW,
    NUM_ACTIONS,
    PHASE_CALL_SUIT,
    PHASE_COUNT,
    PHASE_DECLARE,
    PHASE_PLAY,
    STAY_SILENT,
)
from ..cards import NUM_RANKS
from ..game_state import CTX_COUNT, CTX_FREE, CTX_NORMAL
from .card_tables import ACE, COUNTABLE, EIGHT, JACK, NINE, PLAYABLE
from .deal import advance
from .hand_scoring import end_hand
from .jit import inline, inner
from .layout import (
    DECLARERS,
    HELD1,
    I_ACTIVE_SUIT,
    I_COUNT,
    I_CURRENT,
    I_HAND_DECISIONS,
    I_JACK_RUN,
    I_KING_LEFT,
    I_NUM_DECLARERS,
    I_NUM_OUT,
    I_PEND_CARD,
    I_PEND_CTX,
    I_PHASE,
    I_TOP,
    P_DECISION_LIMIT,
    P_FORFEIT,
    P_VOLUNTARY_DRAW,
    S_PENDING,
)
from .piles import draw, next_seat, push_discard, remove_card
from .turns import after_call, apply_starter, begin_turn, resolve

ALL_CALLS = sum(1 << (CALL_BASE + suit) for suit in range(4))  # R3.2: any suit


@inline
def play(st: Any, cd: Any, p: Any, b: int, q: int, card: int) -> bool:
    """Play ``card`` outside the count (R3.4)."""
    remove_card(st, b, q, card)
    push_discard(st, cd, b, card)
    st[b, I_ACTIVE_SUIT] = card // NUM_RANKS
    rank = card % NUM_RANKS
    st[b, I_JACK_RUN] = st[b, I_JACK_RUN] + 1 if rank == JACK else 0  # R9.1
    if st[b, I_KING_LEFT] > 1:  # R9.3: the first two cards of a king's sequence
        st[b, I_KING_LEFT] -= 1
        st[b, I_PEND_CTX] = CTX_FREE
    else:
        st[b, I_KING_LEFT] = 0
        st[b, I_PEND_CTX] = CTX_NORMAL
    st[b, I_PEND_CARD] = card
    if rank in (EIGHT, NINE):  # R3.4: the suit call comes first
        st[b, I_PHASE] = PHASE_CALL_SUIT
        return False
    return after_call(st, cd, p, b, q)


@inline
def play_in_count(st: Any, cd: Any, p: Any, b: int, q: int, card: int) -> bool:
    """An ace (+1) or a two (+2) in the count (R5.2, R5.4)."""
    remove_card(st, b, q, card)
    push_discard(st, cd, b, card)
    st[b, I_ACTIVE_SUIT] = card // NUM_RANKS
    st[b, I_JACK_RUN] = 0
    st[b, I_COUNT] += 1 if card % NUM_RANKS == ACE else 2
    st[b, I_PEND_CARD] = card
    st[b, I_PEND_CTX] = CTX_COUNT
    return after_call(st, cd, p, b, q)


@inline
def declared(st: Any, cd: Any, p: Any, b: int, q: int, announced: bool) -> bool:
    """``Game._declared``: the one-card declaration made or not (R7.1-R7.3)."""
    if not announced:  # R7.1 "idiot!"
        if p[P_FORFEIT] != 0:
            st[b, S_PENDING + q] = 1
        elif draw(st, cd, p, b, q, np.int64(1)):  # R7.2 draw_one: at once, before the function
            return True
    m = st[b, I_NUM_DECLARERS]
    if m > 0:  # R7.3: declarations right after the deal
        m -= 1
        st[b, I_NUM_DECLARERS] = m
        if m > 0:
            st[b, I_CURRENT] = st[b, DECLARERS + m - 1]
            return False
        return apply_starter(st, cd, p, b)
    return resolve(st, cd, p, b, q)


@inline
def take_count(st: Any, cd: Any, p: Any, b: int, q: int) -> bool:
    """R5.3: draw as many cards as the count; the count ends."""
    if draw(st, cd, p, b, q, st[b, I_COUNT]):
        return True
    st[b, I_COUNT] = 0
    if st[b, I_NUM_OUT] > 0:  # R6.2: the hand ends when the count ends
        end_hand(st, cd, p, b)
        return True
    return begin_turn(st, cd, p, b, next_seat(st, p, b, q))


@inline
def allowed_cards(st: Any, b: int) -> int:
    """The current player's playable cards (R3.1, R5.2) as a 52-bit mask (play or count)."""
    held = st[b, HELD1 + st[b, I_CURRENT]]
    if st[b, I_PHASE] == PHASE_COUNT:
        return held & COUNTABLE
    return held & PLAYABLE[st[b, I_ACTIVE_SUIT] * NUM_RANKS + st[b, I_TOP] % NUM_RANKS]


@inline
def legal_bits(st: Any, p: Any, b: int) -> int:
    """Game ``b``'s legal actions as a 59-bit set: bit ``a`` = action ``a`` is in
    ``Game.legal_actions()`` (none once the game is over)."""
    phase = st[b, I_PHASE]
    if phase in (PHASE_PLAY, PHASE_COUNT):
        allowed = allowed_cards(st, b)  # bits 0-51: the cards (R3.1, R5.2)
        if allowed == 0 or p[P_VOLUNTARY_DRAW] != 0:  # R3.3, R5.3
            allowed |= 1 << DRAW
        return allowed
    if phase == PHASE_CALL_SUIT:
        card = st[b, I_PEND_CARD]
        if card % NUM_RANKS == NINE:  # R4: keep the suit or take the other of its colour
            suit = card // NUM_RANKS
            return (1 << (CALL_BASE + suit)) | (1 << (CALL_BASE + 3 - suit))
        return ALL_CALLS
    if phase == PHASE_DECLARE:
        return (1 << DECLARE) | (1 << STAY_SILENT)
    return 0


@inline
def is_legal(st: Any, p: Any, b: int, action: int) -> bool:
    """Whether ``action`` is in ``Game.legal_actions()`` of game ``b``."""
    if action < 0 or action >= NUM_ACTIONS:
        return False
    return (legal_bits(st, p, b) >> action) & 1 != 0


@inner
def write_mask(st: Any, p: Any, b: int, row: Any) -> None:
    """``row`` (59) := the legal mask of game ``b`` (all zeros once it is over)."""
    bits = legal_bits(st, p, b)
    for a in range(NUM_ACTIONS):
        row[a] = (bits >> a) & 1


@inner
def apply(st: Any, cd: Any, p: Any, sizes: Any, deck: Any, b: int, action: int) -> None:
    """``Game.apply`` of a legal ``action`` and every automatic event after it."""
    q = st[b, I_CURRENT]
    phase = st[b, I_PHASE]
    if phase == PHASE_PLAY:
        if action == DRAW:
            ended = draw(st, cd, p, b, q, np.int64(1))  # R3.3; ends a 6's or a king's turn
            if not ended:
                st[b, I_KING_LEFT] = 0
                ended = begin_turn(st, cd, p, b, next_seat(st, p, b, q))
        else:
            ended = play(st, cd, p, b, q, action)
    elif phase == PHASE_COUNT:
        if action == DRAW:
            ended = take_count(st, cd, p, b, q)
        else:
            ended = play_in_count(st, cd, p, b, q, action)
    elif phase == PHASE_CALL_SUIT:
        st[b, I_ACTIVE_SUIT] = action - CALL_BASE  # R3.2
        ended = after_call(st, cd, p, b, q)
    else:
        ended = declared(st, cd, p, b, q, action == DECLARE)
    if not ended:
        st[b, I_HAND_DECISIONS] += 1
        if st[b, I_HAND_DECISIONS] >= p[P_DECISION_LIMIT]:  # R12
            end_hand(st, cd, p, b)
            ended = True
    if ended:
        advance(st, cd, p, sizes, deck, b, deck[:0])
