"""Seeds derived from seeds: one rule for every derived seed and generator of the project.

A derived seed depends only on the integers it is derived from (``numpy``'s
``SeedSequence`` hashes them), so that a game, an agent or a deal gets the same
randomness whichever process, worker or resume plays it:

>>> derive_seed(7, 3) == derive_seed(7, 3) != derive_seed(7, 4)
True
>>> 0 <= derive_seed(7, 3) < 2**63
True

Random draws of seeds from a running generator use :data:`SEED_BOUND`. A seed drawn when a
user gave none (:func:`fresh_seed`: ``craits play``, ``craits serve``) has
:data:`FRESH_SEED_BITS` bits from the operating system, so that nobody can find it from what
they see of a game (a 31-bit seed is found from one's own first hand in minutes).
"""

from __future__ import annotations

import secrets

import numpy as np

SEED_BOUND = 2**63  # seeds drawn from a generator: rng.integers(SEED_BOUND)
FRESH_SEED_BITS = 128


def fresh_seed() -> int:
    """A new seed of :data:`FRESH_SEED_BITS` bits from the operating system's randomness."""
    return secrets.randbits(FRESH_SEED_BITS)


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
