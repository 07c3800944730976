"""Uniformly random legal actions for a whole batch, in one compiled call (benchmarks, tests)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .jit import entry

_MULT = np.uint64(0x2545F4914F6CDD1D)  # xorshift64*
_U12 = np.uint64(12)
_U25 = np.uint64(25)
_U27 = np.uint64(27)
_U32 = np.uint64(32)


@entry
def random_legal(mask: Any, state: Any, out: Any) -> None:
    """``out[b]`` := a uniformly random action among ``mask[b]``'s ones (xorshift64* on
    ``state[0]``, a nonzero uint64); -1 for a row without any."""
    x = state[0]
    for b in range(mask.shape[0]):
        row = mask[b]
        legal = 0
        for a in range(row.shape[0]):
            legal += row[a]
        if legal == 0:
            out[b] = -1
            continue
        x ^= x >> _U12
        x ^= x << _U25
        x ^= x >> _U27
        pick = np.int64(((x * _MULT) >> _U32) % np.uint64(legal))
        for a in range(row.shape[0]):
            if row[a]:
                if pick == 0:
                    out[b] = a
                    break
                pick -= 1
    state[0] = x


class RandomPolicy:
    """``RandomPolicy(seed).actions(mask)``: one uniformly random legal action per row."""

    def __init__(self, seed: int = 0) -> None:
        self._state = np.array([(seed * 0x9E3779B97F4A7C15 + 1) % (1 << 64) or 1], np.uint64)

    def actions(self, mask: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        if out is None:
            out = np.empty(mask.shape[0], np.int64)
        random_legal(mask, self._state, out)
        return out
