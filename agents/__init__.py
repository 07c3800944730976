"""Craits agents (:mod:`craits.agents`): the protocol (:mod:`.base`), the spec table
(:mod:`.specs`) and the built-in bots — the heuristic ladder (:mod:`.heuristics`), the search
bot (:mod:`.pimc`) and trained checkpoints (:mod:`.checkpoint_agent`).

``make_agent("expert")`` (or any spec of :mod:`craits.agents.specs`) gives an agent; importing
this package registers nothing and imports neither the bots nor torch until a spec needs
them.
"""

from __future__ import annotations

# The folder is the package craits.agents (setup.py): imported as `agents` from the repository
# root it would be a second copy of every module.
if __name__ != "craits.agents":
    raise ImportError(
        f"the folder agents/ is the package craits.agents: import craits.agents "
        f"(`pip install -e .` in the repository installs it), not {__name__}"
    )

from .base import Agent, CallableAgent, RandomAgent
from .specs import agent_identity, known_specs, make_agent, register, resolve_agent

__all__ = [
    "Agent",
    "CallableAgent",
    "RandomAgent",
    "agent_identity",
    "known_specs",
    "make_agent",
    "register",
    "resolve_agent",
]


def __getattr__(name: str) -> object:
    """The bot classes, imported on first use (``craits.agents.ExpertAgent``)."""
    if name in ("GreedyAgent", "TacticianAgent", "ExpertAgent"):
        from . import heuristics

        return getattr(heuristics, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
