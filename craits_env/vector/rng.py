"""numpy's PCG64 and ``Generator.permutation`` inside numba, draw for draw.

A game of :class:`~craits_env.vector.game.VectorGame` draws from the same generator as a
:class:`~craits_env.engine.Game` made with ``rng=numpy.random.Generator(PCG64(...))``:
the 128-bit LCG step and XSL-RR output of numpy's ``PCG64``, its buffered 32-bit draws,
and ``random_interval`` (a masked rejection draw) in the Fisher-Yates loop of
``Generator.shuffle``; and ``Generator.integers(n)`` (:func:`random_below`, for the
search's samples: ``craits.agents.search_sampling``). So the same generator state gives
the same first dealer, deals and reshuffles in both engines
(``tests/craits_env/test_vector.py`` checks the draws against numpy).

State: ``st[b, RNG + RNG_*]`` = state high and low words, increment high and low words,
the ``has_uint32`` flag and the buffered ``uinteger``, as int64 bit patterns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .jit import inner
from .layout import (
    RNG,
    RNG_HAS_UINT32,
    RNG_INC_HI,
    RNG_INC_LO,
    RNG_STATE_HI,
    RNG_STATE_LO,
    RNG_UINTEGER,
    RNG_WORDS,
)

_MULT_HI = np.uint64(0x2360ED051FC65DA4)  # PCG's default 128-bit multiplier
_MULT_LO = np.uint64(0x4385DF649FCCF645)
_LOW32 = np.uint64(0xFFFFFFFF)
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U32 = np.uint64(32)
_U58 = np.uint64(58)
_U63 = np.uint64(63)
_U64 = np.uint64(64)
_WORD = (1 << 64) - 1


@inner
def _mulhi(a: Any, b: Any) -> Any:
    """The high 64 bits of the 128-bit product of two uint64."""
    a0 = a & _LOW32
    a1 = a >> _U32
    b0 = b & _LOW32
    b1 = b >> _U32
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    p11 = a1 * b1
    mid = (p00 >> _U32) + (p01 & _LOW32) + (p10 & _LOW32)
    return p11 + (p01 >> _U32) + (p10 >> _U32) + (mid >> _U32)


@inner
def next_uint64(st: Any, b: int) -> Any:
    """numpy's ``pcg64_next64``: advance the LCG, then the XSL-RR output of the new state."""
    hi = np.uint64(st[b, RNG + RNG_STATE_HI])
    lo = np.uint64(st[b, RNG + RNG_STATE_LO])
    new_lo = lo * _MULT_LO
    new_hi = _mulhi(lo, _MULT_LO) + hi * _MULT_LO + lo * _MULT_HI
    inc_lo = new_lo + np.uint64(st[b, RNG + RNG_INC_LO])
    carry = _U1 if inc_lo < new_lo else _U0
    new_hi = new_hi + np.uint64(st[b, RNG + RNG_INC_HI]) + carry
    st[b, RNG + RNG_STATE_HI] = np.int64(new_hi)
    st[b, RNG + RNG_STATE_LO] = np.int64(inc_lo)
    x = new_hi ^ inc_lo
    rot = new_hi >> _U58
    return (x >> rot) | (x << ((_U64 - rot) & _U63))


@inner
def next_uint32(st: Any, b: int) -> Any:
    """numpy's ``pcg64_next32``: half of a 64-bit draw, the other half kept for the next call."""
    if st[b, RNG + RNG_HAS_UINT32] != 0:
        st[b, RNG + RNG_HAS_UINT32] = 0
        return np.uint64(st[b, RNG + RNG_UINTEGER])
    value = next_uint64(st, b)
    st[b, RNG + RNG_HAS_UINT32] = 1
    st[b, RNG + RNG_UINTEGER] = np.int64(value >> _U32)
    return value & _LOW32


@inner
def random_interval(st: Any, b: int, top: int) -> Any:
    """numpy's ``random_interval``: uniform in ``[0, top]`` (``top < 2**32`` here)."""
    if top == 0:
        return 0
    limit = np.uint64(top)
    mask = limit
    mask |= mask >> np.uint64(1)
    mask |= mask >> np.uint64(2)
    mask |= mask >> np.uint64(4)
    mask |= mask >> np.uint64(8)
    mask |= mask >> np.uint64(16)
    mask |= mask >> _U32
    while True:
        value = next_uint32(st, b) & mask
        if value <= limit:
            return np.int64(value)


@inner
def random_below(st: Any, b: int, n: int) -> Any:
    """numpy's ``Generator.integers(n)`` (``1 <= n < 2**32``): Lemire's multiply-and-reject
    on 32-bit draws (``buffered_bounded_lemire_uint32``); ``n == 1`` draws nothing."""
    if n == 1:
        return 0
    bound = np.uint64(n)
    m = next_uint32(st, b) * bound
    leftover = m & _LOW32
    if leftover < bound:
        threshold = (_LOW32 - (bound - _U1)) % bound
        while leftover < threshold:
            m = next_uint32(st, b) * bound
            leftover = m & _LOW32
    return np.int64(m >> _U32)


@inner
def shuffle_in_place(st: Any, b: int, values: Any, row: int, start: int, length: int) -> None:
    """``values[row, start : start + length]`` permuted as ``Generator.shuffle`` does (the
    swaps of ``permutation(length)``: the result is that part ``[rng.permutation(length)]``),
    drawing from generator ``b``."""
    for i in range(length - 1, 0, -1):
        j = random_interval(st, b, i)
        held = values[row, start + i]
        values[row, start + i] = values[row, start + j]
        values[row, start + j] = held


def _word(value: int) -> int:
    """A 64-bit pattern as the int64 that holds it."""
    value &= _WORD
    return value - (1 << 64) if value >> 63 else value


def load_state(st: np.ndarray, b: int, state: Mapping[str, Any]) -> None:
    """Put a numpy ``PCG64`` state dict (``bit_generator.state``) into row ``b``."""
    if not isinstance(state, dict) or state.get("bit_generator") != "PCG64":
        kind = state.get("bit_generator") if isinstance(state, dict) else type(state).__name__
        raise ValueError(f"generator: got a {kind} state, allowed PCG64 (numpy's default_rng)")
    inner_state = state["state"]
    words = {
        RNG_STATE_HI: int(inner_state["state"]) >> 64,
        RNG_STATE_LO: int(inner_state["state"]),
        RNG_INC_HI: int(inner_state["inc"]) >> 64,
        RNG_INC_LO: int(inner_state["inc"]),
        RNG_HAS_UINT32: int(state["has_uint32"]),
        RNG_UINTEGER: int(state["uinteger"]),
    }
    for k, value in words.items():
        st[b, RNG + k] = _word(value)


def export_state(st: np.ndarray, b: int) -> dict[str, Any]:
    """Row ``b``'s generator as a numpy ``PCG64`` state dict (``bit_generator.state = ...``)."""
    w = [int(v) & _WORD for v in st[b, RNG : RNG + RNG_WORDS]]
    return {
        "bit_generator": "PCG64",
        "state": {
            "state": (w[RNG_STATE_HI] << 64) | w[RNG_STATE_LO],
            "inc": (w[RNG_INC_HI] << 64) | w[RNG_INC_LO],
        },
        "has_uint32": w[RNG_HAS_UINT32],
        "uinteger": w[RNG_UINTEGER],
    }


def generator_row(state: Mapping[str, Any]) -> np.ndarray:
    """A one-row int64 array holding only the PCG64 ``state``, where the functions here read
    row 0's generator: for compiled code that draws from a generator of its own (advance
    it there, then :func:`export_state` of row 0)."""
    row = np.zeros((1, RNG + RNG_WORDS), np.int64)
    load_state(row, 0, state)
    return row


def seeded_state(seed: int) -> dict[str, Any]:
    """The PCG64 state of ``numpy.random.default_rng(seed)``."""
    return dict(np.random.PCG64(seed).state)
