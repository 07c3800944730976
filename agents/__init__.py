"""Craits agents: the protocol and registry (:mod:`agents.base`) and the built-in bots.

Importing the package registers the heuristic ladder and the search bot, so
that after ``import agents`` the specs ``"greedy"``, ``"tactician"``,
``"expert"`` (:mod:`agents.heuristics`), ``"pimc"`` / ``"pimc:N"``
(:mod:`agents.pimc`) and ``"ppo:PATH"`` (:mod:`agents.ppo`, a checkpoint of
``craits train``) work with :func:`agents.base.make_agent` (``"random"`` is
built into the registry).
"""

from __future__ import annotations

from collections.abc import Callable

from .base import Agent, register
from .heuristics import ExpertAgent, GreedyAgent, TacticianAgent


def _factory(cls: type[GreedyAgent]) -> Callable[[str, int | None], Agent]:
    def make(arg: str, seed: int | None) -> Agent:
        if arg:
            raise ValueError(f"agent spec {cls.name!r} takes no argument, got {cls.name}:{arg}")
        return cls(seed)

    return make


for _cls in (GreedyAgent, TacticianAgent, ExpertAgent):
    register(_cls.name, _factory(_cls))

__all__ = ["ExpertAgent", "GreedyAgent", "TacticianAgent"]

from . import pimc as _pimc  # noqa: E402, F401  registers "pimc" and "pimc:N"
from . import ppo as _ppo  # noqa: E402, F401  registers "ppo:PATH" (torch loads lazily)
