"""A trained PPO checkpoint as an agent: the spec ``"ppo:PATH"``.

``PATH`` is a checkpoint written by ``craits train`` (``DIR/final.pt`` or
``DIR/checkpoints/step_*.pt``). The agent reads only the observation mapping
(``"observation"``, ``"action_mask"``) — what an agent sees in ``craits_v0`` —
and plays the network's most probable legal action (argmax: deterministic, so
``seed`` changes nothing). A single legal action is returned without running
the network; otherwise the network's policy head runs in numpy
(:meth:`training.network.PolicyNet.numpy_policy`: the same float32 weights, a
fraction of the cost of a batch-of-one torch call). A missing, corrupt or
incompatible checkpoint is a one-line ``ValueError`` when the agent is made; an
observation of another table size (the checkpoint was trained for a different
number of players) is one at the first decision. A process reads each
checkpoint file once (cached by path, size and modification time).

torch is imported when a ``ppo`` agent is made (to read the checkpoint), not
when :mod:`agents` is.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from .base import Observation, register

SPEC = "ppo"


class PPOAgent:
    """Plays the argmax of a trained policy over the legal actions."""

    name = SPEC

    def __init__(self, path: str, seed: int | None = None) -> None:
        self.path = path
        self.seed = seed
        self._logits, self._obs_size, self.meta = _load(path)

    def reset(self, seed: int | None = None) -> None:
        """Start a game; the policy is deterministic, ``seed`` is only recorded."""
        if seed is not None:
            self.seed = seed

    def act(self, observation: Observation) -> int:
        mask = np.asarray(observation["action_mask"])
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        if len(legal) == 0:
            raise ValueError("ppo: no legal action in this observation")
        obs = np.asarray(observation["observation"], np.float32)
        if obs.shape != (self._obs_size,):
            players = self.meta.get("num_players")
            raise ValueError(
                f"ppo:{self.path} was trained for {players} players (observation size "
                f"{self._obs_size}); this table gives an observation of size {obs.size}"
            )
        scores = self._logits(obs)[legal]
        return int(legal[int(np.argmax(scores))])


_Policy = tuple[Callable[[np.ndarray], np.ndarray], int, dict[str, Any]]
_CACHE: dict[tuple[str, int, int], _Policy] = {}
_CACHE_SIZE = 8


def _load(path: str) -> _Policy:
    """The numpy policy, observation size and metadata of a checkpoint (cached)."""
    try:
        st = os.stat(path)
        key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    except OSError:
        key = None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    from training.checkpoint import load_policy

    network, meta = load_policy(path)  # ValueError (one line) if missing or unusable
    policy = (network.numpy_policy(), network.obs_size, meta)
    if key is not None:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = policy
    return policy


def _make(arg: str, seed: int | None) -> PPOAgent:
    if not arg:
        raise ValueError(
            "agent spec 'ppo' needs a checkpoint: ppo:PATH (a .pt file from craits train)"
        )
    return PPOAgent(arg, seed)


register(SPEC, _make)
