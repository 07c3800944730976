"""Deprecated since craits 0.3.0 (goes in 0.4): the old name of
:mod:`craits.bench` (the loops of craits bench)."""

from craits_env.deprecation import moved_module

moved_module(__name__, "craits.bench")
