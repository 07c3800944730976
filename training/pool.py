"""The opponent pool: who sits in the seats beside the learner.

Each non-learner seat of a new game is drawn, independently, from the
configured weights (``TrainConfig.opponents``):

* ``"self"`` — the current network (these seats are trained on too when
  ``train_self_seats``: they are on-policy);
* ``"past"`` — a frozen snapshot of the network, one drawn uniformly from the
  pool per game (every seat of that game drawn as ``"past"`` gets the same
  snapshot); snapshots are added every ``snapshot_every`` updates, at most
  ``pool_size`` kept for new games (the oldest retires; a game already using it
  finishes with it). While the pool is empty a ``"past"`` draw falls back to
  ``"self"``;
* any agent spec (``"greedy"``, ``"tactician"``, ``"expert"``, ``"random"``,
  ``"pimc:N"``, ``"ppo:PATH"``) — that bot. ``backend="python"`` seats any; ``backend="vector"``
  seats the compiled bots (:class:`~craits.agents.compiled_bots.CompiledBot`, ``random`` from
  the engine's sampler) and a ``ppo:PATH`` checkpoint's policy as a frozen network
  (:meth:`OpponentPool.checkpoint_network`), and refuses the others in the config
  (:func:`~craits.training.config.vector_refusal`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from craits.agents.network import PolicyNet, frozen_network

from .config import POOL_PAST, POOL_SELF

SELF = POOL_SELF
PAST = POOL_PAST


def is_snapshot(key: str) -> bool:
    """Whether a seat's key names a frozen snapshot (``"past@U"``)."""
    return key.startswith(PAST + "@")


@dataclass
class Snapshot:
    """A frozen copy of the network, taken after update ``update``."""

    update: int
    network: PolicyNet

    @property
    def key(self) -> str:
        return f"{PAST}@{self.update}"


class OpponentPool:
    """Sampling weights over kinds of opponent, and the frozen snapshots."""

    def __init__(self, weights: dict[str, float], spec: dict[str, Any], max_size: int) -> None:
        total = float(sum(weights.values()))
        self.kinds = list(weights)
        self.probs = np.array([weights[k] / total for k in self.kinds])
        self.net_spec = spec
        self.max_size = max_size
        self.snapshots: list[Snapshot] = []  # drawn for new games
        self.retired: list[Snapshot] = []  # dropped from the draw, still seated in running games
        self.seated: Counter[str] = Counter()  # opponent seats drawn since the last reset_counts
        self.checkpoints: dict[str, PolicyNet] = {}  # "ppo:PATH" -> its policy, read once

    def draw_table(self, rng: np.random.Generator, seats: int) -> list[str]:
        """The kinds of ``seats`` opponents of one game: "self", "past@U" (snapshot) or a spec."""
        kinds = [self.kinds[i] for i in rng.choice(len(self.kinds), size=seats, p=self.probs)]
        snapshot = None
        if PAST in kinds and self.snapshots:
            snapshot = self.snapshots[int(rng.integers(len(self.snapshots)))].key
        table = [(snapshot or SELF) if k == PAST else k for k in kinds]
        self.seated.update(PAST if is_snapshot(t) else t for t in table)
        return table

    def add_snapshot(self, network: PolicyNet, update: int) -> None:
        """Freeze a copy of ``network`` (CPU) taken after ``update``."""
        self.snapshots.append(Snapshot(update, frozen_network(self.net_spec, network.state_dict())))
        if len(self.snapshots) > self.max_size:
            self.retired.append(self.snapshots.pop(0))

    def prune(self, in_use: set[str]) -> None:
        """Forget retired snapshots that no running game seats any more."""
        self.retired = [s for s in self.retired if s.key in in_use]

    def network(self, key: str) -> PolicyNet:
        """The frozen network of a ``"past@U"`` key."""
        for s in (*self.snapshots, *self.retired):
            if s.key == key:
                return s.network
        raise KeyError(key)

    def checkpoint_network(self, spec: str) -> PolicyNet:
        """The frozen policy network of a ``"ppo:PATH"`` spec (read once; ``ValueError`` for a
        missing or unusable checkpoint), for seating it batched (``backend="vector"``)."""
        if spec not in self.checkpoints:
            from craits.agents.checkpoint import load_policy
            from craits.agents.checkpoint_agent import SPEC, checkpoint_file
            from craits.agents.specs import substituted

            if not spec.startswith(SPEC + ":"):
                raise ValueError(f"checkpoint_network: got {spec!r}, allowed ppo:PATH")
            path = substituted(spec)[len(SPEC) + 1 :]  # a file carried here by content, or PATH
            self.checkpoints[spec] = load_policy(checkpoint_file(path))[0]
        return self.checkpoints[spec]

    def composition(self) -> dict[str, float]:
        """Share of each kind among the opponent seats drawn since the last call; resets."""
        total = sum(self.seated.values())
        shares = {k: (self.seated[k] / total if total else 0.0) for k in self.kinds}
        self.seated.clear()
        return shares

    # -- checkpoints -------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        def save(snaps: list[Snapshot]) -> list[dict[str, Any]]:
            return [{"update": s.update, "state_dict": s.network.state_dict()} for s in snaps]

        return {
            "snapshots": save(self.snapshots),
            "retired": save(self.retired),
            "seated": dict(self.seated),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        def load(items: list[dict[str, Any]]) -> list[Snapshot]:
            snaps = []
            for item in items:
                net = frozen_network(self.net_spec, item["state_dict"])
                snaps.append(Snapshot(int(item["update"]), net))
            return snaps

        self.snapshots = load(state["snapshots"])
        self.retired = load(state.get("retired", []))
        self.seated = Counter(state.get("seated", {}))
