"""Seeds derived from seeds: one rule for every derived seed and generator of the project.

A derived seed depends only on the integers it is derived from (``numpy``'s
``SeedSequence`` hashes them), so that a game, an agent or a deal gets the same
randomness whichever process, worker or resume plays it:

>>> derive_seed(7, 3) == derive_seed(7, 3) != derive_seed(7, 4)
True
>>> 0 <= derive_seed(7, 3) < 2**63
True

Random draws of seeds from a running generator use :data:`SEED_BOUND`.
"""

from __future__ import annotations

import numpy as np

SEED_BOUND = 2**63  # seeds drawn from a generator: rng.integers(SEED_BOUND)


def derive_seed(*entropy: int) -> int:
    """A seed in ``[0, 2**63)`` derived from ``entropy`` (e.g. tournament seed, deal, seat)."""
    state = np.random.SeedSequence(list(entropy)).generate_state(1, np.uint64)[0]
    return int(state >> np.uint64(1))


def derive_rng(*entropy: int) -> np.random.Generator:
    """A generator seeded from ``entropy`` (``numpy.random.default_rng(SeedSequence(...))``)."""
    return np.random.default_rng(np.random.SeedSequence(list(entropy)))


def draw_seed(rng: np.random.Generator) -> int:
    """A seed drawn from a running generator."""
    return int(rng.integers(SEED_BOUND))
