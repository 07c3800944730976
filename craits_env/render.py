"""Deprecated since craits 0.3.0 (goes in 0.4): the old name of
:mod:`craits_env.render_text` (the table as text)."""

from craits_env.deprecation import moved_module

moved_module(__name__, "craits_env.render_text")
