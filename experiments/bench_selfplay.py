"""Self-play training on the batched engine vs the Python engine: steps per second, where the
time goes, in one run.

Trains one configuration (default ``selfplay_4p``: 4 players, standard rules, the network
against itself and its past snapshots) on ``backend=python`` and ``backend=vector`` at each
``--num-games``, each variant in its own :class:`~craits.training.state.TrainingState`, all in this
process. Every variant first trains ``--warmup`` updates untimed (until its first games have
been replaced, the pool holds snapshots and the table mix has settled: a run's first games
all seat "self"); then the variants take turns, ``--rounds`` times, training ``--updates``
timed updates each, so that the machine's load falls on all of them alike. Reported per
variant: environment steps per second of collecting and learning (every seat's decisions,
forced ones included, as ``craits train``'s SPS), the split of that time — ``env`` (the
engine, rewards, bookkeeping; on the vector backend the observations and masks are
encoded inside its compiled step, so they count here), ``encode`` (the Python encoder; on
the vector backend only gathering rows), ``forward`` (the networks' forward passes and
sampling) and ``update`` (the PPO update) — and the ratio to the Python backend at the same
number of games and to the configuration's Python default (128 games: today's training).

    python experiments/bench_selfplay.py --num-games 128 1024 --out experiments/results/selfplay
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import torch

from craits.training.config import load_config
from craits.training.state import TrainingState
from craits.training.train import update
from craits_env.fileio import atomic_write_text

BASELINE_GAMES = 128  # the Python backend's num_games in ppo_4p / ppo_2p: today's training
PARTS = ("env", "encode", "forward", "update")


def make_learner(config_name: str, backend: str, games: int, seed: int) -> TrainingState:
    config = load_config(
        config_name, [f"backend={backend}", f"num_games={games}", f"seed={seed}", "device=cpu"]
    )
    return TrainingState(config, torch.device("cpu"), f"bench-{backend}-{games}")


def train_updates(learner: TrainingState, updates: int) -> tuple[int, dict[str, float]]:
    """Train ``updates`` updates; the environment steps taken and the seconds per part."""
    before_steps, before = learner.global_step, dict(learner.seconds)
    for _ in range(updates):
        update(learner)
    seconds = {k: learner.seconds[k] - before[k] for k in PARTS}
    return learner.global_step - before_steps, seconds


def bench(args: argparse.Namespace) -> dict[str, Any]:
    torch.set_num_threads(1)
    variants = [(b, g) for g in args.num_games for b in ("python", "vector")]
    if ("python", BASELINE_GAMES) not in variants:
        variants.insert(0, ("python", BASELINE_GAMES))
    learners = {}
    for backend, games in variants:
        learner = make_learner(args.config, backend, games, args.seed)
        t0 = time.perf_counter()
        train_updates(learner, args.warmup)
        learners[backend, games] = learner
        print(f"warm-up {backend} {games} games: {time.perf_counter() - t0:.0f} s", flush=True)
    totals = {v: {"steps": 0, "updates": 0, **dict.fromkeys(PARTS, 0.0)} for v in variants}
    for r in range(args.rounds):
        for v in variants:
            steps, seconds = train_updates(learners[v], args.updates)
            t = totals[v]
            t["steps"] += steps
            t["updates"] += args.updates
            for k in PARTS:
                t[k] += seconds[k]
            print(
                f"round {r + 1} {v[0]} {v[1]}: {steps / sum(seconds.values()):,.0f} steps/s",
                flush=True,
            )
    rows = []
    for (backend, games), t in totals.items():
        busy = sum(t[k] for k in PARTS)
        rows.append(
            {
                "backend": backend,
                "num_games": games,
                "steps": t["steps"],
                "updates": t["updates"],
                "sps": t["steps"] / busy,
                "steps_per_update": t["steps"] / t["updates"],
                "seconds": {k: round(t[k], 3) for k in PARTS},
                "share": {k: t[k] / busy for k in PARTS},
            }
        )
    sps = {(r["backend"], r["num_games"]): r["sps"] for r in rows}
    for r in rows:
        r["vs_python_same_games"] = r["sps"] / sps["python", r["num_games"]]
        r["vs_python_default"] = r["sps"] / sps["python", BASELINE_GAMES]
    return {
        "config": args.config,
        "seed": args.seed,
        "warmup_updates": args.warmup,
        "timed_updates": args.updates * args.rounds,
        "rounds": args.rounds,
        "rows": rows,
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2),
        "date": time.strftime("%Y-%m-%d"),
    }


def to_markdown(r: dict[str, Any], command: str) -> str:
    lines = [
        "# Self-play training: the batched engine vs the Python engine",
        "",
        f"{r['date']}; {r['machine']}, {r['cpu_count']} cores (shared: 1-minute load "
        f"{r['load_average']} at the end), CPython {r['python']}, torch {r['torch']}, "
        f"{r['torch_threads']} torch thread; configuration `{r['config']}` (seed {r['seed']}); "
        f"each variant warmed up {r['warmup_updates']} updates, then {r['timed_updates']} timed "
        f"updates in {r['rounds']} interleaved rounds.",
        "",
        "| backend | games | steps/s | × Python, same games | × Python, 128 games (today) "
        "| env | encode | forward | update | env + encode | steps/update |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for x in r["rows"]:
        s = x["share"]
        lines.append(
            f"| {x['backend']} | {x['num_games']} | {x['sps']:,.0f} | "
            f"{x['vs_python_same_games']:.2f} | {x['vs_python_default']:.2f} | "
            + " | ".join(f"{s[k]:.1%}" for k in PARTS)
            + f" | {s['env'] + s['encode']:.1%} | {x['steps_per_update']:,.0f} |"
        )
    lines += [
        "",
        "Steps/s: environment steps (every seat's decisions, forced ones included) per second "
        "of collecting and learning. `env` on the vector backend is the compiled step, which "
        "also writes the next observations and masks; `encode` there is only the gathering of "
        "each network's rows.",
        "",
        f"Reproduce: `{command}`",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default="selfplay_4p", help="a named configuration")
    p.add_argument(
        "--num-games",
        type=int,
        nargs="+",
        default=[128, 1024],
        metavar="N",
        help="games stepped together (each run on both backends)",
    )
    p.add_argument("--warmup", type=int, default=40, help="untimed updates per variant")
    p.add_argument("--updates", type=int, default=10, help="timed updates per variant and round")
    p.add_argument("--rounds", type=int, default=3, help="interleaved timed rounds")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="write results.md and results.json there",
    )
    args = p.parse_args()
    for name in ("warmup", "updates", "rounds"):
        if getattr(args, name) < (0 if name == "warmup" else 1):
            p.error(f"--{name}: got {getattr(args, name)}, allowed an int >= 1")
    if min(args.num_games) < 1:
        p.error(f"--num-games: got {min(args.num_games)}, allowed ints >= 1")
    r = bench(args)
    command = "python experiments/bench_selfplay.py " + shlex.join(sys.argv[1:])
    text = to_markdown(r, command)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(args.out / "results.md", text)
        atomic_write_text(args.out / "results.json", json.dumps(r, indent=2) + "\n")
    print(text)


if __name__ == "__main__":
    main()
