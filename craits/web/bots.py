"""Where ``craits serve``'s bots think: off the server's event loop and its request threads.

The server never runs a bot itself. Each bot move is a :class:`Job` — what defines the game
and the actions made so far — handed to a :class:`Thinkers` pool, which answers with the
move (an action id, not applied) or why there is none. A bot's move depends on the
position alone (:func:`craits.table.bot_seed`), so any thinker can answer any job: it
rebuilds the table from the job (and keeps the last :data:`CACHED_TABLES` tables it built,
to append the new actions instead of replaying them all).

- ``workers > 0``: that many **processes** (``spawn``), each at a lower priority
  (:data:`NICE`), so the server's process — pages, views, listings — gets a core first
  and never shares a GIL with a search. Each one warms the compiled search up before it
  takes a job. A move that takes longer than ``move_seconds`` stops its process (a new
  one replaces it) and the job fails with a one-line reason; the game stops as with a
  faulty bot.
- ``workers == 0``: one thread of the server's process (tests, a one-person server).

Quick bots (:data:`QUICK_SPECS`: the heuristics, about a millisecond of plain Python a
move) are always thought of by that thread, so a move against ``expert`` never waits
behind somebody's search; a network's forward pass (``champion``) is thought of in the
processes with the searches.

Jobs wait in a :class:`FairQueue`: one queue per client (by address) served in turn, so a
client with eighty thinking games delays another client's bots by one move, not by
eighty.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import multiprocessing
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from craits.agents.specs import BUILTIN_TABLE
from craits_env.rules import Rules

MOVE_SECONDS = 120.0
"""Seconds a bot move may take before its thinker is stopped (``craits serve --move-seconds``;
the first ``pimc`` move of a fresh install compiles the search, ~20 s)."""
NICE = 10
"""How much lower the thinkers' priority is than the server's (``os.nice``)."""
CACHED_TABLES = 64
"""Tables a thinker keeps between moves (a game's next move then replays nothing)."""
START_SECONDS = 300.0
"""Seconds a new thinker process may take to start and warm up."""
SHARE_SECONDS = 30.0
"""Seconds a bot move may take while another client's jobs wait for a thinker: past it the
move stops (its thinker replaced, the game stopped with a one-line reason) and the thinker
goes to the next client (``craits serve --move-seconds`` bounds a move nobody waits behind)."""
POLL_SECONDS = 0.25
"""How often a thinking move is looked at (its time, whether others wait)."""


@dataclass(frozen=True)
class Job:
    """One bot move to think of: the game's definition and every action made so far."""

    game_id: str
    client: str
    opponents: tuple[str, ...]
    seat: int
    seed: int
    rules: dict[str, Any]
    actions: tuple[int, ...]
    quick: bool = False
    """a bot that answers in about a millisecond (:func:`is_quick`): thought of in the
    server's own process, never behind a search"""


@dataclass(frozen=True)
class Move:
    """A thinker's answer: ``action`` (``None`` if there is none), ``error`` (one line, why
    not), ``seconds`` spent, and of them ``act_seconds`` in the agent's ``act`` (the part
    that may depend on its hand; the rest rebuilt the table: public)."""

    action: int | None
    error: str | None
    seconds: float
    act_seconds: float = 0.0


NETWORK_SPECS = frozenset({"champion"})
"""Quick specs that run a network (a forward pass): thought of in the bot processes with
the searches, never in the server's (issue 43, E: forty ``champion`` games from four
addresses put others' pages at p95 617 ms)."""
QUICK_SPECS = frozenset(e.name for e in BUILTIN_TABLE if e.quick) - NETWORK_SPECS
"""Specs whose moves take about a millisecond of plain Python (the heuristics: no search,
no network): thought of in the server's process (the rows of the spec table marked
``quick``, but :data:`NETWORK_SPECS`)."""


def is_quick(spec: str) -> bool:
    """Whether a bot of ``spec`` is one of :data:`QUICK_SPECS` (without an argument)."""
    return spec in QUICK_SPECS


class BotTimeout(Exception):
    """A bot move took longer than the pool's ``move_seconds`` (or its share while other
    clients' jobs waited: ``preempted``)."""

    def __init__(self, preempted: bool = False) -> None:
        super().__init__()
        self.preempted = preempted


# ----------------------------------------------------------------------------- thinking


class _Tables:
    """A thinker's recent tables, by game, rebuilt from a job when missing or behind."""

    def __init__(self) -> None:
        self._tables: OrderedDict[str, Any] = OrderedDict()

    def table(self, job: Job) -> Any:
        from craits.table import HumanTable

        table = self._tables.pop(job.game_id, None)
        done = len(table.actions) if table is not None else 0
        if table is None or tuple(table.actions) != job.actions[:done]:
            table = HumanTable(
                job.opponents,
                seat=job.seat,
                seed=job.seed,
                rules=Rules.from_dict(job.rules),
                source="craits serve",
            )
            table.start()
            done = 0
        for action in job.actions[done:]:
            table.decide(action)
        self._tables[job.game_id] = table
        while len(self._tables) > CACHED_TABLES:
            self._tables.popitem(last=False)
        return table

    def think(self, job: Job) -> Move:
        start = time.perf_counter()
        acting = start
        try:
            table = self.table(job)
            acting = time.perf_counter()
            action: int | None = table.bot_move()
            error = None
        except Exception as e:  # a faulty bot stops its game, not the thinker
            action, error = None, f"{type(e).__name__}: {e}"
            self._tables.pop(job.game_id, None)
        end = time.perf_counter()
        return Move(action, error, end - start, end - acting)


def _warm_up() -> None:
    """Compile (or load from numba's cache) the search before the first job."""
    from craits.agents.specs import make_agent
    from craits_env.engine import Game
    from craits_env.public import PublicGame

    game = Game(2, Rules(hand_sizes=(8,)), seed=0)
    public = PublicGame(game)
    agent = make_agent("pimc:8", 0, num_players=2, rules=game.rules)
    for _ in range(40):  # a few decisions: at least one with a choice (a searched one)
        if game.is_over:
            break
        public.apply(agent.act(public.views[game.current_player]))


PARENT_POLL = 1.0
"""Seconds between a thinker's checks that its server still runs (where the kernel cannot
be asked to end it with its parent)."""


def die_with(parent: int) -> None:
    """End this process with the server ``parent``, even when that one is killed
    (``SIGKILL`` gives it no time to stop its thinkers): on Linux the kernel sends
    ``SIGKILL`` when the parent ends (``PR_SET_PDEATHSIG``); elsewhere a thread checks
    every :data:`PARENT_POLL` seconds. A parent already gone: at once."""
    import ctypes
    import signal

    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL)
        os.kill(os.getpid(), signal.SIGKILL)  # at once, whatever the main thread computes

    threading.Thread(target=watch, daemon=True, name="craits-parent-watch").start()


def _worker(conn: Connection, parent: int | None = None) -> None:
    """A thinker process: warm up, say so, then answer jobs until the pipe closes (or its
    server ``parent`` ends)."""
    if parent is not None:
        die_with(parent)
    with contextlib.suppress(OSError):
        os.nice(NICE)
    with contextlib.suppress(Exception):  # a thinker that cannot search still plays the rest
        _warm_up()
    tables = _Tables()
    conn.send("ready")
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):  # the server has gone: so does its thinker
            return
        if job is None:
            return
        conn.send(tables.think(job))


# ----------------------------------------------------------------------------- the queue


class FairQueue:
    """Jobs by client, served in turn (one job of each waiting client in rotation)."""

    def __init__(self) -> None:
        self._queues: OrderedDict[str, deque[tuple[Job, Future[Move]]]] = OrderedDict()
        self._ready = threading.Condition()
        self._closed = False

    def put(self, job: Job, future: Future[Move]) -> None:
        with self._ready:
            self._queues.setdefault(job.client, deque()).append((job, future))
            self._ready.notify()

    def get(self) -> tuple[Job, Future[Move]] | None:
        """The next job (the client waiting longest goes first), or ``None`` once closed."""
        with self._ready:
            while not self._queues and not self._closed:
                self._ready.wait()
            if self._closed:
                return None
            client, queue = next(iter(self._queues.items()))
            item = queue.popleft()
            del self._queues[client]
            if queue:  # the client's next job waits behind every other client's
                self._queues[client] = queue
            return item

    def __len__(self) -> int:
        with self._ready:
            return sum(len(q) for q in self._queues.values())

    def others_waiting(self, client: str) -> bool:
        """Whether a client other than ``client`` has a job waiting."""
        with self._ready:
            return any(c != client and q for c, q in self._queues.items())

    def close(self) -> list[Future[Move]]:
        """Stop handing out jobs; the futures of those still waiting."""
        with self._ready:
            self._closed = True
            waiting = [f for q in self._queues.values() for _, f in q]
            self._queues.clear()
            self._ready.notify_all()
            return waiting


# ----------------------------------------------------------------------------- the pool


class _Process:
    """One thinker process and the pipe to it."""

    def __init__(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(
            target=_worker, args=(child, os.getpid()), daemon=True, name="craits-thinker"
        )
        self.process.start()
        child.close()
        if not self.conn.poll(START_SECONDS) or self.conn.recv() != "ready":
            self.stop()
            raise RuntimeError("a bot thinker process did not start")

    def think(
        self,
        job: Job,
        seconds: float,
        share: float = math.inf,
        others_waiting: Callable[[], bool] = lambda: False,
    ) -> Move:
        """The move for ``job``: :class:`BotTimeout` past ``seconds``, or past ``share``
        while ``others_waiting()``."""
        self.conn.send(job)
        start = time.monotonic()
        while not self.conn.poll(POLL_SECONDS):
            took = time.monotonic() - start
            if took > seconds:
                raise BotTimeout
            if took > share and others_waiting():
                raise BotTimeout(preempted=True)
        move: Move = self.conn.recv()
        return move

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.close()
        self.process.terminate()
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)


class Thinkers:
    """The pool of thinkers (see the module docstring); :meth:`move` from the event loop."""

    def __init__(
        self,
        workers: int = 0,
        move_seconds: float = MOVE_SECONDS,
        share_seconds: float = SHARE_SECONDS,
    ) -> None:
        if workers < 0:
            raise ValueError(f"workers: got {workers}, allowed an int >= 0")
        if not move_seconds > 0:
            raise ValueError(f"move_seconds: got {move_seconds}, allowed a number > 0")
        if not share_seconds > 0:
            raise ValueError(f"share_seconds: got {share_seconds}, allowed a number > 0")
        self.workers = workers
        self.move_seconds = move_seconds
        self.share_seconds = share_seconds
        self.queue = FairQueue()  # the processes' jobs
        self.quick = FairQueue()  # the jobs of quick bots (and every job with workers=0)
        self._threads: list[threading.Thread] = []
        self._processes: list[_Process | None] = [None] * workers
        self._lock = threading.Lock()
        self._started = False

    def start(self) -> None:
        """Start the thinkers (once; :meth:`move` starts them if need be): the processes
        start and warm up now, not at the first move."""
        with self._lock:
            if self._started:
                return
            self._started = True
            lanes = [(self._serve_here, ())] + [
                (self._serve_process, (i,)) for i in range(self.workers)
            ]
            for n, (target, args) in enumerate(lanes):
                thread = threading.Thread(
                    target=target, args=args, daemon=True, name=f"craits-bots-{n}"
                )
                thread.start()
                self._threads.append(thread)

    def _serve_here(self) -> None:
        """The in-process lane: quick bots' moves (every move when ``workers == 0``)."""
        tables = _Tables()
        while (item := self.quick.get()) is not None:
            job, future = item
            if future.set_running_or_notify_cancel():
                future.set_result(tables.think(job))

    def _serve_process(self, i: int) -> None:
        """Lane ``i``: one thinker process, replaced when it dies or overruns a move."""
        with contextlib.suppress(Exception):  # a process that cannot start: tried per job
            self._processes[i] = _Process()
        while (item := self.queue.get()) is not None:
            job, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                process = self._processes[i]
                if process is None or not process.process.is_alive():
                    process = self._processes[i] = _Process()
                started = time.monotonic()
                try:
                    waiting = functools.partial(self.queue.others_waiting, job.client)
                    move = process.think(job, self.move_seconds, self.share_seconds, waiting)
                    future.set_result(move)
                except BotTimeout as e:
                    self._processes[i] = None
                    process.stop()
                    if e.preempted:
                        late = (
                            f"took longer than the {self.share_seconds:g} s a move may take "
                            "while other players' bots wait; stopped"
                        )
                    else:
                        late = f"took longer than the server's {self.move_seconds:g} s a move"
                    future.set_result(Move(None, late, time.monotonic() - started))
                except (EOFError, OSError) as e:  # the process died: a new one next time
                    self._processes[i] = None
                    process.stop()
                    future.set_result(Move(None, f"its thinker stopped ({type(e).__name__})", 0.0))
            except BaseException as e:  # a thinker that cannot start: the job fails, not the lane
                if not future.done():
                    future.set_result(Move(None, f"no thinker available ({e})", 0.0))
        process = self._processes[i]
        if process is not None:
            process.stop()

    async def move(self, job: Job) -> Move:
        """The move for ``job``, thought of by a thinker (awaiting it holds no thread)."""
        self.start()
        future: Future[Move] = Future()
        lane = self.quick if job.quick or not self.workers else self.queue
        lane.put(job, future)
        return await asyncio.wrap_future(future)

    def close(self) -> None:
        """Stop the thinkers (jobs still waiting fail with a one-line reason)."""
        for future in [*self.queue.close(), *self.quick.close()]:
            if future.set_running_or_notify_cancel():
                future.set_result(Move(None, "the server is stopping", 0.0))
        for process in self._processes:  # a move in progress is not waited for
            if process is not None:
                process.stop()
        for thread in self._threads:
            thread.join(10)
