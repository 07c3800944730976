"""Oracle features: the opponents' hands, for a critic that sees them during training.

Nothing a player may see: these are the hidden cards (R11 keeps each hand secret). A
training run with ``critic = "oracle"`` gives them to the value function only — the
policy, which plays, reads the observation alone — as PerfectDou's perfect-information
critic does: a value that knows the hands judges a move with less noise than one that
must guess them, and the advantages the policy learns from are sharper.

| slice (per opponent, relative seat order: block ``k`` is seat ``k + 1`` to the left) | size |
|---|---|
| copies of each card (index R1.3) in its hand: 0, 1 or 2 (as the observation's `hand`) | 52 |

Size: 52 × (n − 1). The stock is not included (the unseen cards that are in no hand).
"""

from __future__ import annotations

import numpy as np

from .cards import NUM_CARDS
from .engine import Game


def oracle_size(num_players: int) -> int:
    """Length of the oracle vector at a table of ``num_players``."""
    return NUM_CARDS * (num_players - 1)


def encode_oracle(game: Game, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """The opponents' hands seen from ``seat`` (float32, :func:`oracle_size`), into ``out``."""
    n = game.num_players
    if out is None:
        out = np.zeros(oracle_size(n), np.float32)
    else:
        out[:] = 0.0
    for k in range(n - 1):
        hand = game.hands[(seat + k + 1) % n]
        if hand:
            out[k * NUM_CARDS : (k + 1) * NUM_CARDS] = np.bincount(hand, minlength=NUM_CARDS)
    return out


__all__ = ["encode_oracle", "oracle_size"]
