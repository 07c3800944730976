"""What the web tests share: an in-process client of the application and a player that
plays a whole game through the JSON API (plain functions: pytest forbids importing from a
conftest)."""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from craits.web.app import Settings, create_app

ROOT = Path(__file__).resolve().parent.parent
TOURNAMENT = ROOT / "experiments" / "results" / "web" / "tournament"
"""A committed tournament with its game records (the Watch and Compare pages' demo data)."""
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
