"""The rules of :mod:`craits_env.engine` over B games in flat arrays, compiled by numba.

Each function here is the namesake of a method of :class:`~craits_env.engine.Game`
(``_draw``, ``_reshuffle``, ``_resolve`` …) acting on row ``b`` of the state arrays ``st``
and ``cd`` (:mod:`craits_env.vector.layout`), statement for statement and in the same
order, so that every field — stale ones at the end of a hand included — ends up as the
Python engine leaves it. Where the engine raises ``_HandOver`` these functions return
``True`` and their callers return at once. The entry points (:func:`step`,
:func:`reset`, :func:`legal_mask` …) loop over the games inside one compiled call; the
differential test (``tests/test_vector_differential.py``) holds them to the Python engine.

Scores are exact (``layout`` explains the representation): nothing here can overflow.
A step that finishes a hand whose points need more than 53 bits (a seat with more than
:data:`EXACT_PRESSURES` shuffle pressures) leaves that step's rewards to Python
(``st[b, I_FIX] = 1``), which computes them on exact integers.
"""

from __future__ import annotations

import math
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
    PHASE_GAME_OVER,
    PHASE_PLAY,
    STAY_SILENT,
)
from ..cards import DEALER_DRAW_STRENGTH, NUM_CARDS, NUM_RANKS, QUEEN_OF_SPADES, Rank
from ..rewards import BOUNDED_SCALE
from ..scoring import CARD_POINTS, GOING_OUT_BONUS, LONELY_THREE_POINTS, ONLY_THREES_POINTS
from .encode import write_observation
from .jit import entry, inline, inner, unowned
from .layout import (
    DEAL,
    DECLARERS,
    DISCARD,
    HELD1,
    HELD2,
    HP_CARDS,
    HP_K0,
    HP_K1,
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
    I_STEP_HAND,
    I_STOCK_LEN,
    I_TOP,
    ONE_CARD_DECLARE,
    P_AUTO_RESET,
    P_COUNT_OUT_CAN_RETURN,
    P_DEALER_FOLLOWS_DIRECTION,
    P_DECISION_LIMIT,
    P_DECK_SIZE,
    P_FACE_CARDS,
    P_FORFEIT,
    P_GOING_OUT_BONUS,
    P_HANDS,
    P_ONE_CARD,
    P_ONE_CARD_ON_DEAL,
    P_PLAYERS,
    P_PUNITIVE_THREES,
    P_REWARD_MODE,
    P_RLOG_CAPACITY,
    P_SEVEN_FAR,
    P_THREE_POINTS,
    P_THREES_CANCEL_EIGHTS,
    P_VOLUNTARY_DRAW,
    POINTS,
    REWARD_BOUNDED,
    REWARD_RELATIVE,
    REWARD_SCORE,
    REWARD_WIN,
    RLOG,
    S_DRAWN,
    S_HAND_LEN,
    S_OUT,
    S_OUT_ORDER,
    S_PENDING,
    S_POINTS,
    S_PRESSURES,
    S_PRESSURES_AT_DEAL,
    SCRATCH,
    SEEN1,
    SEEN2,
    STOCK,
)
from .rng import shuffle_in_place
from .scores import score_less

# engine.py's _CTX_*: how the card waiting for its suit call and declaration acts.
CTX_NORMAL, CTX_STARTER, CTX_COUNT, CTX_FREE = 0, 1, 2, 3

# st[b, I_FIX]: 1 = the step's rewards are left to Python; 2, 3: errors, never seen in play.
FIX_REWARDS = 1
ERROR_RLOG_FULL = 2  # the reshuffle log outgrew its bound (a loaded state beyond it)
ERROR_NO_DECISION = 3  # MAX_EMPTY_GAMES new games in a row ended before any decision
MAX_EMPTY_GAMES = 1000

EXACT_PRESSURES = 45  # hand points with at most this many pressures: 10 seats sum below 2**53
_ALL_ROWS = -1  # I_DIRTY: every row of the scaled-score cache is stale

_A, _TWO, _THREE, _FOUR, _FIVE, _SIX, _SEVEN, _EIGHT, _NINE, _TEN, _JACK, _KING = (
    int(r)
    for r in (
        Rank.ACE, Rank.TWO, Rank.THREE, Rank.FOUR, Rank.FIVE, Rank.SIX, Rank.SEVEN,
        Rank.EIGHT, Rank.NINE, Rank.TEN, Rank.JACK, Rank.KING,
    )
)  # fmt: skip
_QS = int(QUEEN_OF_SPADES)


def _card_bits(cards: list[int]) -> int:
    return sum(1 << c for c in set(cards))


# _PLAYABLE[active_suit * 13 + top_rank]: the cards playable outside the count (R3.1).
_PLAYABLE = np.array(
    [
        _card_bits(
            [
                c
                for c in range(NUM_CARDS)
                if c // NUM_RANKS == suit or c % NUM_RANKS in (top, _EIGHT, _NINE)
            ]
        )
        for suit in range(4)
        for top in range(NUM_RANKS)
    ],
    np.int64,
)
_COUNTABLE = _card_bits([c for c in range(NUM_CARDS) if c % NUM_RANKS in (_A, _TWO)])  # R5.2
_POINTS = np.array(CARD_POINTS, np.int64)  # R8.2
_STRENGTH = np.array(DEALER_DRAW_STRENGTH, np.int64)  # R1.6
# Every rank but the three, highest points first: the order in which threes cancel (R8.3).
_CANCEL_ORDER = np.array(
    sorted((r for r in range(NUM_RANKS) if r != _THREE), key=lambda r: -CARD_POINTS[r]), np.int64
)

# ---------------------------------------------------------------------- cards


@inline
def _next(st: Any, p: Any, b: int, q: int) -> int:
    """The next seat in the direction of play (no division: this runs several times a step)."""
    r = q + st[b, I_DIRECTION]
    if r < 0:
        return r + p[P_PLAYERS]
    if r >= p[P_PLAYERS]:
        return r - p[P_PLAYERS]
    return r


@inline
def _add_card(st: Any, b: int, q: int, c: int) -> None:
    bit = 1 << c
    if st[b, HELD1 + q] & bit:
        st[b, HELD2 + q] |= bit
    else:
        st[b, HELD1 + q] |= bit
    st[b, S_HAND_LEN + q] += 1


@inline
def _remove_card(st: Any, b: int, q: int, c: int) -> None:
    bit = 1 << c
    if st[b, HELD2 + q] & bit:
        st[b, HELD2 + q] &= ~bit
    else:
        st[b, HELD1 + q] &= ~bit
    st[b, S_HAND_LEN + q] -= 1


@inline
def _push_discard(st: Any, cd: Any, b: int, c: int) -> None:
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
def _append_out(st: Any, b: int, q: int) -> None:
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
def _draw(st: Any, cd: Any, p: Any, b: int, q: int, k: int) -> bool:
    """``Game._draw``: ``q`` draws ``k`` cards one at a time, reshuffling when the stock is
    empty (R10); a went-out player who draws leaves went_out (R6.2 option)."""
    back = st[b, I_NUM_OUT] > 0 and st[b, S_OUT + q] == 1
    for _ in range(k):
        if st[b, I_STOCK_LEN] == 0 and _reshuffle(st, cd, p, b, q):
            return True
        top = st[b, I_STOCK_LEN] - 1
        st[b, I_STOCK_LEN] = top
        _add_card(st, b, q, cd[b, STOCK + top])
        if back:
            _remove_out(st, b, q)
            back = False
    st[b, S_DRAWN + q] += k
    return False


@inline
def _reshuffle(st: Any, cd: Any, p: Any, b: int, q: int) -> bool:
    """``Game._reshuffle`` (R10.1, R10.2): the drawing player takes a shuffle pressure; the
    discard pile but its top becomes the stock, in the order of one permutation draw."""
    st[b, S_PRESSURES + q] += 1
    st[b, I_DIRTY] = _ALL_ROWS
    m = st[b, I_DISCARD_LEN]
    if m <= 1:  # R10.2
        _end_hand(st, cd, p, b)
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


# ---------------------------------------------------------------------- scoring


@inner
def _can_cancel(p: Any, rank: int) -> bool:
    if rank == _EIGHT:
        return p[P_THREES_CANCEL_EIGHTS] != 0
    if rank == _A:
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
def _score_hand(st: Any, p: Any, b: int, q: int) -> int:
    """``scoring.score_ranks`` of seat ``q``'s hand (R8.2-R8.4)."""
    held = st[b, S_HAND_LEN + q]
    if held == 0:
        return 0
    threes = _rank_count(st, b, q, np.int64(_THREE))
    if threes == held:
        return ONLY_THREES_POINTS * threes
    total = 0
    skip = threes  # each three cancels one of the highest cancellable cards
    for i in range(_CANCEL_ORDER.shape[0]):
        rank = _CANCEL_ORDER[i]
        k = _rank_count(st, b, q, rank)
        if threes > 0 and _can_cancel(p, rank):
            gone = min(skip, k)
            skip -= gone
            k -= gone
        total += _POINTS[rank] * k
    if threes > 0:
        cancelled = threes - skip
        if p[P_PUNITIVE_THREES] != 0:
            total += cancelled * p[P_THREE_POINTS] + skip * LONELY_THREE_POINTS
        else:
            total += threes * p[P_THREE_POINTS]
    return total


@inner
def _end_hand(st: Any, cd: Any, p: Any, b: int) -> None:
    """``Game._end_hand``: score the hand (R8), move the deal (R2.4); the hand is over."""
    n = p[P_PLAYERS]
    h = st[b, I_HAND_INDEX]
    out_points = GOING_OUT_BONUS if p[P_GOING_OUT_BONUS] != 0 else 0
    for q in range(n):
        card_points = out_points if st[b, S_OUT + q] == 1 else _score_hand(st, p, b, q)
        st[b, S_POINTS + q] += card_points
        k = POINTS + 3 * (h * n + q)
        st[b, k + HP_CARDS] = card_points
        st[b, k + HP_K0] = st[b, S_PRESSURES_AT_DEAL + q]
        st[b, k + HP_K1] = st[b, S_PRESSURES + q]
    st[b, I_DIRTY] = _ALL_ROWS
    st[b, I_HAND_INDEX] = h + 1
    if p[P_DEALER_FOLLOWS_DIRECTION] != 0 and st[b, I_DIRECTION] == -1:
        st[b, I_DEALER] = (st[b, I_DEALER] - 1 + n) % n
    else:
        st[b, I_DEALER] = (st[b, I_DEALER] + 1) % n
        st[b, I_DIRECTION] = 1
    st[b, I_PHASE] = PHASE_GAME_OVER


# ---------------------------------------------------------------------- turns and resolution


@inline
def _begin_turn(st: Any, cd: Any, p: Any, b: int, q: int) -> bool:
    """``Game._begin_turn``: a pending one-card penalty is paid instead of the turn (R7.1)."""
    returning = p[P_COUNT_OUT_CAN_RETURN] != 0
    while st[b, S_PENDING + q] != 0:
        st[b, S_PENDING + q] = 0
        if _draw(st, cd, p, b, q, np.int64(2)):
            return True
        q = _next(st, p, b, q)
        if st[b, I_COUNT] != 0 and not returning:
            while st[b, S_HAND_LEN + q] == 0:
                q = _next(st, p, b, q)
    st[b, I_CURRENT] = q
    st[b, I_PHASE] = PHASE_COUNT if st[b, I_COUNT] != 0 else PHASE_PLAY
    st[b, I_EXTRA_PLAY] = 0
    return False


@inline
def _same_turn(st: Any, b: int, q: int) -> None:
    """Another play in the same turn (a 6, a king's sequence): not a new turn (R7.1)."""
    st[b, I_CURRENT] = q
    st[b, I_PHASE] = PHASE_PLAY
    st[b, I_EXTRA_PLAY] = 1


@inner
def _continue_count(st: Any, cd: Any, p: Any, b: int, q: int) -> bool:
    """``Game._continue_count``: going out in the count (R6.2), then the next player."""
    if st[b, S_HAND_LEN + q] == 0:
        _append_out(st, b, q)
        anyone = False
        for r in range(p[P_PLAYERS]):
            if st[b, S_HAND_LEN + r] != 0:
                anyone = True
        if not anyone:
            _end_hand(st, cd, p, b)
            return True
    r = _next(st, p, b, q)
    if p[P_COUNT_OUT_CAN_RETURN] == 0:
        while st[b, S_HAND_LEN + r] == 0:
            r = _next(st, p, b, r)
    return _begin_turn(st, cd, p, b, r)


@inner
def _resolve(st: Any, cd: Any, p: Any, b: int, q: int) -> bool:
    """``Game._resolve``: the pending card's function (R4, R5, R9), going out (R6.1), the turn."""
    ctx = st[b, I_PEND_CTX]
    if ctx == CTX_COUNT:
        return _continue_count(st, cd, p, b, q)
    if ctx == CTX_FREE:  # R9.3: the sequence goes on
        _same_turn(st, b, q)
        return False
    card = st[b, I_PEND_CARD]
    rank = card % NUM_RANKS
    face = p[P_FACE_CARDS] != 0
    if rank == _TWO:  # R5.1
        st[b, I_COUNT] = 2
        return _continue_count(st, cd, p, b, q)
    if rank == _SIX:  # R4.1
        _same_turn(st, b, q)
        return False
    if rank == _KING and face:  # R9.3
        st[b, I_KING_LEFT] = 3
        _same_turn(st, b, q)
        return False
    if rank == _TEN:  # R3.5: reverse first
        st[b, I_DIRECTION] = -st[b, I_DIRECTION]
    nxt = _next(st, p, b, q)
    if rank == _FOUR:  # R4, R4.2
        nxt = _next(st, p, b, nxt)
    elif rank == _FIVE:  # every other player, in turn order from the next one
        r = nxt
        for _ in range(p[P_PLAYERS] - 1):
            if _draw(st, cd, p, b, r, np.int64(1)):
                return True
            r = _next(st, p, b, r)
    elif rank == _SEVEN:  # R4.3
        far = p[P_SEVEN_FAR] != 0 and p[P_PLAYERS] > 3
        hit = _next(st, p, b, nxt) if far else nxt
        if _draw(st, cd, p, b, hit, np.int64(1)):
            return True
    elif face:
        if rank == _JACK:  # R9.1, R9.4
            if _draw(st, cd, p, b, nxt, 2 * st[b, I_JACK_RUN]):
                return True
            nxt = _next(st, p, b, nxt)
        elif card == _QS:  # R9.2
            if _draw(st, cd, p, b, nxt, np.int64(5)):
                return True
            nxt = _next(st, p, b, nxt)
    if st[b, S_HAND_LEN + q] == 0:  # R6.1
        _append_out(st, b, q)
        _end_hand(st, cd, p, b)
        return True
    return _begin_turn(st, cd, p, b, nxt)


@inline
def _after_call(st: Any, cd: Any, p: Any, b: int, q: int) -> bool:
    """After the suit call (if any): the one-card declaration (R7.1), then the function."""
    if (
        st[b, S_HAND_LEN + q] == 1
        and st[b, I_PEND_CTX] != CTX_STARTER
        and p[P_ONE_CARD] == ONE_CARD_DECLARE
    ):
        st[b, I_PHASE] = PHASE_DECLARE
        return False
    return _resolve(st, cd, p, b, q)


@inner
def _apply_starter(st: Any, cd: Any, p: Any, b: int) -> bool:
    """R2.5: the starter counts as played by the dealer."""
    d = st[b, I_DEALER]
    st[b, I_CURRENT] = d
    starter = st[b, I_TOP]
    st[b, I_PEND_CARD] = starter
    st[b, I_PEND_CTX] = CTX_STARTER
    if starter % NUM_RANKS in (_EIGHT, _NINE):
        st[b, I_PHASE] = PHASE_CALL_SUIT
        st[b, I_EXTRA_PLAY] = 1
        return False
    return _resolve(st, cd, p, b, d)


# ---------------------------------------------------------------------- decisions


@inline
def _play(st: Any, cd: Any, p: Any, b: int, q: int, card: int) -> bool:
    """Play ``card`` outside the count (R3.4)."""
    _remove_card(st, b, q, card)
    _push_discard(st, cd, b, card)
    st[b, I_ACTIVE_SUIT] = card // NUM_RANKS
    rank = card % NUM_RANKS
    st[b, I_JACK_RUN] = st[b, I_JACK_RUN] + 1 if rank == _JACK else 0  # R9.1
    if st[b, I_KING_LEFT] > 1:  # R9.3: the first two cards of a king's sequence
        st[b, I_KING_LEFT] -= 1
        st[b, I_PEND_CTX] = CTX_FREE
    else:
        st[b, I_KING_LEFT] = 0
        st[b, I_PEND_CTX] = CTX_NORMAL
    st[b, I_PEND_CARD] = card
    if rank in (_EIGHT, _NINE):  # R3.4: the suit call comes first
        st[b, I_PHASE] = PHASE_CALL_SUIT
        return False
    return _after_call(st, cd, p, b, q)


@inline
def _play_in_count(st: Any, cd: Any, p: Any, b: int, q: int, card: int) -> bool:
    """An ace (+1) or a two (+2) in the count (R5.2, R5.4)."""
    _remove_card(st, b, q, card)
    _push_discard(st, cd, b, card)
    st[b, I_ACTIVE_SUIT] = card // NUM_RANKS
    st[b, I_JACK_RUN] = 0
    st[b, I_COUNT] += 1 if card % NUM_RANKS == _A else 2
    st[b, I_PEND_CARD] = card
    st[b, I_PEND_CTX] = CTX_COUNT
    return _after_call(st, cd, p, b, q)


@inline
def _declared(st: Any, cd: Any, p: Any, b: int, q: int, declared: bool) -> bool:
    if not declared:  # R7.1 "idiot!"
        if p[P_FORFEIT] != 0:
            st[b, S_PENDING + q] = 1
        elif _draw(st, cd, p, b, q, np.int64(1)):  # R7.2 draw_one: at once, before the function
            return True
    m = st[b, I_NUM_DECLARERS]
    if m > 0:  # R7.3: declarations right after the deal
        m -= 1
        st[b, I_NUM_DECLARERS] = m
        if m > 0:
            st[b, I_CURRENT] = st[b, DECLARERS + m - 1]
            return False
        return _apply_starter(st, cd, p, b)
    return _resolve(st, cd, p, b, q)


@inline
def _take_count(st: Any, cd: Any, p: Any, b: int, q: int) -> bool:
    """R5.3: draw as many cards as the count; the count ends."""
    if _draw(st, cd, p, b, q, st[b, I_COUNT]):
        return True
    st[b, I_COUNT] = 0
    if st[b, I_NUM_OUT] > 0:  # R6.2: the hand ends when the count ends
        _end_hand(st, cd, p, b)
        return True
    return _begin_turn(st, cd, p, b, _next(st, p, b, q))


@inline
def _allowed_cards(st: Any, b: int) -> int:
    """The current player's playable cards (R3.1, R5.2) as a 52-bit mask (play or count)."""
    held = st[b, HELD1 + st[b, I_CURRENT]]
    if st[b, I_PHASE] == PHASE_COUNT:
        return held & _COUNTABLE
    return held & _PLAYABLE[st[b, I_ACTIVE_SUIT] * NUM_RANKS + st[b, I_TOP] % NUM_RANKS]


@inline
def is_legal(st: Any, p: Any, b: int, action: int) -> bool:
    """Whether ``action`` is in ``Game.legal_actions()`` of game ``b``."""
    if action < 0 or action >= NUM_ACTIONS:
        return False
    phase = st[b, I_PHASE]
    if phase in (PHASE_PLAY, PHASE_COUNT):
        allowed = _allowed_cards(st, b)
        if action < NUM_CARDS:
            return (allowed >> action) & 1 != 0
        if action == DRAW:  # R3.3, R5.3
            return allowed == 0 or p[P_VOLUNTARY_DRAW] != 0
        return False
    if phase == PHASE_CALL_SUIT:
        if action < CALL_BASE or action >= DECLARE:
            return False
        card = st[b, I_PEND_CARD]
        if card % NUM_RANKS == _NINE:  # R4: keep the suit or take the other of its colour
            suit = card // NUM_RANKS
            return action - CALL_BASE in (suit, 3 - suit)
        return True
    if phase == PHASE_DECLARE:
        return action in (DECLARE, STAY_SILENT)
    return False


@inner
def write_mask(st: Any, p: Any, b: int, row: Any) -> None:
    """``row`` (59) := the legal mask of game ``b`` (all zeros once it is over)."""
    for a in range(NUM_ACTIONS):
        row[a] = 0
    phase = st[b, I_PHASE]
    if phase in (PHASE_PLAY, PHASE_COUNT):
        allowed = _allowed_cards(st, b)
        for c in range(NUM_CARDS):
            row[c] = (allowed >> c) & 1
        if allowed == 0 or p[P_VOLUNTARY_DRAW] != 0:
            row[DRAW] = 1
    elif phase == PHASE_CALL_SUIT:
        card = st[b, I_PEND_CARD]
        if card % NUM_RANKS == _NINE:
            suit = card // NUM_RANKS
            row[CALL_BASE + suit] = 1
            row[CALL_BASE + 3 - suit] = 1
        else:
            for k in range(4):
                row[CALL_BASE + k] = 1
    elif phase == PHASE_DECLARE:
        row[DECLARE] = 1
        row[STAY_SILENT] = 1


@inner
def _apply(st: Any, cd: Any, p: Any, sizes: Any, deck: Any, b: int, action: int) -> None:
    """``Game.apply`` of a legal ``action`` and every automatic event after it."""
    q = st[b, I_CURRENT]
    phase = st[b, I_PHASE]
    if phase == PHASE_PLAY:
        if action == DRAW:
            ended = _draw(st, cd, p, b, q, np.int64(1))  # R3.3; ends a 6's or a king's turn
            if not ended:
                st[b, I_KING_LEFT] = 0
                ended = _begin_turn(st, cd, p, b, _next(st, p, b, q))
        else:
            ended = _play(st, cd, p, b, q, action)
    elif phase == PHASE_COUNT:
        if action == DRAW:
            ended = _take_count(st, cd, p, b, q)
        else:
            ended = _play_in_count(st, cd, p, b, q, action)
    elif phase == PHASE_CALL_SUIT:
        st[b, I_ACTIVE_SUIT] = action - CALL_BASE  # R3.2
        ended = _after_call(st, cd, p, b, q)
    else:
        ended = _declared(st, cd, p, b, q, action == DECLARE)
    if not ended:
        st[b, I_HAND_DECISIONS] += 1
        if st[b, I_HAND_DECISIONS] >= p[P_DECISION_LIMIT]:  # R12
            _end_hand(st, cd, p, b)
            ended = True
    if ended:
        _advance(st, cd, p, sizes, deck, b, deck[:0])


# ---------------------------------------------------------------------- hands and games


@inner
def _start_hand(st: Any, cd: Any, p: Any, sizes: Any, deck: Any, b: int, top: Any) -> bool:
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
        _add_card(st, b, (d + direction * (1 + i % n) + 2 * n) % n, cd[b, DEAL + i])
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
    st[b, I_JACK_RUN] = 1 if starter % NUM_RANKS == _JACK else 0
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
    return _apply_starter(st, cd, p, b)


@inner
def _advance(st: Any, cd: Any, p: Any, sizes: Any, deck: Any, b: int, top: Any) -> None:
    """``Game._advance``: deal hands until one needs a decision, or end the game."""
    while st[b, I_HAND_INDEX] < p[P_HANDS]:
        if not _start_hand(st, cd, p, sizes, deck, b, top):
            return
    st[b, I_PHASE] = PHASE_GAME_OVER
    st[b, I_CURRENT] = -1


@inner
def _draw_first_dealer(st: Any, p: Any, deck: Any, b: int) -> int:
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
                low = min(low, _STRENGTH[st[b, pos + i] % NUM_RANKS])
            k = 0
            for i in range(m):
                if _STRENGTH[st[b, pos + i] % NUM_RANKS] == low:
                    st[b, who + k] = st[b, who + i]
                    k += 1
            pos += m
            m = k
            if m == 1:
                return st[b, who]


@inner
def _new_game(
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
    st[b, I_DIRTY] = _ALL_ROWS
    st[b, I_EPISODE] += 1
    if dealer < 0:
        dealer = _draw_first_dealer(st, p, deck, b)
    st[b, I_FIRST_DEALER] = dealer
    st[b, I_DEALER] = dealer
    _advance(st, cd, p, sizes, deck, b, top)


@inner
def _auto_reset(st: Any, cd: Any, p: Any, sizes: Any, deck: Any, b: int) -> None:
    """A new game in row ``b`` (its generator continues), until one asks a decision."""
    for _ in range(MAX_EMPTY_GAMES):
        _new_game(st, cd, p, sizes, deck, b, np.int64(-1), deck[:0])
        if st[b, I_PHASE] != PHASE_GAME_OVER:
            return
    st[b, I_FIX] = ERROR_NO_DECISION


# ---------------------------------------------------------------------- rewards


@inner
def _hand_points(st: Any, n: int, b: int, h: int, q: int) -> int:
    """Hand ``h``'s points of seat ``q`` (while its pressures fit: EXACT_PRESSURES)."""
    k = POINTS + 3 * (h * n + q)
    return st[b, k + HP_CARDS] + 5 * ((1 << st[b, k + HP_K1]) - (1 << st[b, k + HP_K0]))


@inner
def _add_hand_rewards(st: Any, p: Any, b: int, h: int, acc: Any) -> bool:
    """``acc += rewards.hand_rewards`` of hand ``h`` (Python's float64 arithmetic on exact
    integers); ``False`` if its points need more than 53 bits (left to Python)."""
    n = p[P_PLAYERS]
    total = 0
    for q in range(n):
        if st[b, POINTS + 3 * (h * n + q) + HP_K1] > EXACT_PRESSURES:
            return False
        total += _hand_points(st, n, b, h, q)
    mode = p[P_REWARD_MODE]
    for q in range(n):
        own = _hand_points(st, n, b, h, q)
        if mode == REWARD_SCORE:
            acc[q] += (-own) / 100
        else:
            relative = (total - own) / (n - 1) - own
            if mode == REWARD_RELATIVE:
                acc[q] += relative / 100
            elif mode == REWARD_BOUNDED:
                acc[q] += math.tanh(relative / BOUNDED_SCALE)
    return True


@inner
def _add_win_rewards(st: Any, p: Any, b: int, acc: Any) -> None:
    """``acc += rewards.win_rewards``: the winners (lowest exact total) share +1."""
    n = p[P_PLAYERS]
    best = 0
    for q in range(1, n):
        if score_less(st[b, S_POINTS + q], st[b, S_PRESSURES + q],
                      st[b, S_POINTS + best], st[b, S_PRESSURES + best]):  # fmt: skip
            best = q
    winners = 0
    for q in range(n):
        if not score_less(st[b, S_POINTS + best], st[b, S_PRESSURES + best],
                          st[b, S_POINTS + q], st[b, S_PRESSURES + q]):  # fmt: skip
            winners += 1
    if winners == n:
        return
    for q in range(n):
        if score_less(st[b, S_POINTS + best], st[b, S_PRESSURES + best],
                      st[b, S_POINTS + q], st[b, S_PRESSURES + q]):  # fmt: skip
            acc[q] += -1.0 / (n - winners)
        else:
            acc[q] += 1.0 / winners


# ---------------------------------------------------------------------- entry points


@entry
def step(
    st: Any, cd: Any, p: Any, sizes: Any, deck: Any, actions: Any, rewards: Any, done: Any,
    o: Any, scaled: Any, obs: Any, mask: Any,
) -> tuple[int, int]:  # fmt: skip
    """Apply ``actions[b]`` to every game b; ``(illegal, fixes)``: -1 or the first game whose
    action is illegal (then nothing has changed), and how many games set ``I_FIX`` (their
    rewards and auto-reset are left to Python). Writes ``rewards`` (B, n) float32 — the
    step's hand rewards, then the game's (as ``craits_v0`` adds them) — and ``done``; and,
    unless they have no rows, each game's next observation into ``obs`` (offsets ``o``) and
    legal mask into ``mask``, while its state is still in the cache (games left to Python
    are written by Python after it resets them)."""
    st, cd, p, sizes, deck = unowned(st), unowned(cd), unowned(p), unowned(sizes), unowned(deck)
    o, scaled = unowned(o), unowned(scaled)
    write_obs, write_masks = obs.shape[0] > 0, mask.shape[0] > 0
    if write_obs:
        obs = unowned(obs)
    if write_masks:
        mask = unowned(mask)
    num = actions.shape[0]
    for b in range(num):
        if not is_legal(st, p, b, actions[b]):
            return b, 0
    n = p[P_PLAYERS]
    auto = p[P_AUTO_RESET] != 0
    win = p[P_REWARD_MODE] == REWARD_WIN
    acc = np.zeros(n, np.float64)
    fixes = 0
    for b in range(num):
        st[b, I_FIX] = 0
        first = st[b, I_HAND_INDEX]
        st[b, I_STEP_HAND] = first
        _apply(st, cd, p, sizes, deck, b, actions[b])
        over = st[b, I_PHASE] == PHASE_GAME_OVER
        if st[b, I_HAND_INDEX] > first or over:
            for q in range(n):
                acc[q] = 0.0
            exact = True
            if not win:
                for h in range(first, st[b, I_HAND_INDEX]):
                    exact = exact and _add_hand_rewards(st, p, b, h, acc)
            if over and win:
                _add_win_rewards(st, p, b, acc)
            if not exact and st[b, I_FIX] == 0:
                st[b, I_FIX] = FIX_REWARDS
            for q in range(n):
                rewards[b, q] = acc[q]
        else:
            for q in range(n):
                rewards[b, q] = 0.0
        done[b] = over
        if st[b, I_FIX] != 0:
            fixes += 1
            continue
        if over and auto:
            _auto_reset(st, cd, p, sizes, deck, b)
        if write_obs:
            write_observation(st, p, sizes, o, scaled, b, max(st[b, I_CURRENT], 0), obs)
        if write_masks:
            write_mask(st, p, b, mask[b])
    return -1, fixes


@entry
def reset(
    st: Any, cd: Any, p: Any, sizes: Any, deck: Any, games: Any, dealers: Any, top: Any
) -> None:
    """New games in the rows ``games`` (first dealers ``dealers``, -1 = drawn); ``top``
    (the first hand's ``deck_top``) applies to each of them. With auto-reset a game that
    ends before its first decision is followed by another."""
    st, cd, p, sizes, deck = unowned(st), unowned(cd), unowned(p), unowned(sizes), unowned(deck)
    cards = unowned(top)[: top.shape[0]]  # a slice, as the steps' deck[:0]: one compilation
    for i in range(games.shape[0]):
        b = games[i]
        st[b, I_FIX] = 0
        _new_game(st, cd, p, sizes, deck, b, dealers[i], cards)
        if st[b, I_PHASE] == PHASE_GAME_OVER and p[P_AUTO_RESET] != 0:
            _auto_reset(st, cd, p, sizes, deck, b)


@entry
def auto_reset(st: Any, cd: Any, p: Any, sizes: Any, deck: Any, games: Any) -> None:
    """:func:`_auto_reset` of the rows ``games`` (after Python computed their rewards)."""
    st, cd, p, sizes, deck = unowned(st), unowned(cd), unowned(p), unowned(sizes), unowned(deck)
    for i in range(games.shape[0]):
        _auto_reset(st, cd, p, sizes, deck, games[i])


@entry
def legal_mask(st: Any, p: Any, out: Any) -> None:
    """``out`` (B, 59) int8 := every game's legal mask."""
    st, p, out = unowned(st), unowned(p), unowned(out)
    for b in range(out.shape[0]):
        write_mask(st, p, b, out[b])


@entry
def mask_row(st: Any, p: Any, b: int, row: Any) -> None:
    """:func:`write_mask` of one game, for Python callers."""
    write_mask(st, p, b, row)


@entry
def first_dealer(st: Any, p: Any, deck: Any, b: int) -> int:
    """Draw a first dealer from row ``b``'s generator (tests: against ``draw_first_dealer``)."""
    return _draw_first_dealer(st, p, deck, b)


@entry
def permutation(st: Any, b: int, length: int) -> Any:
    """``Generator.permutation(length)`` from row ``b``'s generator (tests: against numpy)."""
    out = np.zeros((1, length), np.int64)
    for i in range(length):
        out[0, i] = i
    shuffle_in_place(st, b, out, np.int64(0), np.int64(0), length)
    return out[0]
