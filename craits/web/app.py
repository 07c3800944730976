"""The web application of ``craits serve``: its pages and its JSON API (FastAPI).

Pages (plain HTML, JavaScript and CSS from ``craits/web/static``, no build step): ``/``
(a new game), ``/play`` (your seat at the table), ``/watch`` (a record stepped through),
``/compare`` (a tournament's leaderboard).

The API (docs/interface.md, "Web API"). Every error is ``{"error": "one line"}`` with a
4xx or 503 status, and changes nothing.

=======================================  =================================================
``POST /api/games``                      ``{"opponents": [SPEC…], "seat", "seed",
                                         "rules", "players"}`` (all but ``opponents``
                                         optional) → 201 ``{"game_id", "token"}``
``GET /api/games/{id}?token=T``          the seat view (:mod:`craits.web.views`);
                                         ``&since=K``: the events from index ``K``
``POST /api/games/{id}/actions``         ``{"token", "action", "decision"}`` → the new
                                         seat view, the bots having moved; a
                                         ``decision`` not the game's now: 409
                                         ``{"error", "decision", "view"}``, not applied
``POST /api/games/{id}/resign``          ``{"token"}`` → the seat view, the game ended
``POST /api/games/{id}/save``            ``{"token"}`` → ``{"file", "name"}`` (a game
                                         over or resigned)
``GET /api/specs``, ``GET /api/rules``   what a new game may take
``GET /api/records``                     the record files, newest first: ``{"files": […],
                                         "offset", "limit", "more", "complete"}``
                                         (``?offset=&limit=``, a page)
``GET /api/records/games?file=KEY``      the games of one file
``GET /api/records/replay?file=KEY``     ``&game=I&seat=K&from=F&count=C``: the frames
                                         of one game, ``C`` (at most 2000) from ``F``
``GET /api/results``                     the result sets: ``{"results": […], …}`` (a page)
``GET /api/results/table?key=KEY``       one ``results.json``, titled
``GET /api/results/chart?key=KEY``       its ``results.png``
``GET /api/cards?suite=v1``              the benchmark's leaderboard: every report card
                                         (``card.json``) under the results folders
=======================================  =================================================

Views and replays are sent as they are built (plain JSON values: no re-encoding).
Statuses: 400 malformed body or bad value (:mod:`craits.web.inputs` bounds what a client
may ask for); 403 missing or wrong token (``?token=``, the body's ``token`` or
``Authorization: Bearer T``); 404 unknown game, file or route; 408 a body too slow, 413 a
body too large, 429 too many requests or new games from one client
(:mod:`craits.web.limits`); 409 a move not legal now (or the game over), a save before
the end; 503 the server holds its maximum of games (or connections); a 500 is a fault of
the server, still one line. Every error line is bounded in :mod:`craits.web.errors`.

Live games (:mod:`craits.web.sessions`) are changed on the event loop only, and stored in
SQLite (:mod:`craits.web.database`) as they move, so a restarted server goes on with them;
their bots think in other processes (:mod:`craits.web.bots`), so a search holds neither a
request thread nor the GIL of the server. Replays, a record file's games and the listings
(the record files, the result sets, the report cards' leaderboard) are built by the readers
(:mod:`craits.web.readers`: in other processes with ``read_workers``, each answer once, a
fair share per client; without, in the server's thread pool, a folder's scan shared by the
requests that wait for it); one ``results.json`` and its chart are read in a thread. Each
game serves its moves, resigning and saving one after the other.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from fastapi import Body, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from craits_env import __version__, options
from craits_env.rules import Rules

from .bots import MOVE_SECONDS, Thinkers
from .database import GameDatabase
from .errors import error_response, one_line
from .inputs import (
    bearer_token,
    check_action_body,
    check_new_game,
    check_new_game_body,
    with_token,
)
from .library import PAGE_SIZE, SCAN_TTL, Library, clean_temporary
from .limits import (
    BODY_TIMEOUT,
    MAX_BODY_BYTES,
    BodyLimits,
    ClientLimits,
    ClientRateLimit,
    JsonHostCheck,
    RequestText,
    client_of,
)
from .readers import (
    Readers,
    cards_answer,
    games_answer,
    listing_answer,
    replay_answer,
    results_answer,
    stamp,
)
from .replays import FRAMES_PAGE
from .requests import (
    ApiError,
    StaleDecision,
    allowed_specs,
    parse_action_body,
    parse_new_game,
    table_specs,
    token_of,
)
from .sessions import (
    CLIENT_GAMES,
    CLIENT_THINK,
    FULL_SHARE,
    HELD_DECISIONS,
    IDLE_SECONDS,
    KEEP_SECONDS,
    MAX_GAMES,
    NEARLY_FULL,
    SessionStore,
    StoreLimits,
)
from .views import seat_view, view_body

JsonBody = Annotated[Any, Body()]
"""A request body read as any JSON value: its shape is checked by the handler, in one line."""
STORE_FILE = "live-games.sqlite3"
"""The live games' store in ``games_dir`` unless ``Settings.store`` says otherwise."""
STATIC = Path(__file__).resolve().parent / "static"  # package data
PAGES = {
    "/": "index.html",
    "/play": "play.html",
    "/watch": "watch.html",
    "/compare": "compare.html",
}
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
}


@dataclass(frozen=True)
class Settings:
    """What one server holds (``craits serve``'s options)."""

    games_dir: Path = Path("craits-games")
    """where saved games are written (and listed from)"""
    record_dirs: Sequence[Path] = ()
    """folders whose record files the Watch page lists"""
    result_dirs: Sequence[Path] = ()
    """folders whose ``results.json`` the Compare page lists"""
    store: Path | str | None = None
    """the SQLite file of the live games (``None``: ``live-games.sqlite3`` in ``games_dir``;
    ``":memory:"``: none survives the process)"""
    max_games: int = MAX_GAMES
    """games in play at once, over all clients (503 beyond), and games held in memory"""
    nearly_full: float = NEARLY_FULL
    """the share of ``max_games`` in play from which a client may hold only ``full_share``"""
    full_share: float = FULL_SHARE
    """the share of ``max_games`` one client may hold once the server is nearly full"""
    idle_seconds: float = IDLE_SECONDS
    """a game that has not moved for this long stops counting against the caps"""
    keep_seconds: float = KEEP_SECONDS
    """a game that has not moved for this long leaves the store"""
    held_decisions: int = HELD_DECISIONS
    """decisions of the games held in memory, in all (the least recently used leave memory
    beyond, not the store)"""
    client_games: int = CLIENT_GAMES
    """games in play one client may hold (429 beyond; 0: no cap)"""
    client_think: float = CLIENT_THINK
    """seconds its bots may think in any minute for one client's games (429; 0: no cap)"""
    bot_workers: int = 0
    """processes the bots think in (0: a thread of the server; ``craits serve``: one a core)"""
    read_workers: int = 0
    """processes replays, record files' games and listings are built in (0: a thread of the
    server; ``craits serve``: one; :mod:`craits.web.readers`)"""
    move_seconds: float = MOVE_SECONDS
    """seconds a bot move may take (in a process) before its game stops"""
    even_timing: bool = True
    """a searching bot's move answered no sooner than its recent searches took
    (:mod:`craits.web.timing`: its latency tells nothing of its hand)"""
    agents: Sequence[str] = ()
    """specs naming a file or module that clients may seat (``ppo:PATH``, ``MODULE:ATTR``)"""
    allowed_hosts: Sequence[str] | None = None
    """``Host`` headers served (``None``: any); loopback names when bound to loopback"""
    client_limits: ClientLimits | None = None
    """requests and new games per client (``None``: none; ``craits serve`` sets them)"""
    max_body_bytes: int = MAX_BODY_BYTES
    """bytes of a request body at most (413 beyond)"""
    body_timeout: float = BODY_TIMEOUT
    """seconds a request body may take to arrive (408 beyond)"""


_error = error_response  # every error line is bounded there (craits.web.errors)


def _validation_line(exc: RequestValidationError) -> str:
    errors = exc.errors()
    first = errors[0] if errors else {}
    if first.get("type") == "json_invalid":
        ctx = first.get("ctx") or {}
        return f"malformed JSON body: {ctx.get('error', 'not valid JSON')}"
    where = ".".join(str(x) for x in first.get("loc", ()) if x != "body")
    return f"{where or 'request'}: {first.get('msg', 'invalid')}"


def create_app(settings: Settings | None = None) -> FastAPI:
    """The application (see the module docstring) for ``settings``."""
    settings = settings or Settings()
    database = GameDatabase(settings.store or Path(settings.games_dir) / STORE_FILE)
    database.lock()  # one server per store (a second one: StoreError, one line)
    clean_temporary(settings.games_dir)  # what a save killed mid-write left
    thinkers = Thinkers(settings.bot_workers, settings.move_seconds)
    readers = Readers(settings.read_workers)
    store = SessionStore(
        database,
        thinkers,
        StoreLimits(
            max_games=settings.max_games,
            nearly_full=settings.nearly_full,
            full_share=settings.full_share,
            idle_seconds=settings.idle_seconds,
            keep_seconds=settings.keep_seconds,
            client_games=settings.client_games,
            client_think=settings.client_think,
            held_decisions=settings.held_decisions,
        ),
        floors=settings.even_timing,
    )
    library = Library(settings.games_dir, settings.record_dirs, settings.result_dirs)
    extra_specs = tuple(settings.agents)
    limits = settings.client_limits or ClientLimits()  # who a client is (its network)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if settings.bot_workers:
            thinkers.start()  # the processes start and warm up while the server starts
        readers.start()
        yield
        thinkers.close()
        readers.close()

    app = FastAPI(
        title="Craits",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=lifespan,
    )
    app.state.store = store
    app.state.readers = readers
    app.state.library = library
    # the request layer (craits.web.limits), outermost last: rates, then Host, then bodies,
    # then the text of every field (its body read within the body's limits)
    app.add_middleware(RequestText)
    app.add_middleware(BodyLimits, max_bytes=settings.max_body_bytes, timeout=settings.body_timeout)
    if settings.allowed_hosts is not None:
        app.add_middleware(JsonHostCheck, allowed_hosts=list(settings.allowed_hosts))
    if settings.client_limits is not None:
        app.add_middleware(ClientRateLimit, limits=settings.client_limits)

    @app.middleware("http")
    async def headers(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        if request.url.path.startswith("/api/"):
            response.headers["Cache-Control"] = "no-store"
        return response

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return _error(exc.status, exc.message)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(400, _validation_line(exc))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 404:
            return _error(404, f"not found: {request.url.path}")
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def failed(request: Request, exc: Exception) -> JSONResponse:
        return _error(500, f"internal error ({type(exc).__name__}); the server goes on")

    # ------------------------------------------------------------------ pages

    def page(name: str) -> Any:
        def serve_page() -> FileResponse:
            return FileResponse(STATIC / name, media_type="text/html")

        return serve_page

    for route, name in PAGES.items():
        app.add_api_route(route, page(name), methods=["GET"], include_in_schema=False)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    # ------------------------------------------------------------------ games

    @app.post("/api/games", status_code=201)
    async def new_game(request: Request, body: JsonBody = None) -> dict[str, str]:
        check_new_game_body(body, extra_specs)
        asked = check_new_game(parse_new_game(body, extra_specs), extra_specs)
        session = await store.create(asked, client_of(request.scope, limits))
        return {"game_id": session.game_id, "token": session.token}

    @app.get("/api/games/{game_id}")
    async def get_game(
        request: Request, game_id: str, token: str | None = None, since: int | None = None
    ) -> Any:
        session = await store.get(game_id, token or bearer_token(request.headers))
        return Response(view_body(session, since), media_type="application/json")

    @app.post("/api/games/{game_id}/actions")
    async def act(request: Request, game_id: str, body: JsonBody = None) -> Any:
        check_action_body(body)
        token, action, decision = parse_action_body(with_token(body, request.headers))
        session = await store.get(game_id, token)
        try:
            await store.act(session, action, decision)
        except StaleDecision as e:  # a duplicate or stale move: the view it should see now
            return JSONResponse(
                {"error": one_line(e.message), "decision": e.current, "view": seat_view(session)},
                status_code=409,
            )
        return Response(view_body(session), media_type="application/json")

    @app.post("/api/games/{game_id}/resign")
    async def resign(request: Request, game_id: str, body: JsonBody = None) -> Any:
        session = await store.get(game_id, token_of(with_token(body, request.headers)))
        await store.resign(session)
        return Response(view_body(session), media_type="application/json")

    @app.post("/api/games/{game_id}/save")
    async def save(request: Request, game_id: str, body: JsonBody = None) -> Any:
        session = await store.get(game_id, token_of(with_token(body, request.headers)))
        return await store.save(session, library.save)

    @app.get("/api/specs")
    def specs() -> dict[str, Any]:
        return {"specs": [*table_specs(), *extra_specs], "allowed": allowed_specs(extra_specs)}

    @app.get("/api/rules")
    def rules() -> dict[str, Any]:
        default = Rules().to_dict()
        kinds = options.field_types(Rules)
        return {
            "options": [
                {
                    "name": f.name,
                    "default": default[f.name],
                    "allowed": options.allowed(kinds[f.name]),
                }
                for f in dataclasses.fields(Rules)
            ]
        }

    # ------------------------------------------------------------------ records, results

    async def listed(request: Request, key: tuple[Any, ...], make: Any, *args: Any) -> Any:
        """A listing of folders made by the readers: off this process, the same page asked
        at once made once (a scan is reused for ``SCAN_TTL`` seconds), a fair share."""
        now = int(time.monotonic() / SCAN_TTL)
        client = client_of(request.scope, limits)
        status, body = await readers.answer(client, (*key, now), make, *args, keep=False)
        return Response(body, status_code=status, media_type="application/json")

    games_dir = str(settings.games_dir)
    record_dirs = tuple(str(d) for d in settings.record_dirs)
    result_dirs = tuple(str(d) for d in settings.result_dirs)

    @app.get("/api/records")
    async def records(request: Request, offset: int = 0, limit: int = PAGE_SIZE) -> Any:
        if not readers.workers:  # (in a thread: this library, its scans and verdicts)
            return await asyncio.to_thread(library.record_files, offset, limit)
        key = ("records", offset, limit)
        return await listed(request, key, listing_answer, games_dir, record_dirs, offset, limit)

    async def read(request: Request, file: str, kind: str, make: Any, *args: Any) -> Response:
        """The answer ``make(path, file, *args)`` for the record file ``file``, made by the
        readers (craits.web.readers: off this process, once, a fair share per client)."""
        path = await asyncio.to_thread(library.record_path, file)
        key = (kind, *stamp(path), file, *args)
        client = client_of(request.scope, limits)
        status, body = await readers.answer(client, key, make, str(path), file, *args)
        return Response(body, status_code=status, media_type="application/json")

    @app.get("/api/records/games")
    async def record_games(request: Request, file: str) -> Response:
        return await read(request, file, "games", games_answer)

    @app.get("/api/records/replay")
    async def record_replay(
        request: Request,
        file: str,
        game: int = 1,
        seat: int | None = None,
        start: int = Query(0, alias="from"),
        count: int = FRAMES_PAGE,
    ) -> Response:
        if start < 0 or not 1 <= count <= FRAMES_PAGE:
            raise ApiError(
                400,
                f"from: got {start}, count: got {count}; allowed from >= 0 and "
                f"count 1 to {FRAMES_PAGE}",
            )
        return await read(request, file, "replay", replay_answer, game, seat, start, count)

    @app.get("/api/results")
    async def results(request: Request, offset: int = 0, limit: int = PAGE_SIZE) -> Any:
        if not readers.workers:
            return await asyncio.to_thread(library.result_sets, offset, limit)
        key = ("results", offset, limit)
        return await listed(request, key, results_answer, games_dir, result_dirs, offset, limit)

    @app.get("/api/results/table")
    def result_table(key: str) -> dict[str, Any]:
        return library.results(key)

    @app.get("/api/cards")
    async def leaderboard(request: Request, suite: str = "v1") -> Any:
        if not readers.workers:
            return JSONResponse(await asyncio.to_thread(library.leaderboard, suite))
        key = ("cards", suite)
        return await listed(request, key, cards_answer, games_dir, result_dirs, suite)

    @app.get("/api/results/chart")
    def result_chart(key: str) -> FileResponse:
        return FileResponse(library.chart(key), media_type="image/png")

    return app
