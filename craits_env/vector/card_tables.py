"""The card facts the compiled rules read, as ints and int64 tables (numba constants).

Ranks are ``card % 13`` and suits ``card // 13`` (cards 0-51, R1.3); these names spare the
kernels an enum lookup. The tables are built here once from :mod:`craits_env.cards` and
:mod:`craits_env.scoring`, so the compiled rules and the Python engine read the same facts.
"""

from __future__ import annotations

import numpy as np

from ..cards import DEALER_DRAW_STRENGTH, NUM_CARDS, NUM_RANKS, Rank
from ..cards import QUEEN_OF_SPADES as _QUEEN_OF_SPADES_CARD
from ..scoring import CARD_POINTS

ACE, TWO, THREE, FOUR, FIVE, SIX, SEVEN, EIGHT, NINE, TEN, JACK, KING = (
    int(r)
    for r in (
        Rank.ACE, Rank.TWO, Rank.THREE, Rank.FOUR, Rank.FIVE, Rank.SIX, Rank.SEVEN,
        Rank.EIGHT, Rank.NINE, Rank.TEN, Rank.JACK, Rank.KING,
    )
)  # fmt: skip
QUEEN_OF_SPADES = int(_QUEEN_OF_SPADES_CARD)


def card_bits(cards: list[int]) -> int:
    """The 52-bit mask of ``cards`` (bit c = card c)."""
    return sum(1 << c for c in set(cards))


# PLAYABLE[active_suit * 13 + top_rank]: the cards playable outside the count (R3.1).
PLAYABLE = np.array(
    [
        card_bits(
            [
                c
                for c in range(NUM_CARDS)
                if c // NUM_RANKS == suit or c % NUM_RANKS in (top, EIGHT, NINE)
            ]
        )
        for suit in range(4)
        for top in range(NUM_RANKS)
    ],
    np.int64,
)
COUNTABLE = card_bits([c for c in range(NUM_CARDS) if c % NUM_RANKS in (ACE, TWO)])  # R5.2
RANK_POINTS = np.array(CARD_POINTS, np.int64)  # R8.2
DEALER_STRENGTH = np.array(DEALER_DRAW_STRENGTH, np.int64)  # R1.6
# Every rank but the three, highest points first: the order in which threes cancel (R8.3).
CANCEL_ORDER = np.array(
    sorted((r for r in range(NUM_RANKS) if r != THREE), key=lambda r: -CARD_POINTS[r]), np.int64
)
