"""Craits against its peers, measured in the same run: ratios, not absolute times.

Two comparisons, each over ``--rounds`` interleaved rounds (every contender
once per round, so that noise on a shared machine hits them alike; medians
reported):

``engine``
    Craits' rules engine (``craits bench engine``: full standard games, uniformly
    random legal actions, one process) against RLCard's UNO (``env.step``) and
    OpenSpiel's crazy_eights (C++ driven from Python); plus the deep size of one
    game state and the time of ``clone()``. Target: >= 150,000 decisions/s.
``env``
    The wrapped ``craits_v0`` AEC loop (``craits bench env``: ``last()``, masked
    random action, ``step()``) against PettingZoo's texas_holdem_v4 and hanabi_v5,
    OpenSpiel's crazy_eights through Shimmy, and OpenSpiel's C++ crazy_eights with a
    float32 observation and mask built per decision. Target: >= 40,000 steps/s.

The peers come with ``pip install -e .[bench]`` (see ``bench_peers.py``); a missing
peer is reported as missing. Results go to ``experiments/results/bench_<which>.json``
and ``.md`` (written atomically). Usage::

    python experiments/bench_compare.py engine --seconds 10 --rounds 3
    python experiments/bench_compare.py env --seconds 10 --rounds 3
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

# A script: its own directory is on sys.path, so its sibling module imports by name.
from bench_peers import ENV_PEERS, PEERS

from craits_env.bench import bench_engine, bench_env, bench_state
from craits_env.fileio import atomic_write_json, atomic_write_text

RESULTS = Path(__file__).resolve().parent / "results"

Bench = Callable[[float, int], "dict[str, Any] | None"]

COMPARISONS: dict[str, dict[str, Any]] = {
    "engine": {
        "unit": "decisions/s",
        "craits": lambda s, seed, n: bench_engine(s, n, seed=seed)["decisions_per_s"],
        "peers": PEERS,
        "peer_key": {"rlcard_uno": "steps_per_s"},
        "default_key": "decisions_per_s",
        "target": 150_000,
        "anchor": "rlcard_uno",
        "what": "full standard {n}-player games, uniformly random legal actions, one process",
    },
    "env": {
        "unit": "steps/s",
        "craits": lambda s, seed, n: bench_env(s, n, seed=seed)["steps_per_s"],
        "peers": ENV_PEERS,
        "peer_key": {"openspiel_c8_obs": "steps_per_s"},
        "default_key": "steps_per_s",
        "target": 40_000,
        "anchor": "pz_texas_holdem",
        "what": "the wrapped AEC loop (last(), masked random action, step()) over full "
        "standard {n}-player games",
    },
}


def compare(which: str, seconds: float, rounds: int, players: int, seed: int) -> dict[str, Any]:
    spec = COMPARISONS[which]
    samples: dict[str, list[float]] = {"craits": []}
    missing: list[str] = []
    for r in range(rounds):
        samples["craits"].append(spec["craits"](seconds, seed + r, players))
        line = [f"craits {samples['craits'][-1]:,.0f}"]
        for name, bench in spec["peers"].items():
            if name in missing:
                continue
            res = bench(seconds, seed + r)
            if res is None:
                missing.append(name)
                continue
            value = res.get(spec["peer_key"].get(name, spec["default_key"]))
            if value is None:
                value = res["steps_per_s"]
            samples.setdefault(name, []).append(value)
            line.append(f"{name} {value:,.0f}")
        print(f"round {r + 1}/{rounds} ({spec['unit']}): " + ", ".join(line), flush=True)
    medians = {k: statistics.median(v) for k, v in samples.items()}
    return {
        "comparison": which,
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, numpy {np.__version__}",
        "seconds_per_round": seconds,
        "rounds": rounds,
        "num_players": players,
        "unit": spec["unit"],
        "target": spec["target"],
        "anchor": spec["anchor"],
        "median": {k: round(v, 1) for k, v in medians.items()},
        "samples": samples,
        "ratio_craits_to": {
            k: round(medians["craits"] / v, 2) for k, v in medians.items() if k != "craits"
        },
        "missing_peers": missing,
    }


def to_markdown(result: dict[str, Any], command: str) -> str:
    spec = COMPARISONS[result["comparison"]]
    unit = result["unit"]
    lines = [
        f"# {result['comparison'].capitalize()} speed: Craits and peers in the same run",
        "",
        f"{result['date']}; {result['machine']}; {result['rounds']} interleaved rounds of "
        f"{result['seconds_per_round']:g} s per contender; "
        + spec["what"].format(n=result["num_players"])
        + " (peers in their default configurations). Medians.",
        "",
        f"| contender | {unit} | Craits ÷ contender |",
        "|---|---:|---:|",
        f"| **Craits** | **{result['median']['craits']:,.0f}** | 1.00 |",
    ]
    for name, ratio in result["ratio_craits_to"].items():
        lines.append(f"| {name} | {result['median'][name]:,.0f} | {ratio:.2f} |")
    for name in result["missing_peers"]:
        lines.append(f"| {name} | not installed | |")
    target, anchor = result["target"], result["anchor"]
    verdict = "met" if result["median"]["craits"] >= target else "NOT met"
    lines += ["", f"Target: >= {target:,} {unit} (2x {anchor}'s anchor): **{verdict}**."]
    if anchor in result["ratio_craits_to"]:
        lines.append(
            f"Ratio to {anchor} measured in this run: {result['ratio_craits_to'][anchor]}."
        )
    for key, label in (("state_bytes_mean", "One game state, deep size, mean"),
                       ("state_bytes_max", "One game state, deep size, max"),
                       ("clone_us", "`clone()` in µs")):  # fmt: skip
        if key in result:
            lines.append(f"{label}: {result[key]:,}")
    lines += ["", f"Reproduce: `{command}`", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("which", choices=sorted(COMPARISONS), help="what to compare")
    ap.add_argument("--seconds", type=float, default=10.0, help="per contender per round")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median reported)")
    ap.add_argument("--players", type=int, default=4, help="Craits players (default 4)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=RESULTS, help="directory for the results")
    args = ap.parse_args(argv)
    if args.seconds <= 0 or args.rounds < 1:
        ap.error("--seconds must be > 0 and --rounds >= 1")
    result = compare(args.which, args.seconds, args.rounds, args.players, args.seed)
    if args.which == "engine":
        result.update(bench_state(args.players, args.seed))
    command = "python experiments/bench_compare.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    result["command"] = command
    text = to_markdown(result, command)
    atomic_write_json(args.out / f"bench_{args.which}.json", result)
    atomic_write_text(args.out / f"bench_{args.which}.md", text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
