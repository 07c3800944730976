"""Deprecated since craits 0.3.0 (goes in 0.4): the old name of :mod:`craits.training`."""

from craits_env.deprecation import alias_package

alias_package(__name__, "craits.training", globals())
