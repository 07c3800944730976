"""``craits bench engine|env``: speed of the engine and of the wrapped AEC loop."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .. import arguments as a


def add_parser(sub: Any) -> None:
    """The ``craits bench`` parser."""
    bench = sub.add_parser(
        "bench",
        help="measure speed",
        description="Measure speed: full games with uniformly random legal actions, one process.",
    )
    bench_sub = bench.add_subparsers(dest="target", metavar="TARGET", parser_class=a.Parser)
    engine = bench_sub.add_parser(
        "engine",
        help="the rules engine alone: decisions/s, games/s, state size, clone time",
        description="Full games of the rules engine with uniformly random legal actions: "
        "decisions/s and games/s; also the deep size of one state and the time of clone(). "
        "For ratios to peers measured in the same run see experiments/bench_compare.py.",
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
    )
    a.add_bench_args(envb)
    bench.set_defaults(run=run)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Measure the engine or the wrapped environment; print the figures (or one JSON object)."""
    if args.target is None:
        parser.error("bench needs a target: engine or env")
    from craits_env.bench import bench_engine, bench_env, bench_state

    rules = a.rules_from(args, parser)
    bench = bench_engine if args.target == "engine" else bench_env
    try:
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
