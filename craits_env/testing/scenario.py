"""Build games from chosen cards: stacked decks for tests, tutorials and bug reports.

>>> g = stacked_game([["7c", "Kd"], ["7d", "2s"]], starter="7h", stock=["As", "5c"])
>>> g.snapshot()["hands"]  # the starter 7 made player 1 draw the As (R2.5); sorted by index
[['7c', 'Kd'], ['7d', 'As', '2s']]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..cards import CARD_STRS, parse_card
from ..deck import deck_cards, remove_cards
from ..engine import Game
from ..rules import Rules, check_num_players


def deal_order(
    hands: Sequence[Sequence[str | int]],
    starter: str | int,
    stock: Sequence[str | int] = (),
    *,
    dealer: int = 0,
    direction: int = 1,
    rules: Rules | None = None,
) -> list[str]:
    """The deck order (first dealt first, R2.3) that deals ``hands[seat]`` to each seat.

    ``stock`` lists the first cards of the stock, next-first; the rest of the
    deck follows in index order. All hands must have the same size.
    """
    n = check_num_players(len(hands))
    sizes = {len(h) for h in hands}
    if len(sizes) != 1:
        raise ValueError(f"hands must all have the same size, got sizes {[len(h) for h in hands]}")
    size = sizes.pop()
    rules = Rules() if rules is None else rules
    parsed = [[parse_card(c) for c in h] for h in hands]
    order = [parsed[(dealer + direction * (1 + i % n)) % n][i // n] for i in range(n * size)]
    order.append(parse_card(starter))
    order.extend(parse_card(c) for c in stock)
    deck = deck_cards(rules.decks_for(n), rules.remove_kings_queens)
    order.extend(remove_cards(deck, order))
    return [CARD_STRS[c] for c in order]


def stacked_game(
    hands: Sequence[Sequence[str | int]],
    starter: str | int,
    stock: Sequence[str | int] = (),
    *,
    dealer: int = 0,
    rules: Rules | None = None,
    seed: int = 0,
    reshuffles: Sequence[Sequence[Sequence[str | int]]] | None = None,
    **options: Any,
) -> Game:
    """A game whose first hand deals ``hands`` (by seat), turns ``starter`` and stacks ``stock``.

    Without ``rules``, the rules are ``Rules(hand_sizes=(len(hands[0]),), **options)``:
    a one-hand game. Later hands (if the schedule has them) and reshuffles not
    given in ``reshuffles`` are shuffled from ``seed``.
    """
    if rules is None:
        rules = Rules(hand_sizes=(len(hands[0]),), **options)
    elif options:
        rules = rules.replace(**options)
    if rules.hand_sizes[0] != len(hands[0]):
        raise ValueError(
            f"the first hand deals {rules.hand_sizes[0]} cards but the hands hold {len(hands[0])}"
        )
    order = deal_order(hands, starter, stock, dealer=dealer, rules=rules)
    return Game(len(hands), rules, seed=seed, dealer=dealer, deals=[order], reshuffles=reshuffles)
