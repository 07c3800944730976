"""Where ``craits serve`` builds its costly read answers: replays and the games of a record
file, off the server's process, once, in a fair share (issue 43, B: sixteen concurrent
replays from one address put every other user's pages at p50 2.0 s).

An answer is made by :func:`replay_answer`, :func:`games_answer`, :func:`listing_answer`
(the record files' listing), :func:`results_answer` (the result sets) or :func:`cards_answer`
(the report cards' leaderboard) — plain functions returning the HTTP status and the JSON
bytes to send — and :class:`Readers` runs them:

- in ``workers`` **processes** (``spawn``, at the bots' lower priority, ending with their
  server even when it is killed), so that a replay
  of a long game shares neither the GIL nor the event loop with the pages and views
  (``workers == 0``: in a thread of the server, as tests do);
- **once**: an answer is kept (:data:`CACHE_BYTES` of them at most, the least recently
  used dropped), keyed by the file's path, modification time and size and by what was
  asked, so a saved record's frames are built once however often they are watched; and
  requests asking for the same answer while it is being made wait for that one;
- in a **fair share**: at most :data:`PER_CLIENT` answers of one client are made at once;
  its other requests wait for those (another client's do not).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path
from typing import Any

from craits_env.jsonl import JsonlError
from craits_env.records import RecordError

from .errors import one_line
from .requests import ApiError

CACHE_BYTES = 64 * 1024 * 1024
"""Bytes of answers kept at most (the least recently used dropped)."""
MAX_ANSWER_BYTES = 16 * 1024 * 1024
"""An answer larger than this is sent but not kept."""
PER_CLIENT = 2
"""Answers one client may have made at once (its others wait)."""
NICE = 10
Answer = tuple[int, bytes]
"""An HTTP status and the JSON body to send."""


def _error(status: int, message: object) -> Answer:
    return status, json.dumps({"error": one_line(message)}).encode()


def _encode(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def replay_answer(
    path: str, key: str, game: int, seat: int | None, start: int, count: int
) -> Answer:
    """``GET /api/records/replay``'s answer for the record file at ``path`` (its ``key``)."""
    from .record_files import game_record
    from .replays import game_frames

    try:
        frames = game_frames(game_record(path, game, key), seat, start, count)
    except ApiError as e:
        return _error(e.status, e.message)
    return 200, _encode({"file": key, "game": game, **frames})


def games_answer(path: str, key: str) -> Answer:
    """``GET /api/records/games``'s answer for the record file at ``path`` (its ``key``)."""
    from .record_files import summaries

    try:
        return 200, _encode({"file": key, "games": summaries(path)})
    except (RecordError, JsonlError) as e:
        return _error(400, e)


_LIBRARIES: dict[tuple[str, ...], Any] = {}  # a reader process's libraries, by their folders


def _library(games_dir: str, record_dirs: tuple[str, ...], result_dirs: tuple[str, ...]) -> Any:
    """This reader process's :class:`~craits.web.library.Library` of these folders (its
    scans and first-line verdicts kept from request to request)."""
    from .library import Library

    folders = (games_dir, *record_dirs, "|", *result_dirs)
    library = _LIBRARIES.get(folders)
    if library is None:
        library = _LIBRARIES[folders] = Library(
            Path(games_dir), [Path(d) for d in record_dirs], [Path(d) for d in result_dirs]
        )
    return library


def listing_answer(games_dir: str, record_dirs: tuple[str, ...], offset: int, limit: int) -> Answer:
    """``GET /api/records``'s answer, made by a reader process's own
    :class:`~craits.web.library.Library` of the same folders (its scans and first-line
    verdicts kept there: a listing is reused for ``SCAN_TTL`` seconds, so a game saved a
    moment ago is listed within that)."""
    try:
        return 200, _encode(_library(games_dir, record_dirs, ()).record_files(offset, limit))
    except ApiError as e:
        return _error(e.status, e.message)


def results_answer(games_dir: str, result_dirs: tuple[str, ...], offset: int, limit: int) -> Answer:
    """``GET /api/results``'s answer (the result sets), made as :func:`listing_answer`."""
    try:
        return 200, _encode(_library(games_dir, (), result_dirs).result_sets(offset, limit))
    except ApiError as e:
        return _error(e.status, e.message)


def cards_answer(games_dir: str, result_dirs: tuple[str, ...], suite: str) -> Answer:
    """``GET /api/cards``'s answer (the leaderboard of the report cards), made as
    :func:`listing_answer`."""
    try:
        return 200, _encode(_library(games_dir, (), result_dirs).leaderboard(suite))
    except ApiError as e:
        return _error(e.status, e.message)


def _start_reader(parent: int) -> None:
    """A reader process: it ends with its server ``parent`` (even one killed), and runs
    at a lower priority."""
    from .bots import die_with

    die_with(parent)
    with contextlib.suppress(OSError):
        os.nice(NICE)


class Readers:
    """Makes answers as the module docstring says; :meth:`answer` from the event loop."""

    def __init__(self, workers: int = 0, cache_bytes: int = CACHE_BYTES) -> None:
        if workers < 0:
            raise ValueError(f"workers: got {workers}, allowed an int >= 0")
        self.workers = workers
        self.cache_bytes = cache_bytes
        self._pool: Executor | None = None
        self._kept: OrderedDict[Hashable, Answer] = OrderedDict()
        self._kept_bytes = 0
        self._making: dict[Hashable, asyncio.Future[Answer]] = {}
        self._clients: dict[str, asyncio.Semaphore] = {}
        self._waiting: dict[str, int] = {}
        self.made = 0  # answers made (not served from what was kept): for tests, benchmarks

    def start(self) -> None:
        """Start the processes (they start on the first answer otherwise)."""
        if self._pool is None and self.workers:
            self._pool = ProcessPoolExecutor(
                self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_reader,
                initargs=(os.getpid(),),
            )

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    async def answer(
        self,
        client: str,
        key: Hashable,
        make: Callable[..., Answer],
        *args: Any,
        keep: bool = True,
    ) -> Answer:
        """``make(*args)``'s answer, kept under ``key`` (see the module docstring; not
        kept with ``keep=False``: only shared by the requests asking while it is made)."""
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
            return kept
        making = self._making.get(key)
        if making is not None:
            return await asyncio.shield(making)
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._making[key] = future
        try:
            async with self._share(client):
                answer = await self._run(make, *args)
            self.made += 1
            if keep:
                self._keep(key, answer)
            future.set_result(answer)
        except BaseException as e:
            future.set_exception(e)
            future.exception()  # retrieved: no "never retrieved" warning
            raise
        finally:
            del self._making[key]
        return answer

    async def _run(self, make: Callable[..., Answer], *args: Any) -> Answer:
        if not self.workers:
            return await asyncio.to_thread(make, *args)
        self.start()
        assert self._pool is not None
        return await asyncio.get_running_loop().run_in_executor(self._pool, make, *args)

    @contextlib.asynccontextmanager
    async def _share(self, client: str) -> Any:
        gate = self._clients.get(client)
        if gate is None:
            gate = self._clients[client] = asyncio.Semaphore(PER_CLIENT)
        self._waiting[client] = self._waiting.get(client, 0) + 1
        try:
            async with gate:
                yield
        finally:
            self._waiting[client] -= 1
            if not self._waiting[client]:  # nobody of that client left: forgotten
                del self._waiting[client]
                del self._clients[client]

    def _keep(self, key: Hashable, answer: Answer) -> None:
        size = len(answer[1])
        if answer[0] != 200 or size > MAX_ANSWER_BYTES:
            return
        self._kept[key] = answer
        self._kept_bytes += size
        while self._kept_bytes > self.cache_bytes and self._kept:
            _, dropped = self._kept.popitem(last=False)
            self._kept_bytes -= len(dropped[1])


def stamp(path: Path) -> tuple[str, int, int]:
    """What names a file's content: its path, modification time and size."""
    st = path.stat()
    return str(path), st.st_mtime_ns, st.st_size
