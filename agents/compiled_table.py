"""A table of compiled opponents played inside one numba call: :func:`play_rows`.

The vector views (:class:`~craits.agents.gym_vector_env.CraitsVectorEnv` and what stands on
it) seat one learner per row of a :class:`~craits_env.vector.VectorGame` and the compiled bots
(:mod:`craits.agents.compiled_bots`) or ``random`` at the other seats. :func:`play_rows` takes
each row asked from the learner's action to its learner's next decision — every opponent's
decision, the forced moves with ``auto_forced``, the ``max_steps`` truncation — in one
compiled loop per row, instead of one engine call per decision over all rows in lock step.

``table[b, seat]`` says who plays each seat of row ``b``: :data:`LEARNER`, :data:`RANDOM`
(:class:`~craits.agents.base.RandomAgent`: ``random.Random(seed).randrange`` over the legal
actions, here on the same Mersenne Twister, :func:`mt_state` / :func:`mt_below`) or one of
:data:`BOT_CODES` (``greedy``, ``tactician``, ``expert``: their compiled decisions, the
expert's public memory told every step of the row, the learner's too).

What the Python side keeps: the rewards. A row's decisions are grouped as ``craits_v0`` pays
them (a decision and its forced moves); the group's owner and the hand it opened in are
``group[b]`` and ``first_hand[b]``. A group that finished a hand pays the learner a reward;
:func:`play_rows` closes the groups that pay nothing itself and stops a row before it closes
one that pays (:data:`PAY`): the caller adds that reward and calls again.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from craits_env.actions import PHASE_GAME_OVER
from craits_env.vector import rows as vrows
from craits_env.vector.jit import entry, inner, unowned
from craits_env.vector.layout import ERROR_RLOG_FULL, I_CURRENT, I_FIX, I_HAND_INDEX, I_PHASE

from .compiled_bots import greedy_action
from .compiled_cards import lowest_bit
from .compiled_expert import (
    COUNT_INTS,
    DECK_INTS,
    deck_counts,
    expert_action,
    settle,
    tell,
)
from .compiled_expert import TABLE_INTS as _TABLE_INTS
from .compiled_tactician import TABLE_FLOATS, tactician_action

LEARNER, RANDOM = -1, -2
"""``table`` entries: the learner's seat, a ``random`` opponent's."""
GREEDY, TACTICIAN, EXPERT = 0, 1, 2
BOT_CODES: dict[str, int] = {"greedy": GREEDY, "tactician": TACTICIAN, "expert": EXPERT}
"""``table`` entries of the compiled bots, by spec name."""

# Owners of a row's open reward group (``group[b]``).
CLOSED, LEARNER_GROUP, OPPONENT, RESET = range(4)
# A row's status after :func:`play_rows`.
STOPPED = 0  # at its learner's decision, over, or truncated
PAY = 1  # an opponent is about to decide and the open group paid: close it, call again

# The Mersenne Twister of CPython's ``random`` (MT19937): 624 words and the position.
MT_WORDS = 624
MT_WIDTH = MT_WORDS + 1


def mt_state(seed: int) -> np.ndarray:
    """``random.Random(seed)``'s state as :func:`mt_below` reads it (uint32, 625)."""
    return np.array(random.Random(seed).getstate()[1], np.uint32)


@inner
def mt_next(mt: Any) -> int:
    """``genrand_uint32`` of CPython's ``_randommodule.c`` on ``mt`` (625 words), in int64."""
    i = np.int64(mt[MT_WORDS])
    if i >= MT_WORDS:
        for k in range(MT_WORDS):
            y = (np.int64(mt[k]) & 0x80000000) | (np.int64(mt[(k + 1) % MT_WORDS]) & 0x7FFFFFFF)
            v = np.int64(mt[(k + 397) % MT_WORDS]) ^ (y >> 1)
            if y & 1:
                v ^= 0x9908B0DF
            mt[k] = v
        i = 0
    y = np.int64(mt[i])
    mt[MT_WORDS] = i + 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y


@inner
def mt_below(mt: Any, n: int) -> int:
    """``random.Random.randrange(n)`` (``_randbelow_with_getrandbits``), ``0 < n < 2**32``."""
    k = 0
    while (n >> k) > 0:
        k += 1
    r = mt_next(mt) >> (32 - k)
    while r >= n:
        r = mt_next(mt) >> (32 - k)
    return r


@inner
def random_action(mt: Any, legal: int) -> int:
    """``RandomAgent.act``: ``legal[randrange(len(legal))]`` over the ascending legal ids."""
    count = 0
    bits = legal
    while bits:
        bits &= bits - 1
        count += 1
    pick = mt_below(mt, count)
    bits = legal
    for _ in range(pick):
        bits &= bits - 1
    return lowest_bit(bits)


@entry
def play_rows(
    st: Any,
    cd: Any,
    p: Any,
    sizes: Any,
    deck: Any,
    table: Any,
    w_tactician: Any,
    w_expert: Any,
    mem: Any,
    mts: Any,
    which: Any,
    first: Any,
    steps: Any,
    truncated: Any,
    group: Any,
    first_hand: Any,
    max_steps: int,
    auto_forced: bool,
    si: Any,
    sf: Any,
    status: Any,
) -> int:
    """Play each row ``b`` of ``which``: ``first[b]`` (>= 0: the learner's action, already
    checked legal; its group opened and its step counted by the caller), then every
    opponent's decision and forced move until the row's learner decides, the game ends or
    ``max_steps`` (-1: none) truncates it; ``status[b]`` says where it stopped (``STOPPED``
    or ``PAY``). The expert's memory ``mem`` (when the table seats one) is told every step.
    Returns -1, or the first row whose state or memory went wrong (the caller raises)."""
    st, cd, p, sizes = unowned(st), unowned(cd), unowned(p), unowned(sizes)
    si, sf = unowned(si), unowned(sf)
    tb, ft, work = si[:_TABLE_INTS], sf[:TABLE_FLOATS], sf[TABLE_FLOATS:]
    dk = si[_TABLE_INTS : _TABLE_INTS + DECK_INTS]
    cnt = si[_TABLE_INTS + DECK_INTS : _TABLE_INTS + DECK_INTS + COUNT_INTS]
    remember = mem.shape[0] > 0
    if remember:
        deck_counts(deck, dk)
    for i in range(which.shape[0]):
        b = which[i]
        status[b] = STOPPED
        action = first[b]
        if action >= 0:
            if remember and not tell(st, p, mem, b, action):
                return b
            vrows.apply(st, cd, p, sizes, deck, b, action)
            if st[b, I_FIX] == ERROR_RLOG_FULL:
                return b
        while True:
            if st[b, I_PHASE] == PHASE_GAME_OVER or truncated[b]:
                break
            legal = vrows.legal_bits(st, p, b)
            forced = auto_forced and legal & (legal - 1) == 0
            if max_steps >= 0 and not forced and steps[b] >= max_steps:
                truncated[b] = True
                break
            seat = st[b, I_CURRENT]
            who = table[b, max(seat, 0)]
            if not forced and who == LEARNER:
                break
            if forced:
                action = lowest_bit(legal)
            else:
                if group[b] != CLOSED:
                    if st[b, I_HAND_INDEX] > first_hand[b] and group[b] != RESET:
                        status[b] = PAY
                        break
                    group[b] = CLOSED
                group[b] = OPPONENT
                first_hand[b] = st[b, I_HAND_INDEX]
                if who == RANDOM:
                    action = random_action(mts[b, seat], legal)
                elif who == GREEDY:
                    action = greedy_action(st, p, b)
                elif who == TACTICIAN:
                    action = tactician_action(st, p, w_tactician, b, tb, ft, work)
                else:
                    if not settle(st, p, mem, b):
                        return b
                    action = expert_action(st, p, w_expert, mem, b, dk, tb, ft, cnt, work)
                steps[b] += 1
            if remember and not tell(st, p, mem, b, action):
                return b
            vrows.apply(st, cd, p, sizes, deck, b, action)
            if st[b, I_FIX] == ERROR_RLOG_FULL:
                return b
    return -1


def check_table(table: np.ndarray) -> None:
    """``ValueError`` unless every entry of ``table`` is a known seat code."""
    known = {LEARNER, RANDOM, *BOT_CODES.values()}
    bad = sorted(set(np.unique(table).tolist()) - known)
    if bad:
        raise ValueError(f"table: unknown seat codes {bad}; allowed {sorted(known)}")
