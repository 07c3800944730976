"""Deprecated since craits 0.3.0 (goes in 0.4): the old name of
:mod:`craits.agents.checkpoint` (the checkpoint format, read and written)."""

from craits_env.deprecation import moved_module

moved_module(__name__, "craits.agents.checkpoint")
