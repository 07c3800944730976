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
``vector``
    The batched engine (``craits bench vector``: B games stepped together, every
    decision's legal mask and observation produced, random legal actions, auto-reset) at
    each batch size of ``--num-envs``, against pgx's batched Leduc hold'em on JAX CPU at the
    same batch sizes (``bench_pgx.py``: one XLA thread) and OpenSpiel's C++ crazy_eights with
    a float32 observation and mask per decision. The whole comparison is pinned to one CPU
    core (children inherit it). Also the cold and cached compile time and the memory of one
    game. Targets: >= 1,000,000 decisions/s, >= 10x OpenSpiel, >= 1.5x pgx (each at its best
    batch size; the ratio at equal sizes is reported too); a cold compile <= 30 s, a cached
    one <= 2 s.

The peers come with ``pip install -e .[bench]`` (see ``bench_peers.py``); a missing
peer is reported as missing. Results go to ``experiments/results/bench_<which>.json``
and ``.md`` (``results/vector/bench.json`` and ``.md`` for ``vector``; written atomically).
Usage::

    python experiments/bench_compare.py engine --seconds 10 --rounds 3
    python experiments/bench_compare.py env --seconds 10 --rounds 3
    python experiments/bench_compare.py vector --seconds 10 --rounds 3 --num-envs 256 1024 4096
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

# A script: its own directory is on sys.path, so its sibling module imports by name.
from bench_peers import ENV_PEERS, PEERS, bench_openspiel_c8_obs, bench_pgx_leduc

from craits.bench import (
    bench_engine,
    bench_env,
    bench_state,
    bench_vector,
    bench_vector_compile,
)
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
    for key, label in (
        ("state_bytes_mean", "One game state, deep size, mean"),
        ("state_bytes_max", "One game state, deep size, max"),
        ("clone_us", "`clone()` in µs"),
    ):
        if key in result:
            lines.append(f"{label}: {result[key]:,}")
    lines += ["", f"Reproduce: `{command}`", ""]
    return "\n".join(lines)


VECTOR_SIZES = (256, 1024, 4096)  # batch sizes of the vector comparison
VECTOR_TARGETS = {"decisions_per_s": 1_000_000, "openspiel_c8_obs": 10.0, "pgx_leduc": 1.5}


def compare_vector(
    seconds: float, rounds: int, players: int, seed: int, sizes: tuple[int, ...]
) -> dict[str, Any]:
    """Craits' VectorGame and pgx's Leduc at each batch size, OpenSpiel's crazy_eights with
    observations, interleaved over ``rounds``; medians per contender and size."""
    samples: dict[str, list[float]] = {}
    last: dict[str, Any] = {}
    missing: list[str] = []
    for r in range(rounds):
        line = []
        for size in sizes:
            last = bench_vector(seconds, players, seed=seed + r, num_envs=size)
            samples.setdefault(f"craits@{size}", []).append(last["decisions_per_s"])
            line.append(f"craits@{size} {last['decisions_per_s']:,.0f}")
            if "pgx_leduc" not in missing:
                pgx = bench_pgx_leduc(seconds, seed + r, size)
                if pgx is None:
                    missing.append("pgx_leduc")
                else:
                    samples.setdefault(f"pgx_leduc@{size}", []).append(pgx["steps_per_s"])
                    line.append(f"pgx@{size} {pgx['steps_per_s']:,.0f}")
        if "openspiel_c8_obs" not in missing:
            spiel = bench_openspiel_c8_obs(seconds, seed + r)
            if spiel is None:
                missing.append("openspiel_c8_obs")
            else:
                samples.setdefault("openspiel_c8_obs", []).append(spiel["steps_per_s"])
                line.append(f"openspiel_c8_obs {spiel['steps_per_s']:,.0f}")
        print(f"round {r + 1}/{rounds} (decisions/s): " + ", ".join(line), flush=True)
    median = {k: round(statistics.median(v), 1) for k, v in samples.items()}

    def best(name: str) -> float | None:
        values = [median[f"{name}@{s}"] for s in sizes if f"{name}@{s}" in median]
        return max(values) if values else None

    craits_best, pgx_best = best("craits"), best("pgx_leduc")
    ratios: dict[str, float | None] = {
        "pgx_leduc (best vs best)": None if pgx_best is None else round(craits_best / pgx_best, 2)
    }
    for s in sizes:
        if f"pgx_leduc@{s}" in median:
            ratios[f"pgx_leduc@{s}"] = round(median[f"craits@{s}"] / median[f"pgx_leduc@{s}"], 2)
    if "openspiel_c8_obs" in median:
        ratios["openspiel_c8_obs"] = round(craits_best / median["openspiel_c8_obs"], 2)
    return {
        "comparison": "vector",
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, numpy {np.__version__}",
        "seconds_per_round": seconds,
        "rounds": rounds,
        "num_players": players,
        "batch_sizes": list(sizes),
        "unit": "decisions/s",
        "median": median,
        "samples": samples,
        "craits_best": craits_best,
        "pgx_leduc_best": pgx_best,
        "ratio_craits_to": ratios,
        "targets": VECTOR_TARGETS,
        "missing_peers": missing,
        "obs_size": last.get("obs_size"),
        "memory_bytes_per_game": last.get("memory_bytes_per_game"),
    }


def vector_markdown(result: dict[str, Any], command: str) -> str:
    sizes, median, ratio = result["batch_sizes"], result["median"], result["ratio_craits_to"]
    lines = [
        "# Batched engine speed: Craits' VectorGame and peers in the same run",
        "",
        f"{result['date']}; {result['machine']}; pinned to one CPU core (CPU "
        f"{result.get('cpu')}); {result['rounds']} interleaved rounds of "
        f"{result['seconds_per_round']:g} s per contender. Medians, decisions/s: every "
        "decision's observation and legal mask produced, a uniformly random legal action, "
        "finished games reset at once. Craits: standard rules, "
        f"{result['num_players']} players, observation of {result['obs_size']} floats "
        "(`craits bench vector`); pgx: Leduc hold'em, 2 players, observation of 34 "
        "(`experiments/bench_pgx.py`, one XLA thread, 8 steps per jitted scan); OpenSpiel: "
        "crazy_eights (5 players) with a float32 observation and int8 mask built per "
        "decision from Python.",
        "",
        "| batch | Craits | pgx Leduc (JAX CPU) | Craits ÷ pgx |",
        "|---:|---:|---:|---:|",
    ]
    for s in sizes:
        pgx = median.get(f"pgx_leduc@{s}")
        lines.append(
            f"| {s} | {median[f'craits@{s}']:,.0f} | "
            + (
                "not installed | |"
                if pgx is None
                else f"{pgx:,.0f} | {ratio[f'pgx_leduc@{s}']:.2f} |"
            )
        )
    spiel = median.get("openspiel_c8_obs")
    lines += [
        "",
        "OpenSpiel C++ crazy_eights with observation and mask: "
        + ("not installed." if spiel is None else f"{spiel:,.0f} decisions/s."),
        "",
        "| target | measured | |",
        "|---|---:|---|",
    ]
    targets = result["targets"]
    best = result["craits_best"]
    rows = [
        (
            f">= {targets['decisions_per_s']:,} decisions/s (Craits' best batch)",
            f"{best:,.0f}",
            best >= targets["decisions_per_s"],
        )
    ]
    for name, key in (
        ("openspiel_c8_obs", "openspiel_c8_obs"),
        ("pgx_leduc", "pgx_leduc (best vs best)"),
    ):
        got = ratio.get(key)
        rows.append(
            (
                f">= {targets[name]:g}x {key}",
                "-" if got is None else f"{got}x",
                got is not None and got >= targets[name],
            )
        )
    for label, value, ok in rows:
        lines.append(f"| {label} | {value} | **{'met' if ok else 'NOT met'}** |")
    compiles = (
        ("compile_cold_s", "cold compile, s (fresh process, empty cache)", 30),
        ("compile_cached_s", "cached compile, s (second process)", 2),
    )
    for key, label, limit in compiles:
        if key in result:
            ok = result[key] <= limit
            lines.append(
                f"| <= {limit} s {label} | {result[key]} | **{'met' if ok else 'NOT met'}** |"
            )
    lines += [
        "",
        f"Memory of one game: {result['memory_bytes_per_game']:,} bytes (all its state arrays; "
        "most of it is the reshuffle log, whose untouched pages cost no RAM).",
        "",
        f"Reproduce: `{command}`",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("which", choices=[*sorted(COMPARISONS), "vector"], help="what to compare")
    ap.add_argument("--seconds", type=float, default=10.0, help="per contender per round")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median reported)")
    ap.add_argument("--players", type=int, default=4, help="Craits players (default 4)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=RESULTS, help="directory for the results")
    ap.add_argument(
        "--num-envs",
        type=int,
        nargs="+",
        default=list(VECTOR_SIZES),
        help="vector: batch sizes, for Craits and pgx alike (default 256 1024 4096)",
    )
    args = ap.parse_args(argv)
    if args.seconds <= 0 or args.rounds < 1 or min(args.num_envs) < 1:
        ap.error("--seconds must be > 0, --rounds and --num-envs >= 1")
    command = "python experiments/bench_compare.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    if args.which == "vector":
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})  # one core for every contender (children inherit it)
        result = compare_vector(
            args.seconds, args.rounds, args.players, args.seed, tuple(args.num_envs)
        )
        result["cpu"] = cpu
        result.update(bench_vector_compile(args.players))
        result["command"] = command
        text = vector_markdown(result, command)
        atomic_write_json(args.out / "vector" / "bench.json", result)
        atomic_write_text(args.out / "vector" / "bench.md", text)
        print(text)
        return 0
    result = compare(args.which, args.seconds, args.rounds, args.players, args.seed)
    if args.which == "engine":
        result.update(bench_state(args.players, args.seed))
    result["command"] = command
    text = to_markdown(result, command)
    atomic_write_json(args.out / f"bench_{args.which}.json", result)
    atomic_write_text(args.out / f"bench_{args.which}.md", text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
