"""The hidden cards of a searched decision, sampled consistently with everything public (R11).

:func:`sample_hidden` deals the cards a seat cannot see
(:meth:`~craits_env.public.SeatView.unseen_cards`) to the opponents' hands (sizes known)
and the stock (size known), respecting the :class:`~craits_env.public.PublicTracker`
inferences: a seat that showed it held no card of a suit (no 8 or 9, no ace or two in the
count) and has drawn ``k`` unknown cards since holds at most ``k`` of them, all such
categories with ``k`` or fewer draws since counted together (:func:`seat_caps`).

It draws from a ``numpy.random.Generator`` — ``Generator.shuffle`` and
``Generator.integers`` — so that its compiled twin,
:func:`craits.agents.search_sampling.deal_samples`, draws the same samples from the same
generator with numpy's PCG64 emulated in numba (:mod:`craits_env.vector.rng`);
``tests/agents/test_pimc_vector.py`` holds the two to each other. :func:`plan_samples` is what
both derive before drawing anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from craits_env import NUM_CARDS
from craits_env.cards import RANK_OF, SUIT_OF, Rank
from craits_env.public import PublicTracker

# Constraint categories of a card: its suit (0-3), WILD (an 8 or 9), COUNTER (an ace or two).
WILD, COUNTER = 4, 5
NUM_CATEGORIES = 6
CATEGORIES: tuple[tuple[int, ...], ...] = tuple(
    (SUIT_OF[c],)
    + ((WILD,) if RANK_OF[c] in (Rank.EIGHT, Rank.NINE) else ())
    + ((COUNTER,) if RANK_OF[c] in (Rank.ACE, Rank.TWO) else ())
    for c in range(NUM_CARDS)
)
"""Per card, the categories it belongs to."""
UNLIMITED = 1 << 30
"""A category's cap where nothing is known."""
NO_LEVEL = 99
"""A card's bound level in a chain where it counts in no bound."""


def seat_caps(tracker: PublicTracker, seat: int) -> list[int]:
    """Per category (suits 0-3, 8s and 9s, aces and twos), the cards ``seat`` has drawn since
    it showed it held none of it; :data:`UNLIMITED` where nothing is known."""
    caps = [UNLIMITED] * NUM_CATEGORIES
    for suit in range(4):
        k = tracker.void_draws(seat, suit)
        if k is not None:
            caps[suit] = k
    k = tracker.no_wild_draws(seat)
    if k is not None:
        caps[WILD] = k
    k = tracker.no_count_draws(seat)
    if k is not None:
        caps[COUNTER] = k
    return caps


def sample_hidden(
    unseen: Sequence[int],
    sizes: dict[int, int],
    caps: dict[int, list[int]],
    rng: np.random.Generator,
    attempts: int = 4,
) -> tuple[dict[int, list[int]], list[int]]:
    """Deal ``unseen`` to the seats of ``sizes`` (seat -> hand size) and the stock (the rest).

    ``caps[seat][category]`` (categories: suit 0-3, 4 = 8s and 9s, 5 = aces and
    twos; see :func:`seat_caps`) is the number of cards the seat has drawn since it
    showed it held no card of the category. Every card it holds of such a
    category came with those draws, so for each ``k`` the seat holds at most
    ``k`` cards of all the categories whose value is ``k`` or less together (a
    seat that drew one card since drawing on a heart holds at most one card
    that is a heart, an 8 or a 9).

    The cards of a bounded category are placed first, in random order, each into
    a uniformly random free slot that may still take it (the stock takes
    anything); the others then fill the remaining slots in random order. If a
    card finds no slot, the deal is retried; after ``attempts`` failures the
    bounds are dropped (a plain shuffle), which no real position needs.
    Returns ``(hands, stock)``, the stock next-card-first. Compiled, draw for draw:
    :func:`craits.agents.search_sampling.deal_samples` (keep the two in step).
    """
    seats, stock_size, chains, constrained, free = plan_samples(unseen, sizes, caps)
    free_cards = list(free)
    for _ in range(attempts if constrained else 0):
        dealt = _deal_constrained(constrained, seats, sizes, stock_size, chains, rng)
        if dealt is not None:
            hands, stock = dealt
            break
    else:
        hands, stock = {s: [] for s in seats}, []
        free_cards = list(unseen)
    rng.shuffle(free_cards)
    k = 0
    for s in seats:
        need = sizes[s] - len(hands[s])
        hands[s].extend(free_cards[k : k + need])
        k += need
    stock.extend(free_cards[k:])
    rng.shuffle(stock)
    for s in sizes:
        hands.setdefault(s, [])
    return hands, stock


class BoundChain:
    """One seat's nested bounds: level ``j`` holds the categories whose cap is the ``j``-th
    smallest, and the cards of levels ``0..j`` together may number at most that cap."""

    __slots__ = ("entry", "left")

    def __init__(self, caps: list[int]) -> None:
        levels = sorted({k for k in caps if k < UNLIMITED})
        self.left = levels
        self.entry = [levels.index(k) if k < UNLIMITED else NO_LEVEL for k in caps]

    def level(self, card: int) -> int:
        """The first level ``card`` counts in (it then counts in every later one)."""
        return min(self.entry[k] for k in CATEGORIES[card])


class SamplePlan(NamedTuple):
    """What :func:`sample_hidden` derives from its arguments before drawing anything."""

    seats: list[int]  # the seats of ``sizes`` that hold cards, in order
    stock_size: int
    chains: dict[int, BoundChain]  # the seats with bounds
    constrained: list[int]  # the unseen cards of a bounded category, in order
    free_cards: list[int]  # the other unseen cards, in order


def plan_samples(
    unseen: Sequence[int], sizes: dict[int, int], caps: dict[int, list[int]]
) -> SamplePlan:
    """The seats, the stock's size, the bounds and the two groups of cards of a sample."""
    seats = [s for s in sizes if sizes[s] > 0]
    stock_size = len(unseen) - sum(sizes[s] for s in seats)
    if stock_size < 0:
        raise ValueError("sample_hidden: fewer unseen cards than hidden hand slots")
    chains = {s: BoundChain(caps[s]) for s in seats if s in caps and min(caps[s]) < UNLIMITED}
    bounded = [
        any(chain.entry[k] < NO_LEVEL for chain in chains.values()) for k in range(NUM_CATEGORIES)
    ]
    constrained: list[int] = []
    free_cards: list[int] = []
    for c in unseen:
        if any(bounded[k] for k in CATEGORIES[c]):
            constrained.append(c)
        else:
            free_cards.append(c)
    return SamplePlan(seats, stock_size, chains, constrained, free_cards)


def _deal_constrained(
    cards: list[int],
    seats: list[int],
    sizes: dict[int, int],
    stock_size: int,
    chains: dict[int, BoundChain],
    rng: np.random.Generator,
) -> tuple[dict[int, list[int]], list[int]] | None:
    """Place ``cards`` one by one into random free slots within the bounds; ``None`` if stuck."""
    order = cards[:]
    rng.shuffle(order)
    left = {s: chain.left[:] for s, chain in chains.items()}
    free = {s: sizes[s] for s in seats}
    hands: dict[int, list[int]] = {s: [] for s in seats}
    stock: list[int] = []
    stock_free = stock_size
    for c in order:
        entry = {s: chain.level(c) for s, chain in chains.items()}
        open_seats = [
            s for s in seats if free[s] and (s not in entry or min(left[s][entry[s] :], default=1))
        ]
        total = stock_free + sum(free[s] for s in open_seats)
        if total == 0:
            return None
        r = int(rng.integers(total))
        if r < stock_free:
            stock.append(c)
            stock_free -= 1
            continue
        r -= stock_free
        for s in open_seats:
            if r < free[s]:
                break
            r -= free[s]
        hands[s].append(c)
        free[s] -= 1
        if s in left:
            bounds = left[s]
            for j in range(entry[s], len(bounds)):
                bounds[j] -= 1
    return hands, stock
