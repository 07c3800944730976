"""A step's rewards, compiled: ``rewards.hand_rewards`` and ``rewards.win_rewards`` on exact scores.

A finished hand's points are read from the row's ``POINTS`` area
(:func:`finished_hand_points`); the rewards are computed with Python's float64 arithmetic
on those exact integers, so they equal the Python engine's. Points with more than
:data:`EXACT_PRESSURES` shuffle pressures may need more than 53 bits: such a step's
rewards are left to Python (``add_hand_rewards`` returns ``False``).
"""

from __future__ import annotations

import math
from typing import Any

from ..rewards import BOUNDED_SCALE
from ..scoring import PRESSURE_BASE
from .jit import inner
from .layout import (
    HP_CARDS,
    HP_K0,
    HP_K1,
    P_PLAYERS,
    P_REWARD_MODE,
    POINTS,
    REWARD_BOUNDED,
    REWARD_RELATIVE,
    REWARD_SCORE,
    S_POINTS,
    S_PRESSURES,
)
from .scores import score_less

EXACT_PRESSURES = 45  # hand points with at most this many pressures: 10 seats sum below 2**53


@inner
def exact_hand_points(st: Any, n: int, b: int, h: int, q: int) -> bool:
    """Whether hand ``h``'s points of seat ``q`` are exact in float64 sums of up to ten
    seats (its pressures number at most :data:`EXACT_PRESSURES`)."""
    return st[b, POINTS + 3 * (h * n + q) + HP_K1] <= EXACT_PRESSURES


@inner
def finished_hand_points(st: Any, n: int, b: int, h: int, q: int) -> int:
    """Hand ``h``'s points of seat ``q``: its card points plus what its pressures of that hand
    cost (``scoring.pressure_costs``; exact while they number at most EXACT_PRESSURES)."""
    k = POINTS + 3 * (h * n + q)
    return st[b, k + HP_CARDS] + PRESSURE_BASE * ((1 << st[b, k + HP_K1]) - (1 << st[b, k + HP_K0]))


@inner
def add_hand_rewards(st: Any, p: Any, b: int, h: int, acc: Any) -> bool:
    """``acc += rewards.hand_rewards`` of hand ``h`` (Python's float64 arithmetic on exact
    integers); ``False`` if its points need more than 53 bits (left to Python)."""
    n = p[P_PLAYERS]
    total = 0
    for q in range(n):
        if not exact_hand_points(st, n, b, h, q):
            return False
        total += finished_hand_points(st, n, b, h, q)
    mode = p[P_REWARD_MODE]
    for q in range(n):
        own = finished_hand_points(st, n, b, h, q)
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
def add_win_rewards(st: Any, p: Any, b: int, acc: Any) -> None:
    """``acc += rewards.win_rewards``: the winners (lowest exact total) share +1."""
    n = p[P_PLAYERS]
    best = 0
    for q in range(1, n):
        if score_less(
            st[b, S_POINTS + q],
            st[b, S_PRESSURES + q],
            st[b, S_POINTS + best],
            st[b, S_PRESSURES + best],
        ):
            best = q
    winners = 0
    for q in range(n):
        if not score_less(
            st[b, S_POINTS + best],
            st[b, S_PRESSURES + best],
            st[b, S_POINTS + q],
            st[b, S_PRESSURES + q],
        ):
            winners += 1
    if winners == n:
        return
    for q in range(n):
        if score_less(
            st[b, S_POINTS + best],
            st[b, S_PRESSURES + best],
            st[b, S_POINTS + q],
            st[b, S_PRESSURES + q],
        ):
            acc[q] += -1.0 / (n - winners)
        else:
            acc[q] += 1.0 / winners
