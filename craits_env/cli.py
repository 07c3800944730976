"""The ``craits`` command: one console script, one subcommand per capability.

Every subcommand has ``--help``; a bad argument exits with status 2 and a
one-line message, never a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from .rules import MAX_PLAYERS, MIN_PLAYERS, Rules


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (no usage block)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _players(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = -1
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise argparse.ArgumentTypeError(
            f"invalid player count {text!r}: allowed {MIN_PLAYERS} to {MAX_PLAYERS}"
        )
    return n


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not v > 0:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected a number > 0")
    return v


_RULE_FIELDS = {f.name: f for f in dataclasses.fields(Rules)}


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected an int >= 1")
    return v


def _rule_option(text: str) -> tuple[str, Any]:
    """Parse ``NAME=VALUE`` for a field of :class:`Rules`."""
    name, sep, raw = text.partition("=")
    name = name.strip().replace("-", "_")
    if not sep or name not in _RULE_FIELDS:
        raise argparse.ArgumentTypeError(
            f"invalid rule option {text!r}: expected NAME=VALUE with NAME one of "
            f"{', '.join(_RULE_FIELDS)}"
        )
    kind = _RULE_FIELDS[name].type
    raw = raw.strip()
    value: Any = raw
    try:
        if kind == "bool":
            if raw.lower() not in ("true", "false", "1", "0", "yes", "no", "on", "off"):
                raise ValueError
            value = raw.lower() in ("true", "1", "yes", "on")
        elif kind == "int":
            value = int(raw)
        elif name == "hand_sizes":
            value = tuple(int(x) for x in raw.split(","))
        elif name == "num_decks":
            value = None if raw.lower() in ("none", "auto") else int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid value {raw!r} for rule option {name} ({kind})"
        ) from None
    return name, value


def _add_rule_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--rule",
        "-r",
        type=_rule_option,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a rule option of RULES.md, e.g. -r face_cards=true -r seven_hits=next_but_one "
        "-r hand_sizes=8,7,6 (repeatable; see docs/rules.md for every option)",
    )
    p.add_argument("--short", action="store_true", help="the short game: eight hands 8…1 (R2.2)")


def _rules_from(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Rules:
    options = dict(args.rule)
    if args.short and "hand_sizes" not in options:
        options["hand_sizes"] = Rules.short_game().hand_sizes
    try:
        return Rules(**options)
    except ValueError as e:
        parser.error(str(e))


def _add_bench_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--players", "-n", type=_players, default=4, help="2-10 (default 4)")
    p.add_argument(
        "--seconds", type=_positive_float, default=10.0, help="how long to play (default 10)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of games and policy (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_rule_args(p)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="craits",
        description="Craits: rules engine, environments, bots and tools for the card game Craits.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    demo = sub.add_parser(
        "demo",
        help="play and score a full game between bots; print each hand's points and the standings",
        description="Play a full game between simple bots (random, greedy) and print each hand's "
        "points and the final standings.",
    )
    demo.add_argument("--players", "-n", type=_players, default=4, help="2-10 (default 4)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the game (default 0)")
    demo.add_argument(
        "--bots",
        nargs="+",
        metavar="BOT",
        help="one bot per seat: random or greedy (default: greedy and random alternating)",
    )
    _add_rule_args(demo)

    bench = sub.add_parser(
        "bench",
        help="measure speed",
        description="Measure speed: full games with uniformly random legal actions, one process.",
    )
    bench_sub = bench.add_subparsers(dest="target", metavar="TARGET", parser_class=_Parser)
    engine = bench_sub.add_parser(
        "engine",
        help="the rules engine alone: decisions/s, games/s, state size, clone time",
        description="Full games of the rules engine with uniformly random legal actions: "
        "decisions/s and games/s; also the deep size of one state and the time of clone(). "
        "For ratios to peers measured in the same run see experiments/bench_compare.py.",
    )
    _add_bench_args(engine)
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
    _add_bench_args(envb)

    tour = sub.add_parser(
        "tournament",
        help="a duplicate tournament between agents: table with CIs, ratings, head to head",
        description="Duplicate tournament: each deal is played under every seat rotation (and, "
        "with more specs than players, by every combination of PLAYERS specs) so that the luck "
        "of the cards cancels. Writes DIR/results.json, .csv, .md and .png; games are saved as "
        "they finish in DIR/games.jsonl, and rerunning the same command resumes.",
    )
    tour.add_argument(
        "specs", nargs="+", metavar="SPEC",
        help="agent specs: random, greedy, tactician, expert, pimc:N, ...",
    )  # fmt: skip
    tour.add_argument("--players", "-n", type=_players, default=4, help="2-10 (default 4)")
    tour.add_argument("--deals", type=_positive_int, default=100, help="deals (default 100)")
    tour.add_argument("--seed", type=int, default=0, help="seed of the whole table (default 0)")
    tour.add_argument("--workers", type=_positive_int, default=1,
                      help="parallel processes on this machine (default 1)")  # fmt: skip
    tour.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                      help="run on a Ray cluster (no ADDRESS: a local Ray)")  # fmt: skip
    tour.add_argument("--out", type=Path, required=True, metavar="DIR", help="results directory")
    tour.add_argument(
        "--schedule", choices=("all", "cycle"), default="all",
        help="with more specs than players: every line-up on every deal (all, default) or one "
        "line-up per deal in turn (cycle: 1/L of the games)",
    )  # fmt: skip
    tour.add_argument("--title", default=None, help="title of the Markdown table and chart")
    tour.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_rule_args(tour)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:  # e.g. `craits demo | head`: the reader went away
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("craits: interrupted", file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "demo":
        from .demo import play_demo

        rules = _rules_from(args, parser)
        try:
            play_demo(args.players, args.seed, rules, args.bots)
        except ValueError as e:
            parser.error(str(e))
        return 0
    if args.command == "tournament":
        return _tournament(args, parser)
    if args.command == "bench":
        if args.target is None:
            parser.error("bench needs a target: engine or env")
        from .bench import bench_engine, bench_env, bench_state

        rules = _rules_from(args, parser)
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
    parser.error(f"unknown command {args.command!r}")


def _tournament(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from agents.base import make_agent
    from experiments.tournament import (
        TournamentConfig,
        TournamentError,
        results_in_order,
        run_games,
    )
    from experiments.tournament_stats import summarize, write_outputs

    rules = _rules_from(args, parser)
    try:
        config = TournamentConfig(
            tuple(args.specs), args.players, args.deals, args.seed, rules, args.schedule
        )
        for spec in dict.fromkeys(args.specs):
            make_agent(spec)  # an unknown spec or a missing checkpoint: one line, status 2
    except ValueError as e:
        parser.error(str(e))
    bar = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if args.no_progress:
            return
        if bar is None:
            from tqdm import tqdm

            bar = tqdm(total=total, initial=done, unit="game", dynamic_ncols=True)
        else:
            bar.update(done - bar.n)

    command = "craits tournament " + shlex.join(sys.argv[2:]) if len(sys.argv) > 2 else ""
    try:
        games = run_games(config, args.out, workers=args.workers, use_ray=args.ray is not None,
                          ray_address=args.ray or None, progress=progress)  # fmt: skip
    except (TournamentError, ValueError) as e:
        if bar is not None:
            bar.close()
        print(f"craits tournament: error: {e}", file=sys.stderr)
        print(f"craits tournament: finished games are kept in {args.out}; rerun to resume",
              file=sys.stderr)  # fmt: skip
        return 1
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
        print(f"craits tournament: interrupted; finished games are kept in {args.out}; "
              "rerun the same command to resume", file=sys.stderr)  # fmt: skip
        return 130
    if bar is not None:
        bar.close()
    ordered = results_in_order(games, config)
    summary = summarize(ordered, list(config.specs), config.seed)
    title = args.title or f"Craits tournament: {args.players} players, {args.deals} deals"
    write_outputs(summary, config.to_dict(), args.out, title, command.strip())
    print((args.out / "results.md").read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
