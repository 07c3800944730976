"""Belief features: what the public history says about each opponent's hand, as a vector.

The standard observation (:mod:`craits_env.observation`) holds the table as it is now. A
player's past moves say more about the cards it holds (R11: all of it public): one who
drew instead of playing showed it held no card of the active suit and no 8 or 9 (R3.1,
R3.3); one who took the count showed it held no ace or two (R5.3); what it has played this
hand shows what it sheds. :class:`~craits_env.public.PublicTracker` keeps these inferences
(they reset at each hand); :func:`encode_belief` turns them into floats, per opponent in
relative seat order (block ``k``: the seat ``k + 1`` places to the left), after the
standard observation when a checkpoint was trained with ``observation = "belief"``.

| slice (per opponent) | size | content |
|---|---|---|
| `void_known` | 4 | 1 if it showed it held no card of suit c, d, h, s this hand |
| `void_strength` | 4 | 1 / (1 + cards it drew since), 0 if unknown: 1 = it still holds none |
| `no_wild` | 2 | the same for 8s and 9s: known, 1 / (1 + draws since) |
| `no_count` | 2 | the same for aces and twos (the count) |
| `played_suits` | 4 | cards it played this hand, per suit, / 8 |

Size: 16 × (n − 1). Only public facts: a test checks the vector equals one computed from
the public history alone and never changes with the hidden cards.
"""

from __future__ import annotations

import numpy as np

from .cards import NUM_SUITS, SUIT_OF
from .public import PublicTracker

PER_OPPONENT = 16
PLAYED_SCALE = 8.0


def belief_size(num_players: int) -> int:
    """Length of the belief vector at a table of ``num_players``."""
    return PER_OPPONENT * (num_players - 1)


def _known(draws: int | None, out: np.ndarray, i: int, j: int) -> None:
    if draws is not None:
        out[i] = 1.0
        out[j] = 1.0 / (1.0 + draws)


def encode_belief(tracker: PublicTracker, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """The belief vector of ``seat`` (float32, :func:`belief_size`), written into ``out``."""
    n = tracker.num_players
    if out is None:
        out = np.zeros(belief_size(n), np.float32)
    else:
        out[:] = 0.0
    for k in range(n - 1):
        opp = (seat + k + 1) % n
        base = k * PER_OPPONENT
        for suit in range(NUM_SUITS):
            _known(tracker.void_draws(opp, suit), out, base + suit, base + 4 + suit)
        _known(tracker.no_wild_draws(opp), out, base + 8, base + 9)
        _known(tracker.no_count_draws(opp), out, base + 10, base + 11)
        for card in tracker.played[opp]:
            out[base + 12 + SUIT_OF[card]] += 1.0 / PLAYED_SCALE
    return out


__all__ = ["PER_OPPONENT", "belief_size", "encode_belief"]
