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

from .compiled_cards import lowest_bit

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
