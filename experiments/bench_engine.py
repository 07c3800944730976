"""Craits' engine against the peers' engines, measured in the same run (issue: engine speed).

Runs, interleaved over ``--rounds`` rounds so that machine noise hits every contender alike:

* Craits: ``craits_env.bench.bench_engine`` — full standard 4-player games, uniformly random
  legal actions, one process (the loop of ``craits bench engine``);
* RLCard's UNO (``env.step`` with random legal actions) and OpenSpiel's crazy_eights (C++
  driven from Python), from ``experiments/bench_peers.py`` (``pip install -e .[bench]``).

Reports the median throughput of each and the ratios Craits / peer, plus the deep size of one
game state and the time of ``clone()``; writes ``experiments/results/bench_engine.json`` and
``.md`` atomically. Usage::

    python experiments/bench_engine.py --seconds 10 --rounds 3
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from craits_env.bench import bench_engine, bench_state
from craits_env.fileio import atomic_write_json, atomic_write_text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_peers import bench_openspiel_crazy_eights, bench_rlcard_uno

RESULTS = Path(__file__).resolve().parent / "results"
TARGET_DECISIONS_PER_S = 150_000  # issue: 2x RLCard's UNO measured at about 75,000 steps/s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="per contender per round")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median reported)")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=RESULTS, help="where to write the results")
    args = ap.parse_args(argv)
    if args.seconds <= 0 or args.rounds < 1:
        ap.error("--seconds must be > 0 and --rounds >= 1")

    craits, uno, c8 = [], [], []
    for r in range(args.rounds):
        craits.append(
            bench_engine(args.seconds, args.players, seed=args.seed + r)["decisions_per_s"]
        )
        res = bench_rlcard_uno(args.seconds, args.seed + r)
        if res:
            uno.append(res["steps_per_s"])
        res = bench_openspiel_crazy_eights(args.seconds, args.seed + r)
        if res:
            c8.append(res["decisions_per_s"])
        print(
            f"round {r + 1}: craits {craits[-1]:,.0f}/s"
            + (f", rlcard uno {uno[-1]:,.0f}/s" if uno else "")
            + (f", openspiel crazy_eights {c8[-1]:,.0f}/s" if c8 else ""),
            flush=True,
        )

    med = statistics.median
    result: dict[str, object] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, numpy {np.__version__}",
        "seconds_per_round": args.seconds,
        "rounds": args.rounds,
        "num_players": args.players,
        "craits_decisions_per_s": round(med(craits)),
        "target_decisions_per_s": TARGET_DECISIONS_PER_S,
        "rlcard_uno_steps_per_s": round(med(uno)) if uno else None,
        "openspiel_crazy_eights_decisions_per_s": round(med(c8)) if c8 else None,
        "ratio_to_rlcard_uno": round(med(craits) / med(uno), 2) if uno else None,
        "ratio_to_openspiel_crazy_eights": round(med(craits) / med(c8), 2) if c8 else None,
    }
    result.update(bench_state(args.players, args.seed))
    result["command"] = "python experiments/bench_engine.py " + " ".join(argv or sys.argv[1:])

    lines = [
        "# Engine speed (same run, medians)",
        "",
        f"{result['date']}, {result['machine']}; {args.rounds} interleaved rounds of "
        f"{args.seconds:g} s each; full standard {args.players}-player games, "
        "uniformly random legal actions.",
        "",
        "| engine | decisions/s | Craits ÷ engine |",
        "|---|---:|---:|",
        f"| Craits (pure Python) | {result['craits_decisions_per_s']:,} | 1.00 |",
    ]
    if uno:
        lines.append(
            f"| RLCard UNO | {result['rlcard_uno_steps_per_s']:,} | "
            f"{result['ratio_to_rlcard_uno']} |"
        )
    if c8:
        lines.append(
            f"| OpenSpiel crazy_eights (C++) | "
            f"{result['openspiel_crazy_eights_decisions_per_s']:,} | "
            f"{result['ratio_to_openspiel_crazy_eights']} |"
        )
    lines += [
        "",
        f"One game state: {result['state_bytes_mean']:,} bytes mean, "
        f"{result['state_bytes_max']:,} max (deep size, generator and rules included; "
        "target 8 KiB).",
        f"`clone()`: {result['clone_us']} µs (target 10 µs).",
        "",
        f"Reproduce: `{result['command']}`",
        "",
    ]
    atomic_write_json(args.out / "bench_engine.json", result)
    atomic_write_text(args.out / "bench_engine.md", "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
