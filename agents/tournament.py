"""Deprecated since craits 0.3.0 (goes in 0.4): the old name of
:mod:`craits.agents.duplicate_tournament` (the duplicate tournament core)."""

from craits_env.deprecation import moved_module

moved_module(__name__, "craits.agents.duplicate_tournament")
