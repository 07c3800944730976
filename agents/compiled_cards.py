"""Card facts and bit helpers for the compiled bots (:mod:`craits.agents.compiled_bots`).

A hand in the batched engine is two 52-bit masks (:mod:`craits_env.vector.layout`'s ``HELD1``:
at least one copy, ``HELD2``: two copies); these tables and helpers read such masks as the
Python bots read a list of card indices. The tables are built from :mod:`craits_env.cards` and
:mod:`craits_env.scoring`, so both read the same facts.
"""

from __future__ import annotations

import numpy as np

from craits_env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS, QUEEN_OF_SPADES, RANK_OF, Rank
from craits_env.scoring import CARD_POINTS
from craits_env.vector.jit import inner

ACE, TWO, THREE, FOUR, FIVE, SIX, SEVEN, EIGHT, NINE, TEN, JACK, KING = (
    int(r)
    for r in (
        Rank.ACE, Rank.TWO, Rank.THREE, Rank.FOUR, Rank.FIVE, Rank.SIX, Rank.SEVEN,
        Rank.EIGHT, Rank.NINE, Rank.TEN, Rank.JACK, Rank.KING,
    )
)  # fmt: skip
QUEEN_SPADES = int(QUEEN_OF_SPADES)

CARDS = (1 << NUM_CARDS) - 1  # the card bits of a legal-action set
POINTS = np.array([CARD_POINTS[RANK_OF[c]] for c in range(NUM_CARDS)], np.int64)  # R8.2
RANK_POINTS = np.array(CARD_POINTS, np.int64)
SUIT_BITS = np.array(
    [sum(1 << c for c in range(s * NUM_RANKS, (s + 1) * NUM_RANKS)) for s in range(NUM_SUITS)],
    np.int64,
)
RANK_BITS = np.array(
    [sum(1 << (s * NUM_RANKS + r) for s in range(NUM_SUITS)) for r in range(NUM_RANKS)], np.int64
)
WILD_BITS = int(RANK_BITS[EIGHT] | RANK_BITS[NINE])  # R3.1: playable on anything
COUNTER_BITS = int(RANK_BITS[ACE] | RANK_BITS[TWO])  # R5.2: the count's cards
# Per suit, its cards that are not 8s or 9s.
PLAIN_BITS = np.array([int(SUIT_BITS[s]) & ~WILD_BITS for s in range(NUM_SUITS)], np.int64)


# Bit counting in a few word operations (SWAR), for masks below 2**56 (cards and actions).
_M1, _M2, _M4, _BYTES = 0x55555555555555, 0x33333333333333, 0x0F0F0F0F0F0F0F, 0x01010101010101


@inner
def bit_count(x: int) -> int:
    """The set bits of ``x`` (0 <= x < 2**56)."""
    x = x - ((x >> 1) & _M1)
    x = (x & _M2) + ((x >> 2) & _M2)
    x = (x + (x >> 4)) & _M4
    return ((x * _BYTES) >> 48) & 0xFF  # the bytes' sum in the seventh byte (wrapping is fine)


@inner
def lowest_bit(x: int) -> int:
    """The index of the lowest set bit of ``x`` (0 < x < 2**63: actions too, up to 58)."""
    low = x & -x
    if low >= 1 << 56:
        return 56 + bit_count((low >> 56) - 1)
    return bit_count(low - 1)


@inner
def copies(one: int, two: int, bits: int) -> int:
    """The cards of the hand ``(one, two)`` among ``bits``, every copy."""
    return bit_count(one & bits) + bit_count(two & bits)


@inner
def without(one: int, two: int, c: int) -> tuple[int, int]:
    """The hand ``(one, two)`` less one copy of card ``c`` (which it holds)."""
    bit = 1 << c
    if two & bit:
        return one, two & ~bit
    return one & ~bit, two


@inner
def points_by_suit(one: int, two: int, suit: int) -> int:
    """The points of the hand's cards of ``suit`` (8s and 9s included), every copy."""
    x = one & SUIT_BITS[suit]
    points = 0
    while x:
        c = lowest_bit(x)
        points += POINTS[c] * (2 if (two >> c) & 1 else 1)
        x &= x - 1
    return points
