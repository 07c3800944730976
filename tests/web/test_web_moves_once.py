"""Moves applied exactly once (issue 43, G): every seat view carries ``decision``, a move
sent with ``"decision": K`` is applied only while the game is at decision ``K``, so the
same move posted twice at once — or a play and a draw at once — is applied once; a
resignation racing a move leaves the game, its view and its store in agreement.

The races run against a real uvicorn server on 127.0.0.1 (threads, a barrier)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from craits.web.app import Settings, create_app
from craits.web.server import running

from ..webclient import client, new_game

QUICK = {"hand_sizes": [4, 3]}


@pytest.fixture
def c(tmp_path: Path) -> Any:
    return client(tmp_path / "games")


def test_a_view_carries_the_decisions_made_so_far(c: Any) -> None:
    game_id, token = new_game(c, opponents=["random", "greedy"], seat=2, seed=5, rules=QUICK)
    v = c.get(f"/api/games/{game_id}", params={"token": token}).json()
    session = c.app.state.store.held(game_id)
    assert type(v["decision"]) is int and v["decision"] == len(session.table.actions) > 0
    action = v["legal"][0]["action"]
    r = c.post(
        f"/api/games/{game_id}/actions",
        json={"token": token, "action": action, "decision": v["decision"]},
    )
    assert r.status_code == 200, r.text
    after = r.json()
    assert after["decision"] == len(session.table.actions) > v["decision"]
    assert session.table.actions[v["decision"]] == action


def test_a_move_of_another_decision_is_409_with_the_current_view_and_not_applied(c: Any) -> None:
    game_id, token = new_game(c, opponents=["random"], seed=3, rules=QUICK)
    v = c.get(f"/api/games/{game_id}", params={"token": token}).json()
    k, action = v["decision"], v["legal"][0]["action"]
    body = {"token": token, "action": action, "decision": k}
    assert c.post(f"/api/games/{game_id}/actions", json=body).status_code == 200
    now = len(c.app.state.store.held(game_id).table.actions)
    for stale in (k, k + 1000, 0):  # the same move again, one from the future, the first
        r = c.post(f"/api/games/{game_id}/actions", json={**body, "decision": stale})
        assert r.status_code == 409, r.text
        answer = r.json()
        assert set(answer) == {"error", "decision", "view"}, answer
        assert f"answers decision {stale}, the game is at decision {now}" in answer["error"]
        assert answer["decision"] == answer["view"]["decision"] == now
        assert len(c.app.state.store.held(game_id).table.actions) == now
    for bad in (-1, "3", 2.0, True, [1]):
        r = c.post(f"/api/games/{game_id}/actions", json={**body, "decision": bad})
        assert r.status_code == 400 and "decision: got" in r.json()["error"], r.text
    r = c.post(f"/api/games/{game_id}/actions", json={**body, "decison": now})
    assert r.status_code == 400 and "unknown key(s) decison" in r.json()["error"], r.text
    assert len(c.app.state.store.held(game_id).table.actions) == now


def _at_once(url: str, requests: list[tuple[str, dict[str, Any]]]) -> list[httpx.Response]:
    """Post each ``(path, body)`` from its own thread and connection, released together."""
    barrier = threading.Barrier(len(requests))
    answers: list[httpx.Response | None] = [None] * len(requests)

    def post(i: int) -> None:
        path, body = requests[i]
        with httpx.Client(base_url=url, timeout=30) as http:
            http.get("/api/specs")  # the connection opened before the race
            barrier.wait()
            answers[i] = http.post(path, json=body)

    threads = [threading.Thread(target=post, args=(i,)) for i in range(len(requests))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert all(a is not None for a in answers)
    return [a for a in answers if a is not None]


@pytest.mark.slow
def test_concurrent_duplicates_and_play_draw_pairs_are_applied_once(tmp_path: Path) -> None:
    app = create_app(Settings(games_dir=tmp_path / "games", store=":memory:", client_games=0))
    store = app.state.store
    races = applied = 0
    with running(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        for seed in range(40):
            r = http.post("/api/games", json={"opponents": ["random"], "seed": seed})
            game_id, token = r.json()["game_id"], r.json()["token"]
            v = http.get(f"/api/games/{game_id}", params={"token": token}).json()
            if not v["your_turn"]:
                continue
            legal = [a["action"] for a in v["legal"]]
            first = legal[0]
            second = legal[-1] if seed % 2 else first  # a play and a draw, or the same twice
            k = v["decision"]
            path = f"/api/games/{game_id}/actions"
            answers = _at_once(
                url,
                [
                    (path, {"token": token, "action": first, "decision": k}),
                    (path, {"token": token, "action": second, "decision": k}),
                ],
            )
            statuses = [a.status_code for a in answers]
            assert sorted(statuses) == [200, 409], [a.text[:200] for a in answers]
            won = statuses.index(200)
            actions = store.held(game_id).table.actions
            assert actions[k] == (first, second)[won]  # the winner's move, and it alone
            loser = answers[1 - won].json()
            assert loser["decision"] == answers[won].json()["decision"] == len(actions)
            races += 1
            applied += statuses.count(200)
    assert races >= 20 and applied == races


@pytest.mark.slow
def test_a_resignation_racing_a_move_leaves_one_consistent_game(tmp_path: Path) -> None:
    store_file = tmp_path / "store.sqlite3"
    app = create_app(Settings(games_dir=tmp_path / "games", store=store_file))
    store = app.state.store
    outcomes = set()
    with running(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        for seed in range(16):
            r = http.post("/api/games", json={"opponents": ["random", "random"], "seed": seed})
            game_id, token = r.json()["game_id"], r.json()["token"]
            v = http.get(f"/api/games/{game_id}", params={"token": token}).json()
            if not v["your_turn"]:
                continue
            k = v["decision"]
            move, resign = _at_once(
                url,
                [
                    (
                        f"/api/games/{game_id}/actions",
                        {"token": token, "action": v["legal"][0]["action"], "decision": k},
                    ),
                    (f"/api/games/{game_id}/resign", {"token": token}),
                ],
            )
            assert resign.status_code == 200 and resign.json()["resigned"], resign.text
            end = http.get(f"/api/games/{game_id}", params={"token": token}).json()
            assert end["resigned"] and end["legal"] == [] and not end["your_turn"]
            if move.status_code == 200:  # the move first: applied, then the game resigned
                assert end["decision"] > k
                outcomes.add("moved, then resigned")
            else:  # the resignation first: the move refused, nothing applied
                assert move.status_code == 409 and "resigned" in move.json()["error"], move.text
                assert end["decision"] == k
                outcomes.add("resigned first")
            stored = store.database.load(game_id)
            assert stored is not None and stored.resigned
            assert stored.actions == store.held(game_id).table.actions  # memory == store
            assert len(stored.actions) == end["decision"]
    assert outcomes  # (which of the two wins is up to the scheduler)
