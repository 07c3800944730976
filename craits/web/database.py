"""The store of ``craits serve``'s live games: SQLite (the standard library's ``sqlite3``).

A game is stored as what defines it and the actions made in it, never as a snapshot: the
engine and the bots are deterministic (a bot's move depends on the position, its seat and
the number of decisions made: :func:`craits.table.bot_seed`), so replaying the actions
rebuilds the game exactly, its narration included. Every action is written in its own
transaction before the response that shows it is sent, so a server killed at any moment
(SIGKILL, a power cut aside) loses no move a player saw.

============  ======================================================================
``games``     one row per game: ``game_id``, ``token``, ``client`` (the address that
              started it), ``created`` and ``moved`` (Unix seconds), ``definition``
              (JSON: ``opponents``, ``seat``, ``seed`` as a decimal string,
              ``seed_chosen``, ``rules``), ``resigned``, ``failed`` (why a bot stopped
              the game, or ``NULL``), ``finished`` (over, resigned or failed: no longer
              counted against the caps) and ``saved`` (JSON ``{"file", "name"}`` once
              saved, so that saving twice gives the same record)
``actions``   ``(game_id, idx, action)``: every decision of the game in order, the
              person's and the bots'
============  ======================================================================

One server per store: :meth:`GameDatabase.lock` takes an exclusive lock (``flock``) on
``FILE.lock`` beside the store for the life of the process (the kernel drops it when the
process ends, even killed), and a second process asking for it gets a one-line
:class:`StoreError` naming the holder's pid: two servers on one store would each hold
games in memory that the other's moves make stale.

The file is in WAL mode (readers never wait for the writer; a write is durable once its
transaction commits, against a crash of the process) with ``synchronous=NORMAL``.
``PRAGMA user_version`` holds :data:`SCHEMA_VERSION`; a file of another version, or one
that is not SQLite, is refused in one line (:class:`StoreError`). One connection is shared
under a lock: every statement is short (a row, or the actions of one game).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    game_id    TEXT PRIMARY KEY,
    token      TEXT NOT NULL,
    client     TEXT NOT NULL,
    created    REAL NOT NULL,
    moved      REAL NOT NULL,
    definition TEXT NOT NULL,
    resigned   INTEGER NOT NULL DEFAULT 0,
    failed     TEXT,
    finished   INTEGER NOT NULL DEFAULT 0,
    saved      TEXT
);
CREATE INDEX IF NOT EXISTS games_live ON games (finished, moved);
CREATE INDEX IF NOT EXISTS games_client ON games (client, finished, moved);
CREATE TABLE IF NOT EXISTS actions (
    game_id TEXT NOT NULL REFERENCES games (game_id) ON DELETE CASCADE,
    idx     INTEGER NOT NULL,
    action  INTEGER NOT NULL,
    PRIMARY KEY (game_id, idx)
) WITHOUT ROWID;
"""
MEMORY = ":memory:"
"""The path of a store held in memory only (tests; nothing survives the process)."""
LOCK_SUFFIX = ".lock"
_LOCKS: dict[str, int] = {}  # store file -> descriptor of its lock, held by this process
_LOCKS_GUARD = threading.Lock()


class StoreError(ValueError):
    """A store file that cannot be used (the message names it and why)."""


@dataclass
class StoredGame:
    """One game as the store holds it."""

    game_id: str
    token: str
    client: str
    opponents: tuple[str, ...]
    seat: int
    seed: int
    seed_chosen: bool
    rules: dict[str, Any]
    created: float = 0.0
    moved: float = 0.0
    resigned: bool = False
    failed: str | None = None
    saved: dict[str, str] | None = None
    actions: list[int] = field(default_factory=list)

    def definition(self) -> str:
        return json.dumps(
            {
                "opponents": list(self.opponents),
                "seat": self.seat,
                "seed": str(self.seed),
                "seed_chosen": self.seed_chosen,
                "rules": self.rules,
            },
            sort_keys=True,
        )


class GameDatabase:
    """The games of one server in the SQLite file ``path`` (see the module docstring)."""

    def __init__(self, path: Path | str, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        where = str(path)
        if where != MEMORY:
            Path(where).parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(where, check_same_thread=False, isolation_level=None)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                conn.close()
                raise StoreError(
                    f"store {where}: schema version {version}, this craits reads "
                    f"{SCHEMA_VERSION} (a store of another version)"
                )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=5000")
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.DatabaseError as e:
            raise StoreError(f"store {where}: not a Craits game store ({e})") from None
        self._conn = conn

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def lock(self) -> None:
        """Hold the store for this process (see the module docstring): :class:`StoreError`
        if another process holds it. Held until the process ends; taken again by the same
        process at no cost (a test's second application on one store)."""
        where = str(self.path)
        if where == MEMORY:
            return
        import fcntl  # POSIX; craits serve runs there

        path = Path(where).resolve()
        key = str(path)
        with _LOCKS_GUARD:
            if key in _LOCKS:
                return
            fd = os.open(f"{key}{LOCK_SUFFIX}", os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
                os.close(fd)
                raise StoreError(
                    f"store {where} is in use by another craits serve (pid {holder}): one "
                    "server per store (stop it, or give this one --store or --games of its own)"
                ) from None
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            _LOCKS[key] = fd

    def _write(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                for sql, params in statements:
                    conn.execute(sql, params)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    # ------------------------------------------------------------------ writes

    def add(self, game: StoredGame) -> None:
        """Store a new game with the actions it starts with (the bots' first moves)."""
        now = self._clock()
        game.created = game.moved = now
        statements: list[tuple[str, Sequence[Any]]] = [
            (
                "INSERT INTO games (game_id, token, client, created, moved, definition, resigned,"
                " failed, finished) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)",
                (
                    game.game_id,
                    game.token,
                    game.client,
                    now,
                    now,
                    game.definition(),
                    game.failed,
                    int(game.failed is not None),
                ),
            )
        ]
        statements += self._action_rows(game.game_id, 0, game.actions)
        self._write(statements)

    def add_actions(
        self, game_id: str, start: int, actions: Sequence[int], finished: bool = False
    ) -> None:
        """Append ``actions`` (the first at index ``start``); ``finished``: the game ended."""
        statements = self._action_rows(game_id, start, actions)
        update = "UPDATE games SET moved = ?, finished = MAX(finished, ?) WHERE game_id = ?"
        statements.append((update, (self._clock(), int(finished), game_id)))
        self._write(statements)

    def end(self, game_id: str, *, resigned: bool = False, failed: str | None = None) -> None:
        """The game stopped: resigned by the person, or stopped by a bot (``failed``)."""
        self._write(
            [
                (
                    "UPDATE games SET resigned = MAX(resigned, ?), failed = COALESCE(?, failed),"
                    " finished = 1, moved = ? WHERE game_id = ?",
                    (int(resigned), failed, self._clock(), game_id),
                )
            ]
        )

    def set_saved(self, game_id: str, saved: dict[str, str]) -> None:
        self._write(
            [
                (
                    "UPDATE games SET saved = ? WHERE game_id = ?",
                    (json.dumps(saved, sort_keys=True), game_id),
                )
            ]
        )

    def forget_before(self, moved: float) -> int:
        """Delete the games that last moved before ``moved``; how many."""
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            cursor = conn.execute("DELETE FROM games WHERE moved < ?", (moved,))
            conn.execute("COMMIT")
            return int(cursor.rowcount)

    @staticmethod
    def _action_rows(
        game_id: str, start: int, actions: Sequence[int]
    ) -> list[tuple[str, Sequence[Any]]]:
        return [
            (
                "INSERT INTO actions (game_id, idx, action) VALUES (?, ?, ?)",
                (game_id, start + i, int(a)),
            )
            for i, a in enumerate(actions)
        ]

    # ------------------------------------------------------------------ reads

    def load(self, game_id: str) -> StoredGame | None:
        """The game ``game_id`` with its actions, or ``None`` if the store has none."""
        with self._lock:
            row = self._conn.execute(
                "SELECT game_id, token, client, created, moved, definition, resigned, failed,"
                " saved FROM games WHERE game_id = ?",
                (game_id,),
            ).fetchone()
            if row is None:
                return None
            rows = self._conn.execute(
                "SELECT action FROM actions WHERE game_id = ? ORDER BY idx", (game_id,)
            )
            actions = [a for (a,) in rows]
        d = json.loads(row[5])
        return StoredGame(
            game_id=row[0],
            token=row[1],
            client=row[2],
            opponents=tuple(d["opponents"]),
            seat=int(d["seat"]),
            seed=int(d["seed"]),
            seed_chosen=bool(d["seed_chosen"]),
            rules=d["rules"],
            created=row[3],
            moved=row[4],
            resigned=bool(row[6]),
            failed=row[7],
            saved=None if row[8] is None else json.loads(row[8]),
            actions=actions,
        )

    def live(self, since: float, client: str | None = None) -> int:
        """The games not finished that moved at or after ``since`` (of ``client``, if given)."""
        sql = "SELECT COUNT(*) FROM games WHERE finished = 0 AND moved >= ?"
        params: tuple[Any, ...] = (since,)
        if client is not None:
            sql, params = sql + " AND client = ?", (since, client)
        with self._lock:
            return int(self._conn.execute(sql, params).fetchone()[0])

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM games").fetchone()[0])
