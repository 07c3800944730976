"""Deals and new games, compiled: ``Game._start_hand``, ``Game._advance`` and ``Game.__init__``.

:func:`start_hand` shuffles and deals a hand from the row's generator (R2.3), asks the
declarations on the deal (R7.3) and applies the starter (R2.5); :func:`advance` deals
until a hand needs a decision or the game is over; :func:`new_game` begins a game in the
row (the first dealer drawn by R2.1 when not given) and :func:`auto_reset_game` begins
new games until one needs a decision.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..actions import PHASE_DECLARE, PHASE_GAME_OVER
from ..cards import NUM_CARDS, NUM_RANKS
from ..game_state import CTX_STARTER
from .card_tables import DEALER_STRENGTH, JACK
from .jit import inner
from .layout import (
    DEAL,
    DECLARERS,
    DIRTY_ALL,
    DISCARD,
    ERROR_NO_DECISION,
    HELD1,
    HELD2,
    I_ACTIVE_SUIT,
    I_COUNT,
    I_CURRENT,
    I_DEALER,
    I_DIRECTION,
    I_DIRTY,
    I_DISCARD_LEN,
    I_EPISODE,
    I_EXTRA_PLAY,
    I_FIRST_DEALER,
    I_FIX,
    I_HAND_DECISIONS,
    I_HAND_INDEX,
    I_JACK_RUN,
    I_KING_LEFT,
    I_NUM_DECLARERS,
    I_NUM_OUT,
    I_NUM_RESHUFFLES,
    I_PEND_CARD,
    I_PEND_CTX,
    I_PHASE,
    I_RLOG_LEN,
    I_STOCK_LEN,
    I_TOP,
    MAX_EMPTY_GAMES,
    ONE_CARD_DECLARE,
    P_DECK_SIZE,
    P_HANDS,
    P_ONE_CARD,
    P_ONE_CARD_ON_DEAL,
    P_PLAYERS,
    S_DRAWN,
    S_HAND_LEN,
    S_OUT,
    S_PENDING,
    S_POINTS,
    S_PRESSURES,
    S_PRESSURES_AT_DEAL,
    SCRATCH,
    SEEN1,
    SEEN2,
    STOCK,
)
from .piles import add_card
from .rng import shuffle_in_place
from .turns import apply_starter


@inner
def start_hand(st: Any, cd: Any, p: Any, sizes: Any, deck: Any, b: int, top: Any) -> bool:
    """``Game._start_hand``: R2.3 the deal, R7.3 declarations on the deal, R2.5 the starter.
    ``top``: the cards on top of the first hand's shuffled deck (``deck_top``)."""
    n = p[P_PLAYERS]
    size = p[P_DECK_SIZE]
    idx = st[b, I_HAND_INDEX]
    h = sizes[idx]
    d = st[b, I_DEALER]
    direction = st[b, I_DIRECTION]
    k = top.shape[0] if idx == 0 else 0
    if k > 0:  # top + the rest of the deck, shuffled (deck.remove_cards keeps deck order)
        for c in range(NUM_CARDS):
            st[b, SCRATCH + c] = 0  # copies of each card still to skip
        for i in range(k):
            cd[b, DEAL + i] = top[i]
            st[b, SCRATCH + top[i]] += 1
        j = k
        for i in range(size):
            c = deck[i]
            if st[b, SCRATCH + c] > 0:
                st[b, SCRATCH + c] -= 1
            else:
                cd[b, DEAL + j] = c
                j += 1
        shuffle_in_place(st, b, cd, b, DEAL + k, size - k)
    else:
        for i in range(size):
            cd[b, DEAL + i] = deck[i]
        shuffle_in_place(st, b, cd, b, np.int64(DEAL), size)
    st[b, I_NUM_RESHUFFLES] = 0
    st[b, I_RLOG_LEN] = 0
    for q in range(n):
        st[b, HELD1 + q] = 0
        st[b, HELD2 + q] = 0
        st[b, S_HAND_LEN + q] = 0
    for i in range(n * h):
        add_card(st, b, (d + direction * (1 + i % n) + 2 * n) % n, cd[b, DEAL + i])
    starter = cd[b, DEAL + n * h]
    cd[b, DISCARD] = starter
    st[b, I_DISCARD_LEN] = 1
    st[b, I_TOP] = starter
    st[b, SEEN1] = 1 << starter
    st[b, SEEN2] = 0
    stock_len = size - n * h - 1
    for j in range(stock_len):
        cd[b, STOCK + j] = cd[b, DEAL + size - 1 - j]
    st[b, I_STOCK_LEN] = stock_len
    st[b, I_ACTIVE_SUIT] = starter // NUM_RANKS
    st[b, I_COUNT] = 0
    st[b, I_JACK_RUN] = 1 if starter % NUM_RANKS == JACK else 0
    st[b, I_KING_LEFT] = 0
    st[b, I_EXTRA_PLAY] = 0
    st[b, I_NUM_OUT] = 0
    for q in range(n):
        st[b, S_OUT + q] = 0
        st[b, S_PENDING + q] = 0
        st[b, S_PRESSURES_AT_DEAL + q] = st[b, S_PRESSURES + q]
        st[b, S_DRAWN + q] = 0
    st[b, I_HAND_DECISIONS] = 0
    st[b, I_PEND_CARD] = starter
    st[b, I_PEND_CTX] = CTX_STARTER
    if h == 1 and p[P_ONE_CARD_ON_DEAL] != 0 and p[P_ONE_CARD] == ONE_CARD_DECLARE:  # R7.3
        for j in range(n):  # a stack: the dealer (the last to declare) at the bottom
            st[b, DECLARERS + j] = (d + direction * (n - j) + 2 * n) % n
        st[b, I_NUM_DECLARERS] = n
        st[b, I_CURRENT] = st[b, DECLARERS + n - 1]
        st[b, I_PHASE] = PHASE_DECLARE
        return False
    st[b, I_NUM_DECLARERS] = 0
    return apply_starter(st, cd, p, b)


@inner
def advance(st: Any, cd: Any, p: Any, sizes: Any, deck: Any, b: int, top: Any) -> None:
    """``Game._advance``: deal hands until one needs a decision, or end the game."""
    while st[b, I_HAND_INDEX] < p[P_HANDS]:
        if not start_hand(st, cd, p, sizes, deck, b, top):
            return
    st[b, I_PHASE] = PHASE_GAME_OVER
    st[b, I_CURRENT] = -1


@inner
def draw_first_dealer(st: Any, p: Any, deck: Any, b: int) -> int:
    """``deck.draw_first_dealer`` (R2.1): the lowest card (R1.6) deals; ties draw again."""
    n = p[P_PLAYERS]
    size = p[P_DECK_SIZE]
    who = SCRATCH + size  # the contenders follow the drawn order in the scratch space
    m = n
    for i in range(n):
        st[b, who + i] = i
    while True:
        for i in range(size):
            st[b, SCRATCH + i] = deck[i]
        shuffle_in_place(st, b, st, b, np.int64(SCRATCH), size)
        pos = SCRATCH
        while pos + m <= SCRATCH + size:
            low = 1 << 30
            for i in range(m):
                low = min(low, DEALER_STRENGTH[st[b, pos + i] % NUM_RANKS])
            k = 0
            for i in range(m):
                if DEALER_STRENGTH[st[b, pos + i] % NUM_RANKS] == low:
                    st[b, who + k] = st[b, who + i]
                    k += 1
            pos += m
            m = k
            if m == 1:
                return st[b, who]


@inner
def new_game(
    st: Any, cd: Any, p: Any, sizes: Any, deck: Any, b: int, dealer: int, top: Any
) -> None:
    """``Game.__init__`` from the generator of row ``b``: ``dealer < 0`` draws the first
    dealer (R2.1); ``top`` goes on top of the first hand's deck."""
    n = p[P_PLAYERS]
    st[b, I_HAND_INDEX] = 0
    st[b, I_DIRECTION] = 1
    for q in range(n):
        st[b, S_POINTS + q] = 0
        st[b, S_PRESSURES + q] = 0
    st[b, I_DIRTY] = DIRTY_ALL
    st[b, I_EPISODE] += 1
    if dealer < 0:
        dealer = draw_first_dealer(st, p, deck, b)
    st[b, I_FIRST_DEALER] = dealer
    st[b, I_DEALER] = dealer
    advance(st, cd, p, sizes, deck, b, top)


@inner
def auto_reset_game(st: Any, cd: Any, p: Any, sizes: Any, deck: Any, b: int) -> None:
    """A new game in row ``b`` (its generator continues), until one asks a decision."""
    for _ in range(MAX_EMPTY_GAMES):
        new_game(st, cd, p, sizes, deck, b, np.int64(-1), deck[:0])
        if st[b, I_PHASE] != PHASE_GAME_OVER:
            return
    st[b, I_FIX] = ERROR_NO_DECISION
