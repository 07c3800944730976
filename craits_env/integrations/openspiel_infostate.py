"""The perfect-recall information state of :mod:`craits_env.integrations.openspiel`.

A seat's information state is its view of every event of the game so far
(:func:`craits_env.events.public_event`: its own cards through the game, every play,
draw — another seat's as a count —, suit call, declaration, penalty, reshuffle and hand
result), in order. After :meth:`resample_from_infostate
<craits_env.integrations.openspiel.CraitsState.resample_from_infostate>`, the other
seats' views of the events before it are the public ones followed by a ``resampled``
entry holding the hand the new world gives them (the resampling seat's view is
unchanged).

**String**: ``p<seat> hand:<own cards>`` then one JSON object per event (``to_dict()``
of the seat's view), one per line. Exact: two states have the same string if and only
if the seat saw the same events.

**Tensor** (float32): a header, then ``history_slots`` slots of :data:`SLOT_FIELDS`,
each event filling one slot (a deal: ``deal`` then ``starter``; a hand's end:
``hand_end`` then one ``hand_shown`` per seat). More events than slots: the **most
recent** ``history_slots`` are kept, oldest first, and the header's ``dropped`` says
how many were cut (the string keeps everything). Unused slots are zero.

======================  ==============  =================================================
part                    size            content
======================  ==============  =================================================
``player``              players         one-hot of the seat
``hand``                52              own cards now (counts per card index, R1.3)
``dropped``             1               slots cut at the front (0 within the cap)
slot ``kind``           14              one-hot of :data:`SLOT_KINDS`
slot ``seat``           players         one-hot: who acted (a deal: the dealer)
slot ``cards``          52              counts: the card played, the cards drawn (own draws
                                        only), own dealt hand, the starter, the cards
                                        reshuffled, a hand shown at the end
slot ``suit``           4               one-hot: the suit called
slot ``reason``         14              one-hot of :data:`REASONS` (draw, skip, hand end)
slot ``number``         1               cards drawn; a deal's hand size; a reshuffle's
                                        pressure; a hand's index; a shown hand's points
slot ``flag``           1               declared; direction +1 (reverse, deal)
======================  ==============  =================================================
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..cards import CARD_STRS, NUM_CARDS
from ..events import (
    Called,
    Dealt,
    Declared,
    Drew,
    Event,
    HandScored,
    Played,
    Reshuffled,
    Reversed,
    Skipped,
    WentOut,
    public_event,
)

SLOT_KINDS = (
    "deal", "starter", "play", "suit_call", "declaration", "draw", "reshuffle", "skip",
    "reverse", "went_out", "hand_end", "hand_shown", "game_over", "resampled",
)  # fmt: skip
REASONS = (
    "draw", "count", "five", "seven", "jack", "queen_of_spades", "one_card_penalty",
    "silence", "four", "went_out", "count_ended", "no_cards", "stock_exhausted",
    "decision_limit",
)  # fmt: skip
SLOT_FIELDS = ("kind", "seat", "cards", "suit", "reason", "number", "flag")
_KIND = {k: i for i, k in enumerate(SLOT_KINDS)}
_REASON = {r: i for i, r in enumerate(REASONS)}
HEADER_FIELDS = ("player", "hand", "dropped")


class Resampled:
    """A log entry of a resampled state: ``seat``'s view of everything before it is public,
    and it holds ``hand`` (the world's new hand for it)."""

    __slots__ = ("hand", "seat")

    def __init__(self, seat: int, hand: tuple[int, ...]) -> None:
        self.seat, self.hand = seat, hand

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "resampled", "seat": self.seat, "hand": [CARD_STRS[c] for c in self.hand]}


def seat_view(log: list[Any], seat: int) -> list[Any]:
    """``seat``'s view of the ``log`` (events and :class:`Resampled` entries)."""
    cut = 0
    for i, entry in enumerate(log):
        if isinstance(entry, Resampled) and entry.seat == seat:
            cut = i
    view = [public_event(e, None) for e in log[:cut] if not isinstance(e, Resampled)]
    return view + [
        e if isinstance(e, Resampled) else public_event(e, seat)
        for e in log[cut:]
        if not isinstance(e, Resampled) or e.seat == seat
    ]


def info_string(view: list[Any], seat: int, hand: list[int]) -> str:
    head = f"p{seat} hand:{' '.join(CARD_STRS[c] for c in hand)}"
    return "\n".join([head] + [json.dumps(e.to_dict(), separators=(",", ":")) for e in view])


class InfoStateLayout:
    """The tensor's offsets for ``num_players`` seats and ``history_slots`` slots."""

    def __init__(self, num_players: int, history_slots: int) -> None:
        self.num_players, self.history_slots = num_players, history_slots
        n = num_players
        sizes = (len(SLOT_KINDS), n, NUM_CARDS, 4, len(REASONS), 1, 1)
        self.field_offsets = dict(
            zip(SLOT_FIELDS, np.cumsum((0, *sizes[:-1])).tolist(), strict=True)
        )
        self.slot_size = sum(sizes)
        self.header_size = n + NUM_CARDS + 1
        self.size = self.header_size + history_slots * self.slot_size

    def shape_dict(self) -> dict[str, tuple[int, ...]]:
        return {
            "player": (self.num_players,),
            "hand": (NUM_CARDS,),
            "dropped": (1,),
            "history": (self.history_slots, self.slot_size),
        }

    def encode(self, view: list[Any], seat: int, hand: list[int], out: np.ndarray) -> None:
        """Write the tensor of ``seat`` (its ``view`` of the log, its ``hand``) into ``out``."""
        out.fill(0.0)
        n = self.num_players
        out[seat] = 1.0
        for c in hand:
            out[n + c] += 1.0
        slots: list[tuple[Any, ...]] = []
        for e in view:
            slots += _slots(e)
        dropped = max(0, len(slots) - self.history_slots)
        out[n + NUM_CARDS] = dropped
        f = self.field_offsets
        base = self.header_size
        for i, (kind, who, cards, suit, reason, number, flag) in enumerate(slots[dropped:]):
            o = base + i * self.slot_size
            out[o + f["kind"] + _KIND[kind]] = 1.0
            if who is not None:
                out[o + f["seat"] + who] = 1.0
            for c in cards:
                out[o + f["cards"] + c] += 1.0
            if suit is not None:
                out[o + f["suit"] + suit] = 1.0
            if reason is not None:
                out[o + f["reason"] + _REASON[reason]] = 1.0
            out[o + f["number"]] = number
            out[o + f["flag"]] = flag


def _slots(e: Event | Resampled) -> list[tuple[Any, ...]]:
    """The slots of one event of a view: (kind, seat, cards, suit, reason, number, flag)."""
    if isinstance(e, Played):
        return [("play", e.seat, (e.card,), None, None, 0, 0)]
    if isinstance(e, Drew):
        return [("draw", e.seat, e.cards or (), None, e.reason, e.number, 0)]
    if isinstance(e, Called):
        return [("suit_call", e.seat, (), e.suit, None, 0, 0)]
    if isinstance(e, Declared):
        return [("declaration", e.seat, (), None, None, 0, int(e.declared))]
    if isinstance(e, Skipped):
        return [("skip", e.seat, (), None, e.reason, 0, 0)]
    if isinstance(e, Reversed):
        return [("reverse", e.seat, (), None, None, 0, int(e.direction > 0))]
    if isinstance(e, WentOut):
        return [("went_out", e.seat, (), None, None, 0, 0)]
    if isinstance(e, Reshuffled):
        return [("reshuffle", e.seat, e.cards, None, None, e.pressure, 0)]
    if isinstance(e, Dealt):
        own = next((h for h in e.hands if h is not None), ())
        return [
            ("deal", e.dealer, own, None, None, e.hand_size, int(e.direction > 0)),
            ("starter", None, (e.starter,), None, None, 0, 0),
        ]
    if isinstance(e, HandScored):
        return [("hand_end", None, (), None, e.reason, e.hand_index, 0)] + [
            ("hand_shown", s, h, None, None, e.points[s], 0) for s, h in enumerate(e.hands)
        ]
    if isinstance(e, Resampled):
        return [("resampled", e.seat, e.hand, None, None, 0, 0)]
    return [("game_over", None, (), None, None, 0, 0)]
