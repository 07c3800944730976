"""A real ``craits serve`` killed mid-game (issue 28, finding 3): after SIGKILL — between two
moves, or while a bot thinks — and a restart on the same store, the player goes on with the
same token from the same position, finishes and saves; a clean restart keeps the saved
record, and saving again gives the same one."""

from __future__ import annotations

import random
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from craits_env.engine import Game
from craits_env.rules import Rules

from ..webclient import serve_process
from .test_web_api import GATED_AGENT  # waits for a file before its move

pytestmark = pytest.mark.slow  # real servers killed and restarted

QUICK = {"hand_sizes": [3, 2]}
POSITION = (
    "hand",
    "top",
    "active_suit",
    "count",
    "direction",
    "phase",
    "current_player",
    "hand_index",
    "hand_sizes",
    "scores",
    "legal",
    "players",
    "event_count",
)
START_SECONDS = 60


@contextmanager
def craits_serve(games: Path, *args: str) -> Iterator[tuple[httpx.Client, subprocess.Popen[str]]]:
    """``craits serve`` in its own process on a free port; a client of it; killed at the end."""
    with (
        serve_process(games, "--bot-workers", "1", *args) as (url, proc),
        httpx.Client(base_url=url, timeout=START_SECONDS) as http,
    ):
        yield http, proc


def position(view: dict[str, Any]) -> dict[str, Any]:
    return {key: view[key] for key in POSITION}


def get(http: httpx.Client, game: dict[str, str]) -> dict[str, Any]:
    r = http.get(
        f"/api/games/{game['game_id']}", headers={"Authorization": f"Bearer {game['token']}"}
    )
    assert r.status_code == 200, r.text
    return dict(r.json())


def move(http: httpx.Client, game: dict[str, str], action: int, **kw: Any) -> dict[str, Any]:
    r = http.post(
        f"/api/games/{game['game_id']}/actions",
        json={"token": game["token"], "action": action},
        **kw,
    )
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_a_game_goes_on_after_sigkill_and_a_restart(tmp_path: Path) -> None:
    games, rng = tmp_path / "games", random.Random(5)
    with craits_serve(games) as (http, proc):
        r = http.post(
            "/api/games", json={"opponents": ["expert", "pimc:64"], "seed": 21, "rules": QUICK}
        )
        assert r.status_code == 201, r.text
        game = r.json()
        view = get(http, game)
        for _ in range(3):
            view = move(http, game, rng.choice(view["legal"])["action"])
        before = position(get(http, game))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    with craits_serve(games) as (http, proc):
        view = get(http, game)
        assert position(view) == before  # the same position, the same token
        wrong = http.get(f"/api/games/{game['game_id']}", params={"token": "x" * 32})
        assert wrong.status_code == 403
        while not view["game_over"]:
            view = move(http, game, rng.choice(view["legal"])["action"])
        saved = http.post(f"/api/games/{game['game_id']}/save", json={"token": game["token"]})
        assert saved.status_code == 200, saved.text
        proc.send_signal(signal.SIGINT)  # a clean stop this time
        assert proc.wait(30) == 0
    with craits_serve(games) as (http, _):
        again = http.post(f"/api/games/{game['game_id']}/save", json={"token": game["token"]})
        assert again.json() == saved.json()  # one record per game, whatever the restarts
        files = http.get("/api/records").json()["files"]
        assert [f["key"] for f in files] == [saved.json()["file"]]
        assert get(http, game)["scores"] == view["scores"]


def test_a_move_made_while_a_bot_thought_survives_sigkill(tmp_path: Path) -> None:
    """The person's move is stored before the bots think: killed while one thinks, the
    restarted server has the move, and lets the bot move when the game is next asked for."""
    waiting, go = tmp_path / "waiting", tmp_path / "go"
    agent = tmp_path / "gated.py"
    agent.write_text(GATED_AGENT.format(waiting=str(waiting), go=str(go)))
    spec = f"{agent}:Gated"
    rules = Rules(hand_sizes=(3, 2))
    seed = next(s for s in range(100) if Game(2, rules, seed=s).current_player == 0)
    games = tmp_path / "games"
    with craits_serve(games, "--agents", spec) as (http, proc):
        go.touch()  # the bot's first move (it moves first) passes at once
        r = http.post(
            "/api/games", json={"opponents": [spec], "seat": 1, "seed": seed, "rules": QUICK}
        )
        assert r.status_code == 201, r.text
        game = r.json()
        view = get(http, game)
        assert view["your_turn"]
        go.unlink()
        waiting.unlink()
        for _ in range(20):  # moves until one that the bot must answer (it then waits for "go")
            count = view["event_count"]
            try:
                view = move(http, game, view["legal"][0]["action"], timeout=1.0)
            except httpx.TimeoutException:
                break
        deadline = time.monotonic() + START_SECONDS
        while not waiting.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert waiting.exists()  # the bot is thinking
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    go.touch()
    with craits_serve(games, "--agents", spec) as (http, _):
        view = get(http, game)  # rebuilt: the person's move is there; the bot moved since
        assert view["event_count"] > count and not view["failed"]
        assert view["your_turn"] or view["game_over"]
        lines = [
            e["text"]
            for e in http.get(
                f"/api/games/{game['game_id']}", params={"token": game["token"], "since": count}
            ).json()["events"]
        ]
        assert lines[0].startswith("you ")  # the person's move, stored before the kill
        assert any(line.startswith("player_0 ") for line in lines[1:])  # then the bot's
