"""``craits serve``'s JSON API (docs/interface.md, "Web API"): the contract, tokens, refusals
that change nothing, whole games, saving, a restart, the session cap, files outside the
listed folders, bots that think without blocking other games, and a small load test
against a real uvicorn server."""

from __future__ import annotations

import asyncio
import io
import json
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from craits.play import PlaySession
from craits.terminal import Terminal
from craits.web.app import Settings, create_app
from craits.web.server import running
from craits_env.actions import NUM_ACTIONS, action_str
from craits_env.engine import Game
from craits_env.records import read_records
from craits_env.rules import Rules

from ..webclient import TOURNAMENT, client, new_game, play_out

QUICK = {"hand_sizes": [2, 1]}
VIEW_KEYS = {
    "hand",
    "top",
    "active_suit",
    "count",
    "phase",
    "current_player",
    "seat",
    "hand_sizes",
    "scores",
    "legal",
    "game_over",
    "events",
}


@pytest.fixture
def c(tmp_path: Path) -> Any:
    return client(tmp_path / "games", record_dirs=[TOURNAMENT], result_dirs=[TOURNAMENT])


def view(c: Any, game_id: str, token: str, **params: Any) -> dict[str, Any]:
    r = c.get(f"/api/games/{game_id}", params={"token": token, **params})
    assert r.status_code == 200, r.text
    return r.json()


def one_line_error(r: Any, status: int, fragment: str) -> None:
    assert r.status_code == status, (r.status_code, r.text)
    error = r.json()["error"]
    assert set(r.json()) == {"error"} and "\n" not in error and fragment in error, error


# ----------------------------------------------------------------------------- the contract


def test_the_contract_new_game_and_seat_view(c: Any) -> None:
    r = c.post(
        "/api/games",
        json={
            "opponents": ["random", "greedy"],
            "seat": 1,
            "seed": 11,
            "rules": {"face_cards": True},
        },
    )
    assert r.status_code == 201 and set(r.json()) == {"game_id", "token"}
    game_id, token = r.json()["game_id"], r.json()["token"]
    assert len(token) >= 32 and len(game_id) >= 16
    v = view(c, game_id, token)
    assert set(v) >= VIEW_KEYS
    assert v["seat"] == 1 and v["num_players"] == 3 and v["rules"]["face_cards"] is True
    assert v["phase"] in ("play", "count", "call_suit", "declare")
    assert v["current_player"] == 1 and v["your_turn"]  # the bots moved until our turn
    assert len(v["hand"]) == v["hand_sizes"][1] and v["hand"] == sorted(v["hand"], key=_index)
    assert [p["spec"] for p in v["players"]] == ["random", "human", "greedy"]
    for a in v["legal"]:
        assert set(a) == {"action", "label"} and a["label"] == action_str(a["action"])
    assert v["seed"] == 11  # chosen by the player: shown
    assert v["events"] and v["events"][0]["kind"] == "deal"
    assert v["events"][0]["text"].startswith("Hand 1/15: 8 cards each")
    assert view(c, game_id, token)["events"] == []  # the events since the last view
    assert len(view(c, game_id, token, since=0)["events"]) == v["event_count"]


def _index(card: str) -> int:
    return "cdhs".index(card[1]) * 13 + "A23456789TJQK".index(card[0])


def test_a_seed_deals_the_game_craits_play_deals(c: Any) -> None:
    game_id, _ = new_game(c, opponents=["expert", "random"], seat=2, seed=42)
    session = c.app.state.store.held(game_id)
    terminal = Terminal(io.StringIO(), io.StringIO())
    play = PlaySession(["expert", "random"], terminal, seat=2, seed=42, interactive=False)
    assert session.game.start_events == play.game.start_events  # the same first deal
    assert session.seats == play.seats
    assert type(session.table) is type(play.table)  # one table: craits.table.HumanTable


def test_a_fresh_seed_stays_secret_until_the_game_is_over(c: Any) -> None:
    # A fresh seed is drawn at random, and a game of hands 2 and 1 can end before the
    # player has a choice (every move forced): such a game shows its seed at once.
    for _ in range(20):
        game_id, token = new_game(c, opponents=["random"], rules=QUICK)
        first = view(c, game_id, token)
        if not first["game_over"]:
            break
        assert isinstance(first["seed"], int)  # over: the seed may be shown
    assert not first["game_over"]
    assert first["seed"] is None  # it determines every deal
    final = play_out(c, game_id, token, random.Random(0))
    assert isinstance(final["seed"], int)


def test_a_whole_game_through_the_api(c: Any) -> None:
    game_id, token = new_game(
        c, opponents=["greedy", "expert", "random"], seed=3, rules={"hand_sizes": [3, 2, 1]}
    )
    seen: list[dict[str, Any]] = []
    final = play_out(c, game_id, token, random.Random(3), seen.append)
    game = c.app.state.store.held(game_id).game
    assert final["game_over"] and final["phase"] == "game_over" and final["current_player"] is None
    assert final["legal"] == [] and not final["your_turn"]
    assert final["scores"] == game.scores and final["winners"] == game.winners()
    assert len(final["hand_points"]) == 3
    assert [sum(h[s] for h in final["hand_points"]) for s in range(4)] == final["scores"]
    assert final["standings"][0].startswith("Final standings")
    events = [e for v in seen for e in v["events"]]
    assert len(events) == final["event_count"]  # every event exactly once
    assert sum(e["text"].startswith("Hand ") and e["kind"] == "scoring" for e in events) == 3
    r = c.post(f"/api/games/{game_id}/actions", json={"token": token, "action": 52})
    one_line_error(r, 409, "the game is over")


# ----------------------------------------------------------------------------- tokens


def test_wrong_missing_or_foreign_tokens_are_refused(c: Any) -> None:
    a_id, a_token = new_game(c, opponents=["random"], seed=1)
    _, b_token = new_game(c, opponents=["random"], seed=2)
    one_line_error(c.get(f"/api/games/{a_id}", params={"token": b_token}), 403, "wrong token")
    one_line_error(c.get(f"/api/games/{a_id}"), 403, "token")
    one_line_error(c.get("/api/games/nosuchgame", params={"token": a_token}), 404, "no game")
    before = view(c, a_id, a_token, since=0)
    action = before["legal"][0]["action"]
    r = c.post(f"/api/games/{a_id}/actions", json={"token": b_token, "action": action})
    one_line_error(r, 403, "wrong token")
    r = c.post(f"/api/games/{a_id}/actions", json={"action": action})
    one_line_error(r, 403, "token")
    for path in ("resign", "save"):
        one_line_error(c.post(f"/api/games/{a_id}/{path}", json={"token": b_token}), 403, "wrong")
    assert view(c, a_id, a_token, since=0) == before  # nothing changed


# ----------------------------------------------------------------------------- refusals


def state_of(c: Any, game_id: str, token: str) -> tuple[Any, ...]:
    session = c.app.state.store.held(game_id)
    return (
        json.dumps(session.game.snapshot()),
        len(session.recorder.decisions),
        len(session.events),
    )


def test_illegal_actions_get_409_and_change_nothing(c: Any) -> None:
    game_id, token = new_game(c, opponents=["random", "random"], seed=5)
    v = view(c, game_id, token)
    legal = {a["action"] for a in v["legal"]}
    before = state_of(c, game_id, token)
    for action in sorted(set(range(NUM_ACTIONS)) - legal)[:12]:
        r = c.post(f"/api/games/{game_id}/actions", json={"token": token, "action": action})
        one_line_error(r, 409, f"illegal action {action}")
        assert "legal now:" in r.json()["error"]
    assert state_of(c, game_id, token) == before


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        ("{not json", 400, "malformed JSON body"),
        ("[1, 2]", 400, "expected a JSON object"),
        ('"draw"', 400, "expected a JSON object"),
        ('{"token": "T"}', 400, "action: got None"),
        ('{"token": "T", "action": true}', 400, "action: got True"),
        ('{"token": "T", "action": 1.5}', 400, "action: got 1.5"),
        ('{"token": "T", "action": 99}', 400, "invalid action id 99"),
        ('{"token": "T", "action": "fly"}', 400, "invalid action 'fly'"),
    ],
)
def test_malformed_action_bodies_get_400_and_change_nothing(
    c: Any, body: str, status: int, fragment: str
) -> None:
    game_id, token = new_game(c, opponents=["random"], seed=9)
    before = state_of(c, game_id, token)
    r = c.post(
        f"/api/games/{game_id}/actions",
        content=body.replace('"T"', json.dumps(token)),
        headers={"content-type": "application/json"},
    )
    one_line_error(r, status, fragment)
    assert state_of(c, game_id, token) == before


def test_an_action_may_be_its_text(c: Any) -> None:
    game_id, token = new_game(c, opponents=["random"], seed=9)
    v = view(c, game_id, token)
    label = v["legal"][0]["label"]  # "play 7c", "draw", "call h"…
    text = label.removeprefix("play ")
    r = c.post(f"/api/games/{game_id}/actions", json={"token": token, "action": text})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({}, "opponents: got None"),
        ({"opponents": []}, "opponents: got 0 specs, allowed a list of 1 to 9"),
        ({"opponents": ["random"] * 10}, "got 10 specs"),
        (
            {"opponents": ["nobody"]},
            "unknown agent spec 'nobody'; allowed: belief-search[:N], champion, "
            "champion-search[:N], expert",
        ),
        ({"opponents": ["ppo:runs/x"]}, "craits serve --agents ppo:runs/x"),
        ({"opponents": ["os:getcwd"]}, "must be allowed when the server starts"),
        ({"opponents": ["pimc:1000000"]}, "'pimc:1000000': the number is at most 2048"),
        ({"opponents": ["random"], "seat": 2}, "seat: got 2, allowed 0 to 1"),
        ({"opponents": ["random"], "seat": True}, "seat: got True"),
        ({"opponents": ["random"], "seed": -1}, "seed: got -1"),
        ({"opponents": ["random"], "players": 3}, "players: got 3, but 1 opponents make 2"),
        ({"opponents": ["random"], "colour": "red"}, "unknown key(s) colour; allowed: opponents"),
        ({"opponents": ["random"], "rules": {"speed": 1}}, "unknown option(s) speed; allowed:"),
        ({"opponents": ["random"], "rules": {"face_cards": "maybe"}}, "face_cards: got 'maybe'"),
        ({"opponents": ["random"], "rules": {"hand_sizes": [0]}}, "hand_sizes"),
        ({"opponents": ["random"] * 9, "rules": {"num_decks": 1}}, "cannot deal"),
        ({"opponents": ["random"], "rules": [1]}, "rules: expected an object"),
    ],
)
def test_bad_new_games_get_400_naming_what_is_allowed(
    c: Any, body: dict[str, Any], fragment: str
) -> None:
    r = c.post("/api/games", json=body)
    one_line_error(r, 400, fragment)
    assert len(c.app.state.store) == 0


def test_rule_options_as_json_values_or_as_text(c: Any) -> None:
    as_json = {"hand_sizes": [3, 1], "face_cards": True, "seven_hits": "next_but_one"}
    as_text = {"hand_sizes": "3,1", "face_cards": "true", "seven_hits": "next_but_one"}
    for rules in (as_json, as_text):
        game_id, token = new_game(c, opponents=["random"], rules=rules)
        got = Rules.from_dict(view(c, game_id, token)["rules"])
        assert got == Rules(hand_sizes=(3, 1), face_cards=True, seven_hits="next_but_one")


def test_a_spec_naming_a_file_is_seated_once_the_server_allows_it(tmp_path: Path) -> None:
    agent = tmp_path / "first_legal.py"
    agent.write_text(
        "import numpy as np\n"
        "class First:\n"
        "    def act(self, observation):\n"
        "        return int(np.flatnonzero(observation['action_mask'])[0])\n"
    )
    spec = f"{agent}:First"
    c = client(tmp_path / "games", agents=[spec])
    game_id, token = new_game(c, opponents=[spec, "random"], rules=QUICK, seed=1)
    assert play_out(c, game_id, token, random.Random(1))["game_over"]


def test_a_failing_bot_ends_the_game_with_a_message_not_an_error(tmp_path: Path) -> None:
    agent = tmp_path / "broken.py"
    agent.write_text(
        "class Broken:\n    def act(self, observation):\n        raise RuntimeError('boom')\n"
    )
    spec = f"{agent}:Broken"
    c = client(tmp_path / "games", agents=[spec])
    game_id, token = new_game(c, opponents=[spec], rules=QUICK, seed=4)
    v = view(c, game_id, token)
    while v["failed"] is None:
        r = c.post(
            f"/api/games/{game_id}/actions",
            json={"token": token, "action": v["legal"][0]["action"]},
        )
        v = r.json()
    assert "RuntimeError: boom" in v["failed"] and v["legal"] == []
    r = c.post(f"/api/games/{game_id}/actions", json={"token": token, "action": 52})
    one_line_error(r, 409, "boom")


def test_unknown_routes_and_methods_answer_in_one_line(c: Any) -> None:
    one_line_error(c.get("/api/nothing"), 404, "not found: /api/nothing")
    one_line_error(c.delete("/api/games"), 405, "Method Not Allowed")
    one_line_error(c.get("/api/records/games"), 400, "file: Field required")


# ----------------------------------------------------------------------------- saving, watching


@pytest.mark.slow
def test_save_only_a_finished_game_then_watch_it_and_survive_a_restart(tmp_path: Path) -> None:
    games = tmp_path / "games"
    c = client(games)
    game_id, token = new_game(c, opponents=["expert"], seed=8, rules={"hand_sizes": [3, 2, 1]})
    one_line_error(
        c.post(f"/api/games/{game_id}/save", json={"token": token}), 409, "still being played"
    )
    assert not list(games.glob("*.jsonl"))  # the live game is in the store, not a record
    final = play_out(c, game_id, token, random.Random(8))
    saved = c.post(f"/api/games/{game_id}/save", json={"token": token}).json()
    assert view(c, game_id, token)["saved"] == saved
    again = c.post(f"/api/games/{game_id}/save", json={"token": token}).json()
    assert again == saved and len(list(games.glob("*.jsonl"))) == 1  # one record per game
    ((_, record),) = read_records(games / saved["name"])  # it replays and verifies
    assert record["scores"] == final["scores"] and record["seed"] == 8
    assert record["seats"] == ["human", "expert"] and record["meta"]["source"] == "craits serve"
    assert not list(games.glob(".*.tmp"))  # written atomically: no temporary file left

    restarted = client(games)  # a new server on the same folder: the record is still there
    files = restarted.get("/api/records").json()["files"]
    assert [f["key"] for f in files] == [saved["file"]] and files[0]["saved"]
    (game,) = restarted.get("/api/records/games", params={"file": saved["file"]}).json()["games"]
    assert game["scores"] == final["scores"] and game["finished"]
    replay = restarted.get("/api/records/replay", params={"file": saved["file"], "game": 1}).json()
    frames = replay["frames"]
    assert frames[0]["decision"] is None and frames[-1]["scores"] == final["scores"]
    assert len(frames) == 1 + game["decisions"]
    assert replay["standings"][0].startswith("Final standings")


def test_resign_ends_the_game_unfinished_and_it_can_be_saved(c: Any) -> None:
    game_id, token = new_game(c, opponents=["random"], seed=2)
    v = c.post(f"/api/games/{game_id}/resign", json={"token": token}).json()
    assert v["resigned"] and v["legal"] == [] and not v["game_over"] and v["standings"]
    r = c.post(f"/api/games/{game_id}/actions", json={"token": token, "action": 52})
    one_line_error(r, 409, "you resigned")
    saved = c.post(f"/api/games/{game_id}/save", json={"token": token}).json()
    files = c.get("/api/records").json()["files"]
    assert saved["file"] in [f["key"] for f in files]
    (game,) = c.get("/api/records/games", params={"file": saved["file"]}).json()["games"]
    assert not game["finished"]


def test_watch_a_tournament_game_from_above_and_from_one_seat(c: Any) -> None:
    files = c.get("/api/records").json()["files"]
    key = next(f["key"] for f in files if f["name"] == "records.jsonl")
    assert all(f["name"] != "games.jsonl" for f in files)  # results, not records
    games = c.get("/api/records/games", params={"file": key}).json()["games"]
    assert len(games) == 12 and games[0]["meta"]["source"] == "craits tournament"
    above = c.get("/api/records/replay", params={"file": key, "game": 2}).json()
    seat1 = c.get("/api/records/replay", params={"file": key, "game": 2, "seat": 1}).json()
    assert len(above["frames"]) == len(seat1["frames"]) == 1 + games[1]["decisions"]
    for a, b in zip(above["frames"], seat1["frames"], strict=True):
        assert all(h is not None for h in a["hands"])
        assert [h is not None for h in b["hands"]] == [s == 1 for s in range(4)]
        assert b["hands"][1] == a["hands"][1] and b["hand_sizes"] == a["hand_sizes"]
    assert above["frames"][-1]["scores"] == games[1]["scores"]
    r = c.get("/api/records/replay", params={"file": key, "game": 2, "seat": 7})
    one_line_error(r, 400, "seat: got 7, allowed 0 to 3")
    one_line_error(
        c.get("/api/records/replay", params={"file": key, "game": 13}),
        404,
        "there is no game 13 (the file holds 12 games)",
    )
    assert above["frame_count"] == len(above["frames"]) and above["frames_from"] == 0
    page = c.get("/api/records/replay", params={"file": key, "game": 2, "from": 5, "count": 7})
    assert page.json()["frames"] == above["frames"][5:12] and page.json()["frames_from"] == 5
    for bad in ({"from": -1}, {"count": 0}, {"count": 2001}, {"from": "x"}):
        r = c.get("/api/records/replay", params={"file": key, "game": 2, **bad})
        assert r.status_code == 400 and set(r.json()) == {"error"}, (bad, r.text)
    past = {"file": key, "game": 2, "from": above["frame_count"]}
    one_line_error(c.get("/api/records/replay", params=past), 400, "the game has")


@pytest.mark.parametrize(
    "key",
    [
        "0:../../../etc/passwd",
        "1:x.jsonl",
        "nothing",
        "0:",
        "9:records.jsonl",
        "1:games.jsonl",
        "1:/etc/hostname",
        "1:results.json",
    ],
)
def test_files_outside_the_listings_are_never_read(c: Any, key: str) -> None:
    one_line_error(c.get("/api/records/games", params={"file": key}), 404, "no record file")


@pytest.mark.slow
def test_compare_a_tournament(c: Any) -> None:
    (entry,) = c.get("/api/results").json()["results"]
    assert entry["title"].startswith("Web demo") and entry["chart"]
    data = c.get("/api/results/table", params={"key": entry["key"]}).json()
    stored = json.loads((TOURNAMENT / "results.json").read_text())
    assert [a["spec"] for a in data["agents"]] == [a["spec"] for a in stored["agents"]]
    assert data["head_to_head"] == stored["head_to_head"]
    png = c.get("/api/results/chart", params={"key": entry["key"]})
    assert png.status_code == 200 and png.content[:8] == b"\x89PNG\r\n\x1a\n"
    for bad in ("0:../web/tournament/results.json", "0:records.jsonl", "5:results.json"):
        one_line_error(c.get("/api/results/table", params={"key": bad}), 404, "no result set")


# ----------------------------------------------------------------------------- the store


def test_a_full_server_answers_503_in_one_line(tmp_path: Path) -> None:
    c = client(tmp_path, max_games=1)
    new_game(c, opponents=["random"])
    one_line_error(c.post("/api/games", json={"opponents": ["random"]}), 503, "its limit")


def test_only_loopback_host_names_are_served_when_bound_to_loopback(tmp_path: Path) -> None:
    c = client(tmp_path, allowed_hosts=["127.0.0.1", "localhost"])
    assert c.get("/api/specs", headers={"host": "127.0.0.1:8000"}).status_code == 200
    assert c.get("/api/specs", headers={"host": "evil.example:8000"}).status_code == 400


def test_pages_are_served_with_security_headers(c: Any) -> None:
    for path in ("/", "/play", "/watch", "/compare", "/static/common.js", "/static/craits.css"):
        r = c.get(path)
        assert r.status_code == 200, path
        assert "default-src 'self'" in r.headers["content-security-policy"]
    assert c.get("/api/specs").headers["cache-control"] == "no-store"


# ----------------------------------------------------------------------------- a real server


GATED_AGENT = """
import time
from pathlib import Path
import numpy as np

class Gated:
    def act(self, observation):
        Path({waiting!r}).touch()
        deadline = time.monotonic() + 30
        while not Path({go!r}).exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return int(np.flatnonzero(observation["action_mask"])[0])
"""


def test_a_thinking_bot_does_not_block_other_games(tmp_path: Path) -> None:
    waiting, go = tmp_path / "waiting", tmp_path / "go"
    agent = tmp_path / "gated.py"
    agent.write_text(GATED_AGENT.format(waiting=str(waiting), go=str(go)))
    spec = f"{agent}:Gated"
    app = create_app(Settings(games_dir=tmp_path / "games", agents=[spec]))
    with running(app) as url, httpx.Client(base_url=url, timeout=20) as http:
        other = http.post("/api/games", json={"opponents": ["random"], "seed": 1}).json()
        result: dict[str, Any] = {}

        bot = Game(2, Rules(), seed=3).current_player  # the seat that moves first
        human = 1 - bot

        def create() -> None:  # the gated bot moves first: the request waits for it
            r = http.post("/api/games", json={"opponents": [spec], "seat": human, "seed": 3})
            result["game"] = r.json()

        thread = threading.Thread(target=create)
        thread.start()
        deadline = time.monotonic() + 20
        while not waiting.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert waiting.exists() and thread.is_alive()  # the bot is thinking now
        r = http.get(f"/api/games/{other['game_id']}", params={"token": other["token"]}, timeout=5)
        assert r.status_code == 200  # another game answers meanwhile
        assert thread.is_alive()
        go.touch()
        thread.join(20)
        assert "token" in result["game"]


async def _play_http(http: httpx.AsyncClient, seed: int) -> dict[str, Any]:
    r = await http.post(
        "/api/games", json={"opponents": ["random", "greedy"], "seed": seed, "rules": QUICK}
    )
    assert r.status_code == 201, r.text
    game = r.json()
    rng = random.Random(seed)
    v = (await http.get(f"/api/games/{game['game_id']}", params={"token": game["token"]})).json()
    while not v["game_over"]:
        action = rng.choice(v["legal"])["action"]
        r = await http.post(
            f"/api/games/{game['game_id']}/actions", json={"token": game["token"], "action": action}
        )
        assert r.status_code == 200, r.text
        v = r.json()
    return v


@pytest.mark.slow
def test_many_simultaneous_games_on_a_real_server(tmp_path: Path) -> None:
    """The small version of experiments/bench_web.py: correctness only, no timing."""
    games = 24
    app = create_app(Settings(games_dir=tmp_path, client_games=0))  # one client, many games

    async def main(url: str) -> list[dict[str, Any]]:
        limits = httpx.Limits(max_connections=games)
        async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as http:
            return await asyncio.gather(*(_play_http(http, seed) for seed in range(games)))

    with running(app) as url:
        finals = asyncio.run(main(url))
    assert len(app.state.store) == games
    for seed, final in enumerate(finals):
        session = app.state.store.held(final["game_id"])
        assert session.seed == seed and final["scores"] == session.game.scores
        assert final["game_over"] and len(final["hand_points"]) == 2


# ----------------------------------------------------------------------------- the command


def craits(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "craits", *args], capture_output=True, text=True, timeout=60, **kw
    )


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--port", "70000"], "invalid port '70000': allowed 0 to 65535"),
        (["--records", "no/such/folder"], "no folder no/such/folder"),
        (["--agents", "random"], "--agents random: expected a spec naming a file or module"),
        (["--agents", "nosuch.py:X"], "--agents nosuch.py:X: agent spec 'nosuch.py:X': no such"),
        (["--max-games", "0"], "invalid value '0': expected an int >= 1"),
    ],
)
@pytest.mark.slow
def test_bad_serve_arguments_give_one_line_and_status_2(args: list[str], fragment: str) -> None:
    proc = craits("serve", *args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and fragment in proc.stderr, proc.stderr


@pytest.mark.slow
def test_serve_without_the_web_extra_names_it() -> None:
    code = (
        "import sys; sys.modules['fastapi'] = sys.modules['uvicorn'] = None; "
        "from craits.cli import main; sys.exit(main(['serve']))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "pip install 'craits[web]'" in proc.stderr


@pytest.mark.slow
def test_serve_starts_answers_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "craits", "serve", "--port", "0", "--games", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = line.split("serving ", 1)[1].split("/ ", 1)[0]
        assert url.startswith("http://127.0.0.1:"), line
        assert httpx.get(f"{url}/api/specs").status_code == 200
        assert httpx.get(f"{url}/api/specs", headers={"host": "evil.example"}).status_code == 400
        busy = craits("serve", "--port", url.rsplit(":", 1)[1])  # the same port: taken
        assert busy.returncode == 1 and "cannot listen on 127.0.0.1:" in busy.stderr
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
