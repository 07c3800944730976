"""The agent protocol and the two simplest agents (random, a wrapped function).

An agent acts on an observation — a mapping with the environment's keys
``"observation"`` (float32 vector) and ``"action_mask"`` (int8, 59) — and returns
a legal action id. Drivers (tournaments, the Gymnasium view, ``craits play``)
pass a :class:`craits_env.public.SeatView`, which is such a mapping and also
exposes the seat's own hand and the public state (no hidden card), for bots
that reason about cards. Spec strings name agents everywhere (``"random"``, the
heuristics by name, ``"pimc:N"``, ``"ppo:PATH"``, your own ``MODULE:ATTR``):
the table is :mod:`craits.agents.specs`.

Optional attributes drivers use: ``name``; ``version`` (bump it when the agent's
play changes: stored results are keyed by it, :func:`craits.agents.specs.agent_identity`);
``identity`` (overrides ``SPEC@VERSION``); ``check_table(num_players, rules)``
(raise ``ValueError`` for a table the agent cannot play; called before any game).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

Observation = Mapping[str, np.ndarray]


def legal_actions_of(observation: Observation) -> Sequence[int]:
    """The legal action ids: a SeatView's ``legal_actions``, else the mask's nonzero ids."""
    legal = getattr(observation, "legal_actions", None)
    if legal is not None:
        return legal
    return [int(a) for a in np.flatnonzero(observation["action_mask"])]


@runtime_checkable
class Agent(Protocol):
    """What every bot implements."""

    name: str

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; ``seed`` makes the agent's own choices reproducible."""

    def act(self, observation: Observation) -> int:
        """A legal action id for ``observation`` (its ``action_mask`` marks the legal ones)."""


class RandomAgent:
    """Uniformly random among the legal actions."""

    name = "random"
    version = 1

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = random.Random(seed)

    def act(self, observation: Observation) -> int:
        legal = legal_actions_of(observation)
        if not legal:
            raise ValueError("RandomAgent.act: no legal action in this observation")
        return int(legal[self._rng.randrange(len(legal))])


class CallableAgent:
    """Wraps a function ``observation -> action`` as an agent."""

    def __init__(self, fn: Callable[[Observation], int], name: str | None = None) -> None:
        self._fn = fn
        self.name: str = name or str(getattr(fn, "__name__", "callable"))

    def reset(self, seed: int | None = None) -> None:
        reset = getattr(self._fn, "reset", None)
        if callable(reset):
            reset(seed)

    def act(self, observation: Observation) -> int:
        return int(self._fn(observation))
