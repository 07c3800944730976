"""Load tests of ``craits serve``: many simultaneous games, and one client's searching bots.

The default run measures, on this machine (the client and the server share its cores):

* **anchor, in process** — the same games played through the server's own
  :class:`craits.web.sessions.SessionStore` (its bots in a thread: ``Thinkers(0)``, its
  store in memory) and the seat view, no HTTP: the time per move (the person's move, the
  bots' replies, the narration, the view);
* **one client** — a few games one after another over HTTP to ``craits serve`` (a separate
  process on 127.0.0.1): the latency of a move with nothing else going on;
* **load** — ``--games`` games (default 128) started at once and then played at once, each
  by its own asynchronous client, every game open on the server until all have ended:
  latency percentiles of creating a game, of a move, of a view; requests per second; errors;
* **restart** — every game saved, the server stopped and started again on the same folder:
  how many records the new server lists, and that one replays.

Every game is checked: it reaches ``game_over`` and its final view's scores are the scores of
its saved record. Writes ``experiments/results/web/bench_web.json`` and ``.md`` atomically.

``--thinking`` measures instead whether one client's thinking bots freeze everyone else
(issue 28, finding 2): one client (127.0.0.1) keeps ``--thinkers`` games (default 80) of
nine ``pimc:2048`` bots thinking — each game posts its next legal move as soon as the last
response came — while a second client (127.0.0.2) probes every ~100 ms, in turn, a page, a
static file, ``/api/specs``, ``/api/records``, the view of its own game and a move in its own
game against one ``expert``. After the warm-up (every thinking game has had a move answered)
it measures for ``--seconds``: p50, p95 and max of each probe kind, the thinking client's
moves and its bots' narrated moves a second, and the CPU each process of the server used.
The per-client caps of the server are off (every one its ``craits serve --help`` lists), so
that the load is really there. ``--server-root DIR`` or ``--server-commit C`` (a ``git
archive`` of commit ``C``) serves another tree's code from the same interpreter; the run is
stored under ``--label`` in ``bench_web_thinking.json`` beside the other labels, and
``bench_web_thinking.md`` shows them side by side. Usage::

    python experiments/bench_web.py --games 128
    python experiments/bench_web.py --thinking --server-commit 15776f6 --label before
    python experiments/bench_web.py --thinking --label after
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack, contextmanager, suppress
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

import httpx
import numpy as np

from craits.web.bots import Thinkers
from craits.web.database import MEMORY, GameDatabase
from craits.web.requests import NewGame
from craits.web.server import KEEP_ALIVE
from craits.web.sessions import SessionStore, StoreLimits
from craits.web.views import seat_view
from craits_env.fileio import atomic_write_json, atomic_write_text
from craits_env.rules import Rules

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "experiments" / "results" / "web"
URL_LINE = re.compile(r"serving (http://\S+?)/ ")
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
CAPS_OFF = ("--client-rate", "--client-games", "--client-connections", "--client-held",
            "--client-think")  # fmt: skip
"""``craits serve``'s per-client caps, each turned off by 0 (those a tree knows are passed)."""


@dataclass(frozen=True)
class Config:
    games: int = 128
    """games started at once, then played at once (each by its own client)"""
    opponents: tuple[str, ...] = ("random", "greedy", "expert")
    """the bots of every game (the person is seat 0)"""
    hand_sizes: tuple[int, ...] = (8, 7, 6, 5, 4, 3, 2, 1)
    """the schedule of every game (default: the short game, R2.2)"""
    sequential_games: int = 8
    """games played one after another, for the one-client latency and the anchor"""
    seed: int = 0
    """seed of the first game (game i: seed + i; the moves: random.Random(seed + i))"""
    timeout: float = 120.0
    """seconds one request may take before it counts as an error"""


def request_body(config: Config, seed: int) -> dict[str, Any]:
    return {"opponents": list(config.opponents), "seed": seed,
            "rules": {"hand_sizes": list(config.hand_sizes)}}  # fmt: skip


def percentiles(ms: list[float]) -> dict[str, float]:
    if not ms:
        return {"n": 0}
    a = np.array(ms)
    return {"n": len(ms), "p50_ms": round(float(np.percentile(a, 50)), 2),
            "p95_ms": round(float(np.percentile(a, 95)), 2),
            "p99_ms": round(float(np.percentile(a, 99)), 2),
            "max_ms": round(float(a.max()), 2), "mean_ms": round(float(a.mean()), 2)}  # fmt: skip


# ----------------------------------------------------------------------------- the anchor


async def _in_process(config: Config) -> list[float]:
    thinkers = Thinkers(0)  # the bots in a thread of this process, as craits serve's 0 workers
    store = SessionStore(GameDatabase(MEMORY), thinkers,
                         StoreLimits(client_games=0, client_think=0))  # fmt: skip
    ms: list[float] = []
    try:
        for i in range(config.sequential_games):
            seed = config.seed + i
            rules = Rules(hand_sizes=config.hand_sizes)
            request = NewGame(config.opponents, 0, seed, rules)
            session = await store.create(request, "anchor")
            rng = random.Random(seed)
            view = seat_view(session)
            while not view["game_over"]:
                action = rng.choice(view["legal"])["action"]
                start = time.perf_counter()
                await store.act(session, action)
                view = seat_view(session)
                ms.append((time.perf_counter() - start) * 1000)
    finally:
        thinkers.close()
    return ms


def in_process(config: Config) -> dict[str, Any]:
    """The sequential games played through the server's store in process: the time per
    move (the store's SQLite in memory, the bots in a thread), no HTTP."""
    return {"move": percentiles(asyncio.run(_in_process(config)))}


# ----------------------------------------------------------------------------- the server


def tree_env(root: Path) -> dict[str, str]:
    """The environment that makes ``python -m craits`` run the code of the tree ``root``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH")) if p)
    return env


def serve_flags(root: Path) -> set[str]:
    """The options the ``craits serve`` of the tree ``root`` knows (from its ``--help``)."""
    out = subprocess.run([sys.executable, "-m", "craits", "serve", "--help"], cwd=root,
                         env=tree_env(root), capture_output=True, text=True, timeout=120,
                         check=True).stdout  # fmt: skip
    return set(re.findall(r"--[a-z][a-z-]*", out))


WARM_SEARCH = """
from craits.agents.specs import make_agent
from craits_env.engine import Game
from craits_env.public import PublicGame
from craits_env.rules import Rules
game = Game(2, Rules(hand_sizes=(8, 7)), seed=0)
public = PublicGame(game)
agents = [make_agent("pimc:8", s, num_players=2, rules=game.rules) for s in range(2)]
while not game.is_over:
    public.apply(agents[game.current_player].act(public.views[game.current_player]))
"""
"""A short game of two ``pimc`` bots: compiles the tree's search into numba's cache."""


def warm_search(root: Path) -> float:
    """Compile (or load) the search of the tree ``root`` before its server starts, so that
    a warm-up is not a compilation (as the thinkers of ``craits serve`` warm up); seconds."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", WARM_SEARCH], cwd=root, env=tree_env(root),
                   check=True, timeout=600)  # fmt: skip
    return round(time.perf_counter() - start, 1)


def serve_command(games_dir: Path, max_games: int, known: set[str], *extra: str) -> list[str]:
    """``craits serve`` on a free port of 127.0.0.1, every per-client cap it knows off (one
    machine plays every game, or the load must really be there)."""
    caps = [word for flag in CAPS_OFF if flag in known for word in (flag, "0")]
    return [sys.executable, "-m", "craits", "serve", "--port", "0", "--games", str(games_dir),
            "--max-games", str(max_games), *caps, *extra]  # fmt: skip


@contextmanager
def server(
    cmd: list[str], root: Path = REPO, stderr: IO[str] | int = subprocess.DEVNULL
) -> Iterator[tuple[str, int]]:
    """``cmd`` (a :func:`serve_command`) run with the code of ``root`` in its own process
    group; yields its URL and process id. At the end (or on any error) the server is stopped
    with Ctrl-C, then its whole group killed (its bot processes too)."""
    # cwd=root: ``-m`` puts the working directory first on sys.path, before PYTHONPATH
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=root,
                            env=tree_env(root), start_new_session=True)  # fmt: skip
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + START_TIMEOUT
        url = None
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"craits serve exited with status {proc.wait()}")
            m = URL_LINE.search(line)
            url = m.group(1) if m else None
        if url is None:
            raise RuntimeError("craits serve did not print its address in time")
        yield url, proc.pid
    finally:
        proc.send_signal(signal.SIGINT)  # uvicorn stops gracefully
        with suppress(subprocess.TimeoutExpired):
            proc.wait(STOP_TIMEOUT)
        with suppress(ProcessLookupError):  # the server's group: itself and its bot processes
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


# ----------------------------------------------------------------------------- clients


@dataclass
class Tally:
    create: list[float]
    move: list[float]
    view: list[float]
    errors: list[str]
    active: int = 0
    peak: int = 0


async def timed(tally: list[float], call: Any) -> httpx.Response:
    start = time.perf_counter()
    r = await call
    tally.append((time.perf_counter() - start) * 1000)
    return r


async def create(http: httpx.AsyncClient, config: Config, seed: int, t: Tally) -> dict[str, Any]:
    r = await timed(t.create, http.post("/api/games", json=request_body(config, seed)))
    if r.status_code != 201:
        raise RuntimeError(f"POST /api/games: {r.status_code} {r.text}")
    t.active += 1
    t.peak = max(t.peak, t.active)
    return dict(r.json())


async def play(
    http: httpx.AsyncClient, game: dict[str, Any], seed: int, t: Tally
) -> dict[str, Any]:
    """Play one game to its end with random legal moves; its final view."""
    gid, token = game["game_id"], game["token"]
    rng = random.Random(seed)
    r = await timed(t.view, http.get(f"/api/games/{gid}", params={"token": token}))
    view = r.json()
    while not view["game_over"]:
        action = rng.choice(view["legal"])["action"]
        r = await timed(t.move, http.post(f"/api/games/{gid}/actions",
                                          json={"token": token, "action": action}))  # fmt: skip
        if r.status_code != 200:
            t.errors.append(f"{r.status_code} {r.text}")
            break
        view = r.json()
    t.active -= 1
    return dict(view)


def player_client(url: str, timeout: float, address: str | None = None) -> httpx.AsyncClient:
    """One player's client, with one connection of its own (as a browser tab has): one shared
    pool for hundreds of concurrent requests costs the client more than the server. It keeps a
    connection open less long than the server does (KEEP_ALIVE), so it never sends on a
    connection the server is closing. ``address``: the loopback address it connects from
    (the server counts clients by address)."""
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1,
                          keepalive_expiry=KEEP_ALIVE / 2)  # fmt: skip
    transport = httpx.AsyncHTTPTransport(local_address=address, limits=limits)
    return httpx.AsyncClient(base_url=url, timeout=timeout, transport=transport)


async def run_games(url: str, config: Config, seeds: list[int], at_once: bool) -> dict[str, Any]:
    t = Tally([], [], [], [])
    async with AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(player_client(url, config.timeout)) for _ in seeds
        ]
        start = time.perf_counter()
        if at_once:
            games = await asyncio.gather(
                *(create(c, config, s, t) for c, s in zip(clients, seeds, strict=True))
            )
            finals = await asyncio.gather(
                *(play(c, g, s, t) for c, g, s in zip(clients, games, seeds, strict=True))
            )
        else:
            games, finals = [], []
            for c, s in zip(clients, seeds, strict=True):
                games.append(await create(c, config, s, t))
                finals.append(await play(c, games[-1], s, t))
        wall = time.perf_counter() - start
        saved = []
        for c, g, final in zip(clients, games, finals, strict=True):
            r = await c.post(f"/api/games/{g['game_id']}/save", json={"token": g["token"]})
            if r.status_code != 200:
                t.errors.append(f"save: {r.status_code} {r.text}")
            saved.append((r.json().get("file"), final["scores"]))
    requests = len(t.create) + len(t.move) + len(t.view)
    return {
        "games": len(seeds),
        "peak_open_games": t.peak,
        "finished": sum(bool(f["game_over"]) for f in finals),
        "requests": requests,
        "seconds": round(wall, 2),
        "requests_per_s": round(requests / wall, 1),
        "moves_per_game": round(len(t.move) / len(seeds), 1),
        "errors": t.errors[:10],
        "error_count": len(t.errors),
        "create": percentiles(t.create),
        "move": percentiles(t.move),
        "view": percentiles(t.view),
        "_saved": saved,
    }


def check_restart(url: str, saved: list[tuple[str, list[int]]]) -> dict[str, Any]:
    """After a restart: the saved records listed, each game's scores in its record."""
    with httpx.Client(base_url=url, timeout=120) as http:
        files: set[str] = set()
        page: dict[str, Any] = {"more": True}
        while page["more"]:  # the listing is paged, newest first
            params = {"offset": len(files), "limit": 1000}
            page = http.get("/api/records", params=params).json()
            files |= {f["key"] for f in page["files"]}
        listed = sum(key in files for key, _ in saved)
        same = 0
        for key, scores in saved:
            (game,) = http.get("/api/records/games", params={"file": key}).json()["games"]
            same += game["scores"] == scores
        key = saved[0][0]
        frames = http.get("/api/records/replay", params={"file": key, "game": 1}).json()["frames"]
        replays = frames[-1]["scores"] == saved[0][1]
    return {"saved": len(saved), "listed_after_restart": listed, "scores_match": same,
            "first_replays": replays}  # fmt: skip


# ----------------------------------------------------------------------------- thinking load


PROBES = {
    "page": "GET / (a page)",
    "static": "GET /static/play.js",
    "specs": "GET /api/specs",
    "records": "GET /api/records",
    "view": "GET /api/games/ID (its game vs random)",
    "move": "POST a move (its game vs expert)",
    "new_game": "POST /api/games (a new game vs expert, when one ends)",
}
"""The second client's probes, in the order it sends them (``new_game`` only when needed)."""
PROBE_PATHS = {"page": "/", "static": "/static/play.js", "specs": "/api/specs",
               "records": "/api/records"}  # fmt: skip
TARGET_MS = 200.0
"""The p95 every probe but the probe's own move should stay under while the bots think."""
THINKING_CLIENT = "127.0.0.1"
PROBE_CLIENT = "127.0.0.2"  # Linux answers on all of 127.0.0.0/8: another client's address
MAX_GAMES_EACH = 1000  # games one thinking loop may start one after another (bounded loops)
MAX_PROBES = 1_000_000  # probes at most (bounded loops: at 10 a second, more than a day)


@dataclass(frozen=True)
class Thinking:
    """The thinking load (``--thinking``, see the module docstring)."""

    thinkers: int = 80
    """games of the thinking client, each posting its next move as soon as the last came back"""
    opponents: tuple[str, ...] = ("pimc:2048",) * 9
    """the bots of every thinking game (the person is seat 0: ten players)"""
    hand_sizes: tuple[int, ...] | None = None
    """the schedule of every game (``None``: the rules' default, R2.2)"""
    seconds: float = 60.0
    """how long the probes are measured, after the warm-up"""
    warmup: float = 300.0
    """seconds at most until every thinking game has had a move answered (then measured anyway)"""
    probe_every: float = 0.1
    """seconds from one probe's start to the next one's (later if a probe takes longer)"""
    bot_workers: int | None = None
    """``craits serve --bot-workers`` (``None``: its default, or a tree without the option)"""
    seed: int = 0
    """thinking game ``i``'s ``k``-th game: seed ``seed + 1000 * i + k``; its moves likewise"""
    timeout: float = 120.0
    """seconds one request may take before it counts as an error"""

    def body(self, opponents: list[str], seed: int) -> dict[str, Any]:
        rules = {} if self.hand_sizes is None else {"hand_sizes": list(self.hand_sizes)}
        return {"opponents": opponents, "seed": seed, "rules": rules}


@dataclass
class Thought:
    """What the thinking client saw: when each of its moves was answered (monotonic
    seconds) and how many bot moves that answer told of."""

    answered: list[tuple[float, int]]
    errors: list[str]
    games: int = 0
    warm: int = 0


def bot_moves(view: dict[str, Any]) -> int:
    """The bots' moves a view's new events tell of (the person's lines start ``you``)."""
    return sum(e["kind"] == "move" and e["text"].startswith("player_") for e in view["events"])


async def keep_thinking(http: httpx.AsyncClient, config: Thinking, i: int, t: Thought) -> None:
    """Thinking game ``i``: a random legal move posted as soon as the last response came,
    a new game when one ends; until cancelled, or an error."""
    warm = False
    for k in range(MAX_GAMES_EACH):
        seed = config.seed + 1000 * i + k
        rng = random.Random(seed)
        r = await http.post("/api/games", json=config.body(list(config.opponents), seed))
        if r.status_code != 201:
            t.errors.append(f"thinking POST /api/games: {r.status_code} {r.text[:200]}")
            return
        t.games += 1
        game = r.json()
        gid, token = game["game_id"], game["token"]
        view = (await http.get(f"/api/games/{gid}", params={"token": token})).json()
        while view["legal"]:
            action = rng.choice(view["legal"])["action"]
            r = await http.post(f"/api/games/{gid}/actions",
                                json={"token": token, "action": action})  # fmt: skip
            if r.status_code != 200:
                t.errors.append(f"thinking move: {r.status_code} {r.text[:200]}")
                return
            view = r.json()
            t.answered.append((time.monotonic(), bot_moves(view)))
            if not warm:
                warm = True
                t.warm += 1
        if not view["game_over"]:
            t.errors.append(f"thinking game stopped: {view.get('failed')}")


async def new_probe_game(http: httpx.AsyncClient, config: Thinking, opponent: str, seed: int
                         ) -> tuple[str, str, dict[str, Any]]:  # fmt: skip
    r = await http.post("/api/games", json=config.body([opponent], seed))
    if r.status_code != 201:
        raise RuntimeError(f"probe POST /api/games: {r.status_code} {r.text[:200]}")
    gid, token = r.json()["game_id"], r.json()["token"]
    view = (await http.get(f"/api/games/{gid}", params={"token": token})).json()
    return gid, token, view


@dataclass
class Probed:
    """The second client's probes: ``(sent at, kind, ms, status)``, and its errors."""

    probes: list[tuple[float, str, float, int]]
    errors: list[str]


async def probe(http: httpx.AsyncClient, config: Thinking, stop: asyncio.Event,
                p: Probed) -> None:  # fmt: skip
    """Every ``probe_every`` seconds the next kind of :data:`PROBES` in turn, until ``stop``."""
    view_id, view_token, _ = await new_probe_game(http, config, "random", config.seed + 7)
    seed = config.seed + 8
    gid, token, move_view = await new_probe_game(http, config, "expert", seed)
    rng = random.Random(seed)
    kinds = [k for k in PROBES if k != "new_game"]
    for n in range(MAX_PROBES):
        if stop.is_set():
            return
        kind = kinds[n % len(kinds)]
        if kind == "move" and not move_view["legal"]:  # its game ended: a new one, timed too
            kind, seed = "new_game", seed + 1
            rng = random.Random(seed)
        if kind == "move":
            action = rng.choice(move_view["legal"])["action"]
            req: dict[str, Any] = {"method": "POST", "url": f"/api/games/{gid}/actions",
                                   "json": {"token": token, "action": action}}  # fmt: skip
        elif kind == "new_game":
            req = {"method": "POST", "url": "/api/games", "json": config.body(["expert"], seed)}
        elif kind == "view":
            req = {"method": "GET", "url": f"/api/games/{view_id}", "params": {"token": view_token}}
        else:
            req = {"method": "GET", "url": PROBE_PATHS[kind]}
        sent, start = time.monotonic(), time.perf_counter()
        try:
            r = await http.request(**req)
        except httpx.HTTPError as e:
            p.errors.append(f"{kind}: {type(e).__name__} {e}")
            r = None
        if r is not None:
            p.probes.append((sent, kind, (time.perf_counter() - start) * 1000, r.status_code))
            if r.status_code >= 400:
                p.errors.append(f"{kind}: {r.status_code} {r.text[:200]}")
            if kind == "new_game" and r.status_code == 201:
                gid, token = r.json()["game_id"], r.json()["token"]
        if kind in ("move", "new_game"):  # its next move is chosen from its game's view
            view = await http.get(f"/api/games/{gid}", params={"token": token})
            move_view = view.json() if view.status_code == 200 else move_view
        with suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), sent + config.probe_every - time.monotonic())


def cpu_times() -> dict[int, tuple[int, float, int, str]]:
    """Every process of this machine: ``pid -> (parent, CPU seconds, nice, name)`` (Linux
    ``/proc``)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        name, rest = text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :]
        f = rest.split()  # f[k - 3] is field k of proc(5)
        out[int(entry.name)] = (int(f[1]), (int(f[11]) + int(f[12])) / tick, int(f[16]), name)
    return out


def machine_busy() -> tuple[float, float]:
    """``(busy, total)`` CPU seconds of the whole machine so far (``/proc/stat``)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields) - idle) / tick, sum(fields) / tick


def cpu_use(pid: int, before: dict[int, Any], after: dict[int, Any], seconds: float,
            busy: tuple[tuple[float, float], tuple[float, float]]) -> dict[str, Any]:  # fmt: skip
    """Cores each process of the server's tree used in the window (the server, its
    children), this client's, and the whole machine's."""
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        children = [q for q, v in after.items() if v[0] == parent and q not in tree]
        tree.update(children)
        frontier += children

    def used(q: int) -> float:
        return (after[q][1] - (before[q][1] if q in before else 0.0)) / seconds

    procs = [{"pid": q, "name": after[q][3], "nice": after[q][2], "cores": round(used(q), 3),
              "role": "server" if q == pid else "child"}
             for q in sorted(tree) if q in after]  # fmt: skip
    me = os.getpid()
    (b0, t0), (b1, t1) = busy
    return {
        "processes": procs,
        "server_cores": round(sum(x["cores"] for x in procs if x["role"] == "server"), 3),
        "children_cores": round(sum(x["cores"] for x in procs if x["role"] == "child"), 3),
        "client_cores": round(used(me), 3) if me in after else None,
        "machine_cores_busy": round((b1 - b0) / seconds, 3),
        "machine_cores": round((t1 - t0) / seconds, 2),
    }


async def thinking_run(url: str, pid: int, config: Thinking) -> dict[str, Any]:
    """The thinking client and the probes against the server at ``url`` (process ``pid``)."""
    t, p, stop = Thought([], []), Probed([], []), asyncio.Event()
    async with AsyncExitStack() as stack:
        probe_http = await stack.enter_async_context(
            player_client(url, config.timeout, PROBE_CLIENT)
        )
        # the thinking client: one address, a connection per game (as one browser per game)
        clients = [await stack.enter_async_context(player_client(url, config.timeout,
                                                                 THINKING_CLIENT))
                   for _ in range(config.thinkers)]  # fmt: skip
        start = time.monotonic()
        prober = asyncio.create_task(probe(probe_http, config, stop, p))
        tasks = [asyncio.create_task(keep_thinking(c, config, i, t))
                 for i, c in enumerate(clients)]  # fmt: skip
        try:
            while (t.warm < config.thinkers and time.monotonic() - start < config.warmup
                   and not prober.done() and not all(x.done() for x in tasks)):  # fmt: skip
                await asyncio.sleep(0.2)
            warm_s = time.monotonic() - start
            if prober.done():  # it failed setting up its games: nothing to measure
                prober.result()
                raise RuntimeError("the probe stopped before the measurement")
            print(
                f"warm: {t.warm}/{config.thinkers} thinking after {warm_s:.1f} s; "
                f"measuring {config.seconds:g} s",
                flush=True,
            )
            cpu0, busy0, t0 = cpu_times(), machine_busy(), time.monotonic()
            await asyncio.sleep(config.seconds)
            cpu1, busy1, t1 = cpu_times(), machine_busy(), time.monotonic()
            warm_at_end = t.warm
        finally:
            stop.set()
            for x in tasks:
                x.cancel()
            done = await asyncio.gather(*tasks, return_exceptions=True)
            # the probe in flight at the end is answered (bounded by the request timeout)
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(prober), config.timeout + 5)
            prober.cancel()
    failed = [f"thinking: {type(e).__name__} {e}" for e in done
              if isinstance(e, Exception)]  # fmt: skip
    if prober.done() and not prober.cancelled() and prober.exception() is not None:
        failed.append(f"probe: {type(prober.exception()).__name__} {prober.exception()}")
    window = t1 - t0
    probes = {}
    for kind, label in PROBES.items():
        ms = [m for sent, k, m, _ in p.probes if k == kind and t0 <= sent < t1]
        if ms or kind != "new_game":
            probes[kind] = {"label": label, **percentiles(ms)}
    answered = [n for at, n in t.answered if t0 <= at < t1]
    return {
        "warmup_s": round(warm_s, 1),
        "thinking_games_warm": warm_at_end,
        "window_s": round(window, 2),
        "probes": probes,
        "probe_errors": len(p.errors),
        "probe_error_lines": p.errors[:10],
        "thinking": {
            "games_started": t.games,
            "moves_posted": len(answered),
            "moves_posted_per_s": round(len(answered) / window, 2),
            "bot_moves_told": sum(answered),
            "bot_moves_per_s": round(sum(answered) / window, 1),
            "errors": len(t.errors) + len(failed),
            "error_lines": (t.errors + failed)[:10],
        },
        "cpu": cpu_use(pid, cpu0, cpu1, window, (busy0, busy1)),
    }


def git_tree(root: Path) -> str:
    """``git describe --always --dirty`` of ``root``, or ``root`` itself if not a checkout."""
    r = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty"],
                       capture_output=True, text=True)  # fmt: skip
    return r.stdout.strip() if r.returncode == 0 else str(root)


def stderr_summary(text: str) -> list[str]:
    """The distinct lines of a server's stderr that are not inside a traceback (at Ctrl-C
    uvicorn cancels the requests still waiting: one traceback each)."""
    lines = {x for x in text.splitlines() if x.strip() and not x[0].isspace()}
    return sorted(x for x in lines if not x.startswith("Traceback"))[:10]


def thinking(config: Thinking, root: Path, tree: str) -> dict[str, Any]:
    """One run of the thinking load against a server of the tree ``root``."""
    known = serve_flags(root)
    compile_s = warm_search(root)
    workers = [] if config.bot_workers is None else ["--bot-workers", str(config.bot_workers)]
    with tempfile.TemporaryDirectory() as tmp:
        games_dir, log = Path(tmp) / "games", Path(tmp) / "serve.log"
        cmd = serve_command(games_dir, config.thinkers + 200, known, *workers)
        load_start = round(os.getloadavg()[0], 1)
        with open(log, "w") as err, server(cmd, root, err) as (url, pid):
            out = asyncio.run(thinking_run(url, pid, config))
        stderr = stderr_summary(log.read_text())
    shown = " ".join(["PYTHONPATH=TREE python", *cmd[1:]]).replace(str(games_dir), "DIR")
    return {"tree": tree, "search_warmed_s": compile_s, "server_command": shown,
            "caps_off": [f for f in CAPS_OFF if f in known],
            "load_average": [load_start, round(os.getloadavg()[0], 1)], **out,
            "server_stderr": stderr}  # fmt: skip


# ----------------------------------------------------------------------------- report


def to_markdown(out: dict[str, Any]) -> str:
    c, load, one, anchor = out["config"], out["load"], out["one_client"], out["in_process"]
    rows = []
    for label, r in (("in process (no HTTP), one game at a time", anchor),
                     ("HTTP, one client, one game at a time", one),
                     (f"HTTP, {load['games']} games at once", load)):  # fmt: skip
        m = r["move"]
        rows.append(f"| {label} | {m['n']:,} | {m['p50_ms']} | {m['p95_ms']} | {m['p99_ms']} | "
                    f"{m['max_ms']} |")  # fmt: skip
    in_flight = load["games"] / load["requests_per_s"]  # Little's law: the queueing wait
    served = {k: round(1000 / r["move"]["mean_ms"], 1) for k, r in (("anchor", anchor),
                                                                      ("one", one))}  # fmt: skip
    restart = out["restart"]
    return "\n".join([
        "# `craits serve` under load (same run)",
        "",
        f"{out['date']}; {out['machine']}; {os.cpu_count()} cores shared by the server and the "
        f"clients. Every game: you (random legal moves) against {', '.join(c['opponents'])}, "
        f"hands {'-'.join(map(str, c['hand_sizes']))}.",
        "",
        f"**{load['games']} games at once** (peak {load['peak_open_games']} open on the server): "
        f"{load['finished']}/{load['games']} finished, {load['requests']:,} requests in "
        f"{load['seconds']} s = **{load['requests_per_s']} requests/s**, "
        f"{load['error_count']} errors.",
        "",
        "Latency of a move (the person's move, the bots' replies, the narration, the new view):",
        "",
        "| where | moves | p50 ms | p95 ms | p99 ms | max ms |",
        "|---|---:|---:|---:|---:|---:|",
        *rows,
        "",
        f"Throughput, same run: {served['anchor']:,} moves/s in process, {served['one']:,} "
        f"moves/s over HTTP for one client, {load['requests_per_s']} requests/s for "
        f"{load['games']} clients at once ({load['requests_per_s'] / served['one']:.2f}× one "
        f"client: one Python process, {os.cpu_count()} cores shared with the clients), so under "
        f"load a request mostly waits its turn: with {load['games']} always in flight the "
        f"expected wait is {load['games']} / {load['requests_per_s']} ≈ {in_flight:.2f} s "
        f"(Little's law), the "
        f"median measured {load['move']['p50_ms'] / 1000:.2f} s. Creating a game under load: "
        f"p50 {load['create']['p50_ms']} ms, p95 {load['create']['p95_ms']} ms; a view: p50 "
        f"{load['view']['p50_ms']} ms, p95 {load['view']['p95_ms']} ms. Load average of the "
        f"machine (other work included) at the start and the end: {out['load_average']}.",
        "",
        f"Restart: {restart['saved']} games saved, the server stopped and started again on the "
        f"same folder: {restart['listed_after_restart']} records listed, "
        f"{restart['scores_match']} with the scores the game ended with; the first replays: "
        f"{restart['first_replays']}.",
        "",
        f"Reproduce: `{out['command']}`",
        "",
    ])  # fmt: skip


def thinking_markdown(runs: dict[str, dict[str, Any]]) -> str:
    """The runs of ``bench_web_thinking.json`` side by side (one column group per label)."""
    labels = list(runs)
    first = runs[labels[0]]
    c = first["config"]
    bots = c["opponents"]
    kinds = [k for k in PROBES if any(k in r["probes"] for r in runs.values())]
    head = (
        "| probe (client 127.0.0.2) | "
        + " | ".join(f"{lab} p50 ms | {lab} p95 ms | {lab} max ms | {lab} n" for lab in labels)
        + " |"
    )
    rows = []
    for kind in kinds:
        cells = []
        for lab in labels:
            q = runs[lab]["probes"].get(kind, {"n": 0})
            cells += ([str(q["p50_ms"]), f"**{q['p95_ms']}**", str(q["max_ms"]), str(q["n"])]
                      if q["n"] else ["–", "–", "–", "0"])  # fmt: skip
        rows.append(f"| {PROBES[kind]} | " + " | ".join(cells) + " |")

    def line(name: str, value: Any) -> str:
        return f"| {name} | " + " | ".join(str(value(runs[lab])) for lab in labels) + " |"

    def thinkers(r: dict[str, Any]) -> str:
        kids = [x for x in r["cpu"]["processes"] if x["role"] == "child" and x["cores"] > 0.01]
        return ", ".join(f"{x['cores']} (nice {x['nice']})" for x in kids) or "none"

    verdicts = []
    for lab in labels:
        missed = [
            PROBES[k]
            for k, q in runs[lab]["probes"].items()
            if k not in ("move", "new_game") and not (q["n"] and q["p95_ms"] < TARGET_MS)
        ]
        verdicts.append(
            f"- **{lab}**: " + ("met" if not missed else "missed by " + "; ".join(missed))
        )
    hands = "-".join(map(str, c["hand_sizes"])) if c["hand_sizes"] else "the rules' default"
    expected = {lab: r["window_s"] / r["config"]["probe_every"] for lab, r in runs.items()}
    sent = {lab: sum(q["n"] for q in r["probes"].values()) for lab, r in runs.items()}
    few = [f"{lab}: {sent[lab]} probes in {r['window_s']:g} s where {expected[lab]:.0f} were "
           "due: a probe waits for the one before it (one connection), so a frozen server "
           "is probed seldom; each of its samples is one long wait.\n"
           for lab, r in runs.items() if sent[lab] < expected[lab] / 2]  # fmt: skip
    caps = "; ".join(f"{lab}: " + ", ".join(f"`{f} 0`" for f in r["caps_off"])
                     for lab, r in runs.items())  # fmt: skip
    facts: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
        ("warm-up s (every thinking game had a move answered)", lambda r: r["warmup_s"]),
        ("thinking games warm / started",
         lambda r: f"{r['thinking_games_warm']} / {r['thinking']['games_started']}"),
        ("thinking client: moves answered / s", lambda r: r["thinking"]["moves_posted_per_s"]),
        ("thinking client: bot moves told / s", lambda r: r["thinking"]["bot_moves_per_s"]),
        ("… per CPU second of the server's processes (itself, its thinkers)",
         lambda r: round(r["thinking"]["bot_moves_per_s"]
                         / max(1e-9, r["cpu"]["server_cores"] + r["cpu"]["children_cores"]), 1)),
        ("errors: thinking client, probes",
         lambda r: f"{r['thinking']['errors']}, {r['probe_errors']}"),
        ("server process, cores", lambda r: r["cpu"]["server_cores"]),
        ("its child processes (the thinkers), cores", thinkers),
        ("both clients (this script), cores", lambda r: r["cpu"]["client_cores"]),
        ("the machine: busy cores of all",
         lambda r: f"{r['cpu']['machine_cores_busy']} of {r['cpu']['machine_cores']:g}"),
        ("load average at start, end", lambda r: ", ".join(map(str, r["load_average"]))),
    ]  # fmt: skip
    reproduce = [f"- {lab}: `{r['command']}` (server: `{r['server_command']}`, tree {r['tree']})"
                 for lab, r in runs.items()]  # fmt: skip
    return "\n".join([
        "# `craits serve` while one client's bots think (issue 28, finding 2)",
        "",
        "; ".join(f"{lab}: {r['date']}" for lab, r in runs.items()) + f". {first['machine']}; "
        f"{os.cpu_count()} cores, shared by the server, its bot processes, both clients — and "
        "other work on the machine (its load, below): these are not quiet-machine numbers.",
        "",
        f"**The load.** One client (127.0.0.1) keeps {c['thinkers']} games thinking, each of "
        f"{len(bots)} × `{bots[0]}` against the person (seat 0), hands {hands}: each game "
        "posts a random legal move as soon as its last response came (a new game when one "
        "ends). Every per-client cap each server knows is off, so that the load is really "
        f"there ({caps}). A second client (127.0.0.2, one connection) probes every "
        f"{c['probe_every'] * 1000:g} ms, in turn, the kinds below; after the warm-up (every "
        f"thinking game has had a move answered) each run measures {c['seconds']:g} s. "
        "A probe's latency is from its request to its response, over its one connection.",
        "",
        head,
        "|---|" + "---:|" * (4 * len(labels)),
        *rows,
        "",
        *few,
        f"Target: p95 < {TARGET_MS:g} ms for every probe kind but the probe's own move (which "
        "waits for its expert's move in the same thinkers):",
        "",
        *verdicts,
        "",
        "| the run | " + " | ".join(labels) + " |",
        "|---|" + "---:|" * len(labels),
        *(line(name, value) for name, value in facts),
        "",
        "Bot moves told: the lines of the views' events that narrate a bot's move (a decision "
        "that says nothing, such as staying silent, is not counted; the same count in every "
        "run). CPU: from `/proc` over the measured window.",
        "",
        "Reproduce (`--server-commit C` serves `git archive C` from a temporary folder with the "
        "same interpreter, as `--server-root DIR` does for any folder):",
        "",
        *reproduce,
        "",
    ])  # fmt: skip


def thinking_main(args: argparse.Namespace, command: str) -> int:
    """``--thinking``: one run, stored under its label beside the others."""
    config = Thinking(
        thinkers=args.thinkers, opponents=tuple(args.opponents.split(",")),
        hand_sizes=tuple(int(x) for x in args.hand_sizes.split(",")) if args.hand_sizes
        else None, seconds=args.seconds, warmup=args.warmup, bot_workers=args.bot_workers,
        seed=args.seed)  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        if args.server_commit:
            root = Path(tmp) / "tree"
            root.mkdir()
            archive = subprocess.run(["git", "-C", str(REPO), "archive", args.server_commit],
                                     capture_output=True, check=True).stdout  # fmt: skip
            subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
            tree = args.server_commit
        else:
            root = (args.server_root or REPO).resolve()
            tree = git_tree(root)
        run = thinking(config, root, tree)
    run = {"date": time.strftime("%Y-%m-%d %H:%M"),
           "machine": f"{platform.machine()}, CPython {platform.python_version()}",
           "command": command, "config": asdict(config), **run}  # fmt: skip
    path = args.out / "bench_web_thinking.json"
    runs = json.loads(path.read_text())["runs"] if path.exists() else {}
    runs[args.label] = run
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"runs": runs})
    atomic_write_text(args.out / "bench_web_thinking.md", thinking_markdown(runs))
    for kind, q in run["probes"].items():
        print(f"{kind}: {q}")
    print(f"thinking: {run['thinking']}\ncpu: {run['cpu']}")
    return 0 if not run["thinking"]["errors"] and not run["probe_errors"] else 1


def load_main(args: argparse.Namespace, command: str) -> int:
    """The default run: the anchor, one client, the load and the restart."""
    config = Config(games=args.games, sequential_games=args.sequential_games, seed=args.seed)
    load_start = round(os.getloadavg()[0], 1)
    anchor = in_process(config)
    print(f"in process: {anchor['move']}", flush=True)
    known = serve_flags(REPO)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = serve_command(Path(tmp), config.games + 16, known)
        with server(cmd) as (url, _):
            seq = [config.seed + i for i in range(config.sequential_games)]
            one = asyncio.run(run_games(url, config, seq, at_once=False))
            print(f"one client: {one['move']}", flush=True)
            seeds = [config.seed + 1000 + i for i in range(config.games)]
            load = asyncio.run(run_games(url, config, seeds, at_once=True))
            print(f"load: {load['requests_per_s']} req/s, move {load['move']}", flush=True)
        with server(cmd) as (url, _):  # the same folder: a restart
            restart = check_restart(url, one.pop("_saved") + load.pop("_saved"))
    out = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, CPython {platform.python_version()}",
        "command": command,
        "config": asdict(config),
        "load_average": [load_start, round(os.getloadavg()[0], 1)],
        "in_process": anchor,
        "one_client": one,
        "load": load,
        "restart": restart,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.out / "bench_web.json", out)
    atomic_write_text(args.out / "bench_web.md", to_markdown(out))
    print(to_markdown(out))
    errors = load["error_count"] + one["error_count"]
    restarted = restart["listed_after_restart"] == restart["saved"] == restart["scores_match"]
    ok = errors == 0 and load["finished"] == load["games"] and restarted
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=Config.games)
    p.add_argument("--sequential-games", type=int, default=Config.sequential_games)
    p.add_argument("--seed", type=int, default=Config.seed)
    p.add_argument("--out", type=Path, default=RESULTS)
    t = p.add_argument_group("the thinking load (--thinking)")
    t.add_argument(
        "--thinking",
        action="store_true",
        help="measure the probes of a second client while one client's bots think",
    )
    t.add_argument(
        "--thinkers",
        type=int,
        default=Thinking.thinkers,
        help="games the thinking client keeps thinking",
    )
    t.add_argument(
        "--opponents",
        default=",".join(Thinking.opponents),
        help="the bots of each thinking game, comma-separated",
    )
    t.add_argument(
        "--hand-sizes",
        default=None,
        help="the schedule of every game, e.g. 8,7,6 (default: the rules' own)",
    )
    t.add_argument("--seconds", type=float, default=Thinking.seconds)
    t.add_argument("--warmup", type=float, default=Thinking.warmup)
    t.add_argument(
        "--bot-workers",
        type=int,
        default=None,
        help="craits serve --bot-workers (default: its own, one per core)",
    )
    where = t.add_mutually_exclusive_group()
    where.add_argument(
        "--server-root",
        type=Path,
        default=None,
        help="serve the code of this folder (default: this checkout)",
    )
    where.add_argument(
        "--server-commit",
        default=None,
        help="serve the code of this commit (git archive, a temporary folder)",
    )
    t.add_argument("--label", default="after", help="the run's name in the results")
    args = p.parse_args(argv)
    command = " ".join(["python experiments/bench_web.py",
                        *(argv if argv is not None else sys.argv[1:])])  # fmt: skip
    return thinking_main(args, command) if args.thinking else load_main(args, command)


if __name__ == "__main__":
    sys.exit(main())
