"""The transition buffer both rollouts fill (the Python engine's and the batched engine's).

A rollout steps many games at once; every seat the current network plays and learns from
(the learner's, and the ``"self"`` seats) is a **stream** of transitions. The buffer is
flat: streams interleave, and each transition links to its stream's next one
(``next_index``). A stream's latest transition is *open* until its successor arrives or
its episode ends (``done``: the game's end, or a hand's with ``value_horizon = "hand"``).

:meth:`TransitionBuffer.take` hands the learner a :class:`Segment` — every transition
stored, complete and open, with the links GAE needs
(:func:`craits.training.ppo.gae_linked`: an open transition only bootstraps its
predecessor) — and carries the open ones to the front of the buffer, where they are
completed in the next collection. :meth:`Segment.batch` keeps the complete transitions,
with their advantages and returns: the :class:`Batch` of one update. A carried
transition's log-probability is the behaviour policy's, as PPO's ratio needs; its value
estimate is one update old.

:class:`RolloutStats` is what the games did while a segment was collected (for the logs).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from craits_env.actions import NUM_ACTIONS


@dataclass
class Batch:
    """The transitions of one update, with their advantages and returns."""

    obs: np.ndarray
    hands: np.ndarray  # (len, hands width): the hands head's targets (width 0: none)
    masks: np.ndarray
    actions: np.ndarray
    log_probs: np.ndarray
    values: np.ndarray
    advantages: np.ndarray
    returns: np.ndarray

    def __len__(self) -> int:
        return len(self.actions)


@dataclass
class Segment:
    """The transitions a collection ended with: complete and open, linked per stream."""

    obs: np.ndarray
    hands: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    log_probs: np.ndarray
    values: np.ndarray
    rewards: np.ndarray
    dones: np.ndarray
    next_index: np.ndarray  # the stream's next transition in this segment, or -1
    open: np.ndarray  # still awaiting its successor: bootstraps its predecessor only

    def __len__(self) -> int:
        return len(self.actions)

    def batch(self, advantages: np.ndarray) -> Batch:
        """The complete transitions, in order, with ``advantages`` (one per transition of the
        segment) and the returns ``advantages + values``."""
        done = np.flatnonzero(~self.open)
        return Batch(
            obs=self.obs[done],
            hands=self.hands[done],
            masks=self.masks[done],
            actions=self.actions[done],
            log_probs=self.log_probs[done],
            values=self.values[done],
            advantages=advantages[done],
            returns=advantages[done] + self.values[done],
        )

    @staticmethod
    def concatenate(segments: Sequence[Segment]) -> Segment:
        """The segments one after another (rollout workers' in worker order), each one's links
        shifted by the lengths before it: the streams stay apart."""
        offsets = np.cumsum([0] + [len(s) for s in segments[:-1]])
        parts = {f.name: [getattr(s, f.name) for s in segments] for f in fields(Segment)}
        parts["next_index"] = [
            np.where(s.next_index >= 0, s.next_index + int(o), -1)
            for s, o in zip(segments, offsets, strict=True)
        ]
        return Segment(**{k: np.concatenate(v) for k, v in parts.items()})


class TransitionBuffer:
    """Preallocated arrays of transitions; streams are linked by ``next_index``."""

    ARRAYS = (
        "obs",
        "hands",
        "masks",
        "actions",
        "log_probs",
        "values",
        "rewards",
        "dones",
        "next_index",
    )

    def __init__(self, capacity: int, obs_size: int, hands_size: int = 0) -> None:
        self.capacity = capacity
        self.obs = np.zeros((capacity, obs_size), np.float32)
        self.hands = np.zeros((capacity, hands_size), np.float32)
        self.masks = np.zeros((capacity, NUM_ACTIONS), bool)
        self.actions = np.zeros(capacity, np.int64)
        self.log_probs = np.zeros(capacity, np.float32)
        self.values = np.zeros(capacity, np.float32)
        self.rewards = np.zeros(capacity, np.float64)
        self.dones = np.zeros(capacity, bool)
        self.next_index = np.full(capacity, -1, np.int64)
        self.size = 0
        self.open = 0  # streams whose latest transition awaits its successor

    @property
    def complete(self) -> int:
        """Transitions whose successor is known or whose episode ended."""
        return self.size - self.open

    def append(
        self,
        obs: np.ndarray,
        hands: np.ndarray | None,
        masks: np.ndarray,
        actions: np.ndarray,
        log_probs: np.ndarray,
        values: np.ndarray,
        prev: np.ndarray,
    ) -> np.ndarray:
        """Store one transition per row (each row a different stream), linked after ``prev``
        (the stream's latest transition, -1 for a stream's first); their indices."""
        j0, k = self.size, len(actions)
        idx = np.arange(j0, j0 + k)
        self.obs[idx] = obs
        if hands is not None:
            self.hands[idx] = hands
        self.masks[idx] = masks
        self.actions[idx] = actions
        self.log_probs[idx] = log_probs
        self.values[idx] = values
        self.rewards[idx] = 0.0
        self.dones[idx] = False
        self.next_index[idx] = -1
        linked = prev >= 0
        self.next_index[prev[linked]] = idx[linked]
        self.open += int(k - linked.sum())
        self.size = j0 + k
        return idx

    def end(self, latest: np.ndarray) -> None:
        """End the streams whose latest transitions are ``latest`` (indices >= 0): done."""
        self.dones[latest] = True
        self.open -= len(latest)

    def fill(
        self, batch_size: int, tick: Callable[[], None], stats: RolloutStats
    ) -> tuple[Segment, np.ndarray]:
        """Call ``tick`` (one step of every game) until ``batch_size`` transitions are
        complete, then :meth:`take` them; ``stats.seconds["env"]`` gets the time not spent
        encoding or in forward passes. Both rollouts (Python and batched) collect this way."""
        start = time.perf_counter()
        while self.complete < batch_size:
            tick()
        seconds = stats.seconds
        seconds["env"] = time.perf_counter() - start - seconds["encode"] - seconds["forward"]
        segment, new_index = self.take()
        stats.transitions = int((~segment.open).sum())
        return segment, new_index

    def take(self) -> tuple[Segment, np.ndarray]:
        """Every transition stored, as a :class:`Segment`; the open ones are carried to the
        front. Returns the segment and each old index's new one (-1: not carried)."""
        size = self.size
        is_open = (self.next_index[:size] < 0) & ~self.dones[:size]
        segment = Segment(**{k: getattr(self, k)[:size].copy() for k in self.ARRAYS}, open=is_open)
        carried = np.flatnonzero(is_open)
        new_index = np.full(size, -1, np.int64)
        new_index[carried] = np.arange(len(carried))
        for name in self.ARRAYS:
            array = getattr(self, name)
            array[: len(carried)] = array[carried]
        self.size = len(carried)
        assert self.open == len(carried)
        return segment, new_index

    def state(self) -> dict[str, Any]:
        return {k: getattr(self, k)[: self.size].copy() for k in self.ARRAYS} | {
            "size": self.size,
            "open": self.open,
        }

    def load_state(self, state: dict[str, Any]) -> None:
        self.size, self.open = state["size"], state["open"]
        for k in self.ARRAYS:
            # Saved before 0.3.0: the hands head's targets were the critic's "critic_obs".
            value = state[k] if k in state else state.get("critic_obs")
            if value is not None:
                getattr(self, k)[: self.size] = value


@dataclass
class RolloutStats:
    """What the games did during one collection (for the logs)."""

    steps: int = 0  # environment steps: every decision of every seat
    network_decisions: int = 0  # decisions the current network made (trained or not)
    transitions: int = 0
    learner_hand_points: list[int] = field(default_factory=list)
    learner_wins: list[float] = field(default_factory=list)  # per finished game: 1/k if won
    learner_scores: list[int] = field(default_factory=list)
    seconds: dict[str, float] = field(
        default_factory=lambda: {"env": 0.0, "encode": 0.0, "forward": 0.0}
    )
    scalars: dict[str, float] = field(default_factory=dict)  # rollout workers' (on Ray)
    messages: list[str] = field(default_factory=list)  # lines to show (a worker replaced)
