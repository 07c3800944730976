"""Decks, deck orders and the draw for the first dealer (R1.5, R2.1, R2.3, R2.6).

A *deck order* is the sequence in which a shuffled deck is dealt (first dealt
first); the engine keeps it as ``bytes`` (card indices < 256), which is compact
and can be shared between clones.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .cards import (
    CARD_STRS,
    DEALER_DRAW_STRENGTH,
    RANK_OF,
    check_permutation,
    make_deck,
    parse_card,
)

_DECKS: dict[tuple[int, bool], list[int]] = {}


def deck_cards(num_decks: int, remove_kings_queens: bool) -> list[int]:
    """The sorted cards of the deck in play (cached and shared: do not mutate)."""
    key = (num_decks, remove_kings_queens)
    if key not in _DECKS:
        _DECKS[key] = make_deck(num_decks, remove_kings_queens)
    return _DECKS[key]


def as_order(order: Iterable[str | int] | bytes, deck: list[int], what: str) -> bytes:
    """``order`` (card strings or indices) as bytes, if it is a permutation of ``deck``."""
    cards = list(order) if isinstance(order, bytes) else [parse_card(c) for c in order]
    return bytes(check_permutation(cards, deck, what))


def shuffled(cards: list[int], rng: np.random.Generator) -> bytes:
    """``cards`` in the order of one ``rng.permutation`` draw."""
    return bytes(cards[j] for j in rng.permutation(len(cards)))


def remove_cards(deck: list[int], cards: list[int]) -> list[int]:
    """``deck`` without one copy of each of ``cards``; ``ValueError`` if one is not there."""
    rest = list(deck)
    for c in cards:
        try:
            rest.remove(c)
        except ValueError:
            raise ValueError(
                f"deck: {CARD_STRS[c]} is listed {cards.count(c)} times but the deck holds it "
                f"{deck.count(c)} time(s)"
            ) from None
    return rest


def draw_first_dealer(rng: np.random.Generator, num_players: int, deck: list[int]) -> int:
    """R2.1: each player draws a card in seat order; the lowest (R1.6) deals; ties draw again."""
    contenders = list(range(num_players))
    while True:
        order = [deck[j] for j in rng.permutation(len(deck))]
        pos = 0
        while pos + len(contenders) <= len(order):
            drawn = order[pos : pos + len(contenders)]
            pos += len(contenders)
            strengths = [DEALER_DRAW_STRENGTH[RANK_OF[c]] for c in drawn]
            low = min(strengths)
            contenders = [s for s, v in zip(contenders, strengths, strict=True) if v == low]
            if len(contenders) == 1:
                return contenders[0]
