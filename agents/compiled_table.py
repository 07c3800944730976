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

The learner's rewards, as the single view pays them: a row's decisions are grouped as
``craits_v0`` pays them (a decision and the forced moves after it); the group's owner and the
hand it opened in are ``group[b]`` and ``first_hand[b]``. Closing a group that finished a hand
or the game adds the learner's reward of it (``rewards.hand_rewards`` of each hand in order,
then the "win" reward; :mod:`craits_env.vector.step_rewards`, the same float64 arithmetic as
Python's) to ``own[b]`` (the learner's group) or ``others[b]``. Only a reward beyond 53 bits
(a seat with more than ``EXACT_PRESSURES`` shuffle pressures in a hand) is left to the caller:
the row stops before it (:data:`PAY`), the caller closes the group on exact integers and calls
again.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from craits_env.actions import PHASE_GAME_OVER
from craits_env.vector import rows as vrows
from craits_env.vector.jit import entry, inner, unowned
from craits_env.vector.layout import (
    ERROR_RLOG_FULL,
    I_CURRENT,
    I_FIX,
    I_HAND_INDEX,
    I_PHASE,
    P_PLAYERS,
    P_REWARD_MODE,
    REWARD_WIN,
)
from craits_env.vector.step_rewards import add_hand_rewards, add_win_rewards

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
NETWORK = 100
"""``table`` entries from ``NETWORK`` on: frozen networks (``NETWORK + k``: the caller's k-th),
whose moves the caller computes (one forward pass over the rows stopped at them, :data:`NET`)."""

# Owners of a row's open reward group (``group[b]``).
CLOSED, LEARNER_GROUP, OPPONENT, RESET = range(4)
# A row's status after :func:`play_rows`.
STOPPED = 0  # at its learner's decision, over, or truncated (its group closed if it could)
PAY = 1  # an opponent is about to decide and the open group's reward needs exact integers
NET = 2  # a network's seat decides (its group opened, its step counted): the caller passes
# its move as ``first`` and calls again

# The Mersenne Twister of CPython's ``random`` (MT19937): 624 words and the position.
MT_WORDS = 624
MT_WIDTH = MT_WORDS + 1


def mt_state(seed: int) -> np.ndarray:
    """``random.Random(seed)``'s state as :func:`mt_below` reads it (uint32, 625)."""
    return np.array(random.Random(seed).getstate()[1], np.uint32)


@inner
def mt_next(mt: Any) -> int:
    """``genrand_uint32`` of CPython's ``_randommodule.c`` on ``mt`` (625 words), in int64."""
    i = int(mt[MT_WORDS])
    if i >= MT_WORDS:
        for k in range(MT_WORDS):
            w = (int(mt[k]) & 0x80000000) | (int(mt[(k + 1) % MT_WORDS]) & 0x7FFFFFFF)
            v = int(mt[(k + 397) % MT_WORDS]) ^ (w >> 1)
            if w & 1:
                v ^= 0x9908B0DF
            mt[k] = v
        i = 0
    y = int(mt[i])
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


@inner
def close_group(
    st: Any,
    p: Any,
    b: int,
    seat: int,
    group: Any,
    first_hand: Any,
    own: Any,
    others: Any,
    acc: Any,
) -> bool:
    """Close row ``b``'s open reward group, its pay to the learner (``seat``) added to
    ``own[b]`` or ``others[b]``; ``False`` (left open) if it needs exact integers."""
    owner = group[b]
    if owner == CLOSED:
        return True
    over = st[b, I_PHASE] == PHASE_GAME_OVER
    last = st[b, I_HAND_INDEX]
    if owner != RESET and (last > first_hand[b] or over):
        for q in range(p[P_PLAYERS]):
            acc[q] = 0.0
        win = p[P_REWARD_MODE] == REWARD_WIN
        if not win:
            for h in range(first_hand[b], last):
                if not add_hand_rewards(st, p, b, h, acc):
                    return False
        if over and win:
            add_win_rewards(st, p, b, acc)
        if owner == LEARNER_GROUP:
            own[b] += acc[seat]
        else:
            others[b] += acc[seat]
    group[b] = CLOSED
    return True


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
    seats: Any,
    own: Any,
    others: Any,
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
    or ``PAY``). Reward groups are closed on the way and where the row stops (the learner's
    seat ``seats[b]``; pay to ``own`` and ``others``). The expert's memory ``mem`` (when the
    table seats one) is told every step.
    Returns -1, or the first row whose state or memory went wrong (the caller raises)."""
    st, cd, p, sizes = unowned(st), unowned(cd), unowned(p), unowned(sizes)
    si, sf = unowned(si), unowned(sf)
    tb, ft, work = si[:_TABLE_INTS], sf[:TABLE_FLOATS], sf[TABLE_FLOATS:]
    dk = si[_TABLE_INTS : _TABLE_INTS + DECK_INTS]
    cnt = si[_TABLE_INTS + DECK_INTS : _TABLE_INTS + DECK_INTS + COUNT_INTS]
    remember = mem.shape[0] > 0
    acc = np.zeros(p[P_PLAYERS], np.float64)
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
                close_group(st, p, b, seats[b], group, first_hand, own, others, acc)
                break
            legal = vrows.legal_bits(st, p, b)
            forced = auto_forced and legal & (legal - 1) == 0
            if max_steps >= 0 and not forced and steps[b] >= max_steps:
                truncated[b] = True
                close_group(st, p, b, seats[b], group, first_hand, own, others, acc)
                break
            seat = st[b, I_CURRENT]
            who = table[b, max(seat, 0)]
            if not forced and who == LEARNER:
                close_group(st, p, b, seats[b], group, first_hand, own, others, acc)
                break
            if forced:
                action = lowest_bit(legal)
            else:
                if not close_group(st, p, b, seats[b], group, first_hand, own, others, acc):
                    status[b] = PAY
                    break
                group[b] = OPPONENT
                first_hand[b] = st[b, I_HAND_INDEX]
                if who >= NETWORK:
                    steps[b] += 1
                    status[b] = NET
                    break
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
