"""What happened: the events that :meth:`Game.apply <craits_env.engine.Game.apply>` returns.

Every decision applied returns the list of events it caused, in order (the decision
itself first, then every automatic consequence, R3.6), and a game's opening deal is in
``Game.start_events``. An event is a small immutable record (a ``NamedTuple``: cheap to
make on the engine's hot path) with a ``kind`` and ``to_dict()``, a JSON object with
cards as strings; :func:`event_from_dict` reads one back. Inside an event cards are
card indices (R1.3), seats are seat numbers.

==============  ===========================================================================
kind            fields
==============  ===========================================================================
``deal``        ``hand_index``, ``dealer``, ``direction``, ``hand_size``, ``hands`` (each
                seat's cards, sorted), ``starter`` (the first card of the discard pile,
                R2.3), ``order`` (the deck order dealt, first dealt first)
``play``        ``seat``, ``card``
``suit_call``   ``seat``, ``suit`` (0–3: c d h s, R3.2)
``declaration`` ``seat``, ``declared`` (``true``: "one card"; ``false``: stayed silent, R7.1)
``draw``        ``seat``, ``number``, ``cards`` (in the order drawn), ``reason``: ``draw``
                (R3.3), ``count`` (taking the count, R5.3), ``five``, ``seven`` (R4),
                ``jack`` (R9.1), ``queen_of_spades`` (R9.2), ``one_card_penalty`` (R7.1),
                ``silence`` (R7.2 ``draw_one``). A draw that a reshuffle interrupts is two
                events, with the ``reshuffle`` between them.
``reshuffle``   ``seat`` (who draws and pays, R10.1), ``pressure`` (their k-th of the
                game), ``cost`` (5 × 2^(k−1)), ``cards`` (the cards shuffled into the
                stock, sorted; none when the stock cannot be refilled and the hand ends,
                R10.2), ``order`` (the new stock, next card first)
``skip``        ``seat`` (whose turn is lost), ``reason``: ``four`` (R4, R4.2), ``jack``,
                ``queen_of_spades`` (R9.4), ``one_card_penalty`` (R7.1)
``reverse``     ``seat`` (who played the ten, R4), ``direction`` (now +1 or −1)
``went_out``    ``seat`` (R6.1, R6.2)
``hand_end``    ``hand_index``, ``reason`` (``went_out``, ``count_ended``, ``no_cards``,
                R6.2; ``stock_exhausted``, R10.2; ``decision_limit``, R12), ``hands``
                (every seat's cards as the hand was scored), ``went_out``, ``points``
                (each seat's points of the hand, penalties included), ``scores`` (the
                totals), ``shuffle_pressures``
``game_over``   ``winners`` (R8.6), ``scores``
==============  ===========================================================================

A seat's form of an event (:func:`public_event`) hides what that seat may not see
(R11): another seat's drawn cards (``cards`` is ``null``, ``number`` stays), the stock's
order (a reshuffle's and a deal's ``order`` are ``null``) and the other seats' hands of
a deal (``null``). A hand's end shows every hand: they are laid down for scoring (R8).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .cards import CARD_STRS, NUM_CARDS, parse_card
from .rules import MAX_PLAYERS

Cards = tuple[int, ...]


def _strs(cards: Sequence[int] | bytes | None) -> list[str] | None:
    return None if cards is None else [CARD_STRS[c] for c in cards]


def _hands(hands: Sequence[Sequence[int] | None]) -> list[list[str] | None]:
    return [_strs(h) for h in hands]


class Dealt(NamedTuple):
    """A hand dealt (R2.3): before the starter's function is applied (R2.5)."""

    hand_index: int
    dealer: int
    direction: int
    hand_size: int
    hands: tuple[Cards | None, ...]
    starter: int
    order: bytes | None
    kind: str = "deal"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "hand_index": self.hand_index,
            "dealer": self.dealer,
            "direction": self.direction,
            "hand_size": self.hand_size,
            "hands": _hands(self.hands),
            "starter": CARD_STRS[self.starter],
            "order": _strs(self.order),
        }


class Played(NamedTuple):
    """A card played (in the count too, R5.2)."""

    seat: int
    card: int
    kind: str = "play"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "seat": self.seat, "card": CARD_STRS[self.card]}


class Called(NamedTuple):
    """The suit called for an 8 or a 9 (R3.2, R4): 0–3 for c d h s."""

    seat: int
    suit: int
    kind: str = "suit_call"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "seat": self.seat, "suit": "cdhs"[self.suit]}


class Declared(NamedTuple):
    """The one-card declaration (R7.1): ``declared`` or stayed silent."""

    seat: int
    declared: bool
    kind: str = "declaration"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "seat": self.seat, "declared": self.declared}


class Drew(NamedTuple):
    """Cards drawn from the stock, and why (see the module docstring)."""

    seat: int
    number: int  # of cards
    cards: Cards | None  # None in another seat's public form
    reason: str
    kind: str = "draw"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "seat": self.seat,
            "number": self.number,
            "cards": _strs(self.cards),
            "reason": self.reason,
        }


class Reshuffled(NamedTuple):
    """The discard pile (but its top) shuffled into the stock, and the pressure paid (R10)."""

    seat: int
    pressure: int
    cost: int
    cards: Cards
    order: Cards | None  # None in the public form
    kind: str = "reshuffle"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "seat": self.seat,
            "pressure": self.pressure,
            "cost": self.cost,
            "cards": _strs(self.cards),
            "order": _strs(self.order),
        }


class Skipped(NamedTuple):
    """A turn lost: skipped by a 4, forfeited to a jack or the queen of spades, or paid as
    the one-card penalty."""

    seat: int
    reason: str
    kind: str = "skip"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "seat": self.seat, "reason": self.reason}


class Reversed(NamedTuple):
    """A ten turned the direction of play (R4, R3.5)."""

    seat: int
    direction: int
    kind: str = "reverse"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "seat": self.seat, "direction": self.direction}


class WentOut(NamedTuple):
    """A player went out (R6.1; in the count, R6.2)."""

    seat: int
    kind: str = "went_out"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "seat": self.seat}


class HandScored(NamedTuple):
    """A hand's end (R8): every seat's final hand and points, and the totals."""

    hand_index: int
    reason: str
    hands: tuple[Cards, ...]
    went_out: tuple[int, ...]
    points: tuple[int, ...]
    scores: tuple[int, ...]
    shuffle_pressures: tuple[int, ...]
    kind: str = "hand_end"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "hand_index": self.hand_index,
            "reason": self.reason,
            "hands": _hands(self.hands),
            "went_out": list(self.went_out),
            "points": list(self.points),
            "scores": list(self.scores),
            "shuffle_pressures": list(self.shuffle_pressures),
        }


class GameOver(NamedTuple):
    """The game's end: the winners (lowest total, R8.6) and the final scores."""

    winners: tuple[int, ...]
    scores: tuple[int, ...]
    kind: str = "game_over"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "winners": list(self.winners), "scores": list(self.scores)}


Event = (
    Dealt | Played | Called | Declared | Drew | Reshuffled | Skipped | Reversed | WentOut
    | HandScored | GameOver
)  # fmt: skip
EVENT_TYPES: dict[str, type[Any]] = {
    cls._field_defaults["kind"]: cls
    for cls in (
        Dealt,
        Played,
        Called,
        Declared,
        Drew,
        Reshuffled,
        Skipped,
        Reversed,
        WentOut,
        HandScored,
        GameOver,
    )
}
"""Each event kind's class."""
KINDS = tuple(EVENT_TYPES)
DRAW_REASONS = (
    "draw", "count", "five", "seven", "jack", "queen_of_spades", "one_card_penalty", "silence",
)  # fmt: skip
SKIP_REASONS = ("four", "jack", "queen_of_spades", "one_card_penalty")
HAND_END_REASONS = ("went_out", "count_ended", "no_cards", "stock_exhausted", "decision_limit")


# ----------------------------------------------------------------------------- made once

# The events of the hot path, made once (events are immutable, so they can be shared):
# PLAYED_EVENTS[seat * NUM_CARDS + card] is Played(seat, card); DREW_ONE[reason] the
# same table of Drew(seat, 1, (card,), reason); CALLED_EVENTS[seat * 4 + suit] is Called;
# DECLARED_EVENTS[seat * 2 + declared] is Declared(seat, declared); SKIPPED_EVENTS[reason]
# [seat] is Skipped(seat, reason); REVERSED_EVENTS[direction][seat] is Reversed(seat,
# direction); WENT_OUT_EVENTS[seat] is WentOut(seat).
PLAYED_EVENTS = tuple(Played(s, c) for s in range(MAX_PLAYERS) for c in range(NUM_CARDS))
DREW_ONE = {
    reason: tuple(Drew(s, 1, (c,), reason) for s in range(MAX_PLAYERS) for c in range(NUM_CARDS))
    for reason in DRAW_REASONS
}
CALLED_EVENTS = tuple(Called(s, suit) for s in range(MAX_PLAYERS) for suit in range(4))
DECLARED_EVENTS = tuple(Declared(s, d) for s in range(MAX_PLAYERS) for d in (False, True))
SKIPPED_EVENTS = {
    reason: tuple(Skipped(s, reason) for s in range(MAX_PLAYERS)) for reason in SKIP_REASONS
}
REVERSED_EVENTS = {d: tuple(Reversed(s, d) for s in range(MAX_PLAYERS)) for d in (1, -1)}
WENT_OUT_EVENTS = tuple(WentOut(s) for s in range(MAX_PLAYERS))


# ----------------------------------------------------------------------------- the public form


def public_event(event: Event, seat: int | None) -> Event:
    """``event`` as ``seat`` may see it (R11; ``None``: a spectator who holds no hand):
    other seats' drawn cards, the stock's order and the other hands of a deal hidden."""
    if isinstance(event, Drew):
        return event if event.seat == seat else event._replace(cards=None)
    if isinstance(event, Reshuffled):
        return event._replace(order=None)
    if isinstance(event, Dealt):
        hands = tuple(h if s == seat else None for s, h in enumerate(event.hands))
        return event._replace(hands=hands, order=None)
    return event


def public_events(events: Sequence[Event], seat: int | None) -> list[Event]:
    """:func:`public_event` of each of ``events``."""
    return [public_event(e, seat) for e in events]


# ----------------------------------------------------------------------------- reading back


def _card(value: Any, name: str) -> int:
    if not isinstance(value, str):
        raise ValueError(f"{name}: got {value!r}, allowed a card string such as '7c'")
    try:
        return parse_card(value)
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None


def _cards(value: Any, name: str) -> Cards:
    if not isinstance(value, list):
        raise ValueError(f"{name}: got {value!r}, allowed a list of card strings")
    return tuple(_card(c, f"{name}[{i}]") for i, c in enumerate(value))


def _maybe_cards(value: Any, name: str) -> Cards | None:
    return None if value is None else _cards(value, name)


def _int(value: Any, name: str) -> int:
    if type(value) is not int:
        raise ValueError(f"{name}: got {value!r}, allowed an int")
    return value


def _ints(value: Any, name: str) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise ValueError(f"{name}: got {value!r}, allowed a list of ints")
    return tuple(_int(v, f"{name}[{i}]") for i, v in enumerate(value))


def _word(allowed: Sequence[str]) -> Callable[[Any, str], str]:
    def read(value: Any, name: str) -> str:
        if value not in allowed:
            raise ValueError(f"{name}: got {value!r}, allowed {', '.join(allowed)}")
        return str(value)

    return read


def _suit(value: Any, name: str) -> int:
    if not isinstance(value, str) or value not in ("c", "d", "h", "s"):
        raise ValueError(f"{name}: got {value!r}, allowed c, d, h or s")
    return "cdhs".index(value)


def _bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name}: got {value!r}, allowed true or false")
    return value


def _deal_hands(value: Any, name: str) -> tuple[Cards | None, ...]:
    if not isinstance(value, list):
        raise ValueError(f"{name}: got {value!r}, allowed a list of card lists (or null)")
    return tuple(_maybe_cards(h, f"{name}[{i}]") for i, h in enumerate(value))


def _order(value: Any, name: str) -> bytes | None:
    cards = _maybe_cards(value, name)
    return None if cards is None else bytes(cards)


def _hand_cards(value: Any, name: str) -> tuple[Cards, ...]:
    if not isinstance(value, list):
        raise ValueError(f"{name}: got {value!r}, allowed a list of card lists")
    return tuple(_cards(h, f"{name}[{i}]") for i, h in enumerate(value))


_READERS: dict[str, tuple[tuple[str, Callable[[Any, str], Any]], ...]] = {
    "deal": (("hand_index", _int), ("dealer", _int), ("direction", _int), ("hand_size", _int),
             ("hands", _deal_hands), ("starter", _card), ("order", _order)),
    "play": (("seat", _int), ("card", _card)),
    "suit_call": (("seat", _int), ("suit", _suit)),
    "declaration": (("seat", _int), ("declared", _bool)),
    "draw": (("seat", _int), ("number", _int), ("cards", _maybe_cards),
             ("reason", _word(DRAW_REASONS))),
    "reshuffle": (("seat", _int), ("pressure", _int), ("cost", _int), ("cards", _cards),
                  ("order", _maybe_cards)),
    "skip": (("seat", _int), ("reason", _word(SKIP_REASONS))),
    "reverse": (("seat", _int), ("direction", _int)),
    "went_out": (("seat", _int),),
    "hand_end": (("hand_index", _int), ("reason", _word(HAND_END_REASONS)),
                 ("hands", _hand_cards), ("went_out", _ints), ("points", _ints),
                 ("scores", _ints), ("shuffle_pressures", _ints)),
    "game_over": (("winners", _ints), ("scores", _ints)),
}  # fmt: skip


def event_from_dict(data: Any) -> Event:
    """The event that ``to_dict()`` wrote; ``ValueError`` naming the key for anything else."""
    if not isinstance(data, dict):
        raise ValueError(f"event: got {type(data).__name__}, allowed a dict of Event.to_dict()")
    kind = data.get("kind")
    readers = _READERS.get(kind) if isinstance(kind, str) else None
    if readers is None or not isinstance(kind, str):
        raise ValueError(f"event['kind']: got {kind!r}, allowed {', '.join(KINDS)}")
    names = {name for name, _ in readers}
    missing = sorted(names - set(data))
    unknown = sorted(str(k) for k in set(data) - names - {"kind"})
    if missing or unknown:
        raise ValueError(
            f"{kind} event: missing key(s) {missing}, unknown key(s) {unknown}; "
            f"allowed: kind, {', '.join(name for name, _ in readers)}"
        )
    values = [read(data[name], f"{kind} event[{name!r}]") for name, read in readers]
    event: Event = EVENT_TYPES[kind](*values)
    return event


__all__ = [
    "DRAW_REASONS",
    "EVENT_TYPES",
    "HAND_END_REASONS",
    "KINDS",
    "SKIP_REASONS",
    "Called",
    "Dealt",
    "Declared",
    "Drew",
    "Event",
    "GameOver",
    "HandScored",
    "Played",
    "Reshuffled",
    "Reversed",
    "Skipped",
    "WentOut",
    "event_from_dict",
    "public_event",
    "public_events",
]
