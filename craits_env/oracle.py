"""Oracle features: the opponents' hands (and the stock), for a critic that sees them in training.

Nothing a player may see: these are the hidden cards (R11 keeps each hand secret). A
training run with ``critic = "oracle"`` gives them to the value function only — the
policy, which plays, reads the observation alone — as PerfectDou's perfect-information
critic does: a value that knows the hands judges a move with less noise than one that
must guess them, and the advantages the policy learns from are sharper.

| slice (per opponent, relative seat order: block ``k`` is seat ``k + 1`` to the left) | size |
|---|---|
| copies of each card (index R1.3) in its hand: 0, 1 or 2 (as the observation's `hand`) | 52 |

Size: 52 × (n − 1). The stock is not included (the unseen cards that are in no hand).

The **perfect** features (``critic = "perfect"``: everything hidden that is already
decided) follow the hands with the stock's order (:func:`encode_stock`):

| slice | size |
|---|---|
| the opponents' hands, as above | 52 × (n − 1) |
| the stock's first 8 cards, one-hot each, the next draw first (0 past the stock's end) | 52 × 8 |
| the copies of each card in the rest of the stock (past its 8th card) | 52 |

Size: 52 × (n − 1) + 468. A reshuffle's new stock (R10.1) is drawn when it happens and is
in no vector before.
"""

from __future__ import annotations

import numpy as np

from .cards import NUM_CARDS
from .engine import Game


def oracle_size(num_players: int) -> int:
    """Length of the oracle vector at a table of ``num_players``."""
    return NUM_CARDS * (num_players - 1)


STOCK_POSITIONS = 8  # the stock's first cards, one-hot each, in order (encode_stock)
STOCK_FEATURES = NUM_CARDS * (STOCK_POSITIONS + 1)  # those, then the counts of the rest


def perfect_size(num_players: int) -> int:
    """Length of the perfect vector (the opponents' hands, then :func:`encode_stock`)."""
    return oracle_size(num_players) + STOCK_FEATURES


def encode_stock(game: Game, out: np.ndarray | None = None) -> np.ndarray:
    """The stock's order (float32, :data:`STOCK_FEATURES`), into ``out``: its first
    :data:`STOCK_POSITIONS` cards one-hot each (the next draw first), then the copies of each
    card in the rest."""
    if out is None:
        out = np.zeros(STOCK_FEATURES, np.float32)
    else:
        out[:] = 0.0
    stock = game.stock  # the next card first
    for i, card in enumerate(stock[:STOCK_POSITIONS]):
        out[i * NUM_CARDS + card] = 1.0
    if len(stock) > STOCK_POSITIONS:
        out[STOCK_POSITIONS * NUM_CARDS :] = np.bincount(
            stock[STOCK_POSITIONS:], minlength=NUM_CARDS
        )
    return out


def encode_perfect(game: Game, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """The opponents' hands seen from ``seat``, then the stock (:func:`perfect_size`)."""
    if out is None:
        out = np.zeros(perfect_size(game.num_players), np.float32)
    hands = oracle_size(game.num_players)
    encode_oracle(game, seat, out[:hands])
    encode_stock(game, out[hands:])
    return out


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


__all__ = [
    "STOCK_FEATURES",
    "STOCK_POSITIONS",
    "encode_oracle",
    "encode_perfect",
    "encode_stock",
    "oracle_size",
    "perfect_size",
]
