"""Where a run's games are played: this process, or rollout workers elsewhere.

A :class:`Rollouts` collects the transitions of one update with the current network
(:meth:`Rollouts.collect`), keeps its games in flight across updates and saves them into
checkpoints. :class:`LocalRollouts` plays ``num_games`` games in this process
(``craits train``): a :class:`~craits.training.selfplay.SelfPlayRollout` (Python engine)
or a :class:`~craits.training.vector_selfplay.VectorSelfPlayRollout` (``backend="vector"``).
:class:`craits.training.distributed.RayRollouts` plays the same rollout in Ray actors
(``craits train --ray``).

Randomness: the games of rollout worker ``w`` in its ``i``-th incarnation are seeded by
:func:`rollout_generators` ``(seed, w, i)``; worker 0's first incarnation *is* the
single-process rollout, so one Ray worker trains exactly what ``craits train`` trains.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import torch

from craits.agents.checkpoint import bytes_to_tensor, tensor_to_bytes
from craits.agents.network import PolicyNet
from craits_env.seeding import derive_rng, derive_seed

from .buffer import RolloutStats, Segment
from .config import TrainConfig
from .pool import OpponentPool
from .selfplay import SelfPlayRollout
from .vector_selfplay import VectorSelfPlayRollout

ROLLOUT_SEED = 0x5E1F  # the single-process rollout's games: derive_rng(seed, ROLLOUT_SEED)
WORKER_SEED = 0x3041  # other workers' and incarnations' games: derive_seed(seed, WORKER_SEED, w, i)


def rollout_generators(
    seed: int, worker: int = 0, incarnation: int = 0
) -> tuple[np.random.Generator, torch.Generator]:
    """The games' generator and the action-sampling generator of a rollout.

    Worker 0's first incarnation gets the single-process run's generators
    (``derive_rng(seed, ROLLOUT_SEED)``, ``seed * 2 + 1``); every other
    ``(worker, incarnation)`` its own, derived from all three integers.
    """
    if worker == 0 and incarnation == 0:
        return derive_rng(seed, ROLLOUT_SEED), torch.Generator().manual_seed(seed * 2 + 1)
    derived = derive_seed(seed, WORKER_SEED, worker, incarnation)
    return derive_rng(derived), torch.Generator().manual_seed(derived)


def new_rollout(
    config: TrainConfig, pool: OpponentPool, rng: np.random.Generator
) -> SelfPlayRollout | VectorSelfPlayRollout:
    """The games of one rollout, on ``config.backend``'s engine."""
    if config.backend == "vector":
        return VectorSelfPlayRollout(config, pool, rng)
    return SelfPlayRollout(config, pool, rng)


class Rollouts(Protocol):
    """Where a run's games are played (this process, or rollout workers elsewhere)."""

    @property
    def description(self) -> str:
        """A line on where the games are played ("" for this process)."""
        ...

    def collect(
        self, actor: PolicyNet, version: int, batch_size: int
    ) -> tuple[Segment, RolloutStats]:
        """Play until ``batch_size`` transitions are complete, acting with ``actor`` (the
        network after ``version`` updates); the segment and what the games did."""
        ...

    def snapshot_added(self, pool: OpponentPool) -> None:
        """The run's pool just froze a snapshot (its newest): seat it in new games."""
        ...

    def save_into(self, checkpoint: dict[str, Any]) -> None:
        """Add the games in flight and the sampling generators to ``checkpoint``."""
        ...

    def load_from(self, checkpoint: dict[str, Any], pool: OpponentPool) -> str | None:
        """Continue the games of ``checkpoint`` (``pool``: the run's, already loaded); a
        line to show when they could not be continued exactly, else ``None``."""
        ...

    def close(self) -> list[str]:
        """Release what the rollouts hold (idempotent); the lines not shown yet."""
        ...


RolloutsFactory = Callable[[TrainConfig, OpponentPool], Rollouts]


class LocalRollouts:
    """``config.num_games`` games in this process: the single-process :class:`Rollouts`."""

    description = ""

    def __init__(self, config: TrainConfig, pool: OpponentPool) -> None:
        rng, self.sample_gen = rollout_generators(config.seed)
        self.rollout = new_rollout(config, pool, rng)

    def collect(
        self, actor: PolicyNet, version: int, batch_size: int
    ) -> tuple[Segment, RolloutStats]:
        return self.rollout.collect(actor, batch_size, self.sample_gen)

    def snapshot_added(self, pool: OpponentPool) -> None:
        pool.prune(self.rollout.in_use())

    def save_into(self, checkpoint: dict[str, Any]) -> None:
        checkpoint["rng"]["sample"] = self.sample_gen.get_state()
        checkpoint["rollout"] = bytes_to_tensor(self.rollout.state_bytes())

    def load_from(self, checkpoint: dict[str, Any], pool: OpponentPool) -> str | None:
        if "rollout" in checkpoint:
            self.sample_gen.set_state(checkpoint["rng"]["sample"])
            self.rollout.load_state_bytes(tensor_to_bytes(checkpoint["rollout"]))
            return None
        workers = checkpoint.get("workers", {}).get("states", [])  # craits train --ray's
        if len(workers) != 1:
            return (
                f"the games in flight were played by {len(workers)} rollout workers: new "
                "games are dealt here (the run continues, not bit-identically)"
            )
        state = workers[0]  # one worker's games continue here exactly
        snapshots = pool.state_dict()["snapshots"]
        pool.load_state_dict(
            {"snapshots": snapshots, "retired": state["retired"], "seated": dict(pool.seated)}
        )
        self.sample_gen.set_state(state["sample"])
        self.rollout.load_state_bytes(tensor_to_bytes(state["rollout"]))
        return None

    def close(self) -> list[str]:
        return []
