"""One client's thinking bots do not freeze another client (issue 28, finding 2).

The toy version of ``experiments/bench_web.py --thinking``, against a real ``craits serve``
process with one thinker (``--bot-workers 1``) and the per-client caps off (the load must
be there): one client (127.0.0.1) keeps 48 games of three ``pimc:2048`` bots thinking —
each posts its next legal move as soon as the last response came — while another address
(127.0.1.2) asks for ``GET /api/specs`` and the view of its own game, in turn, for
:data:`THINK_SECONDS`. Each of those must be answered within :data:`ANSWER_BOUND` seconds,
the median of each kind within :data:`MEDIAN_BOUND`: correctness bounds, not a benchmark
(this machine: a few ms to 0.07 s). The old server (15776f6), whose searches held its 40
request threads and its GIL, failed them (medians 1.2 s and 0.8 s, maxima 2.4 s); with six
games of ``pimc:512`` it queued nothing (maxima 0.2 s), hence 48 games. Every loop is
bounded in count and time; the server and its thinker are killed at the end.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..webclient import serve_process

pytestmark = pytest.mark.slow  # real bot processes thinking

THINKING_GAMES = 48
"""More than the 40 request threads the old server thought in (fewer never queued there)."""
OPPONENTS = ["pimc:2048"] * 3
THINK_SECONDS = 8.0
"""How long the other client's requests are timed while the games think."""
ANSWER_BOUND = 2.0
"""Seconds each of the other client's requests may take at most."""
MEDIAN_BOUND = 0.5
"""Seconds the median of each kind of the other client's requests may take at most."""
WARM_SECONDS = 120.0  # the thinker process starts (spawn, imports, the search's cache)
PROBE_EVERY = 0.2
MAX_MOVES = 10_000  # moves one thinking game may post (bounded loops)
CAPS_OFF = [
    "--client-rate",
    "0",
    "--client-games",
    "0",
    "--client-connections",
    "0",
    "--client-held",
    "0",
    "--client-think",
    "0",
]


@contextmanager
def craits_serve(tmp: Path) -> Iterator[str]:
    """``craits serve --bot-workers 1`` on a free port of 127.0.0.1, the per-client caps off
    (the load must be there); its process group killed at the end."""
    with serve_process(tmp / "games", "--bot-workers", "1", *CAPS_OFF, quiet=True, group=True) as (
        url,
        _,
    ):
        yield url


async def keep_thinking(
    url: str, seed: int, thinking: list[int], answered: list[float], errors: list[str]
) -> None:
    """One thinking game: a random legal move posted as soon as the last came back
    (``thinking`` counts the games that have posted one)."""
    async with httpx.AsyncClient(base_url=url, timeout=WARM_SECONDS) as http:
        r = await http.post("/api/games", json={"opponents": OPPONENTS, "seed": seed})
        if r.status_code != 201:
            errors.append(f"new game: {r.status_code} {r.text}")
            return
        gid, token = r.json()["game_id"], r.json()["token"]
        view = (await http.get(f"/api/games/{gid}", params={"token": token})).json()
        rng = random.Random(seed)
        for n in range(MAX_MOVES):
            if not view["legal"]:
                errors.append(f"the game stopped: over {view['game_over']}, {view['failed']}")
                return
            body = {"token": token, "action": rng.choice(view["legal"])["action"]}
            thinking[0] += n == 0
            r = await http.post(f"/api/games/{gid}/actions", json=body)
            if r.status_code != 200:
                errors.append(f"move: {r.status_code} {r.text}")
                return
            view = r.json()
            answered.append(time.monotonic())


async def thinking_and_probing(url: str) -> dict[str, Any]:
    transport = httpx.AsyncHTTPTransport(local_address="127.0.1.2")
    async with httpx.AsyncClient(base_url=url, timeout=WARM_SECONDS, transport=transport) as other:
        r = await other.post("/api/games", json={"opponents": ["random"], "seed": 1})
        assert r.status_code == 201, r.text  # the thinker has started: its first job is done
        view_url = f"/api/games/{r.json()['game_id']}"
        token = r.json()["token"]
        thinking, errors = [0], list[str]()
        answered: list[list[float]] = [[] for _ in range(THINKING_GAMES)]
        tasks = [
            asyncio.create_task(keep_thinking(url, 100 + i, thinking, answered[i], errors))
            for i in range(THINKING_GAMES)
        ]
        try:
            deadline = time.monotonic() + WARM_SECONDS
            while thinking[0] < THINKING_GAMES and time.monotonic() < deadline and not errors:
                await asyncio.sleep(0.1)
            assert thinking[0] == THINKING_GAMES and not errors, (errors, thinking)
            start = time.monotonic()
            seconds: dict[str, list[float]] = {"specs": [], "view": []}
            for n in range(int(THINK_SECONDS / PROBE_EVERY)):
                kind = ("specs", "view")[n % 2]
                sent = time.perf_counter()
                if kind == "specs":
                    r = await other.get("/api/specs")
                else:
                    r = await other.get(view_url, params={"token": token})
                seconds[kind].append(time.perf_counter() - sent)
                assert r.status_code == 200, r.text
                await asyncio.sleep(max(0.0, sent + PROBE_EVERY - time.perf_counter()))
            end = time.monotonic()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    during = [sum(start <= t < end for t in a) for a in answered]
    return {
        "seconds": seconds,
        "moves_during": during,
        "errors": errors,
        "running": sum(t.cancelled() for t in tasks),
    }


def test_one_clients_thinking_games_leave_another_client_answered(tmp_path: Path) -> None:
    with craits_serve(tmp_path) as url:
        out = asyncio.run(thinking_and_probing(url))
    assert not out["errors"], out["errors"]
    # the load was there: every game was still thinking, and moves were answered meanwhile
    assert out["running"] == THINKING_GAMES and sum(out["moves_during"]) > 0, out
    for kind, seconds in out["seconds"].items():
        assert len(seconds) == int(THINK_SECONDS / PROBE_EVERY) // 2, kind
        assert max(seconds) < ANSWER_BOUND, (kind, sorted(seconds)[-5:])
        assert sorted(seconds)[len(seconds) // 2] < MEDIAN_BOUND, (kind, sorted(seconds))
