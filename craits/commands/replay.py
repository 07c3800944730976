"""``craits replay``: re-run game records and show them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import arguments as a


def add_parser(sub: Any) -> None:
    """The ``craits replay`` parser."""
    rep = sub.add_parser(
        "replay",
        help="re-run game records through the engine and show them",
        description="Re-run a game record file (JSON Lines, one game per line) through the "
        "engine and check that the replayed scores equal the recorded ones. One game (--game, "
        "or a file of one game) is told decision by decision; a file of several games is "
        "checked one line per game. A corrupt or foreign record is a one-line error naming the "
        "line.",
        epilog="Exit status: 0 every game replayed to its recorded scores; 2 bad arguments, or a "
        "file that is missing, corrupt or foreign, or whose replay differs from what it records "
        "(the message names the line); 130 interrupted (Ctrl-C).",
    )
    rep.add_argument("file", type=Path, metavar="FILE", help="a game record file")
    rep.add_argument(
        "--game",
        type=a.positive_int,
        default=None,
        metavar="I",
        help="show game I of the file in full (counting from 1)",
    )
    rep.add_argument(
        "--step", action="store_true", help="wait for Enter after each decision (q stops)"
    )
    rep.set_defaults(run=run)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Re-run a record file through the engine and show it."""
    from craits_env.records import RecordError

    from ..replay_view import show_replay
    from ..terminal import Terminal

    a.lenient_stdio()
    try:
        return show_replay(
            args.file, Terminal(sys.stdout, sys.stdin), game=args.game, step=args.step
        )
    except RecordError as e:
        a.fail(parser.prog, str(e))
        return 2
