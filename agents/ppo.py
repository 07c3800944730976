"""Deprecated since craits 0.3.0 (goes in 0.4): the old name of
:mod:`craits.agents.checkpoint_agent` (the agent ``ppo:PATH`` playing a checkpoint)."""

from craits_env.deprecation import moved_module

moved_module(__name__, "craits.agents.checkpoint_agent")
