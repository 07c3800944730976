"""Worlds consistent with one seat's information: its hidden cards dealt again (R11).

A seat cannot see the other hands nor the stock; :func:`deal_consistent` deals the cards
it cannot see (:meth:`~craits_env.public.SeatView.unseen_cards`) to the other seats'
hands (sizes known) and the stock (size known) so that every bound the public history
proves holds (:func:`seat_bounds`, from :class:`~craits_env.public.PublicTracker`): a
seat that showed it held no card of a suit (no 8 or 9; no ace or two in the count) and
has drawn ``k`` cards since holds at most ``k`` of them, every category with ``k`` or
fewer draws since counted together.

The deal is **uniform over the consistent deals of the physical cards** (with one deck:
over the consistent worlds): a uniform shuffle is dealt and kept if it is consistent
(rejection, exact); after ``tries`` rejections, a Metropolis chain of random swaps of two
hidden cards (a swap kept only if the world stays consistent; its stationary law is the
uniform one) runs ``sweeps`` times over the hidden cards from the world it is given (the
true one), so tightly bounded positions stay cheap. Cards: indices (R1.3).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from .cards import NUM_CARDS, RANK_OF, SUIT_OF, Rank
from .public import PublicTracker

WILD, COUNTER = 4, 5  # the categories beyond the four suits: 8s and 9s, aces and twos
NUM_CATEGORIES = 6
CARD_CATEGORIES: tuple[tuple[int, ...], ...] = tuple(
    (SUIT_OF[c],)
    + ((WILD,) if RANK_OF[c] in (Rank.EIGHT, Rank.NINE) else ())
    + ((COUNTER,) if RANK_OF[c] in (Rank.ACE, Rank.TWO) else ())
    for c in range(NUM_CARDS)
)
_FREE = 99  # a card's level where it counts in no bound


class SeatBound:
    """One seat's nested bounds: level ``j`` admits at most ``caps[j]`` cards whose first
    level (:attr:`level`, per card) is ``j`` or less."""

    __slots__ = ("caps", "level")

    def __init__(self, category_caps: Sequence[int | None]) -> None:
        self.caps = sorted({k for k in category_caps if k is not None})
        entry = [_FREE if k is None else self.caps.index(k) for k in category_caps]
        self.level = [min(entry[k] for k in CARD_CATEGORIES[c]) for c in range(NUM_CARDS)]

    def usage(self, hand: Sequence[int]) -> list[int]:
        """Per level, the cards of ``hand`` that count in it."""
        used = [0] * len(self.caps)
        for c in hand:
            for j in range(self.level[c], len(used)):
                used[j] += 1
        return used

    def holds(self, hand: Sequence[int]) -> bool:
        return all(u <= k for u, k in zip(self.usage(hand), self.caps, strict=True))


def seat_bounds(tracker: PublicTracker, seat: int) -> SeatBound | None:
    """``seat``'s bounds from what the tracker inferred this hand; ``None`` if it knows none."""
    caps: list[int | None] = [tracker.void_draws(seat, suit) for suit in range(4)]
    caps += [tracker.no_wild_draws(seat), tracker.no_count_draws(seat)]
    return None if all(k is None for k in caps) else SeatBound(caps)


def deal_consistent(
    unseen: Sequence[int],
    start: dict[int, list[int]],
    bounds: dict[int, SeatBound],
    rng: np.random.Generator,
    *,
    tries: int = 8,
    sweeps: int = 12,
) -> tuple[dict[int, list[int]], list[int]]:
    """A uniform consistent deal of ``unseen`` to the seats of ``start`` and the stock.

    ``start`` is a consistent world (seat -> its hidden hand; the true one), its sizes the
    sizes dealt; ``bounds`` the seats' bounds. Returns ``(hands, stock)``, the stock next
    card first. ``ValueError`` if ``start`` is not a consistent deal of ``unseen``.
    """
    seats = list(start)
    sizes = [len(start[s]) for s in seats]
    if Counter(c for s in seats for c in start[s]) - Counter(unseen):
        raise ValueError("deal_consistent: start is not a deal of the unseen cards")
    if not all(bounds[s].holds(start[s]) for s in seats if s in bounds):
        raise ValueError("deal_consistent: start breaks a seat's bounds")
    cards = list(unseen)
    for _ in range(tries if bounds else 1):
        rng.shuffle(cards)
        hands, k = {}, 0
        for s, size in zip(seats, sizes, strict=True):
            hands[s] = cards[k : k + size]
            k += size
        if all(bounds[s].holds(hands[s]) for s in seats if s in bounds):
            return {s: sorted(h) for s, h in hands.items()}, cards[k:]
    return _swap_chain(unseen, start, bounds, rng, sweeps)


def _swap_chain(
    unseen: Sequence[int],
    start: dict[int, list[int]],
    bounds: dict[int, SeatBound],
    rng: np.random.Generator,
    sweeps: int,
) -> tuple[dict[int, list[int]], list[int]]:
    """Metropolis over transpositions of two hidden slots, from the consistent ``start``."""
    seats = list(start)
    slots: list[int] = []  # the card in each hidden slot
    owner: list[int] = []  # its seat's index in ``seats``, or -1 for the stock
    for i, s in enumerate(seats):
        slots += start[s]
        owner += [i] * len(start[s])
    rest = list(unseen)
    for c in slots:
        rest.remove(c)
    slots += rest
    owner += [-1] * len(rest)
    chains = [bounds.get(s) for s in seats]
    used = [None if b is None else b.usage(start[s]) for s, b in zip(seats, chains, strict=True)]
    n = len(slots)
    pairs = rng.integers(n, size=(sweeps * n, 2))
    for a, b in pairs.tolist():
        oa, ob = owner[a], owner[b]
        if oa == ob:
            continue
        ca, cb = slots[a], slots[b]
        if not (_fits(chains, used, oa, ca, cb) and _fits(chains, used, ob, cb, ca)):
            continue
        _move(chains, used, oa, ca, cb)
        _move(chains, used, ob, cb, ca)
        slots[a], slots[b] = cb, ca
    hands: dict[int, list[int]] = {s: [] for s in seats}
    stock: list[int] = []
    for c, o in zip(slots, owner, strict=True):
        (stock if o < 0 else hands[seats[o]]).append(c)
    rng.shuffle(stock)
    return {s: sorted(h) for s, h in hands.items()}, stock


def _fits(chains: list[SeatBound | None], used: list, o: int, out: int, into: int) -> bool:
    """Whether seat index ``o`` stays in bounds giving up card ``out`` for card ``into``."""
    if o < 0 or chains[o] is None:
        return True
    bound = chains[o]
    lo_in, lo_out = bound.level[into], bound.level[out]  # type: ignore[union-attr]
    if lo_in >= lo_out:
        return True
    caps, u = bound.caps, used[o]  # type: ignore[union-attr]
    return all(u[j] + 1 <= caps[j] for j in range(lo_in, min(lo_out, len(caps))))


def _move(chains: list[SeatBound | None], used: list, o: int, out: int, into: int) -> None:
    if o < 0 or chains[o] is None:
        return
    bound, u = chains[o], used[o]
    for j in range(bound.level[into], len(u)):  # type: ignore[union-attr]
        u[j] += 1
    for j in range(bound.level[out], len(u)):  # type: ignore[union-attr]
        u[j] -= 1
