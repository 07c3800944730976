"""Game records: whole games as JSON Lines, and their exact replay through the engine.

A record file holds one game per line. Every line is a self-contained JSON object that
carries its own format tag and version (there is no header line), so record files can be
appended to, concatenated and split by line safely:

===================  =====================================================================
key                  value
===================  =====================================================================
``format``           ``"craits-record"``
``version``          ``1``
``num_players``      2 to 10
``rules``            every :class:`~craits_env.rules.Rules` field (``Rules.to_dict()``)
``seats``            the agent spec of each seat (``"random"``, ``"pimc:64"`` …); ``"human"``
``seed``             the engine seed of the game, or ``null`` (informational: replay needs
                     only the deck orders); optional
``first_dealer``     the first dealer's seat (R2.1)
``hands``            one object per hand dealt: ``deal`` (the deck order, card strings, first
                     dealt first, R2.3), ``reshuffles`` (each new stock, next card first,
                     R10.1) and ``decisions`` (``[player, action id]`` pairs, in order; the
                     action ids of docs/interface.md: 0–51 play a card, 52 draw, 53–56 call
                     c d h s, 57 declare, 58 stay silent)
``finished``         whether the game reached its end (a quit game is recorded unfinished)
``scores``           per seat, the cumulative scores at the end of the record
``hand_points``      per finished hand, per seat, the points scored (penalties included)
``winners``          the seats with the lowest total (R8.6), or ``null`` when unfinished
``meta``             optional, free-form: where the game came from (a tournament key …)
===================  =====================================================================

:func:`replay` rebuilds the game with ``Game(deals=…, reshuffles=…)`` — no random
generator — applies every decision, and checks the replayed scores and hand points
against the recorded ones. :func:`read_records` reads a file line by line and raises
:class:`RecordError` naming the file and line for anything wrong: a corrupt line, a
foreign JSON object, an unsupported version, a missing key, an illegal decision, or
scores that do not replay. A last line cut short by a crash (no final newline, not
JSON) is skipped, not an error.

>>> from craits_env import Game, Rules
>>> game = Game(2, Rules(hand_sizes=(2, 1)), seed=3)
>>> recorder = GameRecorder(game, ["random", "random"], seed=3)
>>> while not game.is_over:
...     player, action = game.current_player, game.legal_actions()[0]
...     recorder.observe(player, action, game.apply(action))
>>> replay(recorder.record()).scores == game.scores
True
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from . import jsonl
from .actions import NUM_ACTIONS, PHASE_NAMES, action_str
from .cards import CARD_STRS, parse_card
from .engine import Game
from .events import Dealt, Event, Reshuffled
from .options import is_int as _is_int
from .rules import Rules, check_num_players

FORMAT = "craits-record"
VERSION = 1
HUMAN = "human"
"""The seat spec of a person (``craits play``)."""

_REQUIRED = (
    "num_players", "rules", "seats", "first_dealer", "hands", "finished", "scores",
    "hand_points",
)  # fmt: skip
_HAND_KEYS = ("deal", "reshuffles", "decisions")

Decision = tuple[int, int, int]
"""``(hand index, player, action id)``: one decision of a game, as :class:`GameRecorder` keeps."""


class RecordError(ValueError):
    """A game record is unreadable, foreign, inconsistent, or does not replay."""


# ----------------------------------------------------------------------------- making records


class GameRecorder:
    """Records a live game from its events: give it every decision with :meth:`observe`
    (or let :meth:`apply` apply it).

    ``game`` must be given before its first decision: the recorder reads its
    ``start_events``, then each decision's events, and keeps the deals and reshuffles
    they hold (:mod:`craits_env.events`). ``apply`` is what :meth:`apply` applies a
    decision with (default ``game.apply``; ``PublicGame.apply`` when bots watch the game
    through a :class:`~craits_env.public.PublicGame`); it returns the events.
    """

    def __init__(
        self,
        game: Game,
        seats: Sequence[str],
        *,
        seed: int | None = None,
        meta: dict[str, Any] | None = None,
        apply: Callable[[int], list[Event]] | None = None,
    ) -> None:
        if len(seats) != game.num_players:
            raise ValueError(f"seats: got {len(seats)} specs for {game.num_players} players")
        if game.hand_index or game.hand_decisions or not game.start_events:
            raise ValueError("GameRecorder: give the game before its first decision")
        self.game = game
        self.seats = list(seats)
        self.seed = seed
        self.meta = meta
        self._apply = apply or game.apply
        self.decisions: list[Decision] = []
        self._hands: list[dict[str, Any]] = []  # per hand dealt: deal, reshuffles, decisions
        self._take(game.start_events)

    def apply(self, action: int) -> list[Event]:
        """Apply ``action`` and record it; the events (an illegal action raises
        ``ValueError`` and is not recorded)."""
        player = self.game.current_player
        events = self._apply(action)
        self.observe(player, action, events)
        return events

    def observe(self, player: int, action: int, events: list[Event]) -> None:
        """Record ``player``'s decision ``action``, which the game has applied and which
        returned ``events``."""
        self.decisions.append((len(self._hands) - 1, player, int(action)))
        self._hands[-1]["decisions"].append([int(player), int(action)])
        self._take(events)

    def _take(self, events: Sequence[Event]) -> None:
        for e in events:
            if isinstance(e, Dealt) and e.order is not None:
                self._hands.append({"deal": _card_strs(e.order), "reshuffles": [], "decisions": []})
            elif isinstance(e, Reshuffled) and e.cards and e.order is not None:
                self._hands[-1]["reshuffles"].append(_card_strs(e.order))

    def record(self) -> dict[str, Any]:
        """The record of the game so far (finished or not)."""
        game = self.game
        over = game.is_over
        record: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "num_players": game.num_players,
            "rules": game.rules.to_dict(),
            "seats": [str(s) for s in self.seats],
            "seed": self.seed,
            "first_dealer": game.first_dealer,
            "hands": [
                {
                    "deal": h["deal"],
                    "reshuffles": list(h["reshuffles"]),
                    "decisions": list(h["decisions"]),
                }
                for h in self._hands
            ],
            "finished": over,
            "scores": list(game.scores),
            "hand_points": [list(p) for p in game.hand_points],
            "winners": game.winners() if over else None,
        }
        if self.meta:
            record["meta"] = self.meta
        return record


def _card_strs(cards: Sequence[int] | bytes) -> list[str]:
    return [CARD_STRS[c] for c in cards]


# ----------------------------------------------------------------------------- files


def encode_record(record: dict[str, Any]) -> str:
    """One record as one compact JSON line (without the newline)."""
    return jsonl.encode(record)


def write_records(path: str | os.PathLike[str], records: Iterable[dict[str, Any]]) -> None:
    """Write a whole record file at once (atomically: the old file or the whole new one)."""
    jsonl.write_jsonl(path, records)


def append_record(path: str | os.PathLike[str], record: dict[str, Any]) -> None:
    """Append one record to ``path`` and flush it to disk (see :func:`append_records`)."""
    append_records(path, [record])


def append_records(path: str | os.PathLike[str], records: Iterable[dict[str, Any]]) -> None:
    """Append records to ``path``, one a line, and flush them to disk
    (:func:`craits_env.jsonl.append_jsonl`: a torn last line is dropped first)."""
    jsonl.append_jsonl(path, records)


def read_records(
    path: str | os.PathLike[str],
    *,
    verify: bool = True,
    on_torn: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, record)`` for each game of a record file (1-based lines).

    With ``verify`` each record is replayed (:func:`replay`) before it is yielded; else
    only its structure is checked. Raises :class:`RecordError` ``"FILE line N: …"``.
    A torn last line (:mod:`craits_env.jsonl`) is skipped and reported to
    ``on_torn(line number)``.
    """
    found = False
    lines = jsonl.read_jsonl(path, on_torn)
    while True:
        try:
            number, record = next(lines)
        except StopIteration:
            break
        except OSError as e:
            raise RecordError(f"{path}: cannot read the file ({e.strerror or e})") from None
        except jsonl.JsonlError as e:
            raise RecordError(str(e)) from None
        try:
            if verify:
                replay(record)
            else:
                check_record(record)
        except RecordError as e:
            raise RecordError(f"{path} line {number}: {e}") from None
        found = True
        yield number, record
    if not found:
        raise RecordError(f"{path}: no game record in the file")


# ----------------------------------------------------------------------------- checking


def check_record(record: Any) -> None:
    """Raise :class:`RecordError` unless ``record`` has the structure of a version-1 record."""
    if not isinstance(record, dict):
        raise RecordError(f"expected a JSON object (a game record), got {_json_type(record)}")
    fmt = record.get("format")
    if fmt != FORMAT:
        found = "no format" if fmt is None else f"format {fmt!r}"
        raise RecordError(f'not a Craits game record ({found}; expected "format": "{FORMAT}")')
    version = record.get("version")
    if version != VERSION or not isinstance(version, int) or isinstance(version, bool):
        raise RecordError(
            f"unsupported record version {version!r}: this craits reads version {VERSION}"
        )
    missing = [k for k in _REQUIRED if k not in record]
    if missing:
        raise RecordError(f"missing key(s): {', '.join(missing)}")
    try:
        n = check_num_players(record["num_players"])
    except ValueError as e:
        raise RecordError(str(e)) from None
    if not isinstance(record["rules"], dict):
        raise RecordError(f"rules: expected an object, got {_json_type(record['rules'])}")
    try:
        rules = Rules.from_dict(record["rules"])
    except (ValueError, TypeError) as e:
        raise RecordError(f"rules: {e}") from None
    seats = record["seats"]
    if not isinstance(seats, list) or len(seats) != n or not all(isinstance(s, str) for s in seats):
        raise RecordError(f"seats: expected {n} agent spec strings, got {seats!r}")
    dealer = record["first_dealer"]
    if not _is_int(dealer) or not 0 <= dealer < n:
        raise RecordError(f"first_dealer: expected a seat 0 to {n - 1}, got {dealer!r}")
    if record.get("seed") is not None and not _is_int(record["seed"]):
        raise RecordError(f"seed: expected an int or null, got {record['seed']!r}")
    if not isinstance(record["finished"], bool):
        raise RecordError(f"finished: expected true or false, got {record['finished']!r}")
    if not _int_list(record["scores"], n):
        raise RecordError(f"scores: expected {n} ints, got {record['scores']!r}")
    points = record["hand_points"]
    if not isinstance(points, list) or not all(_int_list(p, n) for p in points):
        raise RecordError(f"hand_points: expected a list of {n} ints per finished hand")
    hands = record["hands"]
    if not isinstance(hands, list) or not hands:
        raise RecordError("hands: expected a non-empty list of hands")
    if len(hands) > len(rules.hand_sizes):
        raise RecordError(f"hands: {len(hands)} hands for a schedule of {len(rules.hand_sizes)}")
    for h, hand in enumerate(hands, 1):
        _check_hand(hand, h, n)


def _check_hand(hand: Any, h: int, n: int) -> None:
    if not isinstance(hand, dict) or any(k not in hand for k in _HAND_KEYS):
        raise RecordError(f"hand {h}: expected an object with keys {', '.join(_HAND_KEYS)}")
    _check_cards(hand["deal"], f"hand {h}: deal")
    if not isinstance(hand["reshuffles"], list):
        raise RecordError(f"hand {h}: reshuffles: expected a list of card lists")
    for i, order in enumerate(hand["reshuffles"], 1):
        _check_cards(order, f"hand {h}: reshuffle {i}")
    decisions = hand["decisions"]
    if not isinstance(decisions, list):
        raise RecordError(f"hand {h}: decisions: expected a list of [player, action] pairs")
    for k, d in enumerate(decisions, 1):
        if not _int_list(d, 2) or not 0 <= d[0] < n or not 0 <= d[1] < NUM_ACTIONS:
            raise RecordError(
                f"hand {h}, decision {k}: expected [player 0-{n - 1}, action id "
                f"0-{NUM_ACTIONS - 1}], got {d!r}"
            )


def _check_cards(cards: Any, what: str) -> None:
    if not isinstance(cards, list):
        raise RecordError(f"{what}: expected a list of card strings, got {_json_type(cards)}")
    for c in cards:
        if not isinstance(c, str):
            raise RecordError(f"{what}: expected card strings such as '7c', got {c!r}")
        try:
            parse_card(c)
        except ValueError as e:
            raise RecordError(f"{what}: {e}") from None


def _int_list(v: object, length: int) -> bool:
    return isinstance(v, list) and len(v) == length and all(_is_int(x) for x in v)


def _json_type(v: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if v is None:
        return "null"
    return names.get(type(v), "a number")


# ----------------------------------------------------------------------------- replay


def replay(
    record: dict[str, Any],
    *,
    hands: int | None = None,
    on_start: Callable[[Game, Sequence[Event]], None] | None = None,
    on_decision: Callable[[Game, int, int, list[Event]], None] | None = None,
    verify: bool = True,
) -> Game:
    """Re-run ``record`` through the engine exactly and return the game at its end.

    ``on_start(game, events)`` is called once the game is dealt, with its
    ``start_events``; ``on_decision(game, player, action, events)`` after each decision
    is applied, with the events it caused (:mod:`craits_env.events`).
    With ``verify`` the replayed deck orders, end, hand points, scores and winners must
    equal the recorded ones. ``hands=K`` replays only the first ``K`` hands, as a game
    whose schedule ends there: the state left is the end of hand ``K`` with every hand
    as it was scored (nothing is verified then).
    Raises :class:`RecordError` saying what is wrong (without the file and line).
    """
    check_record(record)
    rules = Rules.from_dict(record["rules"])
    recorded = record["hands"]
    if hands is not None:
        if not 1 <= hands <= len(recorded):
            raise ValueError(f"hands: got {hands}, allowed 1 to {len(recorded)}")
        rules = rules.replace(hand_sizes=rules.hand_sizes[:hands])
        recorded = recorded[:hands]
    try:
        game = Game(
            record["num_players"],
            rules,
            dealer=record["first_dealer"],
            deals=[h["deal"] for h in recorded],
            reshuffles=[h["reshuffles"] for h in recorded],
            record=True,
        )
    except ValueError as e:
        raise RecordError(f"cannot deal the recorded game: {e}") from None
    if on_start is not None:
        on_start(game, game.start_events)
    for h, hand in enumerate(recorded):
        for k, (player, action) in enumerate(hand["decisions"], 1):
            events = _apply_recorded(game, h, k, player, action)
            if on_decision is not None:
                on_decision(game, player, action, events)
    if verify and hands is None:
        _verify_end(record, game)
    return game


def _apply_recorded(game: Game, h: int, k: int, player: int, action: int) -> list[Event]:
    where = f"hand {h + 1}, decision {k}"
    if game.is_over:
        raise RecordError(f"{where}: the game is already over")
    if game.hand_index != h:
        raise RecordError(
            f"{where}: the game is in hand {game.hand_index + 1} by then (the record's hands "
            "and decisions disagree)"
        )
    if player != game.current_player:
        raise RecordError(
            f"{where}: recorded for player_{player}, but player_{game.current_player} is to act"
        )
    legal = game.legal_actions()
    if action not in legal:
        raise RecordError(
            f"{where}: illegal action {action} ({action_str(action)}) for player_{player} in "
            f"phase {PHASE_NAMES[game.phase]}; legal: "
            + ", ".join(f"{a} ({action_str(a)})" for a in legal)
        )
    try:
        return game.apply(action)
    except ValueError as e:  # e.g. a reshuffle the record lacks
        raise RecordError(f"{where}: {e}") from None


def _verify_end(record: dict[str, Any], game: Game) -> None:
    deals, reshuffles = game.deck_orders()
    recorded = record["hands"]
    if len(deals) != len(recorded):
        raise RecordError(f"the record holds {len(recorded)} hands but the game dealt {len(deals)}")
    for h, (hand, made) in enumerate(zip(recorded, reshuffles, strict=True), 1):
        if len(hand["reshuffles"]) != len(made):
            raise RecordError(
                f"hand {h}: the record holds {len(hand['reshuffles'])} reshuffle(s) but the "
                f"replay made {len(made)}"
            )
    if record["finished"] and not game.is_over:
        raise RecordError(
            f"the record ends in hand {game.hand_index + 1} with player_{game.current_player} "
            f"to {PHASE_NAMES[game.phase].replace('_', ' ')}, but says the game is finished"
        )
    if game.is_over and not record["finished"]:
        raise RecordError("the replayed game is over, but the record says it is unfinished")
    points = [list(p) for p in game.hand_points]
    if points != record["hand_points"]:
        for h, (mine, theirs) in enumerate(zip(points, record["hand_points"], strict=False), 1):
            if mine != theirs:
                raise RecordError(
                    f"hand {h}: replayed points {mine} differ from the recorded points {theirs}"
                )
        raise RecordError(
            f"the replay finished {len(points)} hands, the record {len(record['hand_points'])}"
        )
    if list(game.scores) != record["scores"]:
        raise RecordError(
            f"replayed scores {list(game.scores)} differ from the recorded scores "
            f"{record['scores']}"
        )
    if game.is_over and record.get("winners") is not None and record["winners"] != game.winners():
        raise RecordError(
            f"replayed winners {game.winners()} differ from the recorded winners "
            f"{record['winners']}"
        )


__all__ = [
    "FORMAT",
    "HUMAN",
    "VERSION",
    "GameRecorder",
    "RecordError",
    "append_record",
    "append_records",
    "check_record",
    "encode_record",
    "read_records",
    "replay",
    "write_records",
]
