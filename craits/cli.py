"""The ``craits`` command: one console script, one subcommand per capability.

Every subcommand has ``--help``; a bad argument exits with status 2 and a
one-line message, never a traceback.

Exit statuses: 0 done; 1 failed while running (what finished is kept); 2 bad
arguments or a refusal (nothing was changed); 130 interrupted (what finished is
kept; the message says how to continue).
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

from craits_env import __version__, options
from craits_env.rules import MAX_PLAYERS, MIN_PLAYERS, Rules

SPECS_HELP = (
    "agent specs: random, greedy, tactician, expert, pimc[:N], ppo:PATH (a checkpoint or a run "
    "directory), MODULE:ATTR or path/to/file.py:ATTR (your own agent; see the README)"
)


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
    """Parse ``NAME=VALUE`` for a field of :class:`Rules` (the typed parser of
    :mod:`craits_env.options`)."""
    name, sep, raw = text.partition("=")
    name = name.strip().replace("-", "_")
    if not sep or name not in _RULE_FIELDS:
        raise argparse.ArgumentTypeError(
            f"invalid rule option {text!r}: expected NAME=VALUE with NAME one of "
            f"{', '.join(_RULE_FIELDS)}"
        )
    try:
        return name, options.from_text(Rules, name, raw)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"invalid rule option {name}: {e}") from None


def _add_rule_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--rule",
        "-r",
        type=_rule_option,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a rule option, e.g. -r face_cards=true -r seven_hits=next_but_one "
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
    parser.add_argument("--version", action="version", version=f"craits {__version__}")
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
        help="one agent spec per seat (default: greedy and random alternating); " + SPECS_HELP,
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
        "they finish in DIR/games.jsonl, and rerunning the same command resumes (a larger "
        "--deals extends a finished tournament). Stored games are keyed by what each agent is "
        "(a checkpoint's weight hash, a bot's version), not by its spec text: a DIR whose "
        "agents changed is refused, never mixed.",
        epilog="Exit status: 0 done; 1 failed while playing (finished games are kept in DIR); "
        "2 bad arguments or a refusal (DIR holds another tournament; an agent cannot play "
        "this table) — nothing is changed; 130 interrupted (rerun the same command to resume).",
    )
    tour.add_argument("specs", nargs="+", metavar="SPEC", help=SPECS_HELP)
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
    tour.add_argument(
        "--record", type=Path, default=None, metavar="FILE",
        help="also save every game as a game record (JSON Lines, in plan order; see craits "
        "replay)",
    )  # fmt: skip
    _add_rule_args(tour)

    play = sub.add_parser(
        "play",
        help="play a game in the terminal against bots",
        description="Play Craits in the terminal against bots: your hand is numbered; type a "
        "card (7c, 7♣) or its number, draw, a suit (h, hearts) when you call one, declare or "
        "silent after playing down to one card, help, or quit. Reads moves from standard input "
        "(a terminal or a pipe). Exit status: 0 when the game ends or you quit, 1 when the "
        "input ends first, 2 for bad arguments.",
    )
    play.add_argument(
        "--opponents", "-o", nargs="+", required=True, metavar="SPEC",
        help="one agent spec per opponent (1 to 9); players = 1 + opponents; " + SPECS_HELP,
    )  # fmt: skip
    play.add_argument("--seat", type=int, default=0, metavar="K", help="your seat (default 0)")
    play.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="S",
        help="seed of the cards and the bots (default: a fresh one, printed)",
    )
    play.add_argument("--record", type=Path, default=None, metavar="FILE",
                      help="append the game (finished or not) to this record file")  # fmt: skip
    play.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colours: on a terminal only (auto, default), always or never",
    )
    _add_rule_args(play)

    rep = sub.add_parser(
        "replay",
        help="re-run game records through the engine and show them",
        description="Re-run a game record file (JSON Lines, one game per line) through the "
        "engine and check that the replayed scores equal the recorded ones. One game (--game, "
        "or a file of one game) is told decision by decision; a file of several games is "
        "checked one line per game. A corrupt or foreign record is a one-line error naming the "
        "line (exit status 2).",
    )
    rep.add_argument("file", type=Path, metavar="FILE", help="a game record file")
    rep.add_argument("--game", type=_positive_int, default=None, metavar="I",
                     help="show game I of the file in full (counting from 1)")  # fmt: skip
    rep.add_argument("--step", action="store_true",
                     help="wait for Enter after each decision (q stops)")  # fmt: skip
    _add_train_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from craits_env.extras import MissingExtra

    try:
        return _main(argv)
    except MissingExtra as e:  # an optional dependency: one line naming the extra
        print(f"craits: error: {e}", file=sys.stderr)
        return 2
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
    if args.command == "play":
        return _play(args, parser)
    if args.command == "replay":
        return _replay(args)
    if args.command == "train":
        return _train(args, parser)
    if args.command == "bench":
        if args.target is None:
            parser.error("bench needs a target: engine or env")
        from craits_env.bench import bench_engine, bench_env, bench_state

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
    from craits_env.extras import require

    require("tournament", "craits tournament")
    if args.ray is not None:
        require("ray", "craits tournament --ray")
    from agents.report import write_outputs
    from agents.stats import summarize
    from agents.tournament import (
        GAMES_FILE,
        ResultStore,
        TournamentConfig,
        TournamentError,
        TournamentRefused,
        collect_records,
        identify,
        results_in_order,
    )

    from .tournament import run_tournament

    rules = _rules_from(args, parser)
    if args.record is not None and args.record.resolve() == (args.out / GAMES_FILE).resolve():
        parser.error(f"--record {args.record} would overwrite the tournament's own {GAMES_FILE}")
    try:
        config = TournamentConfig(
            tuple(args.specs), args.players, args.deals, args.seed, rules, args.schedule
        )
        # An unknown spec, a bad checkpoint, one trained for another table: status 2, now.
        config = identify(config)
        ResultStore.check(args.out, config)  # another tournament's DIR: refused, unchanged
    except TournamentRefused as e:
        print(f"craits tournament: error: {e}", file=sys.stderr)
        return 2
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
        games = run_tournament(config, args.out, workers=args.workers, use_ray=args.ray is not None,
                          ray_address=args.ray or None, progress=progress,
                          record=args.record is not None)  # fmt: skip
        if args.record is not None:
            from craits_env.records import write_records

            write_records(args.record, collect_records(config, args.out, games))
    except TournamentRefused as e:
        if bar is not None:
            bar.close()
        print(f"craits tournament: error: {e}", file=sys.stderr)
        return 2
    except (TournamentError, ValueError) as e:  # the same games would fail the same way
        if bar is not None:
            bar.close()
        print(f"craits tournament: error: {e}", file=sys.stderr)
        print(f"craits tournament: finished games are kept in {args.out}", file=sys.stderr)
        return 1
    except OSError as e:  # a full disk, a lost mount: a rerun resumes once it is fixed
        if bar is not None:
            bar.close()
        print(f"craits tournament: error: {e}", file=sys.stderr)
        print(f"craits tournament: finished games are kept in {args.out}; rerun the same "
              "command to resume", file=sys.stderr)  # fmt: skip
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


def _lenient_stdio() -> None:
    """Undecodable input and unencodable output become replacement characters, not errors."""
    for stream in (sys.stdin, sys.stdout):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")


def _play(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .play import PlaySession
    from .terminal import Terminal

    rules = _rules_from(args, parser)
    _lenient_stdio()
    color = {"auto": None, "always": True, "never": False}[args.color]
    terminal = Terminal(sys.stdout, sys.stdin, color)
    try:
        session = PlaySession(args.opponents, terminal, seat=args.seat, seed=args.seed,
                              rules=rules, record=args.record)  # fmt: skip
    except ValueError as e:
        parser.error(str(e))
    try:
        return session.run()
    except OSError as e:  # e.g. the record file cannot be written
        print(f"craits play: error: {e}", file=sys.stderr)
        return 1


def _replay(args: argparse.Namespace) -> int:
    from craits_env.records import RecordError

    from .replay_view import show_replay
    from .terminal import Terminal

    _lenient_stdio()
    try:
        return show_replay(args.file, Terminal(sys.stdout, sys.stdin), game=args.game,
                           step=args.step)  # fmt: skip
    except RecordError as e:
        print(f"craits replay: error: {e}", file=sys.stderr)
        return 2


def _add_train_parser(sub: Any) -> None:
    train = sub.add_parser(
        "train",
        help="train a masked PPO agent by self-play; TensorBoard logs, checkpoints, final table",
        description="Masked PPO self-play against an opponent pool (the current network, frozen "
        "past snapshots, heuristic bots). Writes TensorBoard event files, DIR/checkpoints/*.pt "
        "and DIR/final.pt (play it as ppo:DIR), then prints the trained agent's "
        "duplicate tournament table against each evaluation opponent. Named configurations "
        "live in training/configs (default ppo_4p: 45M steps, about 25-40 minutes on a "
        "2-core CPU). Ctrl-C saves a checkpoint at the end of the current update and stops; "
        "--resume DIR continues exactly.",
        epilog="A quick run (about a minute): craits train --total-steps 300000 --set "
        "final_eval_deals=20 --set eval_every=0 --out runs/quick. Extend a finished run: "
        "craits train --resume runs/quick --total-steps 600000 (its evaluation is played "
        "again for the new agent). Exit status: 0 done; 2 bad arguments or a refusal (nothing "
        "written); 130 interrupted (a checkpoint is saved: the message gives the --resume "
        "command).",
    )
    train.add_argument("--config", "-c", default=None, metavar="NAME",
                       help="a configuration name (ppo_4p, ppo_2p, ...) or a .toml file "
                       "(default ppo_4p)")  # fmt: skip
    train.add_argument("--total-steps", type=_positive_int, default=None, metavar="N",
                       help="environment steps to train for (every seat's decisions)")  # fmt: skip
    train.add_argument("--seed", type=int, default=None, help="seed of the run")
    train.add_argument("--out", type=Path, default=None, metavar="DIR",
                       help="run directory (default runs/<run name>)")  # fmt: skip
    train.add_argument("--resume", type=Path, default=None, metavar="PATH",
                       help="continue a run exactly from a checkpoint or a run directory "
                       "(its latest checkpoint)")  # fmt: skip
    train.add_argument("--device", choices=("auto", "cpu", "cuda"), default=None,
                       help="where the update runs (default: the config's, auto)")  # fmt: skip
    train.add_argument("--set", "-s", action="append", default=[], metavar="KEY=VALUE",
                       help="override a config key (a TOML value), e.g. --set "
                       "learning_rate=3e-4 --set opponents.greedy=0.5 --set "
                       "rules.face_cards=true")  # fmt: skip
    train.add_argument("--no-progress", action="store_true", help="no progress bar")


def _train(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from craits_env.extras import require

    require("train", "craits train")
    from training.config import DEFAULT_CONFIG, load_config
    from training.train import train

    config = None
    if args.resume is not None:
        if args.config is not None or args.seed is not None or args.set:
            parser.error("--resume continues a run with its own configuration: only "
                         "--total-steps, --out, --device, --no-progress go with it")  # fmt: skip
    else:
        overrides = list(args.set)
        if args.seed is not None:
            overrides.append(f"seed={args.seed}")
        try:
            config = load_config(args.config or DEFAULT_CONFIG, overrides)
        except ValueError as e:
            parser.error(str(e))
    try:
        result = train(config, out=args.out, resume=args.resume, total_steps=args.total_steps,
                       device=args.device, progress=not args.no_progress)  # fmt: skip
    except ValueError as e:
        parser.error(str(e))
    except KeyboardInterrupt as e:  # a second Ctrl-C, or one before the loop began
        return _train_interrupted(getattr(e, "run_dir", None) or args.resume or args.out)
    if result.interrupted == "training":
        print(f"craits train: interrupted at step {result.global_step:,}; checkpoint saved: "
              f"{result.final_checkpoint}; continue with: craits train --resume "
              f"{shlex.quote(str(result.run_dir))}", file=sys.stderr)  # fmt: skip
        return 130
    if result.interrupted == "evaluation":
        print(f"craits train: interrupted in the final evaluation; the trained agent is "
              f"{result.final_checkpoint}; finish the evaluation (played games are kept) with: "
              f"craits train --resume {shlex.quote(str(result.run_dir))}",
              file=sys.stderr)  # fmt: skip
        return 130
    for evaluation in result.evaluations.values():
        print()
        print(evaluation["markdown"].rstrip())
    print(f"\n{result.global_step:,} steps in {result.updates} updates, {result.sps:,.0f} steps/s; "
          f"agent: ppo:{result.run_dir}; TensorBoard: tensorboard --logdir "
          f"{result.run_dir}")  # fmt: skip
    return 0


def _train_interrupted(where: Path | None) -> int:
    """The message for a ``craits train`` interrupted outside the loop's own handling."""
    from training.train import find_checkpoint

    try:
        found = find_checkpoint(where) if where is not None else None
    except ValueError:
        found = None
    if found is not None:
        print(f"craits train: interrupted; continue from {found} with: craits train --resume "
              f"{shlex.quote(str(where))}", file=sys.stderr)  # fmt: skip
    else:
        print(
            "craits train: interrupted before the first checkpoint; nothing to resume",
            file=sys.stderr,
        )
    return 130


if __name__ == "__main__":
    sys.exit(main())
