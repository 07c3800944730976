"""Live games of ``craits serve``: a person against bots, each behind its own token.

A :class:`GameSession` is one game at the table of ``craits play``
(:class:`craits.table.HumanTable`): the engine game seen through
:class:`~craits_env.public.PublicGame`, recorded by
:class:`~craits_env.records.GameRecorder`, told in plain words by the
:class:`~craits.narrate.Narrator` from the person's seat, all from the events of each
decision. It is rebuilt from what the store holds (:mod:`craits.web.database`: the game's
definition and its actions), so a game held in memory and one rebuilt after a restart are
the same game. The engine is seeded as in ``craits play`` and each bot is reset before
its move (:func:`craits.table.bot_seed`), so the same seed, opponents and moves give the
same game in the terminal and in the browser.

A :class:`SessionStore` holds the games: every one in the database, at most
``max_games`` in memory (the least recently used that is not busy leaves memory, not the
store). It runs on the server's event loop and makes every change to a game there: the
person's move, then the bots' moves, each thought of by a thinker
(:mod:`craits.web.bots`) and stored before the next. A new game is refused when the
server holds ``max_games`` games in play (503) or the client its share (429); no game is
dropped for it. Each game has an unguessable id and token
(:func:`secrets.token_urlsafe`); the token is compared in constant time.

Every refusal is an :class:`~craits.web.requests.ApiError`: an HTTP status and a one-line
reason, raised before anything changes.
"""

from __future__ import annotations

import asyncio
import json
import math
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from craits_env.actions import action_str
from craits_env.rules import Rules
from craits_env.seeding import fresh_seed

from ..table import HumanTable, SeatError
from .bots import Job, Thinkers, is_quick
from .costs import expected_seconds
from .database import GameDatabase, StoredGame
from .errors import one_line
from .requests import ApiError, NewGame, StaleDecision, bad_request
from .timing import MoveFloors

MAX_GAMES = 500
"""Default cap on the games in play and on those held in memory (``craits serve --max-games``)."""
HELD_DECISIONS = 1_000_000
"""Decisions of the games held in memory, over all games (a held game takes about 500 bytes
a decision — its narration, encoded once for views, its record, its actions —, so about
500 MB at most)."""
IDLE_SECONDS = 20 * 60
"""A game that has not moved for this long stops counting against the caps (it stays in the
store, and goes on when its player comes back)."""
NEARLY_FULL = 0.8
"""Once the games in play reach this share of ``max_games``, a client holding
:data:`FULL_SHARE` of them or more may start no more: the last fifth of the room is kept
for clients holding few (issue 43: 26 addresses filled the cap in 3.8 s; ``craits serve
--nearly-full``)."""
FULL_SHARE = 0.01
"""The share of ``max_games`` a client may hold once the server is nearly full (5 of 500;
``craits serve --full-share``)."""
KEEP_SECONDS = 7 * 86400
"""A game that has not moved for this long leaves the store (``craits serve --keep-days``)."""
CLIENT_GAMES = 20
"""Games in play one client may hold at once (``craits serve --client-held``)."""
CLIENT_THINK = 120.0
"""Seconds its bots may think in any minute for one client's games (``--client-think``)."""
THINK_WINDOW = 60.0
SHARE_POLL = 1.0  # seconds between looks at a client's thinking share while its bots wait
SWEEP_SECONDS = 3600.0  # games past keep_seconds leave the store at most this often
MAX_CLIENTS = 10_000  # clients whose thinking time is counted; beyond, the oldest forgotten
TOKEN_BYTES = 24  # secrets.token_urlsafe: 32 characters, 192 bits
GAME_ID_BYTES = 12  # 16 characters
SCORING_HEAD = "Hand "  # in a part that closes a hand, its summary starts "Hand 3 is over"
SOURCE = "craits serve"
Writer = Callable[[dict[str, Any], str], dict[str, str]]
"""Writes a game's record (and its id) as a record file: ``{"file", "name"}``."""


# ----------------------------------------------------------------------------- one game


@dataclass(frozen=True, slots=True)
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
            self.table = HumanTable(
                stored.opponents,
                seat=stored.seat,
                seed=stored.seed,
                rules=Rules.from_dict(stored.rules),
                source=SOURCE,
                agents=False,
            )
        except ValueError as e:  # rules that cannot be dealt
            raise bad_request(str(e)) from None
        table = self.table
        self.opponents = tuple(stored.opponents)
        self.game, self.public, self.recorder = table.game, table.public, table.recorder
        self.seats, self.names, self.labels = table.seats, table.names, table.labels
        self.narrator = table.narrator
        self.events: list[Event] = tag_lines(table.start(), 0, dealt=True)
        self._encoded: list[bytes] = []  # the events as JSON, encoded once
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
    def decision(self) -> int:
        """Decisions made in the game so far (the person's and the bots'): the number a
        move answering the position now carries (``"decision"``)."""
        return len(self.table.actions)

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
        spec = self.seats[self.game.current_player]
        return Job(
            self.game_id,
            self.client,
            self.opponents,
            self.seat,
            self.seed,
            self.rules,
            tuple(self.table.actions),
            is_quick(spec),
        )

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
            raise ApiError(
                409,
                f"illegal action {action} ({action_str(action)}) in phase "
                f"{game.snapshot()['phase']}; legal now: {allowed}",
            )

    def decide(self, action: int) -> None:
        """Apply a decision already checked (the person's, or a bot's move)."""
        self.table.decide(action)

    def unstored(self) -> list[int]:
        """The actions made since the store last took them (and mark them taken)."""
        actions = self.table.actions[self.stored :]
        self.stored = len(self.table.actions)
        return actions

    def take_events(self, since: int | None) -> int:
        """The index of the first event a view gives: the first since the last view (or
        ``since``); the events up to the last are taken."""
        start = self.cursor if since is None else max(0, min(since, len(self.events)))
        self.cursor = len(self.events)
        return start

    def encoded_events(self, start: int) -> bytes:
        """The events from index ``start`` as the items of a JSON array (each event
        encoded once, the first time a view gives it)."""
        encoded = self._encoded
        for event in self.events[len(encoded) :]:
            text = json.dumps(event.to_dict(), ensure_ascii=False, separators=(",", ":"))
            encoded.append(text.encode("utf-8"))
        return b",".join(encoded[start:])

    def record(self) -> dict[str, Any]:
        """The game record so far (:mod:`craits_env.records`): every hand, so only for a
        game that is over or resigned (:class:`ApiError` 409 otherwise)."""
        if self.closed is None:
            raise ApiError(
                409,
                "the game is still being played: a record shows every hand, so "
                "it can be saved once the game is over or resigned",
            )
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
    held_decisions: int = HELD_DECISIONS
    """decisions of the games held in memory, in all (beyond, the least recently used
    leave memory, not the store)"""
    nearly_full: float = NEARLY_FULL
    """the share of ``max_games`` in play from which a client may hold only ``full_share``"""
    full_share: float = FULL_SHARE
    """the share of ``max_games`` (at least one game) one client may hold once nearly full"""

    def __post_init__(self) -> None:
        for name in ("nearly_full", "full_share"):
            if not 0 < getattr(self, name) <= 1:
                raise ValueError(f"{name}: got {getattr(self, name)!r}, allowed 0 < x <= 1")
        for name in ("max_games", "idle_seconds", "keep_seconds", "held_decisions"):
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
        floors: MoveFloors | bool | None = True,
    ) -> None:
        self.database = database
        self.thinkers = thinkers
        self.limits = limits or StoreLimits()
        if not isinstance(floors, MoveFloors):
            floors = MoveFloors(thinkers.move_seconds) if floors else None
        self.floors = floors
        """the even timing of the searching bots' moves (:mod:`craits.web.timing`; ``True``:
        the default floors, ``False``/``None``: none)"""
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
            raise ApiError(
                503,
                f"the server holds {limits.max_games} games in play, its limit "
                "(craits serve --max-games): try again later",
            )
        held = limits.client_games
        mine = db.live(since, client) + self._starting.get(client, 0)
        if held and mine >= held:
            raise ApiError(
                429,
                f"this client holds {held} games in play, its limit (craits serve "
                "--client-held): finish or resign one first",
            )
        share = max(1, math.ceil(limits.max_games * limits.full_share))
        if db.live(since) + starting >= limits.max_games * limits.nearly_full and mine >= share:
            raise ApiError(
                429,
                f"the server is nearly full ({limits.max_games} games at most) and this "
                f"client holds {mine} games in play: at most {share} each until there is "
                "room again; finish or resign one first",
            )

    def _check_thinking(self, client: str) -> None:
        limit = self.limits.client_think
        if not limit:
            return
        spent = self._thinking(client)
        if spent >= limit:
            raise ApiError(
                429,
                f"this client's bots thought {spent:.0f} s in the last minute, "
                f"its limit is {limit:g} s (craits serve --client-think): try "
                "again in a minute",
            )

    def _thinking(self, client: str) -> float:
        recent = self._thought.get(client)
        if not recent:
            return 0.0
        now = time.monotonic()
        while recent and now - recent[0][0] > THINK_WINDOW:
            recent.popleft()
        return sum(seconds for _, seconds in recent)

    async def _await_share(self, client: str) -> None:
        """Wait while ``client``'s bots have thought their share of the last minute
        (``client_think``): its next bot move yields the thinkers to the others' until
        then (the share was checked only before a person's move: one move could set off
        a long series of searches)."""
        limit = self.limits.client_think
        while limit and self._thinking(client) >= limit:
            recent = self._thought.get(client)
            oldest = recent[0][0] if recent else time.monotonic()
            freed = oldest + THINK_WINDOW - time.monotonic()  # when the oldest leaves the window
            await asyncio.sleep(min(SHARE_POLL, max(0.05, freed)))

    def _count_thinking(self, client: str, seconds: float) -> None:
        if not self.limits.client_think:
            return
        if client not in self._thought and len(self._thought) >= MAX_CLIENTS:
            self._thought.pop(next(iter(self._thought)))
        self._thought.setdefault(client, deque()).append((time.monotonic(), seconds))

    # ------------------------------------------------------------------ games

    def held_decisions(self) -> int:
        """The decisions of the games held in memory (what their memory grows with)."""
        return sum(len(s.table.actions) for s in self._games.values())

    def _remember(self, session: GameSession) -> None:
        """Hold ``session`` in memory; beyond ``max_games`` games or ``held_decisions``
        decisions in all, forget the least recently used that are not busy (they stay in
        the store, and are rebuilt from it when next asked for)."""
        self._games[session.game_id] = session
        self._games.move_to_end(session.game_id)
        self._trim(session)

    def _trim(self, keep: GameSession | None = None) -> None:
        limits = self.limits
        decisions = self.held_decisions()
        if len(self._games) <= limits.max_games and decisions <= limits.held_decisions:
            return
        for game_id, other in list(self._games.items()):
            if len(self._games) <= limits.max_games and decisions <= limits.held_decisions:
                break
            if other is not keep and not other.turn.locked():
                del self._games[game_id]
                decisions -= len(other.table.actions)

    async def create(self, request: NewGame, client: str) -> GameSession:
        """A new game, stored, its bots moved until the person's turn (:class:`ApiError`
        503 when the server is full, 429 when the client holds its share)."""
        self._check_room(client)
        self._starting[client] = self._starting.get(client, 0) + 1
        try:
            stored = StoredGame(
                game_id=secrets.token_urlsafe(GAME_ID_BYTES),
                token=secrets.token_urlsafe(TOKEN_BYTES),
                client=client,
                opponents=request.opponents,
                seat=request.seat,
                seed=fresh_seed() if request.seed is None else request.seed,
                seed_chosen=request.seed is not None,
                rules=request.rules.to_dict(),
            )
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
        if game_id in self._games:  # (a game rebuilt just now may have left memory again)
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
            raise ApiError(
                404,
                f"no game {game_id!r} on this server (unknown, or gone after "
                f"{days:g} days without a move)",
            )
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

    async def act(self, session: GameSession, action: int, decision: int | None = None) -> None:
        """The person's ``action``, then the bots' moves until the person's turn (409 if
        it is not legal now or ``decision`` is not the game's decision number — a
        duplicate or stale request, :class:`StaleDecision` —, 429 if the client's bots
        thought their share: nothing changes then). Checked with the turn held, so of
        two requests answering the same decision only the first is applied."""
        async with session.turn:
            if decision is not None and decision != session.decision:
                raise StaleDecision(decision, session.decision)
            self._check_thinking(session.client)
            session.check_move(action)
            session.decide(action)
            self._store_moves(session)
            await self._run_bots(session)
        self._trim(session)  # the game grew: the memory held stays bounded

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
            job = session.job()
            if not job.quick:
                await self._await_share(session.client)
            move = await self.thinkers.move(job)
            if self.floors is not None and not job.quick and move.action is not None:
                spec, players = session.seats[seat], len(session.seats)
                kind = (spec, players, session.game.hand_size)
                prior = expected_seconds(spec, players, session.game.rules)
                await self.floors.pad(kind, move.act_seconds, prior)  # as long as a search
            self._count_thinking(session.client, move.seconds)
            who = f"bot {session.seats[seat]} (player_{seat})"
            if move.action is None:
                self._fail(session, f"{who} failed: {move.error}")
                return
            try:
                session.decide(move.action)
            except ValueError as e:  # the engine refused it: nothing changed
                self._fail(session, f"{who} failed: returned illegal action {move.action!r} ({e})")
                return
            self._store_moves(session)

    def _fail(self, session: GameSession, reason: str) -> None:
        session.failed = one_line(reason)
        self.database.end(session.game_id, failed=session.failed)


def _new_session(stored: StoredGame) -> GameSession:
    """A new game's session, its specs checked by seating them (a thread: agents load)."""
    try:
        HumanTable(
            stored.opponents,
            seat=stored.seat,
            seed=stored.seed,
            rules=Rules.from_dict(stored.rules),
            source=SOURCE,
        )
    except SeatError as e:
        raise bad_request(str(e)) from None
    except ValueError as e:  # rules that cannot be dealt
        raise bad_request(str(e)) from None
    return GameSession(stored)
