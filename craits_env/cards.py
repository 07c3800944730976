"""Cards, ranks, suits and their notation (R1).

A card is an ``int`` index ``suit * 13 + rank`` (R1.3): suits in the order
``c d h s``, ranks in the order ``A 2 3 4 5 6 7 8 9 T J Q K``, so ``Ac`` = 0,
``Kc`` = 12, ``Ad`` = 13 and ``Ks`` = 51. The two physical copies of a card in
a two-deck game share the index. A card is written rank then suit: ``"As"``,
``"Td"`` (R1.2).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from enum import IntEnum

RANK_CHARS = "A23456789TJQK"
SUIT_CHARS = "cdhs"
SUIT_SYMBOLS = "♣♦♥♠"
NUM_RANKS = 13
NUM_SUITS = 4
NUM_CARDS = NUM_RANKS * NUM_SUITS  # 52 distinct card indices


class Rank(IntEnum):
    """Rank indices in the order of R1.3."""

    ACE = 0
    TWO = 1
    THREE = 2
    FOUR = 3
    FIVE = 4
    SIX = 5
    SEVEN = 6
    EIGHT = 7
    NINE = 8
    TEN = 9
    JACK = 10
    QUEEN = 11
    KING = 12


class Suit(IntEnum):
    """Suit indices in the order of R1.3."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3


# Lookup tables indexed by card: faster than divmod on the engine's hot path.
RANK_OF: tuple[int, ...] = tuple(c % NUM_RANKS for c in range(NUM_CARDS))
SUIT_OF: tuple[int, ...] = tuple(c // NUM_RANKS for c in range(NUM_CARDS))
CARD_STRS: tuple[str, ...] = tuple(
    RANK_CHARS[c % NUM_RANKS] + SUIT_CHARS[c // NUM_RANKS] for c in range(NUM_CARDS)
)
_CARD_BY_STR = {s: i for i, s in enumerate(CARD_STRS)}

QUEEN_OF_SPADES = Suit.SPADES * NUM_RANKS + Rank.QUEEN

# R1.6: rank order for drawing the first dealer, highest first.
DEALER_DRAW_ORDER = "AKQJT98765432"
DEALER_DRAW_STRENGTH: tuple[int, ...] = tuple(
    len(DEALER_DRAW_ORDER) - 1 - DEALER_DRAW_ORDER.index(RANK_CHARS[r]) for r in range(NUM_RANKS)
)  # 0 for a two (the lowest) … 12 for an ace


def card_str(index: int) -> str:
    """The notation of a card index, e.g. ``card_str(0) == "Ac"``."""
    if not isinstance(index, int) or not 0 <= index < NUM_CARDS:
        raise ValueError(f"invalid card index {index!r}: expected an int from 0 to {NUM_CARDS - 1}")
    return CARD_STRS[index]


def parse_card(text: str | int) -> int:
    """The index of a card written like ``"As"`` or ``"Td"`` (R1.2).

    Accepts an index (returned unchanged after a range check), ``10`` for ``T``
    and either case for rank and suit. Anything else raises ``ValueError``.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        return parse_card(card_str(text))
    if not isinstance(text, str):
        raise ValueError(f"invalid card {text!r}: expected a string such as 'As' or 'Td'")
    s = text.strip()
    if len(s) == 3 and s[:2] == "10":
        s = "T" + s[2]
    if len(s) == 2:
        key = s[0].upper() + s[1].lower()
        if key in _CARD_BY_STR:
            return _CARD_BY_STR[key]
    raise ValueError(
        f"invalid card {text!r}: expected a rank ({' '.join(RANK_CHARS)}) "
        f"then a suit ({' '.join(SUIT_CHARS)}), e.g. 'As' or 'Td'"
    )


def parse_cards(cards: Iterable[str | int]) -> list[int]:
    """Parse each card of ``cards`` (see :func:`parse_card`)."""
    if isinstance(cards, str):
        raise ValueError(f"invalid cards {cards!r}: expected a list of card strings, not a string")
    return [parse_card(c) for c in cards]


def pretty(index: int) -> str:
    """A card with its suit symbol, e.g. ``"7♣"``, for rendering."""
    return RANK_CHARS[RANK_OF[index]] + SUIT_SYMBOLS[SUIT_OF[index]]


def make_deck(num_decks: int = 1, remove_kings_queens: bool = False) -> list[int]:
    """The sorted card indices of ``num_decks`` decks (R1.1, R1.5, R2.6)."""
    one = [
        c
        for c in range(NUM_CARDS)
        if not (remove_kings_queens and RANK_OF[c] in (Rank.QUEEN, Rank.KING))
    ]
    return sorted(one * num_decks)


def check_permutation(order: Iterable[int], deck: list[int], what: str) -> list[int]:
    """``order`` as a list, if it holds exactly the cards of ``deck``; else ``ValueError``."""
    order = list(order)
    if len(order) == len(deck) and sorted(order) == deck:
        return order
    have, want = Counter(order), Counter(deck)
    extra = sorted((have - want).elements())
    missing = sorted((want - have).elements())
    parts = []
    if extra:
        parts.append("extra " + " ".join(CARD_STRS[c] for c in extra))
    if missing:
        parts.append("missing " + " ".join(CARD_STRS[c] for c in missing))
    raise ValueError(
        f"{what} must hold exactly the {len(deck)} cards it replaces "
        f"(got {len(order)}: {'; '.join(parts)})"
    )
