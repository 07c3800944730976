"""``ExpertAgent`` compiled, with the public memory it reads: :func:`expert_action`.

Statement for statement :class:`craits.agents.heuristics.ExpertAgent` on the tactician's
pieces (:mod:`craits.agents.compiled_tactician`, :mod:`craits.agents.compiled_values` with
``T_EXPERT`` on): the card counting (:func:`count_unseen`: the deck less the discard pile and
the own hand), the chance that the player after a card cannot follow it (:func:`p_block`,
``_choose``), the suit call's block chance (:func:`call_block`, ``_call_weights``) and the
count's (``_p_no_counter``).

**The memory.** What ``ExpertAgent`` reads of :class:`~craits_env.public_tracker.PublicTracker`
— per seat, the draw counter when it showed it held no card of a suit and no 8 or 9 (drawing
in play, R3.3) or no ace or two (taking the count, R5.3), without ``voluntary_draw`` — is kept
per row in ``mem`` (int64, ``M_*``; -1: nothing known), reset when a hand ends, with the
cards each seat played this hand per suit (not read by the expert: the belief features of
:mod:`craits.agents.compiled_belief`). It learns from
the decisions themselves: :func:`observe_steps` is told each row's action before the step
applies it (the seat, phase, active suit and draw counter then) and settles it once the step
is done (:func:`settle`: the same hand one decision later). A new hand or a new game (by a
step, a reset or a loaded game) starts from nothing, as a new tracker does; a row that moved
within its hand otherwise (a step the memory was not told of) is reported, not guessed at.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from craits_env.actions import (
    DECLARE,
    DRAW,
    PHASE_CALL_SUIT,
    PHASE_COUNT,
    PHASE_DECLARE,
    PHASE_GAME_OVER,
    PHASE_PLAY,
)
from craits_env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from craits_env.rules import MAX_PLAYERS
from craits_env.vector import rows
from craits_env.vector.jit import entry, inner, unowned
from craits_env.vector.layout import (
    HELD1,
    HELD2,
    I_ACTIVE_SUIT,
    I_CURRENT,
    I_DIRECTION,
    I_DISCARD_LEN,
    I_EPISODE,
    I_HAND_DECISIONS,
    I_HAND_INDEX,
    I_KING_LEFT,
    I_PHASE,
    P_PLAYERS,
    P_VOLUNTARY_DRAW,
    S_DRAWN,
    S_HAND_LEN,
    SEEN1,
    SEEN2,
)

from .compiled_cards import (
    ACE,
    CARDS,
    EIGHT,
    FIVE,
    FOUR,
    JACK,
    KING,
    NINE,
    PLAIN_BITS,
    QUEEN_SPADES,
    RANK_BITS,
    SEVEN,
    SIX,
    TEN,
    TWO,
    WILD_BITS,
    bit_count,
    lowest_bit,
)
from .compiled_tactician import (
    NO_ACTION,
    SCRATCH_INTS,
    best_call,
    call_weights,
    fill_table,
    first_best,
    play_values,
    tactician_count,
)
from .compiled_values import (
    F_P_NO_COUNTER,
    T_DIRECTION,
    T_EXPERT,
    T_FACE,
    T_ME,
    T_N,
    T_NXT,
    T_PRV,
    T_SEVEN_NEXT,
    T_SIZES,
    TABLE_FLOATS,
    TABLE_INTS,
    W_BLOCK,
    W_BLOCK_BASE,
    W_BLOCK_MAX_CARDS,
    W_CALL_BLOCK,
    W_THREAT,
    W_THREAT_LEN,
)

# mem[b, M_*]: per seat, the draw counter when it showed a void (-1: none known) ...
M_VOID = 0  # + seat * 4 + suit: no card of the suit (drew in play)
M_NO_WILD = M_VOID + 4 * MAX_PLAYERS  # + seat: no 8 or 9 (drew in play)
M_NO_COUNT = M_NO_WILD + MAX_PLAYERS  # + seat: no ace or two (took the count)
MEMORY_SEATS = M_NO_COUNT + MAX_PLAYERS
# ... then the row as last seen (its game, hand and decisions in the hand), and the step told
# by observe_steps and not yet settled (M_PENDING 1): who decided what, and how.
M_EPISODE, M_HAND, M_DECISIONS = MEMORY_SEATS, MEMORY_SEATS + 1, MEMORY_SEATS + 2
M_PENDING, M_SEAT, M_PHASE, M_ACTION, M_SUIT, M_BASE = range(MEMORY_SEATS + 3, MEMORY_SEATS + 9)
# ... then, for the belief features (craits_env.belief, not read by the expert): the cards each
# seat played this hand, per printed suit (``PublicTracker.played``).
M_PLAYED = MEMORY_SEATS + 9  # + seat * 4 + suit
MEMORY_WIDTH = M_PLAYED + 4 * MAX_PLAYERS
UNKNOWN = -1

# The deck in play (dk[D_*], counted once per call from the state's deck) and a decision's
# unseen cards (cnt[C_*], ``_count_unseen``).
D_TOTAL, D_SUIT, D_RANK = 0, 1, 6  # D_SUIT + suit (8s and 9s apart: + 4), D_RANK + rank
DECK_INTS = D_RANK + NUM_RANKS
C_UNSEEN, C_SUIT, C_WILD, C_COUNTER = 0, 1, 5, 6  # C_SUIT + suit
COUNT_INTS = 7
assert TABLE_INTS + DECK_INTS + COUNT_INTS <= SCRATCH_INTS


def new_memory(num_envs: int) -> np.ndarray:
    """The memory of ``num_envs`` rows, knowing nothing of any (the first settle takes each
    row as it stands)."""
    return np.full((num_envs, MEMORY_WIDTH), UNKNOWN, np.int64)


@inner
def forget_row(st: Any, mem: Any, b: int) -> None:
    """Row ``b`` knows nothing and is seen as it stands now (``PublicTracker._new_hand``)."""
    for i in range(MEMORY_SEATS):
        mem[b, i] = UNKNOWN
    for i in range(M_PLAYED, MEMORY_WIDTH):
        mem[b, i] = 0
    mem[b, M_EPISODE] = st[b, I_EPISODE]
    mem[b, M_HAND] = st[b, I_HAND_INDEX]
    mem[b, M_DECISIONS] = st[b, I_HAND_DECISIONS]
    mem[b, M_PENDING] = 0


@inner
def settle(st: Any, p: Any, mem: Any, b: int) -> bool:
    """Bring row ``b``'s memory up to the row (``PublicTracker.observe``): a new hand or game
    forgets everything (however it came); in the same hand, the told step must be the one
    decision since, and a draw for want of a card (not ``voluntary_draw``) shows a void.
    ``False`` if the row moved in its hand otherwise (a step the memory was not told of)."""
    episode, hand, decisions = st[b, I_EPISODE], st[b, I_HAND_INDEX], st[b, I_HAND_DECISIONS]
    if episode != mem[b, M_EPISODE] or hand != mem[b, M_HAND]:
        forget_row(st, mem, b)  # a HandScored event, a new game, a game loaded
        return True
    if mem[b, M_PENDING] == 0:
        return decisions == mem[b, M_DECISIONS]
    if decisions != mem[b, M_DECISIONS] + 1:
        return False
    mem[b, M_DECISIONS] = decisions
    mem[b, M_PENDING] = 0
    phase, seat, base = mem[b, M_PHASE], mem[b, M_SEAT], mem[b, M_BASE]
    if mem[b, M_ACTION] < NUM_CARDS:  # a card played (its printed suit)
        mem[b, M_PLAYED + 4 * seat + mem[b, M_ACTION] // NUM_RANKS] += 1
    if mem[b, M_ACTION] == DRAW and p[P_VOLUNTARY_DRAW] == 0:
        if phase == PHASE_PLAY:  # no card of the active suit, no 8 or 9 (R3.1, R3.3)
            mem[b, M_VOID + 4 * seat + mem[b, M_SUIT]] = base
            mem[b, M_NO_WILD + seat] = base
        elif phase == PHASE_COUNT:  # no ace or two (R5.3)
            mem[b, M_NO_COUNT + seat] = base
    return True


@entry
def observe_steps(st: Any, p: Any, mem: Any, actions: Any) -> int:
    """Settle every row's last told step, then tell it ``actions[b]`` (about to be applied).
    -1, or the first row not where the memory expected it (nothing more is changed then)."""
    st, p, mem, actions = unowned(st), unowned(p), unowned(mem), unowned(actions)
    for b in range(st.shape[0]):
        if not settle(st, p, mem, b):
            return b
    for b in range(st.shape[0]):
        if st[b, I_PHASE] != PHASE_GAME_OVER:
            pend(st, mem, b, actions[b])
    return -1


@inner
def pend(st: Any, mem: Any, b: int, action: int) -> None:
    """Tell row ``b``'s settled memory the action about to be applied to it."""
    seat = st[b, I_CURRENT]
    mem[b, M_PENDING] = 1
    mem[b, M_SEAT] = seat
    mem[b, M_PHASE] = st[b, I_PHASE]
    mem[b, M_ACTION] = action
    mem[b, M_SUIT] = st[b, I_ACTIVE_SUIT]
    mem[b, M_BASE] = st[b, S_DRAWN + seat]  # draws from the decision on are unknown cards


@inner
def tell(st: Any, p: Any, mem: Any, b: int, action: int) -> bool:
    """:func:`observe_steps` of one row in play: settle it, then tell it ``action``;
    ``False`` (nothing told) if the row was not where the memory expected it."""
    if not settle(st, p, mem, b):
        return False
    pend(st, mem, b, action)
    return True


@entry
def forget_rows(st: Any, mem: Any, which: Any) -> None:
    """:func:`forget_row` of each row of ``which``."""
    for i in range(which.shape[0]):
        forget_row(st, mem, which[i])


@inner
def draws_since(st: Any, mem: Any, b: int, slot: int, seat: int) -> int:
    """``PublicTracker``'s ``*_draws``: cards ``seat`` drew since the memory's ``slot`` was
    learnt; -1 (``None``) if nothing is known."""
    base = mem[b, slot]
    return UNKNOWN if base == UNKNOWN else st[b, S_DRAWN + seat] - base


@inner
def deck_counts(deck: Any, dk: Any) -> None:
    """``_deck_counts``: the deck's cards in all, per suit (8s and 9s apart) and per rank."""
    for i in range(DECK_INTS):
        dk[i] = 0
    for i in range(deck.shape[0]):
        c = np.int64(deck[i])
        rank = c % NUM_RANKS
        dk[D_SUIT + (4 if rank in (EIGHT, NINE) else c // NUM_RANKS)] += 1
        dk[D_RANK + rank] += 1
    dk[D_TOTAL] = deck.shape[0]


@inner
def seen(st: Any, b: int, q: int, bits: int) -> int:
    """The cards among ``bits`` in the discard pile and seat ``q``'s hand, every copy."""
    return (
        bit_count(st[b, SEEN1] & bits)
        + bit_count(st[b, SEEN2] & bits)
        + bit_count(st[b, HELD1 + q] & bits)
        + bit_count(st[b, HELD2 + q] & bits)
    )


@inner
def count_unseen(st: Any, b: int, dk: Any, cnt: Any) -> None:
    """``_count_unseen`` for row ``b``'s acting seat: the cards it cannot see."""
    q = st[b, I_CURRENT]
    total = dk[D_TOTAL] - st[b, I_DISCARD_LEN] - st[b, S_HAND_LEN + q]
    cnt[C_UNSEEN] = total if total > 1 else 1
    for s in range(NUM_SUITS):
        cnt[C_SUIT + s] = dk[D_SUIT + s] - seen(st, b, q, PLAIN_BITS[s])
    cnt[C_WILD] = dk[D_RANK + EIGHT] + dk[D_RANK + NINE] - seen(st, b, q, WILD_BITS)
    counters = RANK_BITS[ACE] | RANK_BITS[TWO]
    cnt[C_COUNTER] = dk[D_RANK + ACE] + dk[D_RANK + TWO] - seen(st, b, q, counters)


@inner
def p_none(cnt: Any, k: int, h: int) -> float:
    """``_p_none``: the chance that ``h`` unknown cards hold none of ``k`` given unseen ones."""
    if k <= 0 or h <= 0:
        return 1.0
    q = 1.0 - k / cnt[C_UNSEEN]
    return math.pow(q, float(h)) if q > 0.0 else 0.0  # C's pow(), as Python's float power


@inner
def at_most(h: int, draws: int) -> int:
    """``h``, cut to the draws since a known void (``h if void is None else min(h, void)``)."""
    return h if draws == UNKNOWN or draws > h else draws


@inner
def p_block(st: Any, mem: Any, b: int, dk: Any, cnt: Any, seat: int, h: int, card: int) -> float:
    """``_p_block``: the chance that ``seat``, holding ``h`` cards, cannot play on ``card``."""
    suit = card // NUM_RANKS
    void = draws_since(st, mem, b, M_VOID + 4 * seat + suit, seat)
    pr = p_none(cnt, cnt[C_SUIT + suit], at_most(h, void))
    if pr:
        no_wild = draws_since(st, mem, b, M_NO_WILD + seat, seat)
        pr *= p_none(cnt, cnt[C_WILD], at_most(h, no_wild))
        rank = card % NUM_RANKS
        per_rank = dk[D_RANK + rank]
        # unseen cards of the rank in another suit (the card's own copies count with the suit)
        me = st[b, I_CURRENT]
        k = per_rank - seen(st, b, me, RANK_BITS[rank]) - (per_rank >> 2)
        k += seen(st, b, me, 1 << card)
        pr *= p_none(cnt, k, h)
    return pr


@inner
def expert_choose(
    st: Any, w: Any, mem: Any, b: int, cards: int, tb: Any, ft: Any, dk: Any, cnt: Any, v: Any
) -> int:
    """``ExpertAgent._choose`` (outside a king's sequence): each card's value plus the chance
    that the player after it cannot follow it, where that can still make it the best."""
    best = v[first_best(cards, v)]
    n, nxt, face = tb[T_N], tb[T_NXT], tb[T_FACE] != 0
    x = cards
    while x:
        c = lowest_bit(x)
        x &= x - 1
        rank = c % NUM_RANKS
        if rank in (EIGHT, NINE, TWO, SIX) or (face and rank == KING):
            continue  # a wild is valued with its call; after a 2, 6 or K no one follows
        victim = nxt
        drawn = 0
        if rank == FOUR or (face and (rank == JACK or c == QUEEN_SPADES)):
            victim = (victim + tb[T_DIRECTION]) % n  # the next one is skipped
        elif rank == TEN and n > 2:
            victim = tb[T_PRV]
        elif rank == FIVE or (rank == SEVEN and tb[T_SEVEN_NEXT]):
            drawn = 1  # the victim draws first
        h = tb[T_SIZES + victim] + drawn
        if victim == tb[T_ME] or h > w[W_BLOCK_MAX_CARDS]:
            continue  # a large hand almost surely follows
        weight = w[W_BLOCK] * (ft[victim] + w[W_BLOCK_BASE])
        if v[c] + weight <= best:
            continue  # cannot become the best card
        v[c] += weight * p_block(st, mem, b, dk, cnt, victim, h, c)
    return first_best(cards, v)


@inner
def call_block(st: Any, p: Any, w: Any, mem: Any, b: int, dk: Any, cnt: Any, wt: Any) -> None:
    """``ExpertAgent._call_weights``: add to each suit's weight ``wt`` the chance that the
    next player lacks it, when that chance can change the call."""
    if st[b, I_KING_LEFT]:
        return  # our own king's sequence goes on: call for ourselves
    n = p[P_PLAYERS]
    nxt = (st[b, I_CURRENT] + st[b, I_DIRECTION]) % n
    h = st[b, S_HAND_LEN + nxt]
    if h > w[W_BLOCK_MAX_CARDS]:
        return
    last = np.int64(w[W_THREAT_LEN]) - 1
    threat = w[W_THREAT + (h if h < last else last)] + w[W_BLOCK_BASE]
    top_i = 0
    for s in range(1, NUM_SUITS):
        if wt[s] > wt[top_i]:
            top_i = s
    second = -np.inf  # sorted(weight)[-2]: the largest but one, ties counted
    for s in range(NUM_SUITS):
        if s != top_i and wt[s] > second:
            second = wt[s]
    if second + w[W_CALL_BLOCK] * threat <= wt[top_i]:
        return  # the chance cannot change the call
    count_unseen(st, b, dk, cnt)
    no_wild = draws_since(st, mem, b, M_NO_WILD + nxt, nxt)
    p_wild = p_none(cnt, cnt[C_WILD], at_most(h, no_wild))
    for s in range(NUM_SUITS):  # the top is the 8 or 9 just played: its rank is a wild
        void = draws_since(st, mem, b, M_VOID + 4 * nxt + s, nxt)
        pr = p_wild * p_none(cnt, cnt[C_SUIT + s], at_most(h, void))
        wt[s] += w[W_CALL_BLOCK] * pr * threat


@inner
def expert_action(
    st: Any, p: Any, w: Any, mem: Any, b: int, dk: Any, tb: Any, ft: Any, cnt: Any, work: Any
) -> int:
    """``ExpertAgent.act`` for row ``b``'s acting seat (``NO_ACTION`` once it is over)."""
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
        call_block(st, p, w, mem, b, dk, cnt, work)
        return best_call(legal, work)
    if phase == PHASE_COUNT:
        return tactician_count(st, b, legal)
    cards = legal & CARDS
    if cards == 0:
        return DRAW
    if cards & (cards - 1) == 0:  # never a voluntary draw: playing sheds a card
        return lowest_bit(cards)
    fill_table(st, p, w, b, tb, ft)
    tb[T_EXPERT] = 1
    count_unseen(st, b, dk, cnt)
    nxt = tb[T_NXT]
    h = tb[T_SIZES + nxt]
    no_count = draws_since(st, mem, b, M_NO_COUNT + nxt, nxt)
    ft[F_P_NO_COUNTER] = p_none(cnt, cnt[C_COUNTER], at_most(h, no_count))
    play_values(st, p, w, b, cards, tb, ft, work)
    if st[b, I_KING_LEFT] > 1:  # a card of a king's sequence: the same player plays on
        return first_best(cards, work)
    return expert_choose(st, w, mem, b, cards, tb, ft, dk, cnt, work)


@entry
def expert_actions(
    st: Any, p: Any, deck: Any, w: Any, mem: Any, which: Any, out: Any, si: Any, sf: Any
) -> int:
    """``out[i]`` := :func:`expert_action` of row ``which[i]``, every row's told step settled
    first. -1, or the first row not where the memory expected it (no action is written).
    ``si``, ``sf``: the scratch space of :func:`~.compiled_tactician.tactician_actions`."""
    for b in range(st.shape[0]):
        if not settle(st, p, mem, b):
            return b
    st, p, w, mem = unowned(st), unowned(p), unowned(w), unowned(mem)
    si, sf = unowned(si), unowned(sf)
    tb, ft, work = si[:TABLE_INTS], sf[:TABLE_FLOATS], sf[TABLE_FLOATS:]
    dk = si[TABLE_INTS : TABLE_INTS + DECK_INTS]
    cnt = si[TABLE_INTS + DECK_INTS : TABLE_INTS + DECK_INTS + COUNT_INTS]
    deck_counts(deck, dk)
    for i in range(which.shape[0]):
        out[i] = expert_action(st, p, w, mem, which[i], dk, tb, ft, cnt, work)
    return -1
