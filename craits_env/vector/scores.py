"""Exact scores without big integers: comparisons and the observation's scaled score.

A score is ``a + 5 * (2**k - 1)`` (``a``: card points, ``|a| < 2**53``; ``k``: shuffle
pressures, R10.1), so a difference of two scores is ``a + 5 * 2**k1 - 5 * 2**k2``. The
Python engine holds such numbers as unbounded ints; these functions give the same answers
from ``(a, k1, k2)``: :func:`score_less` the same order, :func:`scale_diff` the same float
as :func:`craits_env.observation.scale_score` — which computes ``log(|x| + 100)`` of the
double nearest to the exact integer ``|x| + 100``, and so do we, by summing two doubles that
are each exact (one IEEE addition rounds their exact sum once, as ``int.__float__`` does).
"""

from __future__ import annotations

import math

from ..observation import SCORE_CLIP
from ..scoring import PRESSURE_BASE
from .jit import inner

_LOG_100 = math.log(100)  # what scale_score subtracts (a compile-time constant in numba)
# The bounds below are worked out for PRESSURE_BASE = 5 (R10.1), a 3-bit number.
INT64_PRESSURES = 58  # 5 * 2**58 plus card points fits int64 with room to spare
CLIPPED_PRESSURES = 80  # beyond, |x| >= 5 * 2**80 - 2**53: log(1 + |x|/100) > SCORE_CLIP
SINGLE_TERM_BITS = 50  # 5 * (2**d - 1) is an exact double for d <= 50


@inner
def score_less(a1: int, k1: int, a2: int, k2: int) -> bool:
    """Whether ``a1 + 5 * (2**k1 - 1) < a2 + 5 * (2**k2 - 1)`` (card points < 2**53)."""
    if k1 == k2:
        return a1 < a2
    if max(k1, k2) <= INT64_PRESSURES:
        return a1 + (PRESSURE_BASE << k1) < a2 + (PRESSURE_BASE << k2)
    return k1 < k2  # 5 * 2**(k - 1) >= 5 * 2**58 dwarfs any card points


@inner
def _scaled(magnitude: float, negative: bool) -> float:
    """``scale_score``'s tail: ``log(|x| + 100) - log(100)``, clipped, with the sign of x."""
    v = min(math.log(magnitude) - _LOG_100, SCORE_CLIP)
    return -v if negative else v


@inner
def scale_diff(a: int, k1: int, k2: int) -> float:
    """``scale_score(a + 5 * 2**k1 - 5 * 2**k2)`` exactly (``|a| < 2**53``, ``k1, k2 >= 0``)."""
    if k1 == k2 or max(k1, k2) <= INT64_PRESSURES:
        x = a if k1 == k2 else a + (PRESSURE_BASE << k1) - (PRESSURE_BASE << k2)  # exact in int64
        if x == 0:
            return 0.0
        return _scaled(float(abs(x) + 100), x < 0)  # int64 -> double rounds to nearest even
    negative = k2 > k1  # 5 * 2**(k_big - 1) >= 5 * 2**58 dwarfs a
    big, small = max(k1, k2), min(k1, k2)
    if big > CLIPPED_PRESSURES:
        return -SCORE_CLIP if negative else SCORE_CLIP
    rest = (a if not negative else -a) + 100  # |x| + 100 = 5 * 2**small * (2**d - 1) + rest
    d = big - small
    if d <= SINGLE_TERM_BITS:
        magnitude = math.ldexp(float(PRESSURE_BASE * ((1 << d) - 1)), small) + float(rest)
    else:  # small < 30: 5 * 2**big + (rest - 5 * 2**small), both exact
        magnitude = math.ldexp(float(PRESSURE_BASE), big) + float(rest - (PRESSURE_BASE << small))
    return _scaled(magnitude, negative)
