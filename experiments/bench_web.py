"""Load test of ``craits serve``: many simultaneous games against a real uvicorn server.

Measures, in one run, on this machine (the client and the server share its cores):

* **anchor, in process** — the same games played through :class:`craits.web.sessions.GameSession`
  and the seat view directly, no HTTP: the time per move (the person's move, the bots'
  replies, the narration, the view);
* **one client** — a few games one after another over HTTP to ``craits serve`` (a separate
  process on 127.0.0.1): the latency of a move with nothing else going on;
* **load** — ``--games`` games (default 128) started at once and then played at once, each
  by its own asynchronous client, every game open on the server until all have ended:
  latency percentiles of creating a game, of a move, of a view; requests per second; errors;
* **restart** — every game saved, the server stopped and started again on the same folder:
  how many records the new server lists, and that one replays.

Every game is checked: it reaches ``game_over`` and its final view's scores are the scores of
its saved record. Writes ``experiments/results/web/bench_web.json`` and ``.md`` atomically.
Usage::

    python experiments/bench_web.py --games 128
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from craits.web.server import KEEP_ALIVE
from craits.web.sessions import GameSession, NewGame, parse_rules
from craits.web.views import seat_view
from craits_env.fileio import atomic_write_json, atomic_write_text

RESULTS = Path(__file__).resolve().parent / "results" / "web"
URL_LINE = re.compile(r"serving (http://\S+?)/ ")
START_TIMEOUT = 60.0


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


def in_process(config: Config) -> dict[str, Any]:
    """The sequential games played in process: the time per move, no HTTP."""
    ms: list[float] = []
    for i in range(config.sequential_games):
        seed = config.seed + i
        body = request_body(config, seed)
        request = NewGame(tuple(body["opponents"]), 0, seed, parse_rules(body["rules"]))
        session = GameSession(request, f"anchor{i}", "token")
        rng = random.Random(seed)
        view = seat_view(session)
        while not view["game_over"]:
            action = rng.choice(view["legal"])["action"]
            start = time.perf_counter()
            session.act(action)
            view = seat_view(session)
            ms.append((time.perf_counter() - start) * 1000)
    return {"move": percentiles(ms)}


# ----------------------------------------------------------------------------- the server


@contextmanager
def server(games_dir: Path, max_games: int) -> Iterator[str]:
    """``craits serve`` in its own process on a free port of 127.0.0.1; yields its URL."""
    # one machine plays every game: the per-client limits of a public server are off
    cmd = [sys.executable, "-m", "craits", "serve", "--port", "0", "--games", str(games_dir),
           "--max-games", str(max_games), "--client-rate", "0", "--client-games", "0",
           "--client-connections", "0"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
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
        yield url
    finally:
        proc.send_signal(signal.SIGINT)  # uvicorn stops gracefully
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
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


def player_client(url: str, config: Config) -> httpx.AsyncClient:
    """One player's client, with one connection of its own (as a browser tab has): one shared
    pool for hundreds of concurrent requests costs the client more than the server. It keeps a
    connection open less long than the server does (KEEP_ALIVE), so it never sends on a
    connection the server is closing."""
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1,
                          keepalive_expiry=KEEP_ALIVE / 2)  # fmt: skip
    return httpx.AsyncClient(base_url=url, timeout=config.timeout, limits=limits)


async def run_games(url: str, config: Config, seeds: list[int], at_once: bool) -> dict[str, Any]:
    t = Tally([], [], [], [])
    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(player_client(url, config)) for _ in seeds]
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=Config.games)
    p.add_argument("--sequential-games", type=int, default=Config.sequential_games)
    p.add_argument("--seed", type=int, default=Config.seed)
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    config = Config(games=args.games, sequential_games=args.sequential_games, seed=args.seed)
    command = "python experiments/bench_web.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )

    load_start = round(os.getloadavg()[0], 1)
    anchor = in_process(config)
    print(f"in process: {anchor['move']}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        games_dir = Path(tmp)
        with server(games_dir, config.games + 16) as url:
            seq = [config.seed + i for i in range(config.sequential_games)]
            one = asyncio.run(run_games(url, config, seq, at_once=False))
            print(f"one client: {one['move']}", flush=True)
            seeds = [config.seed + 1000 + i for i in range(config.games)]
            load = asyncio.run(run_games(url, config, seeds, at_once=True))
            print(f"load: {load['requests_per_s']} req/s, move {load['move']}", flush=True)
        with server(games_dir, config.games + 16) as url:  # the same folder: a restart
            restart = check_restart(url, one.pop("_saved") + load.pop("_saved"))
    out = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, CPython {platform.python_version()}",
        "command": command.strip(),
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


if __name__ == "__main__":
    sys.exit(main())
