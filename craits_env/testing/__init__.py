"""Test support for Craits and for users' own tests (as :mod:`numpy.testing` is numpy's).

- :mod:`craits_env.testing.scenario`: games dealt from chosen cards (stacked decks), for
  scripted tests, tutorials and bug reports.
- :mod:`craits_env.testing.random_rules`: random dealable configurations, the option space
  the random-option tests and the batched engine's differential runs explore.
- :mod:`craits_env.testing.vector_differential`: the batched engine held to the Python one,
  decision by decision (the differential tests and ``experiments/vector_differential.py``).

Nothing of the game or the environments imports this package.
"""
