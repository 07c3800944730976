"""The agent protocol and the registry of agent spec strings.

An agent acts on an observation — a mapping with the environment's keys
``"observation"`` (float32 vector) and ``"action_mask"`` (int8, 59) — and returns
a legal action id. Drivers (tournaments, the Gymnasium view, ``craits play``)
pass a :class:`craits_env.public.SeatView`, which is such a mapping and also
exposes the seat's own hand and the public state (no hidden card), for bots
that reason about cards. Spec strings name agents everywhere: ``"random"``, the
heuristics by name, ``"pimc:N"``, later ``"ppo:PATH"``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

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


_REGISTRY: dict[str, Callable[[str, int | None], Agent]] = {
    "random": lambda arg, seed: RandomAgent(seed),
}


def known_specs() -> list[str]:
    return sorted(_REGISTRY)


def register(name: str, factory: Callable[[str, int | None], Agent]) -> None:
    """Register ``factory(argument, seed)`` for the spec ``name`` (``"name"`` or ``"name:ARG"``)."""
    _REGISTRY[name] = factory


def make_agent(spec: str | Agent | Callable[[Observation], int], seed: int | None = None) -> Agent:
    """An agent from a spec string (``"random"``), an :class:`Agent`, or a callable."""
    if isinstance(spec, str):
        name, _, arg = spec.partition(":")
        factory = _REGISTRY.get(name)
        if factory is None:
            raise ValueError(f"unknown agent spec {spec!r}; known: {', '.join(known_specs())}")
        return factory(arg, seed)
    if isinstance(spec, Agent):
        return spec
    if callable(spec):
        return CallableAgent(spec)
    raise ValueError(f"agent spec: got {type(spec).__name__}, expected a spec string or callable")


def agent_name(spec: Any) -> str:
    return spec if isinstance(spec, str) else getattr(spec, "name", type(spec).__name__)
