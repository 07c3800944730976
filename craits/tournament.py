"""Deprecated since craits 0.3.0 (goes in 0.4): the old name of
:mod:`craits.tournament_workers` (where tournament games run)."""

from craits_env.deprecation import moved_module

moved_module(__name__, "craits.tournament_workers")
