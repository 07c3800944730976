"""The rows of the luck estimator's rollouts: what the one-row kernel
(:func:`craits.agents.luck_rollouts.event_values`) and the batched rows of a table with a
network (:mod:`craits.agents.luck_networks`) make them with, alike — so that the two give
the same values where no network sits.

A row is copied with its expert memory (:func:`copy_row`), its stock restacked by a key a
card and its generator seeded (:func:`restack`; :func:`pairs_of` couples a sample's own
cards to the actual state's keys), a random seat's choices drawn on a dice row of its own
(:func:`seed_dice`, :func:`pick`), and a finished hand's points read exactly
(:func:`finished`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from craits_env.vector import rows
from craits_env.vector.jit import inner
from craits_env.vector.layout import (
    I_STOCK_LEN,
    RNG,
    RNG_HAS_UINT32,
    RNG_INC_HI,
    RNG_INC_LO,
    RNG_STATE_HI,
    RNG_STATE_LO,
    STOCK,
)
from craits_env.vector.rng import random_below

from .compiled_bots import greedy_action
from .compiled_cards import lowest_bit
from .compiled_expert import expert_action, forget_row, tell
from .compiled_table import EXPERT, GREEDY, TACTICIAN
from .compiled_tactician import tactician_action

BEFORE, ACTUAL = 0, 1  # rows: the state before the event, the state after it; then the
# alternatives (2 .. K+1), then the rollout's work row (K+2) and its dice row (K+3: the
# generator of the random seats' choices)
MAX_DECISIONS = 5_000
"""A rollout stops after this many decisions (the rules' own limit, R12, comes first)."""
INCREMENT = 0x5851F42D4C957F2D
"""The generators' PCG64 increment (odd) in every rollout and sample, whatever the game's."""
NOT_EXACT = 1  # the kernels' error codes
STUCK = 2
FORGOT = 3


@inner
def copy_row(st: Any, cd: Any, mem: Any, src: int, dst: int) -> None:
    for i in range(st.shape[1]):
        st[dst, i] = st[src, i]
    for i in range(cd.shape[1]):
        cd[dst, i] = cd[src, i]
    for i in range(mem.shape[1]):
        mem[dst, i] = mem[src, i]


@inner
def restack(st: Any, cd: Any, b: int, key: Any, seed_hi: int, seed_lo: int) -> None:
    """Row ``b``'s stock in the order of ``key`` (a number a card: the highest drawn first,
    ties in the order they lie), its generator's state ``(seed_hi, seed_lo)`` with the
    increment :data:`INCREMENT`."""
    n = st[b, I_STOCK_LEN]
    for i in range(1, n):  # insertion sort, ascending keys: the next card (last) has the highest
        c = cd[b, STOCK + i]
        k = key[c]
        j = i - 1
        while j >= 0 and key[cd[b, STOCK + j]] > k:
            cd[b, STOCK + j + 1] = cd[b, STOCK + j]
            j -= 1
        cd[b, STOCK + j + 1] = c
    st[b, RNG + RNG_STATE_HI] = seed_hi
    st[b, RNG + RNG_STATE_LO] = seed_lo
    st[b, RNG + RNG_INC_HI] = 0
    st[b, RNG + RNG_INC_LO] = INCREMENT
    st[b, RNG + RNG_HAS_UINT32] = 0


@inner
def finished(st: Any, n: int, b: int, lo: int, hi: int, q: int) -> float:
    """Seat ``q``'s points of hands ``lo .. hi-1`` of row ``b`` (NaN beyond 53 bits)."""
    total = 0.0
    for h in range(lo, hi):
        if not rows.exact_hand_points(st, n, b, h, q):
            return np.nan
        total += np.float64(rows.finished_hand_points(st, n, b, h, q))
    return total


@inner
def pairs_of(st: Any, cd: Any, a: int, b: int, have: Any, pair_from: Any, pair_to: Any) -> int:
    """Pair the cards of row ``b``'s stock that row ``a``'s lacks with those of ``a``'s that
    ``b``'s lacks, in ascending order (copies counted): ``pair_from[i]`` (``b``'s) takes
    ``pair_to[i]``'s key, so that the two stocks restack alike but for the cards revealed
    (common random numbers coupled card for card). The number of pairs."""
    for c in range(have.shape[0]):
        have[c] = 0
    for i in range(st[a, I_STOCK_LEN]):
        have[cd[a, STOCK + i]] += 1
    for i in range(st[b, I_STOCK_LEN]):
        have[cd[b, STOCK + i]] -= 1
    k_from = 0
    k_to = 0
    for c in range(have.shape[0]):
        for _ in range(-have[c]):
            pair_from[k_from] = c
            k_from += 1
        for _ in range(have[c]):
            pair_to[k_to] = c
            k_to += 1
    return min(k_from, k_to)


@inner
def seed_dice(st: Any, b: int, seed_hi: int, seed_lo: int) -> None:
    """Row ``b``'s generator (only its generator is used: the random seats' choices) seeded
    ``(seed_hi, seed_lo)`` with an increment of its own."""
    st[b, RNG + RNG_STATE_HI] = seed_hi
    st[b, RNG + RNG_STATE_LO] = seed_lo
    st[b, RNG + RNG_INC_HI] = 0
    st[b, RNG + RNG_INC_LO] = INCREMENT + 2
    st[b, RNG + RNG_HAS_UINT32] = 0


@inner
def pick(st: Any, dice: int, legal: int) -> int:
    """A legal action uniformly at random (``RandomAgent``'s choice, on row ``dice``'s
    generator)."""
    count = 0
    bits = legal
    while bits:
        bits &= bits - 1
        count += 1
    for _ in range(random_below(st, dice, count)):
        legal &= legal - 1
    return lowest_bit(legal)


@inner
def make_alternatives(
    st: Any,
    cd: Any,
    p: Any,
    sizes: Any,
    deck: Any,
    mem: Any,
    actions: Any,
    alt_keys: Any,
    alt_seeds: Any,
    remember: bool,
) -> bool:
    """Rows ``2 .. K+1``: ``actions[k]`` applied to a copy of ``BEFORE`` restacked by
    ``alt_keys[k]`` and seeded ``alt_seeds[k]`` (its memory told the move with
    ``remember``); ``False`` if a memory lost track of its row."""
    for k in range(alt_keys.shape[0]):
        b = 2 + k
        copy_row(st, cd, mem, BEFORE, b)
        restack(st, cd, b, alt_keys[k], alt_seeds[k, 0], alt_seeds[k, 1])
        if remember and not tell(st, p, mem, b, actions[k]):
            return False
        rows.apply(st, cd, p, sizes, deck, b, actions[k])
    return True


@inner
def start_rollout(
    st: Any,
    cd: Any,
    mem: Any,
    r: int,
    t: int,
    dice: int,
    key: Any,
    roll_key: Any,
    roll_seed: Any,
    pairs: int,
    pair_from: Any,
    pair_to: Any,
    remember: bool,
) -> None:
    """Row ``t`` := row ``r`` with its stock restacked by ``roll_key`` (the ``pairs`` cards
    of ``pair_from`` taking the keys of ``pair_to``'s: :func:`pairs_of`) and its generator
    seeded ``roll_seed``; row ``dice``'s generator seeded alike (:func:`seed_dice`); its memory
    forgotten without ``remember``."""
    copy_row(st, cd, mem, r, t)
    for c in range(key.shape[0]):
        key[c] = roll_key[c]
    for i in range(pairs):  # an alternative's own cards take the actual's keys
        key[pair_from[i]] = roll_key[pair_to[i]]
    restack(st, cd, t, key, roll_seed[0], roll_seed[1])
    seed_dice(st, dice, roll_seed[1], roll_seed[0])
    if not remember:
        forget_row(st, mem, t)


@inner
def bot_move(
    st: Any,
    p: Any,
    who: int,
    w_tactician: Any,
    w: Any,
    mem: Any,
    b: int,
    dice: int,
    dk: Any,
    tb: Any,
    ft: Any,
    cnt: Any,
    work: Any,
) -> int:
    """The move of row ``b``'s seat to act, played by the compiled player ``who``
    (``EXPERT``, ``TACTICIAN``, ``GREEDY``; else ``RANDOM``, on row ``dice``'s generator)."""
    if who == EXPERT:
        return expert_action(st, p, w, mem, b, dk, tb, ft, cnt, work)
    if who == TACTICIAN:
        return tactician_action(st, p, w_tactician, b, tb, ft, work)
    if who == GREEDY:
        return greedy_action(st, p, b)
    return pick(st, dice, rows.legal_bits(st, p, b))
