"""Live games of ``craits serve``: a person against bots, in memory, each behind its own token.

A :class:`GameSession` is one game at the table of ``craits play``
(:class:`craits.table.HumanTable`): the engine game seen through
:class:`~craits_env.public.PublicGame`, recorded by
:class:`~craits_env.records.GameRecorder`, told in plain words by the
:class:`~craits.narrate.Narrator` from the person's seat, all from the events of each
decision, with the bots seated by the arena. The bots act on the server, right after
the person's move, until it is the person's turn again or the game ends. Agents and the
engine are seeded as in ``craits play`` (the game from ``seed``, seat ``s``'s agent from
``derive_seed(seed, s)``), so the same seed, opponents and moves give the same game in
the terminal and in the browser.

A :class:`SessionStore` holds at most ``max_games`` sessions; a session idle for
``idle_seconds`` is dropped to make room for a new one, and when none can be dropped a
new game is refused (503). Each game has an unguessable id and token
(:func:`secrets.token_urlsafe`); the token is compared in constant time.

Every refusal is an :class:`ApiError`: an HTTP status and a one-line reason, raised
before anything changes.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from craits.agents.arena import IllegalAction
from craits.agents.specs import known_specs
from craits_env import options
from craits_env.actions import action_str, parse_action
from craits_env.options import is_int
from craits_env.rules import MAX_PLAYERS, MIN_PLAYERS, Rules
from craits_env.seeding import fresh_seed

from ..table import HumanTable, SeatError

MAX_GAMES = 500
"""Default cap on the games held in memory at once (``craits serve --max-games``)."""
IDLE_SECONDS = 2 * 3600
"""A game nobody has looked at for this long may be dropped to make room for a new one."""
TOKEN_BYTES = 24  # secrets.token_urlsafe: 32 characters, 192 bits
GAME_ID_BYTES = 12  # 16 characters
SCORING_HEAD = "Hand "  # in a part that closes a hand, its summary starts "Hand 3 is over"
SOURCE = "craits serve"
RULE_NAMES = tuple(options.field_types(Rules))


class ApiError(Exception):
    """A refused request: an HTTP ``status`` and a one-line ``message``; nothing changed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)


# ----------------------------------------------------------------------------- new games


@dataclass(frozen=True)
class NewGame:
    """What ``POST /api/games`` asks for, checked."""

    opponents: tuple[str, ...]
    seat: int
    seed: int | None
    rules: Rules

    @property
    def num_players(self) -> int:
        return len(self.opponents) + 1


PATH_SPECS = ("ppo",)  # specs of the table whose argument names a file: never from a client
MAX_SPEC_NUMBER = 2048  # a client's pimc:N at most this (N rollouts per searched decision)


NUMBERED_SPECS = ("pimc", "champion-search")  # table specs that take ":N" (a budget)


def table_specs() -> list[str]:
    """The names of the spec table a web client may seat without ``--agents``."""
    return [name for name in known_specs() if name not in PATH_SPECS]


def allowed_specs(extra: Collection[str]) -> str:
    """The specs a web client may ask for, in words (for one-line errors)."""
    table = [f"{name}[:N]" if name in NUMBERED_SPECS else name for name in table_specs()]
    listed = f"; and the specs this server allows: {', '.join(extra)}" if extra else ""
    return ", ".join(table) + listed


def check_spec(spec: object, extra: Collection[str]) -> str:
    """``spec`` if a web client may seat it: a spec of the table with no argument or a
    number (``expert``, ``pimc:64``), or one the server was started with (``--agents``).
    A spec that names a file or a module (``ppo:PATH``, ``MODULE:ATTR``) would make the
    server load code or weights chosen by the client, so it must be allowed up front."""
    if not isinstance(spec, str) or not spec.strip():
        raise bad_request(f"opponents: got {spec!r}; allowed specs: {allowed_specs(extra)}")
    spec = spec.strip()
    if spec in extra:
        return spec
    name, sep, arg = spec.partition(":")
    if name in table_specs() and (not sep or arg.isdigit()):
        if sep and int(arg) > MAX_SPEC_NUMBER:
            raise bad_request(
                f"opponent {spec!r}: the number is at most {MAX_SPEC_NUMBER} here "
                "(a larger one must be allowed when the server starts: --agents)"
            )
        return spec
    if sep or name in known_specs():
        raise bad_request(
            f"opponent {spec!r}: a spec naming a file or module must be allowed when the server "
            f"starts (craits serve --agents {spec}); allowed: {allowed_specs(extra)}"
        )
    raise bad_request(f"unknown agent spec {spec!r}; allowed: {allowed_specs(extra)}")


def parse_rules(value: object) -> Rules:
    """``rules`` of a request: an object of rule options, each a JSON value of its type
    or its command-line text (``"true"``, ``"8,7,6"``) — :mod:`craits_env.options`."""
    if value is None:
        return Rules()
    if not isinstance(value, dict):
        raise bad_request(f"rules: expected an object of rule options, got {value!r}")
    unknown = sorted(set(value) - set(RULE_NAMES))
    if unknown:
        raise bad_request(f"rules: unknown option(s) {', '.join(map(str, unknown))}; allowed: "
                          f"{', '.join(RULE_NAMES)}")  # fmt: skip
    chosen: dict[str, Any] = {}
    for name, raw in value.items():
        try:
            chosen[name] = options.from_text(Rules, name, raw) if isinstance(raw, str) else raw
        except ValueError as e:
            raise bad_request(f"rules: {name}: {e}") from None
    try:
        return Rules(**chosen)
    except ValueError as e:
        raise bad_request(f"rules: {e}") from None


def parse_new_game(body: object, extra_specs: Collection[str] = ()) -> NewGame:
    """The checked request of ``POST /api/games`` (:class:`ApiError` 400 otherwise)."""
    if not isinstance(body, dict):
        raise bad_request('expected a JSON object such as {"opponents": ["random"]}')
    keys = ("opponents", "players", "seat", "seed", "rules")
    unknown = sorted(set(body) - set(keys))
    if unknown:
        raise bad_request(f"unknown key(s) {', '.join(map(str, unknown))}; allowed: "
                          f"{', '.join(keys)}")  # fmt: skip
    opponents = body.get("opponents")
    if not isinstance(opponents, list) or not MIN_PLAYERS - 1 <= len(opponents) <= MAX_PLAYERS - 1:
        got = f"{len(opponents)} specs" if isinstance(opponents, list) else repr(opponents)
        raise bad_request(f"opponents: got {got}, allowed a list of {MIN_PLAYERS - 1} to "
                          f"{MAX_PLAYERS - 1} agent specs")  # fmt: skip
    specs = tuple(check_spec(s, extra_specs) for s in opponents)
    n = len(specs) + 1
    players = body.get("players", n)
    if players != n or not is_int(players):
        raise bad_request(f"players: got {players!r}, but {len(specs)} opponents make {n} players")
    seat = body.get("seat", 0)
    if not is_int(seat) or not 0 <= seat < n:
        raise bad_request(f"seat: got {seat!r}, allowed 0 to {n - 1} for {n} players")
    seed = body.get("seed")
    if seed is not None and (not is_int(seed) or seed < 0):
        raise bad_request(f"seed: got {seed!r}, allowed an int >= 0 or null (a fresh seed)")
    return NewGame(specs, seat, seed, parse_rules(body.get("rules")))


def parse_action_body(body: object) -> tuple[str, int]:
    """``(token, action id)`` from ``{"token": T, "action": A}``; ``A`` an id or its text
    (``"7c"``, ``"draw"``, ``"call h"``: :func:`craits_env.actions.parse_action`)."""
    if not isinstance(body, dict):
        raise bad_request('expected a JSON object {"token": T, "action": ID}')
    token = body.get("token")
    if not isinstance(token, str):
        raise ApiError(403, "token: missing (the token POST /api/games gave)")
    action = body.get("action")
    if isinstance(action, bool) or not isinstance(action, int | str):
        raise bad_request(f"action: got {action!r}, allowed an action id (see legal)")
    try:
        return token, parse_action(action)
    except ValueError as e:
        raise bad_request(str(e)) from None


def token_of(body: object) -> str:
    """The ``token`` of a ``{"token": T}`` body."""
    if not isinstance(body, dict) or not isinstance(body.get("token"), str):
        raise ApiError(403, 'token: missing (expected a JSON object {"token": T})')
    return str(body["token"])


# ----------------------------------------------------------------------------- one game


@dataclass(frozen=True)
class Event:
    """One line of the game told in plain words (:class:`~craits.narrate.Narrator`).

    ``kind``: ``move`` (a decision and what it caused), ``scoring`` (a hand's summary:
    its points, the cards left, what each 3 cancelled) or ``deal`` (a new hand).
    """

    hand: int
    kind: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"hand": self.hand, "kind": self.kind, "text": self.text}


def tag_lines(parts: Sequence[Sequence[str]], first_hand: int, dealt: bool) -> list[Event]:
    """The narrator's ``…_by_hand`` parts as events: part ``j`` belongs to hand
    ``first_hand + j``; every part but the last closes its hand with its summary; the
    last is the next deal (or nothing once the game is over) when ``dealt`` — at the
    start, or when a decision ended a hand — and else the decision itself."""
    events: list[Event] = []
    last = len(parts) - 1
    for j, part in enumerate(parts):
        hand = first_hand + j
        kind = "deal" if j == last and dealt else "move"
        for line in part:
            if j < last and line.startswith(SCORING_HEAD):
                kind = "scoring"
            if line.strip():
                events.append(Event(hand, kind, line.rstrip()))
    return events


class GameSession:
    """One person (``seat``) against the bots of ``request`` (see the module docstring)."""

    def __init__(self, request: NewGame, game_id: str, token: str) -> None:
        self.game_id = game_id
        self.token = token
        self.seat = request.seat
        self.seed = fresh_seed() if request.seed is None else request.seed
        self.seed_chosen = request.seed is not None
        try:
            self.table = HumanTable(request.opponents, seat=request.seat, seed=self.seed,
                                    rules=request.rules, source=SOURCE)  # fmt: skip
        except SeatError as e:
            raise bad_request(str(e)) from None
        except ValueError as e:  # rules that cannot be dealt
            raise bad_request(str(e)) from None
        table = self.table
        self.game, self.public, self.recorder = table.game, table.public, table.recorder
        self.seats, self.names, self.labels = table.seats, table.names, table.labels
        self.narrator = table.narrator
        self.events: list[Event] = tag_lines(table.start(), 0, dealt=True)
        self.cursor = 0  # events already given to a view
        self.resigned = False
        self.failed: str | None = None  # why a bot stopped the game
        self.saved: dict[str, Any] | None = None  # the saved record file, once saved
        self.lock = threading.Lock()
        self.last_used = time.monotonic()
        table.on_told = self._told
        self._table = table.bots()
        self._run_bots()

    def _told(self, hand: int, parts: list[list[str]]) -> None:
        """Keep the lines of a decision made in ``hand`` (the table calls it)."""
        self.events += tag_lines(parts, hand, dealt=len(parts) > 1)

    def _run_bots(self) -> None:
        try:
            self._table.run()
        except IllegalAction as e:  # the engine refused it: nothing changed
            self.failed = f"bot {self.seats[e.seat]} (player_{e.seat}) failed: {e}"
        except Exception as e:  # a faulty bot ends the game, not the server
            p = self.game.current_player
            self.failed = f"bot {self.seats[p]} (player_{p}) failed: {type(e).__name__}: {e}"

    @property
    def closed(self) -> str | None:
        """Why no move can be made any more, or ``None`` while the game goes on."""
        if self.game.is_over:
            return "the game is over"
        if self.resigned:
            return "you resigned this game"
        return self.failed

    def act(self, action: int) -> None:
        """Apply the person's ``action``, then let the bots move (:class:`ApiError` 409 if
        it is not legal now; nothing changes then)."""
        game = self.game
        if self.closed:
            raise ApiError(409, f"no move is possible: {self.closed}")
        if game.current_player != self.seat:  # cannot happen between requests; be sure
            raise ApiError(409, f"it is player_{game.current_player}'s turn, not yours")
        legal = game.legal_actions()
        if action not in legal:
            allowed = ", ".join(f"{a} ({action_str(a)})" for a in legal)
            raise ApiError(409, f"illegal action {action} ({action_str(action)}) in phase "
                                f"{game.snapshot()['phase']}; legal now: {allowed}")  # fmt: skip
        self.table.decide(action)
        self._run_bots()

    def resign(self) -> None:
        """Stop playing: the game ends unfinished (it can then be saved)."""
        if self.game.is_over:
            raise ApiError(409, "the game is over: there is nothing to resign")
        self.resigned = True

    def take_events(self, since: int | None) -> tuple[list[Event], int]:
        """The events since the last view (or from index ``since``) and their first index."""
        start = self.cursor if since is None else max(0, min(since, len(self.events)))
        self.cursor = len(self.events)
        return self.events[start:], start

    def record(self) -> dict[str, Any]:
        """The game record so far (:mod:`craits_env.records`): every hand, so only for a
        game that is over or resigned (:class:`ApiError` 409 otherwise)."""
        if self.closed is None:
            raise ApiError(409, "the game is still being played: a record shows every hand, so "
                                "it can be saved once the game is over or resigned")  # fmt: skip
        return self.recorder.record()


# ----------------------------------------------------------------------------- the store


class SessionStore:
    """The live games, by id (see the module docstring); thread-safe."""

    def __init__(
        self,
        max_games: int = MAX_GAMES,
        idle_seconds: float = IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_games < 1:
            raise ValueError(f"max_games: got {max_games}, allowed an int >= 1")
        self.max_games = max_games
        self.idle_seconds = idle_seconds
        self._clock = clock
        self._games: dict[str, GameSession] = {}
        self._starting = 0  # games being set up (their bots may be thinking)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._games)

    def _room(self) -> bool:
        """Whether a game fits, after dropping the idle ones (with the lock held)."""
        if len(self._games) + self._starting < self.max_games:
            return True
        now = self._clock()
        for game_id, session in list(self._games.items()):
            if now - session.last_used > self.idle_seconds and not session.lock.locked():
                del self._games[game_id]
        return len(self._games) + self._starting < self.max_games

    def create(self, request: NewGame) -> GameSession:
        """A new game, its bots moved until the person's turn (:class:`ApiError` 503 when full)."""
        with self._lock:
            if not self._room():
                raise ApiError(503, f"the server holds {self.max_games} games, its limit "
                                    "(craits serve --max-games): try again later")  # fmt: skip
            self._starting += 1
        try:
            session = GameSession(request, secrets.token_urlsafe(GAME_ID_BYTES),
                                  secrets.token_urlsafe(TOKEN_BYTES))  # fmt: skip
            session.last_used = self._clock()
            with self._lock:
                self._games[session.game_id] = session
            return session
        finally:
            with self._lock:
                self._starting -= 1

    def get(self, game_id: str, token: str | None) -> GameSession:
        """The game ``game_id`` if ``token`` is its token (404 unknown, 403 wrong token)."""
        session = self._games.get(game_id)
        if session is None:
            raise ApiError(404, f"no game {game_id!r} on this server (unknown, or dropped after "
                                "being idle)")  # fmt: skip
        if not token:
            raise ApiError(403, "token: missing (the token POST /api/games gave)")
        if not secrets.compare_digest(token.encode(), session.token.encode()):
            raise ApiError(403, f"wrong token for game {game_id!r}")
        session.last_used = self._clock()
        return session
