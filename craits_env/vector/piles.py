"""Cards moving between the piles and the hands, compiled: ``Game._draw`` and ``Game._reshuffle``.

Row ``b`` of ``st``/``cd`` (:mod:`craits_env.vector.layout`) holds the hands as bit masks,
the stock (next card last) and the discard pile (bottom first); these functions move cards
between them as the Python engine does, statement for statement. Like every function of
the compiled rules, one that can end the hand returns ``True`` when it did (where the
engine raises ``_HandOver``), and its caller returns at once.
"""

from __future__ import annotations

from typing import Any

from .hand_scoring import end_hand
from .jit import inline, inner
from .layout import (
    DIRTY_ALL,
    DISCARD,
    ERROR_RLOG_FULL,
    HELD1,
    HELD2,
    I_DIRECTION,
    I_DIRTY,
    I_DISCARD_LEN,
    I_FIX,
    I_NUM_OUT,
    I_NUM_RESHUFFLES,
    I_RLOG_LEN,
    I_STOCK_LEN,
    I_TOP,
    P_PLAYERS,
    P_RLOG_CAPACITY,
    RLOG,
    S_DRAWN,
    S_HAND_LEN,
    S_OUT,
    S_OUT_ORDER,
    S_PRESSURES,
    SEEN1,
    SEEN2,
    STOCK,
)
from .rng import shuffle_in_place


@inline
def next_seat(st: Any, p: Any, b: int, q: int) -> int:
    """The next seat in the direction of play (no division: this runs several times a step)."""
    r = q + st[b, I_DIRECTION]
    if r < 0:
        return r + p[P_PLAYERS]
    if r >= p[P_PLAYERS]:
        return r - p[P_PLAYERS]
    return r


@inline
def add_card(st: Any, b: int, q: int, c: int) -> None:
    bit = 1 << c
    if st[b, HELD1 + q] & bit:
        st[b, HELD2 + q] |= bit
    else:
        st[b, HELD1 + q] |= bit
    st[b, S_HAND_LEN + q] += 1


@inline
def remove_card(st: Any, b: int, q: int, c: int) -> None:
    bit = 1 << c
    if st[b, HELD2 + q] & bit:
        st[b, HELD2 + q] &= ~bit
    else:
        st[b, HELD1 + q] &= ~bit
    st[b, S_HAND_LEN + q] -= 1


@inline
def push_discard(st: Any, cd: Any, b: int, c: int) -> None:
    k = st[b, I_DISCARD_LEN]
    cd[b, DISCARD + k] = c
    st[b, I_DISCARD_LEN] = k + 1
    st[b, I_TOP] = c
    bit = 1 << c
    if st[b, SEEN1] & bit:
        st[b, SEEN2] |= bit
    else:
        st[b, SEEN1] |= bit


@inner
def append_out(st: Any, b: int, q: int) -> None:
    k = st[b, I_NUM_OUT]
    st[b, S_OUT_ORDER + k] = q
    st[b, I_NUM_OUT] = k + 1
    st[b, S_OUT + q] = 1


@inline
def _remove_out(st: Any, b: int, q: int) -> None:
    """``went_out.remove(q)``: the others keep their order."""
    j = 0
    for i in range(st[b, I_NUM_OUT]):
        who = st[b, S_OUT_ORDER + i]
        if who != q:
            st[b, S_OUT_ORDER + j] = who
            j += 1
    st[b, I_NUM_OUT] = j
    st[b, S_OUT + q] = 0


@inner
def draw(st: Any, cd: Any, p: Any, b: int, q: int, k: int) -> bool:
    """``Game._draw``: ``q`` draws ``k`` cards one at a time, reshuffling when the stock is
    empty (R10); a went-out player who draws leaves went_out (R6.2 option)."""
    back = st[b, I_NUM_OUT] > 0 and st[b, S_OUT + q] == 1
    for _ in range(k):
        if st[b, I_STOCK_LEN] == 0 and reshuffle(st, cd, p, b, q):
            return True
        top = st[b, I_STOCK_LEN] - 1
        st[b, I_STOCK_LEN] = top
        add_card(st, b, q, cd[b, STOCK + top])
        if back:
            _remove_out(st, b, q)
            back = False
    st[b, S_DRAWN + q] += k
    return False


@inline
def reshuffle(st: Any, cd: Any, p: Any, b: int, q: int) -> bool:
    """``Game._reshuffle`` (R10.1, R10.2): the drawing player takes a shuffle pressure; the
    discard pile but its top becomes the stock, in the order of one permutation draw."""
    st[b, S_PRESSURES + q] += 1
    st[b, I_DIRTY] = DIRTY_ALL
    m = st[b, I_DISCARD_LEN]
    if m <= 1:  # R10.2
        end_hand(st, cd, p, b)
        return True
    cards = m - 1
    pos = st[b, I_RLOG_LEN]
    if pos + 1 + cards > p[P_RLOG_CAPACITY]:
        st[b, I_FIX] = ERROR_RLOG_FULL
        pos = 0  # the play stays exact; the snapshot of this hand is refused
    cd[b, RLOG + pos] = cards
    first = RLOG + pos + 1  # the new order, next card first, at cd[b, first : first + cards]
    for i in range(cards):
        cd[b, first + i] = cd[b, DISCARD + i]
    shuffle_in_place(st, b, cd, b, first, cards)
    st[b, I_RLOG_LEN] = pos + 1 + cards
    st[b, I_NUM_RESHUFFLES] += 1
    for j in range(cards):
        cd[b, STOCK + j] = cd[b, first + cards - 1 - j]
    st[b, I_STOCK_LEN] = cards
    top = cd[b, DISCARD + m - 1]
    cd[b, DISCARD] = top
    st[b, I_DISCARD_LEN] = 1
    st[b, SEEN1] = 1 << top
    st[b, SEEN2] = 0
    return False
