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
Frames share the lists that did not change between them (a seat's hand, the scores …):
they are to be encoded, not changed in place.

A replay may be asked for a window of its frames (``start``, ``count``): every decision is
still re-run and narrated (the lines depend on what came before), but only the window's
frames are made, so a page of a 400-hand game costs its replay, not 42,000 frames and
20 MB of JSON. ``frame_count`` is the whole game's, ``frames_from`` the window's first
index, ``hand_starts`` the index of each hand's first frame (``{"hand", "frame"}``).

A frame costs what changed at its decision, not the whole table. The frames hold no
reference cycles, so the cycle collector is paused while they are made
(:func:`collector_paused`): left on, it walked the growing frames again and again, half the
time of a 400-hand game (``experiments/results/web/replay.md``).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from craits_env.actions import PHASE_GAME_OVER, PHASE_NAMES, action_str
from craits_env.cards import CARD_STRS, SUIT_CHARS
from craits_env.engine import Game
from craits_env.events import Event as GameEvent
from craits_env.records import RecordError, replay
from craits_env.rules import Rules

from ..narrate import Narrator
from ..replay_view import rules_text
from .errors import plain, plain_json
from .sessions import ApiError, Event, tag_lines

FRAMES_PAGE = 2000
"""Frames of one replay request at most (and by default): a standard game has ~1,600."""
_pause_lock = threading.Lock()
_pauses = 0  # the collector_paused blocks under way, in every thread
_resume = False  # whether the collector was on when the first of them began


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cycle collector (``gc``, process-wide) for the block: for making many
    objects that hold no reference cycles. Nested and concurrent blocks are counted; the
    collector is back as it was once the last one ends."""
    global _pauses, _resume
    with _pause_lock:
        if _pauses == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _resume:
                gc.enable()


class _Frames:
    """The frames of one replay, made as :func:`~craits_env.records.replay` re-runs it:
    :meth:`start` and :meth:`decision` are its callbacks.

    What did not change since the frame before — a seat's hand, the hands shown, the hand
    sizes, the scores, the seats gone out — is the very list of that frame (the JSON is the
    same), and a decision's ``{"player", "action", "label"}`` is made once per
    ``(player, action)``.
    """

    def __init__(
        self,
        narrator: Narrator,
        num_players: int,
        seat: int | None,
        start: int = 0,
        stop: int | None = None,
    ) -> None:
        self.narrator = narrator
        self.frames: list[dict[str, Any]] = []
        self.start_at, self.stop_at = start, stop  # the window of frames made
        self.count = 0  # frames of the game so far, made or not
        self.hand_starts: list[dict[str, int]] = []
        self._hand = 0  # the hand of the next decision
        self._shown = tuple(range(num_players)) if seat is None else (seat,)
        self._cards: list[list[int] | None] = [None] * num_players  # as last shown
        self._hands: list[list[str] | None] = [None] * num_players
        self._sizes: list[int] = []
        self._scores: list[int] = []
        self._went_out: list[int] = []
        self._decisions: dict[tuple[int, int], dict[str, Any]] = {}

    def _wanted(self) -> bool:
        k = self.count
        return k >= self.start_at and (self.stop_at is None or k < self.stop_at)

    def _counted(self, game: Game) -> None:
        if not self.hand_starts or self.hand_starts[-1]["hand"] != game.hand_index:
            self.hand_starts.append({"hand": game.hand_index, "frame": self.count})
        self.count += 1
        self._hand = game.hand_index

    def start(self, game: Game, events: Sequence[GameEvent]) -> None:
        """Frame 0: the first deal (and any hand that ended before a decision)."""
        parts = self.narrator.start_by_hand(game, events)
        if self._wanted():
            self.frames.append(self._frame(game, None, tag_lines(parts, 0, dealt=True)))
        self._counted(game)

    def decision(self, game: Game, player: int, action: int, events: list[GameEvent]) -> None:
        """The frame after ``player``'s decision ``action``, which caused ``events``."""
        parts = self.narrator.after_by_hand(game, player, action, events)
        if self._wanted():
            lines = tag_lines(parts, self._hand, dealt=len(parts) > 1)
            self.frames.append(self._frame(game, self._decision(player, action), lines))
        self._counted(game)

    def _frame(
        self, game: Game, decision: dict[str, Any] | None, lines: list[Event]
    ) -> dict[str, Any]:
        hands = game.hands
        cards = self._cards
        for s in self._shown:
            if hands[s] != cards[s]:
                cards[s] = list(hands[s])
                self._hands = shown = self._hands.copy()
                shown[s] = [CARD_STRS[c] for c in hands[s]]
        sizes = list(map(len, hands))
        if sizes != self._sizes:
            self._sizes = sizes
        if game.scores != self._scores:
            self._scores = list(game.scores)
        if game.went_out != self._went_out:
            self._went_out = list(game.went_out)
        return {
            "hand_index": game.hand_index,
            "hand_size": game.hand_size,
            "dealer": game.dealer,
            "hands": self._hands,
            "hand_sizes": self._sizes,
            "top": CARD_STRS[game.discard[-1]],
            "active_suit": SUIT_CHARS[game.active_suit],
            "count": game.count,
            "direction": game.direction,
            "phase": PHASE_NAMES[game.phase],
            "current_player": None if game.phase == PHASE_GAME_OVER else game.current_player,
            "scores": self._scores,
            "stock_size": game.stock_size,
            "went_out": self._went_out,
            "decision": decision,
            "lines": [e.to_dict() for e in lines],
        }

    def _decision(self, player: int, action: int) -> dict[str, Any]:
        made = self._decisions.get((player, action))
        if made is None:
            made = {"player": player, "action": action, "label": action_str(action)}
            self._decisions[player, action] = made
        return made


def game_frames(
    record: dict[str, Any], seat: int | None = None, start: int = 0, count: int | None = None
) -> dict[str, Any]:
    """The frames of ``record`` (see the module docstring), from above or from ``seat``,
    the ``count`` frames from index ``start`` (``None``: to the end); :class:`ApiError`
    400 if the record does not replay, for a seat it has not, or a window outside it."""
    n = record.get("num_players")
    if seat is not None and not (isinstance(n, int) and 0 <= seat < n):
        raise ApiError(
            400,
            f"seat: got {seat}, allowed 0 to {n - 1 if isinstance(n, int) else 0} "
            "or none (every hand)",
        )
    names = [f"player_{s}" for s in range(n or 0)]
    narrator = Narrator(names, seat)
    made = _Frames(narrator, n or 0, seat, start, None if count is None else start + count)
    try:
        with collector_paused():
            final = replay(record, on_start=made.start, on_decision=made.decision)
    except RecordError as e:
        raise ApiError(400, f"the record does not replay: {e}") from None
    if start and start >= made.count:
        raise ApiError(
            400, f"from: got {start}, the game has {made.count} frames (0 to {made.count - 1})"
        )
    seats = [plain(str(spec)) for spec in record["seats"]]
    labels = [f"player_{s} ({spec})" for s, spec in enumerate(seats)]
    return {
        "num_players": n,
        "seats": seats,
        "seat": seat,
        "rules": rules_text(Rules.from_dict(record["rules"])),
        "first_dealer": record["first_dealer"],
        "seed": record.get("seed"),
        "meta": plain_json(record.get("meta") or {}),
        "finished": record["finished"],
        "scores": record["scores"],
        "hand_points": record["hand_points"],
        "winners": record.get("winners"),
        "standings": narrator.standings(final, labels),
        "frames": made.frames,
        "frame_count": made.count,
        "frames_from": start,
        "hand_starts": made.hand_starts,
    }
