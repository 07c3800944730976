"""The agent protocol and the registry of agent spec strings.

An agent acts on the observation dict of the environment
(``{"observation": float32 vector, "action_mask": int8 (59,)}``) and returns a
legal action id. Spec strings name agents everywhere (the Gymnasium view's
``opponents``, tournaments, play): ``"random"`` now; heuristics, ``"pimc:N"`` and
``"ppo:PATH"`` as they arrive.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

Observation = dict[str, np.ndarray]


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
        self._rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def act(self, observation: Observation) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("RandomAgent.act: the action mask has no legal action")
        return int(legal[self._rng.integers(legal.size)])


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
