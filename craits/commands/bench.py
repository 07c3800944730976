"""``craits bench engine|env|vector``: speed of the engine, of the wrapped AEC loop and of
the batched engine."""

from __future__ import annotations

import argparse
import json
from typing import Any

from craits.bench import VECTOR_NUM_ENVS

from .. import arguments as a

EXIT_STATUS = "Exit status: 0 done; 2 bad arguments; 130 interrupted (Ctrl-C)."


def add_parser(sub: Any) -> None:
    """The ``craits bench`` parser."""
    bench = sub.add_parser(
        "bench",
        help="measure speed",
        description="Measure speed: full games with uniformly random legal actions, one process.",
        epilog=EXIT_STATUS,
    )
    bench_sub = bench.add_subparsers(dest="target", metavar="TARGET", parser_class=a.Parser)
    engine = bench_sub.add_parser(
        "engine",
        help="the rules engine alone: decisions/s, games/s, state size, clone time",
        description="Full games of the rules engine with uniformly random legal actions: "
        "decisions/s and games/s; also the deep size of one state and the time of clone(). "
        "For ratios to peers measured in the same run see experiments/bench_compare.py.",
        epilog=EXIT_STATUS,
    )
    a.add_bench_args(engine)
    engine.add_argument(
        "--no-state", action="store_true", help="skip the state-size and clone measurements"
    )
    envb = bench_sub.add_parser(
        "env",
        help="the wrapped PettingZoo AEC loop: steps/s, games/s",
        description="Full games of craits_v0.env() (PettingZoo's classic wrappers) in the standard "
        "AEC loop: last(), a uniformly random legal action from the mask, step(). For ratios to "
        "peers measured in the same run see experiments/bench_compare.py.",
        epilog=EXIT_STATUS,
    )
    a.add_bench_args(envb)
    vector = bench_sub.add_parser(
        "vector",
        help="the batched engine (craits_env.vector): decisions/s over N games at once",
        description="N games of craits_env.vector.VectorGame stepped together, one compiled "
        "call a step: every game's legal mask and observation written, a uniformly random "
        "legal action per game, finished games reset automatically. Prints decisions_per_s, "
        "compile_s (this process's first use: numba's cached kernels, or compiling them), "
        "num_envs and the memory of one game. For ratios to peers measured in the same run "
        "see experiments/bench_compare.py vector.",
        epilog=EXIT_STATUS,
    )
    a.add_bench_args(vector)
    vector.add_argument(
        "--num-envs",
        type=a.positive_int,
        default=VECTOR_NUM_ENVS,
        help=f"games stepped together (default {VECTOR_NUM_ENVS})",
    )
    vector.add_argument(
        "--compile",
        action="store_true",
        help="also measure the cold compile (a fresh interpreter, an empty numba cache) and "
        "the cached one (a second interpreter): compile_cold_s, compile_cached_s",
    )
    bench.set_defaults(run=run)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Measure the engine or the wrapped environment; print the figures (or one JSON object)."""
    if args.target is None:
        parser.error("bench needs a target: engine or env, or vector (the batched engine)")
    from craits.bench import (
        bench_engine,
        bench_env,
        bench_state,
        bench_vector,
        bench_vector_compile,
    )

    rules = a.rules_from(args, parser)
    try:
        if args.target == "vector":
            result = bench_vector(args.seconds, args.players, rules, args.seed, args.num_envs)
            if args.compile:
                result.update(bench_vector_compile(args.players, rules))
        else:
            bench = bench_engine if args.target == "engine" else bench_env
            result = bench(args.seconds, args.players, rules, args.seed)
    except ValueError as e:
        parser.error(str(e))
    if args.target == "engine" and not args.no_state:
        result.update(bench_state(args.players, args.seed))
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:>20}: {v}")
    return 0
