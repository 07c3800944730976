"""The load of ``experiments/bench_web.py`` (its default run): the anchor in process, one
client's games one after another, many games at once, and the restart on the same folder.
"""

from __future__ import annotations

import asyncio
import random
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

import httpx

# A script's module: its own directory is on sys.path, so its sibling module imports by name.
from bench_web_server import percentiles, player_client

from craits.web.bots import Thinkers
from craits.web.database import MEMORY, GameDatabase
from craits.web.requests import NewGame
from craits.web.sessions import SessionStore, StoreLimits
from craits.web.views import seat_view
from craits_env.rules import Rules


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
    return {
        "opponents": list(config.opponents),
        "seed": seed,
        "rules": {"hand_sizes": list(config.hand_sizes)},
    }


# ----------------------------------------------------------------------------- the anchor


async def _in_process(config: Config) -> list[float]:
    thinkers = Thinkers(0)  # the bots in a thread of this process, as craits serve's 0 workers
    store = SessionStore(
        GameDatabase(MEMORY), thinkers, StoreLimits(client_games=0, client_think=0)
    )
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
        r = await timed(
            t.move, http.post(f"/api/games/{gid}/actions", json={"token": token, "action": action})
        )
        if r.status_code != 200:
            t.errors.append(f"{r.status_code} {r.text}")
            break
        view = r.json()
    t.active -= 1
    return dict(view)


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
    return {
        "saved": len(saved),
        "listed_after_restart": listed,
        "scores_match": same,
        "first_replays": replays,
    }
