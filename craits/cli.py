"""The ``craits`` command: one console script, one subcommand per capability.

Each subcommand is a module of :mod:`craits.commands` holding its parser
(``add_parser``) beside the small function that runs it (``run``). Every
subcommand has ``--help``; a bad argument exits with status 2 and a one-line
message, never a traceback. Every error takes argparse's form, naming the command:
``craits tournament: error: …`` (:func:`craits.arguments.error_line`).

Exit statuses: 0 done; 1 failed while running (what finished is kept); 2 bad
arguments or a refusal (nothing was changed); 130 interrupted (what finished is
kept; the message says how to continue).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from craits_env import __version__

from .arguments import Parser, fail
from .commands import bench, demo, evaluate, exploit, play, replay, serve, tournament, train

COMMANDS = (demo, bench, tournament, evaluate, exploit, play, replay, train, serve)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="craits",
        description="Craits: rules engine, environments, bots and tools for the card game Craits.",
        epilog="Every command's --help gives its exit statuses. In short: 0 done; 1 failed "
        "while running (what finished is kept); 2 bad arguments or a refusal (nothing was "
        "changed), or no command given; 130 interrupted (what finished is kept; the message "
        "says how to continue).",
    )
    parser.add_argument("--version", action="version", version=f"craits {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from craits_env.extras import MissingExtra

    parser = command = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        command = args.parser
        return int(args.run(args, command))
    except MissingExtra as e:  # an optional dependency: one line naming the extra
        fail(command.prog, str(e))
        return 2
    except BrokenPipeError:  # e.g. `craits demo | head`: the reader went away
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("craits: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
