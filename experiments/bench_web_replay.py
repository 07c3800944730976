"""The Watch page's replay of a long game: ``GET /api/records/replay`` of one saved game.

One game of ``--hands`` hands (the standard sizes 8 … 1 … 8, R2.2, over and over) between
``--players`` ``random`` agents is recorded and saved as a record file; then, for the frames
from above (``seat=None``) and from seat 0, the median of ``--repeats`` runs of:

* **frames** — :func:`craits.web.replays.game_frames` on the record read back (the replay
  through the engine, the narration, the frames), and the part of one such run that the
  cycle collector took (``gc.callbacks``: every collection during the call);
* **encoding** — the ``JSONResponse`` of those frames, as the route sends them;
* **request** — the whole request in process (``fastapi.testclient``): the record read
  from its file, the frames, the encoding, the transport; its status is checked 200.

The frames' and the request's CPU time (this process's) is given beside their wall time: on
a shared machine it counts less of the others' work.

Prints a Markdown table (seconds); ``experiments/results/web/replay.md`` holds its results.
``--profile K`` prints, instead, the ``K`` functions of most own time in ``cProfile`` runs of
the frames from above and from seat 0. Usage::

    python experiments/bench_web_replay.py --hands 400 --repeats 5
    python experiments/bench_web_replay.py --profile 15
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import platform
import pstats
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi.responses import JSONResponse

from craits.agents.arena import play_game
from craits.agents.base import RandomAgent
from craits.web.app import Settings, create_app
from craits.web.replays import game_frames
from craits_env import Game, Rules
from craits_env.public import PublicGame
from craits_env.records import GameRecorder, read_records, write_records
from craits_env.rules import STANDARD_HAND_SIZES


def long_game(hands: int, players: int, seed: int) -> dict[str, Any]:
    """The record of a game of ``hands`` hands between seeded ``random`` agents."""
    sizes = tuple(STANDARD_HAND_SIZES[i % len(STANDARD_HAND_SIZES)] for i in range(hands))
    game = Game(players, Rules(hand_sizes=sizes), seed=seed, record=True)
    public = PublicGame(game)
    recorder = GameRecorder(game, ["random"] * players, seed=seed, apply=public.apply)
    agents = [RandomAgent() for _ in range(players)]
    play_game(
        game, agents, [seed * 100 + s for s in range(players)], public=public, apply=recorder.apply
    )
    return recorder.record()


def median_seconds(run: Callable[[], object], repeats: int) -> tuple[float, float]:
    """The median wall time and the median CPU time of this process of ``repeats`` calls
    of ``run`` (a full collection before each)."""
    wall, cpu = [], []
    for _ in range(repeats):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def collector_seconds(run: Callable[[], object]) -> float:
    """The seconds the cycle collector ran during one call of ``run`` (``gc.callbacks``)."""
    spent = [0.0, 0.0]  # the total, the start of the collection under way

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            spent[1] = time.perf_counter()
        else:
            spent[0] += time.perf_counter() - spent[1]

    gc.collect()
    gc.callbacks.append(note)
    try:
        run()
    finally:
        gc.callbacks.remove(note)
    return spent[0]


def _time_seat(
    client: Any, key: str, record: dict[str, Any], seat: int | None, repeats: int
) -> tuple[list[float], float]:
    """The frames' median seconds (wall, CPU) and the collector's part of one run, the
    encoding's median seconds, the request's (wall, CPU), and the MB sent."""
    body = {"file": key, "game": 1, **game_frames(record, seat)}
    params = {"file": key, "game": 1, **({} if seat is None else {"seat": seat})}
    middle = body["frame_count"] // 2

    def request(**window: int) -> None:
        r = client.get("/api/records/replay", params={**params, **window})
        if r.status_code != 200:
            raise SystemExit(f"replay: {r.status_code} {r.text[:200]}")

    size = len(JSONResponse(body).body) / 1e6
    seconds = [
        *median_seconds(lambda: game_frames(record, seat), repeats),
        collector_seconds(lambda: game_frames(record, seat)),
        median_seconds(lambda: JSONResponse(body), repeats)[0],
        *median_seconds(request, repeats),
        median_seconds(lambda: request(**{"from": middle}), repeats)[0],
    ]
    return seconds, size


def profile(record: dict[str, Any], top: int) -> None:
    """Print the ``top`` functions of most own time of the frames from above and seat 0."""
    for seat in (None, 0):
        profiler = cProfile.Profile()
        profiler.runcall(game_frames, record, seat)
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
        print(f"\nseat={seat}:", *out.getvalue().strip().splitlines()[2:], sep="\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hands", type=int, default=400)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", type=int, default=0, metavar="K")
    args = parser.parse_args(argv)
    with warnings.catch_warnings():  # starlette's note on its test client's HTTP library
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    with tempfile.TemporaryDirectory() as tmp:
        write_records(Path(tmp) / "long.jsonl", [long_game(args.hands, args.players, args.seed)])
        ((_, record),) = read_records(Path(tmp) / "long.jsonl", verify=False)
        client = TestClient(create_app(Settings(games_dir=Path(tmp))))
        (listed,) = client.get("/api/records").json()["files"]
        decisions = sum(len(h["decisions"]) for h in record["hands"])
        if args.profile:
            profile(record, args.profile)
            return 0
        print(
            f"{args.hands} hands, {args.players} players, {decisions:,} decisions; "
            f"median of {args.repeats}; CPython {platform.python_version()}"
        )
        print(
            "\n| seat | frames s (all) | frames CPU s | collector s | encoding s (all) | "
            "request s (first page) | its CPU s | request s (a middle page) | "
            "all frames MB |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for seat in (None, 0):
            seconds, size = _time_seat(client, listed["key"], record, seat, args.repeats)
            print(f"| {seat} | " + " | ".join(f"{s:.3f}" for s in seconds) + f" | {size:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
