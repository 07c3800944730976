"""Read answers off the server's process, once, in a fair share (issue 43, B): a saved
record's frames are built once however often they are asked for (concurrently too), each
client has at most ``PER_CLIENT`` answers made at once, concurrent identical folder scans
are one scan, and with ``read_workers`` the replays are built in another process."""

from __future__ import annotations

import asyncio
import os
import random
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from craits.web import folder_scan
from craits.web.app import Settings, create_app
from craits.web.readers import PER_CLIENT, Readers
from craits.web.server import running
from craits.web.views import seat_view

from ..webclient import TOURNAMENT, client, new_game

CARDS = TOURNAMENT.parents[1] / "benchmark"  # the committed report cards

LONG = {"hand_sizes": [8, 8, 8, 8, 8, 8]}


def _replay(c: Any, key: str, **params: Any) -> dict[str, Any]:
    r = c.get("/api/records/replay", params={"file": key, "game": 1, **params})
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_a_replay_is_built_once_and_again_when_its_file_changes(tmp_path: Path) -> None:
    records = tmp_path / "records"
    records.mkdir()
    source = next(TOURNAMENT.glob("**/records.jsonl"))
    copy = records / "r.jsonl"
    copy.write_bytes(source.read_bytes())
    c = client(tmp_path / "games", record_dirs=[records])
    made = c.app.state.readers
    key = c.get("/api/records").json()["files"][0]["key"]
    first = _replay(c, key, seat=1)
    assert made.made == 1
    assert _replay(c, key, seat=1) == first and made.made == 1  # kept
    _replay(c, key, seat=1, count=5)  # another window: another answer
    assert made.made == 2
    games = c.get("/api/records/games", params={"file": key}).json()
    assert c.get("/api/records/games", params={"file": key}).json() == games and made.made == 3
    later = time.time() + 5
    os.utime(copy, (later, later))  # the file changed: made anew
    assert _replay(c, key, seat=1) == first and made.made == 4
    r = c.get("/api/records/replay", params={"file": key, "game": 99})
    assert r.status_code == 404 and "there is no game 99" in r.json()["error"]
    c.get("/api/records/replay", params={"file": key, "game": 99})
    assert made.made == 6  # an error is not kept


def test_concurrent_identical_answers_are_made_once_and_a_client_has_its_share() -> None:
    running_now: dict[str, int] = {}
    most: dict[str, int] = {}
    lock = threading.Lock()

    def make(client: str, i: int) -> tuple[int, bytes]:
        with lock:
            running_now[client] = running_now.get(client, 0) + 1
            most[client] = max(most.get(client, 0), running_now[client])
        time.sleep(0.2)
        with lock:
            running_now[client] -= 1
        return 200, f'{{"i": {i}}}'.encode()

    async def main() -> list[Any]:
        r = Readers(workers=0)
        same = [r.answer("A", "same", make, "A", 0) for _ in range(8)]
        answers = await asyncio.gather(*same)
        assert r.made == 1 and set(answers) == {(200, b'{"i": 0}')}
        many = [r.answer("A", ("a", i), make, "A", i) for i in range(6)]
        other = r.answer("B", "b", make, "B", 9)  # not behind A's six
        return list(await asyncio.gather(*many, other))

    assert len(asyncio.run(main())) == 7
    assert most["A"] == PER_CLIENT and most["B"] == 1


def test_concurrent_identical_scans_are_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = tmp_path / "records"
    records.mkdir()
    (records / "x.jsonl").write_text("{}\n")
    calls = []
    real = folder_scan.scan

    def slow_scan(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        time.sleep(0.3)
        return real(*args, **kw)

    monkeypatch.setattr(folder_scan, "scan", slow_scan)
    c = client(tmp_path / "games", record_dirs=[records])
    library = c.app.state.library
    threads = [threading.Thread(target=library.record_files) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(calls) == 2  # one scan per folder (the saved games', the records'), not 16


@pytest.mark.slow
def test_replays_are_built_in_a_reader_process(tmp_path: Path) -> None:
    pids: list[int] = []
    app = create_app(
        Settings(games_dir=tmp_path / "games", record_dirs=[TOURNAMENT], read_workers=1)
    )
    with running(app) as url, httpx.Client(base_url=url, timeout=60) as http:
        listed = http.get("/api/records").json()  # (a reader process's listing too)
        key = listed["files"][0]["key"]
        asked = {"file": key, "game": 1, "seat": 0}
        answer = http.get("/api/records/replay", params=asked)
        assert answer.status_code == 200, answer.text
        pool = app.state.readers._pool
        assert pool is not None
        pids = [p.pid for p in pool._processes.values()]
    assert pids and os.getpid() not in pids
    local = client(tmp_path / "games2", record_dirs=[TOURNAMENT])
    assert local.get("/api/records/replay", params=asked).json() == answer.json()
    assert local.get("/api/records").json() == listed


def test_a_long_view_encodes_each_event_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 43, B: a long game's ``?since=0`` view at the rate limit, p50 276 ms: every
    event was made a dict and encoded again at each view."""
    from craits.web import sessions

    c = client(tmp_path / "games")
    game_id, token = new_game(c, opponents=["random", "random"], seed=4, rules=LONG)
    v = c.get(f"/api/games/{game_id}", params={"token": token}).json()
    rng = random.Random(2)
    for _ in range(30):
        if not v["legal"]:
            break
        body = {"token": token, "action": rng.choice(v["legal"])["action"]}
        v = c.post(f"/api/games/{game_id}/actions", json=body).json()
    session = c.app.state.store.held(game_id)
    encoded = []
    real = sessions.Event.to_dict
    monkeypatch.setattr(sessions.Event, "to_dict", lambda e: encoded.append(1) or real(e))
    whole = c.get(f"/api/games/{game_id}", params={"token": token, "since": 0}).json()
    again = c.get(f"/api/games/{game_id}", params={"token": token, "since": 0}).json()
    assert whole == again and len(whole["events"]) == len(session.events) > 50
    assert encoded == []  # every event was encoded when a view first gave it
    assert whole == seat_view(session, 0)  # the same view as the dict's


@pytest.mark.slow
def test_result_sets_and_the_leaderboard_are_listed_in_a_reader_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 43, B: ``/api/results`` and ``/api/cards`` scan the result folders; with
    ``read_workers`` they are made off the server's process (this process's library is never
    asked) and answer as the in-process ones do, bad values included."""
    from craits.web.library import Library

    folders = [TOURNAMENT, CARDS]
    local = client(tmp_path / "games2", result_dirs=folders)
    expected = local.get("/api/results").json(), local.get("/api/cards").json()
    assert expected[0]["results"] and len(expected[1]["rows"]) == 8  # the 8 committed cards
    refused = (
        local.get("/api/cards", params={"suite": "v9"}),
        local.get("/api/results", params={"offset": -1}),
    )

    def here(*args: object) -> None:
        raise AssertionError("listed in the server's process")

    monkeypatch.setattr(Library, "result_sets", here)
    monkeypatch.setattr(Library, "leaderboard", here)
    app = create_app(Settings(games_dir=tmp_path / "games", result_dirs=folders, read_workers=1))
    with running(app) as url, httpx.Client(base_url=url, timeout=60) as http:
        assert (http.get("/api/results").json(), http.get("/api/cards").json()) == expected
        for old, new in zip(
            refused,
            (
                http.get("/api/cards", params={"suite": "v9"}),
                http.get("/api/results", params={"offset": -1}),
            ),
            strict=True,
        ):
            assert (new.status_code, new.json()) == (old.status_code, old.json())
