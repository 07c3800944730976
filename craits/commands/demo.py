"""``craits demo``: one game between bots, each hand's points and the standings."""

from __future__ import annotations

import argparse
from typing import Any

from .. import arguments as a


def add_parser(sub: Any) -> None:
    """The ``craits demo`` parser."""
    demo = sub.add_parser(
        "demo",
        help="play and score a full game between bots; print each hand's points and the standings",
        description="Play a full game between simple bots (random, greedy) and print each hand's "
        "points and the final standings.",
        epilog="Exit status: 0 done; 2 bad arguments (a spec, a rule option, the players); "
        "130 interrupted (Ctrl-C).",
    )
    demo.add_argument("--players", "-n", type=a.players, default=4, help="2-10 (default 4)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the game (default 0)")
    demo.add_argument(
        "--bots",
        nargs="+",
        metavar="BOT",
        help="one agent spec per seat (default: greedy and random alternating); " + a.SPECS_HELP,
    )
    a.add_rule_args(demo)
    demo.set_defaults(run=run)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Play and print one game between the bots."""
    from ..demo import play_demo

    rules = a.rules_from(args, parser)
    try:
        play_demo(args.players, args.seed, rules, args.bots)
    except ValueError as e:
        parser.error(str(e))
    return 0
