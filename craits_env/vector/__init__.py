"""A batched, compiled Craits engine: :class:`VectorGame` (B games, one numba call a step).

It implements the rules of :mod:`craits_env.engine` — which stays the reference — and is
held to it decision by decision by ``tests/craits_env/test_vector_differential.py``: the same legal
masks, observations, snapshots and rewards. ``craits_v0.raw_env(backend="vector")`` runs
the environment on it. Importing this package imports numba; the kernels compile on first
use (cached on disk by numba: later processes load them).
"""

from __future__ import annotations

from .game import VectorGame
from .layout import unsupported_options
from .sample import RandomPolicy

__all__ = ["RandomPolicy", "VectorGame", "unsupported_options"]
