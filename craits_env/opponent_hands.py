"""The opponents' hands as a vector: the hidden cards, for training only.

Nothing a player may see (R11 keeps each hand secret): training's hands head
(``hands_coef`` in :class:`craits.training.config.TrainConfig`) learns to predict these
from the observation, an auxiliary task that shapes what the policy's trunk computes;
playing never reads them.

| slice (per opponent, relative seat order: block ``k`` is seat ``k + 1`` to the left) | size |
|---|---|
| copies of each card (index R1.3) in its hand: 0, 1 or 2 (as the observation's `hand`) | 52 |

Size: 52 × (n − 1). The stock is not included (the unseen cards that are in no hand).
"""

from __future__ import annotations

import numpy as np

from .cards import NUM_CARDS
from .engine import Game


def hands_size(num_players: int) -> int:
    """Length of the opponents' hands vector at a table of ``num_players``."""
    return NUM_CARDS * (num_players - 1)


def encode_hands(game: Game, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """The opponents' hands seen from ``seat`` (float32, :func:`hands_size`), into ``out``."""
    n = game.num_players
    if out is None:
        out = np.zeros(hands_size(n), np.float32)
    else:
        out[:] = 0.0
    for k in range(n - 1):
        hand = game.hands[(seat + k + 1) % n]
        if hand:
            out[k * NUM_CARDS : (k + 1) * NUM_CARDS] = np.bincount(hand, minlength=NUM_CARDS)
    return out


__all__ = ["encode_hands", "hands_size"]
