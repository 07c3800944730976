"""What the web tests share: an in-process client of the application and a player that
plays a whole game through the JSON API (plain functions: pytest forbids importing from a
conftest)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from craits.web.app import Settings, create_app

ROOT = Path(__file__).resolve().parent.parent
TOURNAMENT = ROOT / "experiments" / "results" / "web" / "tournament"
"""A committed tournament with its game records (the Watch and Compare pages' demo data)."""


@contextmanager
def serve_process(
    games: Path, *args: str, quiet: bool = False, group: bool = False
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``craits serve --games GAMES ARGS`` in its own process on a free port of 127.0.0.1:
    ``(url, process)``; killed at the end (``group``: its own process group, stopped with
    Ctrl-C and then killed whole, its bot thinkers with it; ``quiet``: stderr discarded)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "craits", "serve", "--port", "0", "--games", str(games), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL if quiet else subprocess.PIPE,
        text=True,
        start_new_session=group,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = line.split("serving ", 1)[1].split("/ ", 1)[0]
        assert url.startswith("http://127.0.0.1:"), line
        yield url, proc
    finally:
        if group:
            proc.send_signal(signal.SIGINT)
            with suppress(subprocess.TimeoutExpired):
                proc.wait(10)
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        elif proc.poll() is None:
            proc.kill()
        proc.wait(30)


MAX_REQUESTS = 5000  # a whole game of the short schedules used here needs far fewer


def client(tmp: Path, **settings: Any) -> Any:
    """A ``TestClient`` of a fresh application whose saved games go to ``tmp``."""
    with warnings.catch_warnings():  # starlette's note on its test client's HTTP library
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    return TestClient(create_app(Settings(games_dir=tmp, **settings)))


def new_game(c: Any, **body: Any) -> tuple[str, str]:
    """``POST /api/games`` (201): ``(game_id, token)``."""
    r = c.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()["game_id"], r.json()["token"]


def play_out(
    c: Any,
    game_id: str,
    token: str,
    rng: random.Random,
    check: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Play uniformly random legal moves until the game is over; ``check(view)`` on each
    response (the first ``GET`` included). Returns the last view."""
    r = c.get(f"/api/games/{game_id}", params={"token": token})
    assert r.status_code == 200, r.text
    view = r.json()
    for _ in range(MAX_REQUESTS):
        if check is not None:
            check(view)
        if view["game_over"]:
            return view
        assert view["your_turn"] and view["legal"], view
        action = rng.choice(view["legal"])["action"]
        r = c.post(f"/api/games/{game_id}/actions", json={"token": token, "action": action})
        assert r.status_code == 200, r.text
        view = r.json()
    raise AssertionError(f"game {game_id} did not end in {MAX_REQUESTS} moves")
