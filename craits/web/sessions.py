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

import asyncio
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from craits.agents.specs import known_specs
from craits_env import options
from craits_env.actions import action_str, parse_action
from craits_env.options import is_int
from craits_env.rules import MAX_PLAYERS, MIN_PLAYERS, Rules
from craits_env.seeding import fresh_seed

from ..table import HumanTable, SeatError
from .bots import Job, Thinkers
from .database import GameDatabase, StoredGame
from .errors import one_line

MAX_GAMES = 500
"""Default cap on the games in play and on those held in memory (``craits serve --max-games``)."""
IDLE_SECONDS = 2 * 3600
"""A game that has not moved for this long stops counting against the caps."""
KEEP_SECONDS = 7 * 86400
"""A game that has not moved for this long leaves the store (``craits serve --keep-days``)."""
CLIENT_GAMES = 20
"""Games in play one client may hold at once (``craits serve --client-held``)."""
CLIENT_THINK = 120.0
"""Seconds its bots may think in any minute for one client's games (``--client-think``)."""
THINK_WINDOW = 60.0
SWEEP_SECONDS = 3600.0  # games past keep_seconds leave the store at most this often
MAX_CLIENTS = 10_000  # clients whose thinking time is counted; beyond, the oldest forgotten
TOKEN_BYTES = 24  # secrets.token_urlsafe: 32 characters, 192 bits
GAME_ID_BYTES = 12  # 16 characters
SCORING_HEAD = "Hand "  # in a part that closes a hand, its summary starts "Hand 3 is over"
SOURCE = "craits serve"
RULE_NAMES = tuple(options.field_types(Rules))
Writer = Callable[[dict[str, Any], str], dict[str, str]]
"""Writes a game's record (and its id) as a record file: ``{"file", "name"}``."""


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
    """One person (``seat``) against the bots of a stored game (see the module docstring):
    the table rebuilt from ``stored`` — its definition, then every action in it."""

    def __init__(self, stored: StoredGame) -> None:
        self.game_id = stored.game_id
        self.token = stored.token
        self.client = stored.client
        self.seat = stored.seat
        self.seed = stored.seed
        self.seed_chosen = stored.seed_chosen
        self.rules = stored.rules
        try:
            self.table = HumanTable(stored.opponents, seat=stored.seat, seed=stored.seed,
                                    rules=Rules.from_dict(stored.rules), source=SOURCE,
                                    agents=False)  # fmt: skip
        except ValueError as e:  # rules that cannot be dealt
            raise bad_request(str(e)) from None
        table = self.table
        self.opponents = tuple(stored.opponents)
        self.game, self.public, self.recorder = table.game, table.public, table.recorder
        self.seats, self.names, self.labels = table.seats, table.names, table.labels
        self.narrator = table.narrator
        self.events: list[Event] = tag_lines(table.start(), 0, dealt=True)
        table.on_told = self._told
        for action in stored.actions:
            table.decide(action)
        self.stored = len(table.actions)  # actions already in the store
        self.cursor = len(self.events) if stored.actions else 0  # events already given a view
        self.resigned = stored.resigned
        self.failed: str | None = stored.failed  # why a bot stopped the game
        self.saved: dict[str, str] | None = stored.saved  # the saved record file, once saved
        self.turn = asyncio.Lock()  # moves, resigning and saving one after the other
        self.last_used = time.monotonic()

    def _told(self, hand: int, parts: list[list[str]]) -> None:
        """Keep the lines of a decision made in ``hand`` (the table calls it)."""
        self.events += tag_lines(parts, hand, dealt=len(parts) > 1)

    @property
    def closed(self) -> str | None:
        """Why no move can be made any more, or ``None`` while the game goes on."""
        if self.game.is_over:
            return "the game is over"
        if self.resigned:
            return "you resigned this game"
        return self.failed

    def bot_to_move(self) -> int | None:
        """The seat of the bot to move now, or ``None``."""
        return None if self.closed else self.table.bot_to_move()

    def job(self) -> Job:
        """What a thinker needs for the next bot move (:mod:`craits.web.bots`)."""
        return Job(self.game_id, self.client, self.opponents, self.seat, self.seed, self.rules,
                   tuple(self.table.actions))  # fmt: skip

    def check_move(self, action: int) -> None:
        """:class:`ApiError` 409 unless the person may make ``action`` now."""
        game = self.game
        if self.closed:
            raise ApiError(409, f"no move is possible: {self.closed}")
        if game.current_player != self.seat:
            raise ApiError(409, f"it is player_{game.current_player}'s turn, not yours")
        legal = game.legal_actions()
        if action not in legal:
            allowed = ", ".join(f"{a} ({action_str(a)})" for a in legal)
            raise ApiError(409, f"illegal action {action} ({action_str(action)}) in phase "
                                f"{game.snapshot()['phase']}; legal now: {allowed}")  # fmt: skip

    def decide(self, action: int) -> None:
        """Apply a decision already checked (the person's, or a bot's move)."""
        self.table.decide(action)

    def unstored(self) -> list[int]:
        """The actions made since the store last took them (and mark them taken)."""
        actions = self.table.actions[self.stored :]
        self.stored = len(self.table.actions)
        return actions

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


@dataclass(frozen=True)
class StoreLimits:
    """The caps of a :class:`SessionStore` (0: none, where a cap may be off)."""

    max_games: int = MAX_GAMES
    """unfinished games that moved in the last ``idle_seconds``, over all clients (503)"""
    idle_seconds: float = IDLE_SECONDS
    """a game that has not moved for this long stops counting against the caps"""
    keep_seconds: float = KEEP_SECONDS
    """a game that has not moved for this long leaves the store"""
    client_games: int = CLIENT_GAMES
    """unfinished games one client may hold at once, counted as ``max_games`` (429; 0: none)"""
    client_think: float = CLIENT_THINK
    """seconds its bots may think in any 60 s for one client's games (429; 0: none)"""

    def __post_init__(self) -> None:
        for name in ("max_games", "idle_seconds", "keep_seconds"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}: got {getattr(self, name)!r}, allowed a number > 0")
        for name in ("client_games", "client_think"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}: got {getattr(self, name)!r}, allowed a number >= 0")


class SessionStore:
    """The live games (see the module docstring): at most ``max_games`` in memory, every
    one in ``database``, their bots thinking in ``thinkers``. Its methods run on the
    server's event loop, where every change to a game is made: a view never sees half a
    move."""

    def __init__(
        self,
        database: GameDatabase,
        thinkers: Thinkers,
        limits: StoreLimits | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.database = database
        self.thinkers = thinkers
        self.limits = limits or StoreLimits()
        self._clock = clock
        self._games: OrderedDict[str, GameSession] = OrderedDict()  # oldest use first
        self._loading: dict[str, asyncio.Future[GameSession]] = {}
        self._starting: dict[str, int] = {}  # games being set up, by client
        self._thought: dict[str, deque[tuple[float, float]]] = {}
        self._swept = 0.0

    def __len__(self) -> int:
        """The games held in memory."""
        return len(self._games)

    def held(self, game_id: str) -> GameSession | None:
        """The game ``game_id`` if it is held in memory (no token: for the server's own use)."""
        return self._games.get(game_id)

    # ------------------------------------------------------------------ caps

    def _check_room(self, client: str) -> None:
        limits, db = self.limits, self.database
        self._check_thinking(client)
        now = self._clock()
        if now - self._swept > SWEEP_SECONDS:
            self._swept = now
            db.forget_before(now - limits.keep_seconds)
        since = now - limits.idle_seconds
        starting = sum(self._starting.values())
        if db.live(since) + starting >= limits.max_games:
            raise ApiError(503, f"the server holds {limits.max_games} games in play, its limit "
                                "(craits serve --max-games): try again later")  # fmt: skip
        held = limits.client_games
        if held and db.live(since, client) + self._starting.get(client, 0) >= held:
            raise ApiError(429, f"this client holds {held} games in play, its limit (craits serve "
                                "--client-held): finish or resign one first")  # fmt: skip

    def _check_thinking(self, client: str) -> None:
        limit = self.limits.client_think
        if not limit:
            return
        spent = self._thinking(client)
        if spent >= limit:
            raise ApiError(429, f"this client's bots thought {spent:.0f} s in the last minute, "
                                f"its limit is {limit:g} s (craits serve --client-think): try "
                                "again in a minute")  # fmt: skip

    def _thinking(self, client: str) -> float:
        recent = self._thought.get(client)
        if not recent:
            return 0.0
        now = time.monotonic()
        while recent and now - recent[0][0] > THINK_WINDOW:
            recent.popleft()
        return sum(seconds for _, seconds in recent)

    def _count_thinking(self, client: str, seconds: float) -> None:
        if not self.limits.client_think:
            return
        if client not in self._thought and len(self._thought) >= MAX_CLIENTS:
            self._thought.pop(next(iter(self._thought)))
        self._thought.setdefault(client, deque()).append((time.monotonic(), seconds))

    # ------------------------------------------------------------------ games

    def _remember(self, session: GameSession) -> None:
        """Hold ``session`` in memory; beyond ``max_games``, forget the least recently
        used that is not busy (it stays in the store)."""
        self._games[session.game_id] = session
        self._games.move_to_end(session.game_id)
        if len(self._games) <= self.limits.max_games:
            return
        for game_id, other in list(self._games.items()):
            if len(self._games) <= self.limits.max_games:
                break
            if other is not session and not other.turn.locked():
                del self._games[game_id]

    async def create(self, request: NewGame, client: str) -> GameSession:
        """A new game, stored, its bots moved until the person's turn (:class:`ApiError`
        503 when the server is full, 429 when the client holds its share)."""
        self._check_room(client)
        self._starting[client] = self._starting.get(client, 0) + 1
        try:
            stored = StoredGame(
                game_id=secrets.token_urlsafe(GAME_ID_BYTES),
                token=secrets.token_urlsafe(TOKEN_BYTES), client=client,
                opponents=request.opponents, seat=request.seat,
                seed=fresh_seed() if request.seed is None else request.seed,
                seed_chosen=request.seed is not None, rules=request.rules.to_dict(),
            )  # fmt: skip
            session = await asyncio.to_thread(_new_session, stored)
            self.database.add(stored)
        finally:
            self._starting[client] -= 1
            if not self._starting[client]:
                del self._starting[client]
        self._remember(session)
        async with session.turn:
            await self._run_bots(session)
        return session

    async def get(self, game_id: str, token: str | None) -> GameSession:
        """The game ``game_id`` if ``token`` is its token (404 unknown, 403 wrong token);
        a game not in memory is rebuilt from the store (its bots then move, if it is
        their turn: a server stopped while they thought)."""
        if not token:
            raise ApiError(403, "token: missing (the token POST /api/games gave)")
        session = self._games.get(game_id)
        if session is None:
            session = await self._load(game_id, token)
        if not secrets.compare_digest(token.encode(), session.token.encode()):
            raise ApiError(403, f"wrong token for game {game_id!r}")
        session.last_used = time.monotonic()
        self._games.move_to_end(game_id)
        if session.bot_to_move() is not None and not session.turn.locked():
            async with session.turn:
                await self._run_bots(session)
        return session

    async def _load(self, game_id: str, token: str) -> GameSession:
        loading = self._loading.get(game_id)
        if loading is not None:
            return await asyncio.shield(loading)
        stored = self.database.load(game_id)
        if stored is None:
            days = self.limits.keep_seconds / 86400
            raise ApiError(404, f"no game {game_id!r} on this server (unknown, or gone after "
                                f"{days:g} days without a move)")  # fmt: skip
        if not secrets.compare_digest(token.encode(), stored.token.encode()):
            raise ApiError(403, f"wrong token for game {game_id!r}")  # before any replay
        future: asyncio.Future[GameSession] = asyncio.get_running_loop().create_future()
        self._loading[game_id] = future
        try:
            session = await asyncio.to_thread(GameSession, stored)
            future.set_result(session)
        except BaseException as e:
            future.set_exception(e)
            future.exception()  # retrieved: no "never retrieved" warning
            raise
        finally:
            del self._loading[game_id]
        self._remember(session)
        return session

    async def act(self, session: GameSession, action: int) -> None:
        """The person's ``action``, then the bots' moves until the person's turn (409 if
        it is not legal now, 429 if the client's bots thought their share: nothing
        changes then)."""
        async with session.turn:
            self._check_thinking(session.client)
            session.check_move(action)
            session.decide(action)
            self._store_moves(session)
            await self._run_bots(session)

    async def resign(self, session: GameSession) -> None:
        """Stop playing: the game ends unfinished (it can then be saved)."""
        async with session.turn:
            if session.game.is_over:
                raise ApiError(409, "the game is over: there is nothing to resign")
            session.resigned = True
            self.database.end(session.game_id, resigned=True)

    async def save(self, session: GameSession, write: Writer) -> dict[str, str]:
        """Save the game's record once, by ``write`` (:meth:`craits.web.library.Library.save`,
        in a thread); a second save gives the same file."""
        async with session.turn:
            if session.saved is None:
                record = session.record()
                saved = await asyncio.to_thread(write, record, session.game_id)
                self.database.set_saved(session.game_id, saved)
                session.saved = saved
            return session.saved

    def _store_moves(self, session: GameSession) -> None:
        start = session.stored
        actions = session.unstored()
        if actions:
            self.database.add_actions(session.game_id, start, actions, session.game.is_over)

    async def _run_bots(self, session: GameSession) -> None:
        """Let the bots move until the person's turn or the game's end, each move thought
        of by a thinker, applied here and stored before the next (with the turn held)."""
        while (seat := session.bot_to_move()) is not None:
            move = await self.thinkers.move(session.job())
            self._count_thinking(session.client, move.seconds)
            who = f"bot {session.seats[seat]} (player_{seat})"
            if move.action is None:
                self._fail(session, f"{who} failed: {move.error}")
                return
            try:
                session.decide(move.action)
            except ValueError as e:  # the engine refused it: nothing changed
                self._fail(session, f"{who} failed: returned illegal action "
                                    f"{move.action!r} ({e})")  # fmt: skip
                return
            self._store_moves(session)

    def _fail(self, session: GameSession, reason: str) -> None:
        session.failed = one_line(reason)
        self.database.end(session.game_id, failed=session.failed)


def _new_session(stored: StoredGame) -> GameSession:
    """A new game's session, its specs checked by seating them (a thread: agents load)."""
    try:
        HumanTable(stored.opponents, seat=stored.seat, seed=stored.seed,
                   rules=Rules.from_dict(stored.rules), source=SOURCE)  # fmt: skip
    except SeatError as e:
        raise bad_request(str(e)) from None
    except ValueError as e:  # rules that cannot be dealt
        raise bad_request(str(e)) from None
    return GameSession(stored)
