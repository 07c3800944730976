"""A recorded game as frames to step through in the browser (the **Watch** page).

The record is re-run through the engine exactly (:func:`craits_env.records.replay`,
which checks that the replayed scores equal the recorded ones) and told by the
:class:`~craits.narrate.Narrator` of ``craits replay``: frame 0 is the first deal, then
one frame per decision, each with the table after it and the decision's lines in plain
words. From above (``seat=None``) every hand is in each frame; following one seat, a
frame holds that seat's hand only (the others are ``null``, their sizes still given)
and the lines are told from that seat, as ``craits play`` tells them.

A frame: ``hand_index``, ``hand_size``, ``dealer``, ``hands``, ``hand_sizes``, ``top``,
``active_suit``, ``count``, ``direction``, ``phase``, ``current_player``, ``scores``,
``stock_size``, ``went_out``, ``decision`` (``{"player", "action", "label"}``, ``null``
for the deal) and ``lines`` (events as in the seat view: ``{"hand", "kind", "text"}``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from craits_env.actions import PHASE_NAMES, action_str
from craits_env.cards import CARD_STRS, SUIT_CHARS
from craits_env.engine import Game
from craits_env.events import Event as GameEvent
from craits_env.records import RecordError, replay
from craits_env.rules import Rules

from ..narrate import Narrator
from ..replay_view import rules_text
from .sessions import ApiError, Event, tag_lines


def _frame(game: Game, seat: int | None, decision: tuple[int, int] | None,
           lines: list[Event]) -> dict[str, Any]:  # fmt: skip
    hands = [[CARD_STRS[c] for c in h] if seat is None or s == seat else None
             for s, h in enumerate(game.hands)]  # fmt: skip
    over = game.is_over
    return {
        "hand_index": game.hand_index,
        "hand_size": game.hand_size,
        "dealer": game.dealer,
        "hands": hands,
        "hand_sizes": [len(h) for h in game.hands],
        "top": CARD_STRS[game.top],
        "active_suit": SUIT_CHARS[game.active_suit],
        "count": game.count,
        "direction": game.direction,
        "phase": PHASE_NAMES[game.phase],
        "current_player": None if over else game.current_player,
        "scores": list(game.scores),
        "stock_size": game.stock_size,
        "went_out": list(game.went_out),
        "decision": None if decision is None else {
            "player": decision[0], "action": decision[1], "label": action_str(decision[1])},
        "lines": [e.to_dict() for e in lines],
    }  # fmt: skip


def game_frames(record: dict[str, Any], seat: int | None = None) -> dict[str, Any]:
    """The frames of ``record`` (see the module docstring), from above or from ``seat``;
    :class:`ApiError` 400 if the record does not replay, 400 for a seat it has not."""
    n = record.get("num_players")
    if seat is not None and not (isinstance(n, int) and 0 <= seat < n):
        raise ApiError(400, f"seat: got {seat}, allowed 0 to {n - 1 if isinstance(n, int) else 0} "
                            "or none (every hand)")  # fmt: skip
    names = [f"player_{s}" for s in range(n or 0)]
    narrator = Narrator(names, seat)
    frames: list[dict[str, Any]] = []
    hand = [0]  # the hand of the next decision

    def start(game: Game, events: Sequence[GameEvent]) -> None:
        lines = tag_lines(narrator.start_by_hand(game, events), 0, dealt=True)
        frames.append(_frame(game, seat, None, lines))
        hand[0] = game.hand_index

    def decision(game: Game, player: int, action: int, events: list[GameEvent]) -> None:
        parts = narrator.after_by_hand(game, player, action, events)
        lines = tag_lines(parts, hand[0], dealt=len(parts) > 1)
        frames.append(_frame(game, seat, (player, action), lines))
        hand[0] = game.hand_index

    try:
        final = replay(record, on_start=start, on_decision=decision)
    except RecordError as e:
        raise ApiError(400, f"the record does not replay: {e}") from None
    labels = [f"player_{s} ({spec})" for s, spec in enumerate(record["seats"])]
    return {
        "num_players": n,
        "seats": record["seats"],
        "seat": seat,
        "rules": rules_text(Rules.from_dict(record["rules"])),
        "first_dealer": record["first_dealer"],
        "seed": record.get("seed"),
        "meta": record.get("meta") or {},
        "finished": record["finished"],
        "scores": record["scores"],
        "hand_points": record["hand_points"],
        "winners": record.get("winners"),
        "standings": narrator.standings(final, labels),
        "frames": frames,
    }
