"""``craits play``: a person against bots in the terminal."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import arguments as a


def add_parser(sub: Any) -> None:
    """The ``craits play`` parser."""
    play = sub.add_parser(
        "play",
        help="play a game in the terminal against bots",
        description="Play Craits in the terminal against bots: your hand is numbered; type a "
        "card (7c, 7♣) or its number, draw, a suit (h, hearts) when you call one, declare or "
        "silent after playing down to one card, help, or quit. Reads moves from standard input "
        "(a terminal or a pipe).",
        epilog="Exit status: 0 the game ended or you quit; 1 the input ended first, a bot "
        "failed, or the record file could not be written; 2 bad arguments, or 100 invalid "
        "moves in a row from piped input; 130 interrupted (Ctrl-C).",
    )
    play.add_argument(
        "--opponents",
        "-o",
        nargs="+",
        required=True,
        metavar="SPEC",
        help="one agent spec per opponent (1 to 9); players = 1 + opponents; " + a.SPECS_HELP,
    )
    play.add_argument("--seat", type=int, default=0, metavar="K", help="your seat (default 0)")
    play.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="S",
        help="seed of the cards and the bots (default: a fresh one, printed)",
    )
    play.add_argument(
        "--record",
        type=Path,
        default=None,
        metavar="FILE",
        help="append the game (finished or not) to this record file",
    )
    play.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colours: on a terminal only (auto, default), always or never",
    )
    a.add_rule_args(play)
    play.set_defaults(run=run)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Play one game from standard input against the bots."""
    from ..play import PlaySession
    from ..terminal import Terminal

    rules = a.rules_from(args, parser)
    a.lenient_stdio()
    color = {"auto": None, "always": True, "never": False}[args.color]
    terminal = Terminal(sys.stdout, sys.stdin, color)
    try:
        session = PlaySession(
            args.opponents,
            terminal,
            seat=args.seat,
            seed=args.seed,
            rules=rules,
            record=args.record,
        )
    except ValueError as e:
        parser.error(str(e))
    try:
        return session.run()
    except OSError as e:  # e.g. the record file cannot be written
        a.fail(parser.prog, str(e))
        return 1
