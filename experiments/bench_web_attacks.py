"""The attacks of issue 43 against a real ``craits serve``, bounded and on loopback only:
what each costs another user (p50/p95 of their requests), and how often a duplicated move is
applied twice.

One server per run (``python -m craits serve --bot-workers 2`` on 127.0.0.1, a fresh folder),
then for each attack, ``--seconds`` long: the attacker's threads from 127.0.0.1 (and
127.0.0.2-4 where the issue used several addresses) and, meanwhile, **another user** from
127.0.1.2 (another /24 network), every 50 ms in turn: ``GET /`` (a page), the view of their
own game against ``random`` and a move in it (a new game when it ends), and — in the
``searches`` attack — a move in a game against ``pimc:64`` (its latency and the moves it
made are reported apart: ``victim_search_*``).

- ``idle`` — no attack (the baseline);
- ``replays`` — 16 threads asking for windows of a 40-hand game's replay;
- ``views`` — 4 threads asking for a long game's whole view (``?since=0``);
- ``listings`` — 8 threads listing a folder of ``--files`` record-named files;
- ``champion`` — 4 addresses playing 10 games each against three ``champion``;
- ``searches`` — 2 addresses playing 4 games each against three ``openspiel-ismcts:4``
  and three ``pimc:2048``;
- ``duplicates`` — 20 moves each posted twice at once (with ``decision``).

``--tree DIR`` runs another checkout's ``craits`` (``git archive COMMIT craits craits_env``
unpacked in DIR: the tree before the fixes); the bots are this checkout's. Writes one JSON
row per attack::

    python experiments/bench_web_attacks.py --seconds 15 --out before.json --tree /path/before
    python experiments/bench_web_attacks.py --seconds 15 --out after.json
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx

from craits.table import HumanTable
from craits_env.records import write_records
from craits_env.rules import Rules

VICTIM = "127.0.1.2"
ATTACKERS = ("127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4")
QUICK = {"hand_sizes": [4, 3]}
MAX_LOOPS = 100_000  # iterations of any loop at most (bounded)


@contextmanager
def serve(folder: Path, tree: Path | None) -> Iterator[str]:
    """``craits serve`` on a free port of 127.0.0.1; its URL; stopped at the end."""
    env = dict(os.environ)
    cwd = None
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
        cwd = str(tree)
    args = [sys.executable, "-m", "craits", "serve", "--port", "0", "--games"]
    args += [str(folder / "games"), "--records", str(folder / "records"), "--bot-workers", "2"]
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=cwd
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        yield line.split("serving ", 1)[1].split("/ ", 1)[0]
    finally:
        proc.terminate()
        with suppress(subprocess.TimeoutExpired):
            proc.wait(20)
        if proc.poll() is None:
            proc.kill()
            proc.wait(20)


def http_from(url: str, address: str, timeout: float = 120) -> httpx.Client:
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=url, transport=transport, timeout=timeout)


def long_record(folder: Path, hands: int = 40) -> None:
    """A record of a long 4-player game of random moves, for the replays."""
    rules = Rules(hand_sizes=(8,) * hands)
    table = HumanTable(("random",) * 3, seat=0, seed=3, rules=rules, source="bench")
    table.start()
    rng = random.Random(3)
    while not table.game.is_over:
        table.decide(rng.choice(table.game.legal_actions()))
    (folder / "records").mkdir(parents=True, exist_ok=True)
    write_records(folder / "records" / "long.jsonl", [table.record()])


def many_files(folder: Path, count: int) -> None:
    big = folder / "records" / "many"
    big.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (big / f"f{i:06d}.jsonl").write_text("{}\n")


def play(http: httpx.Client, game: dict[str, str], rng: random.Random) -> httpx.Response:
    """One move of ``game`` (a random legal one), with the view's decision."""
    view = http.get(f"/api/games/{game['game_id']}", params={"token": game["token"]}).json()
    legal = view.get("legal") or [{"action": 52}]
    body = {"token": game["token"], "action": rng.choice(legal)["action"]}
    if "decision" in view:
        body["decision"] = view["decision"]
    return http.post(f"/api/games/{game['game_id']}/actions", json=body)


def new_game(http: httpx.Client, opponents: list[str], **extra: Any) -> dict[str, str] | None:
    r = http.post("/api/games", json={"opponents": opponents, **extra})
    return r.json() if r.status_code == 201 else None


class Victim(threading.Thread):
    """Another user's requests every 50 ms (see the module docstring)."""

    def __init__(self, url: str, stop: threading.Event, search: bool) -> None:
        super().__init__(daemon=True)
        self.url, self.stop, self.search = url, stop, search
        self.ms: list[float] = []
        self.errors = 0
        self.search_ms: list[float] = []
        self.search_moves = 0
        self.searched: dict[str, str] | None = None

    def timed(self, call: Callable[[], httpx.Response], into: list[float]) -> httpx.Response:
        start = time.perf_counter()
        try:
            r = call()
        except httpx.HTTPError:
            self.errors += into is self.ms
            into.append(1000 * (time.perf_counter() - start))
            raise
        into.append(1000 * (time.perf_counter() - start))
        if r.status_code >= 400 and into is self.ms:
            self.errors += 1
        return r

    def run(self) -> None:
        rng = random.Random(7)
        with http_from(self.url, VICTIM) as http:
            game = new_game(http, ["random"], rules=QUICK)
            self.searched = new_game(http, ["pimc:64"], rules=QUICK) if self.search else None
            searcher: threading.Thread | None = None
            for _ in range(MAX_LOOPS):
                if self.stop.is_set():
                    break
                idle = searcher is None or not searcher.is_alive()
                if self.search and self.searched and idle:
                    searcher = threading.Thread(target=self.search_move, args=(self.searched,))
                    searcher.start()
                with suppress(httpx.HTTPError):
                    self.timed(lambda: http.get("/"), self.ms)
                    if game is not None:
                        r = self.timed(functools.partial(play, http, game, rng), self.ms)
                        if r.status_code != 200 or r.json().get("game_over"):
                            game = new_game(http, ["random"], rules=QUICK)
                time.sleep(0.05)
            if searcher is not None:
                searcher.join(120)

    def search_move(self, game: dict[str, str]) -> None:
        with suppress(httpx.HTTPError), http_from(self.url, VICTIM) as http:
            r = self.timed(lambda: play(http, game, random.Random()), self.search_ms)
            if r.status_code == 200:
                self.search_moves += 1
            if r.status_code != 200 or r.json().get("game_over"):
                self.searched = new_game(http, ["pimc:64"], rules=QUICK)


def hammer(
    url: str, addresses: list[str], stop: threading.Event, work: Callable[..., None]
) -> list[threading.Thread]:
    threads = []
    for i, address in enumerate(addresses):
        t = threading.Thread(target=work, args=(url, address, stop, i), daemon=True)
        t.start()
        threads.append(t)
    return threads


def replays(url: str, address: str, stop: threading.Event, i: int) -> None:
    with http_from(url, address) as http:
        key = next(
            f["key"] for f in http.get("/api/records").json()["files"] if "long" in f["name"]
        )
        for n in range(MAX_LOOPS):
            if stop.is_set():
                return
            start = (n * 16 + i) * 97 % 2000
            with suppress(httpx.HTTPError):
                http.get("/api/records/replay", params={"file": key, "from": start, "count": 500})


def views(url: str, address: str, stop: threading.Event, i: int, game: dict[str, str]) -> None:
    with http_from(url, address) as http:
        for _ in range(MAX_LOOPS):
            if stop.is_set():
                return
            with suppress(httpx.HTTPError):
                params: dict[str, str | int] = {"token": game["token"], "since": 0}
                http.get(f"/api/games/{game['game_id']}", params=params)
            time.sleep(0.04)


def listings(url: str, address: str, stop: threading.Event, i: int) -> None:
    with http_from(url, address) as http:
        for n in range(MAX_LOOPS):
            if stop.is_set():
                return
            with suppress(httpx.HTTPError):
                http.get("/api/records", params={"offset": (n * 8 + i) % 500, "limit": 100})


def players(opponents: list[str], games: int, rules: dict[str, Any]) -> Callable[..., None]:
    def run(url: str, address: str, stop: threading.Event, i: int) -> None:
        rng = random.Random(i)
        with http_from(url, address, timeout=300) as http:
            held = [g for g in (new_game(http, opponents, rules=rules) for _ in range(games)) if g]
            for n in range(MAX_LOOPS):
                if stop.is_set() or not held:
                    return
                game = held[n % len(held)]
                with suppress(httpx.HTTPError):
                    r = play(http, game, rng)
                    if r.status_code != 200 or r.json().get("game_over"):
                        held.remove(game)
                        fresh = new_game(http, opponents, rules=rules)
                        if fresh:
                            held.append(fresh)

    return run


def _table_after(seed: int, moves: list[int]) -> HumanTable:
    """The server's game of ``seed`` (the person at seat 0 against ``random``) after the
    decisions ``moves``, the bots having moved until the person's turn."""
    table = HumanTable(("random",), seat=0, seed=seed, rules=Rules(), source="craits serve")
    table.start()
    for action in moves:
        table.decide(action)
    while table.bot_to_move() is not None:
        table.decide(table.bot_move())
    return table


def _again_legal(seed: int, moves: list[int]) -> int | None:
    """An action of the person's now that is legal again at their next decision, the bots
    having moved: the move an attacker posts twice."""
    now = _table_after(seed, moves)
    for action in now.game.legal_actions():
        later = _table_after(seed, [*now.actions, action])
        if not later.game.is_over and action in later.game.legal_actions():
            return int(action)
    return None


def duplicates(url: str) -> dict[str, Any]:
    """20 moves each posted twice at once, each a move legal again after it (as the
    attacker chose them): how many were applied twice."""
    twice = races = 0
    with http_from(url, "127.0.2.5") as http:
        for seed in range(200):
            if races == 20:
                break
            game = new_game(http, ["random"], seed=seed)
            if game is None:
                continue
            path = f"/api/games/{game['game_id']}"
            view = http.get(path, params={"token": game["token"]}).json()
            moves: list[int] = []  # every decision so far, as the server made them
            action = None
            for _ in range(40):  # a position where a move is legal again after it
                moves = _table_after(seed, moves).actions
                action = _again_legal(seed, moves)
                if action is not None or view.get("game_over") or not view["legal"]:
                    break
                step = {"token": game["token"], "action": view["legal"][0]["action"]}
                view = http.post(f"{path}/actions", json=step).json()
                moves = [*moves, step["action"]]
            done = view.get("decision")  # (None on a server without it: before the fixes)
            if action is None or action not in [a["action"] for a in view.get("legal", [])]:
                http.post(f"{path}/resign", json={"token": game["token"]})
                continue
            body = {"token": game["token"], "action": action}
            if done is not None:
                body["decision"] = done
            barrier = threading.Barrier(2)
            codes: list[int] = []

            def post(
                b: dict[str, Any] = body,
                path: str = path,
                barrier: threading.Barrier = barrier,
                codes: list[int] = codes,
            ) -> None:
                with http_from(url, "127.0.2.5") as mine:
                    mine.get("/api/specs")
                    barrier.wait()
                    codes.append(mine.post(f"{path}/actions", json=b).status_code)

            threads = [threading.Thread(target=post) for _ in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            races += 1
            twice += codes.count(200) == 2
            http.post(f"{path}/resign", json={"token": game["token"]})
    return {"attack": "duplicates", "races": races, "applied_twice": twice}


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def attack(url: str, name: str, seconds: float, long_game: dict[str, str] | None) -> dict[str, Any]:
    stop = threading.Event()
    victim = Victim(url, stop, search=name in ("searches", "idle"))
    threads: list[threading.Thread] = []
    if name == "replays":
        threads = hammer(url, ["127.0.0.1"] * 16, stop, replays)
    elif name == "views" and long_game is not None:
        work = lambda u, a, s, i: views(u, a, s, i, long_game)  # noqa: E731
        threads = hammer(url, ["127.0.0.1"] * 4, stop, work)
    elif name == "listings":
        threads = hammer(url, ["127.0.0.1"] * 8, stop, listings)
    elif name == "champion":
        threads = hammer(url, list(ATTACKERS), stop, players(["champion"] * 3, 10, {}))
    elif name == "searches":
        work = players(["openspiel-ismcts:4", "random"], 4, QUICK)
        threads = hammer(url, list(ATTACKERS[:2]), stop, work)
        threads += hammer(url, list(ATTACKERS[2:]), stop, players(["pimc:2048"] * 3, 4, {}))
    time.sleep(1.0)  # the attack under way
    victim.start()
    time.sleep(seconds)
    stop.set()
    victim.join(150)
    for t in threads:
        t.join(5)
    return {
        "attack": name,
        "others_requests": len(victim.ms),
        "others_p50_ms": percentile(victim.ms, 0.5),
        "others_p95_ms": percentile(victim.ms, 0.95),
        "others_errors": victim.errors,
        "victim_search_moves": victim.search_moves if victim.search else None,
        "victim_search_p95_ms": percentile(victim.search_ms, 0.95),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--tree", type=Path, help="a checkout's root whose craits is served")
    parser.add_argument("--attacks", default="idle,replays,views,listings,champion,searches")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        long_record(folder)
        many_files(folder, args.files)
        with serve(folder, args.tree) as url:
            long_game = None
            with http_from(url, "127.0.0.6") as http:  # a long game for the views
                long_game = new_game(http, ["random"], rules={"hand_sizes": [8] * 60})
                rng = random.Random(5)
                for _ in range(400):
                    if long_game is None:
                        break
                    play(http, long_game, rng)
            for name in args.attacks.split(","):
                row = attack(url, name, args.seconds, long_game)
                print(json.dumps(row), flush=True)
                rows.append(row)
            row = duplicates(url)
            print(json.dumps(row), flush=True)
            rows.append(row)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
