"""Craits agents: the protocol and registry (:mod:`agents.base`) and the built-in bots.

Importing the package registers the heuristic ladder, so that after ``import
agents`` the specs ``"greedy"``, ``"tactician"`` and ``"expert"`` work with
:func:`agents.base.make_agent` (``"random"`` is built into the registry).
"""

from __future__ import annotations

from .base import register
from .heuristics import ExpertAgent, GreedyAgent, TacticianAgent

for _cls in (GreedyAgent, TacticianAgent, ExpertAgent):
    register(_cls.name, lambda arg, seed, cls=_cls: cls(seed))

__all__ = ["ExpertAgent", "GreedyAgent", "TacticianAgent"]

from . import pimc as _pimc  # noqa: E402  registers "pimc" and "pimc:N"
