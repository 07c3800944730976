"""What the subcommands of ``craits`` share: one-line errors, argument types, rule options."""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
import threading
from typing import Any, NoReturn

from craits.agents.specs import spec_help
from craits_env import options
from craits_env.rules import MAX_PLAYERS, MIN_PLAYERS, Rules

SPECS_HELP = f"agent specs: {spec_help(builtin=True)}; see docs/agents.md"
"""Every spec of the table (craits.agents.specs): the --help of the commands that seat agents."""


NO_PROGRESS_HELP = "no progress (else a live bar on a terminal, a plain line every 30 s elsewhere)"


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (no usage block), in the one form every
    error of ``craits`` takes (:func:`error_line`). Each parser is its own ``parser`` default,
    so after parsing ``args.parser`` is the deepest (sub)command's: the one its errors name."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.set_defaults(parser=self)

    def error(self, message: str) -> NoReturn:
        self.exit(2, error_line(self.prog, f"{message} (see --help)") + "\n")

    def parse_args(self, args: Any = None, namespace: Any = None) -> argparse.Namespace:  # type: ignore[override]
        """As argparse's, but an unrecognized argument is the error of the (sub)command it
        was given to (``craits demo: error: unrecognized arguments: …``), not of ``craits``."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            where = getattr(parsed, "parser", self)
            where.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed


def terminate_as_interrupt() -> None:
    """From now on SIGTERM (a scheduler's, ``kill``'s) acts as Ctrl-C: a ``KeyboardInterrupt``,
    so a command keeps what finished and says how to go on, exactly as after Ctrl-C (only in
    the main thread, where handlers can be set)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def error_line(prog: str, message: str) -> str:
    """``PROG: error: MESSAGE``: argparse's form, which every error of ``craits`` takes
    (``craits tournament: error: …``; ``craits: error: …`` only before a command is known)."""
    return f"{prog}: error: {message}"


def fail(prog: str, message: str, *notes: str) -> None:
    """Print :func:`error_line` on standard error, then each note as ``PROG: NOTE`` (what
    is kept, how to go on)."""
    print(error_line(prog, message), file=sys.stderr)
    for note in notes:
        print(f"{prog}: {note}", file=sys.stderr)


def players(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = -1
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise argparse.ArgumentTypeError(
            f"invalid player count {text!r}: allowed {MIN_PLAYERS} to {MAX_PLAYERS}"
        )
    return n


def positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not v > 0:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected a number > 0")
    return v


RULE_FIELDS = {f.name: f for f in dataclasses.fields(Rules)}


def positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected an int >= 1")
    return v


def rule_option(text: str) -> tuple[str, Any]:
    """Parse ``NAME=VALUE`` for a field of :class:`Rules` (the typed parser of
    :mod:`craits_env.options`)."""
    name, sep, raw = text.partition("=")
    name = name.strip().replace("-", "_")
    if not sep or name not in RULE_FIELDS:
        raise argparse.ArgumentTypeError(
            f"invalid rule option {text!r}: expected NAME=VALUE with NAME one of "
            f"{', '.join(RULE_FIELDS)}"
        )
    try:
        return name, options.from_text(Rules, name, raw)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"invalid rule option {name}: {e}") from None


RAY_ADDRESS_HELP = (
    "a local Ray instance without ADDRESS, else the cluster at HOST:PORT (or auto) as ray "
    "start --head gives it, its token read where Ray keeps it; craits is shipped to the nodes "
    "(docs/cluster.md); needs the ray extra"
)


def add_ray_arg(p: argparse.ArgumentParser, what: str) -> None:
    """``--ray [ADDRESS]`` (``None``: not asked; ``""``: a local instance), the same in every
    command that runs on Ray; ``what`` says what runs there."""
    p.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help=f"{what} on Ray: {RAY_ADDRESS_HELP}",
    )


def add_rule_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--rule",
        "-r",
        type=rule_option,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a rule option, e.g. -r face_cards=true -r seven_hits=next_but_one "
        "-r hand_sizes=8,7,6 (repeatable; see docs/rules.md for every option)",
    )
    p.add_argument("--short", action="store_true", help="the short game: eight hands 8…1 (R2.2)")


def rules_from(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Rules:
    options = dict(args.rule)
    if args.short and "hand_sizes" not in options:
        options["hand_sizes"] = Rules.short_game().hand_sizes
    try:
        return Rules(**options)
    except ValueError as e:
        parser.error(str(e))


def add_bench_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--players", "-n", type=players, default=4, help="2-10 (default 4)")
    p.add_argument(
        "--seconds", type=positive_float, default=10.0, help="how long to play (default 10)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of games and policy (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_rule_args(p)


def lenient_stdio() -> None:
    """Undecodable input and unencodable output become replacement characters, not errors."""
    for stream in (sys.stdin, sys.stdout):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")
