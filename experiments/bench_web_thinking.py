"""The thinking load of ``experiments/bench_web.py --thinking``: one client's searching bots
against a second client's probes (issue 28, finding 2; the module docstring of bench_web.py).
"""

from __future__ import annotations

import asyncio
import os
import random
import tempfile
import time
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

# A script's module: its own directory is on sys.path, so its sibling module imports by name.
from bench_web_server import (
    CAPS_OFF,
    cpu_times,
    cpu_use,
    machine_busy,
    percentiles,
    player_client,
    serve_command,
    serve_flags,
    server,
    stderr_summary,
    warm_search,
)

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
PROBE_PATHS = {
    "page": "/",
    "static": "/static/play.js",
    "specs": "/api/specs",
    "records": "/api/records",
}
TARGET_MS = 200.0
"""The p95 every probe but the probe's own move should stay under while the bots think."""
THINKING_CLIENT = "127.0.0.1"
PROBE_CLIENT = "127.0.1.2"  # Linux answers on all of 127.0.0.0/8: another client's /24
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
            r = await http.post(
                f"/api/games/{gid}/actions", json={"token": token, "action": action}
            )
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


async def new_probe_game(
    http: httpx.AsyncClient, config: Thinking, opponent: str, seed: int
) -> tuple[str, str, dict[str, Any]]:
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


async def probe(http: httpx.AsyncClient, config: Thinking, stop: asyncio.Event, p: Probed) -> None:
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
            req: dict[str, Any] = {
                "method": "POST",
                "url": f"/api/games/{gid}/actions",
                "json": {"token": token, "action": action},
            }
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


async def thinking_run(url: str, pid: int, config: Thinking) -> dict[str, Any]:
    """The thinking client and the probes against the server at ``url`` (process ``pid``)."""
    t, p, stop = Thought([], []), Probed([], []), asyncio.Event()
    async with AsyncExitStack() as stack:
        probe_http = await stack.enter_async_context(
            player_client(url, config.timeout, PROBE_CLIENT)
        )
        # the thinking client: one address, a connection per game (as one browser per game)
        clients = [
            await stack.enter_async_context(player_client(url, config.timeout, THINKING_CLIENT))
            for _ in range(config.thinkers)
        ]
        start = time.monotonic()
        prober = asyncio.create_task(probe(probe_http, config, stop, p))
        tasks = [asyncio.create_task(keep_thinking(c, config, i, t)) for i, c in enumerate(clients)]
        try:
            while (
                t.warm < config.thinkers
                and time.monotonic() - start < config.warmup
                and not prober.done()
                and not all(x.done() for x in tasks)
            ):
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
    failed = [f"thinking: {type(e).__name__} {e}" for e in done if isinstance(e, Exception)]
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
    return {
        "tree": tree,
        "search_warmed_s": compile_s,
        "server_command": shown,
        "caps_off": [f for f in CAPS_OFF if f in known],
        "load_average": [load_start, round(os.getloadavg()[0], 1)],
        **out,
        "server_stderr": stderr,
    }
