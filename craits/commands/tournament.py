"""``craits tournament``: a duplicate tournament between agents."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from .. import arguments as a


def add_parser(sub: Any) -> None:
    """The ``craits tournament`` parser."""
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
        "this table; a Ray cluster unreachable, refusing the token, short of CPUs or with a "
        "node that cannot play the agents) — nothing is changed; 130 interrupted, by Ctrl-C or "
        "SIGTERM (rerun the same command to resume).",
    )
    tour.add_argument("specs", nargs="+", metavar="SPEC", help=a.SPECS_HELP)
    tour.add_argument("--players", "-n", type=a.players, default=4, help="2-10 (default 4)")
    tour.add_argument("--deals", type=a.positive_int, default=100, help="deals (default 100)")
    tour.add_argument("--seed", type=int, default=0, help="seed of the whole table (default 0)")
    tour.add_argument(
        "--workers",
        type=a.positive_int,
        default=1,
        help="parallel processes on this machine (default 1)",
    )
    a.add_ray_arg(tour, "play the games")
    tour.add_argument("--out", type=Path, required=True, metavar="DIR", help="results directory")
    tour.add_argument(
        "--schedule",
        choices=("all", "cycle"),
        default="all",
        help="with more specs than players: every line-up on every deal (all, default) or one "
        "line-up per deal in turn (cycle: 1/L of the games)",
    )
    tour.add_argument(
        "--rotations",
        choices=("all", "one"),
        default="all",
        help="each deal under every seat rotation (all, default) or under rotation "
        "DEAL %% PLAYERS only (one: a game per deal and line-up; no duplicate cancelling within "
        "a deal, but tournaments of the same --seed pair deal by deal)",
    )
    tour.add_argument("--title", default=None, help="title of the Markdown table and chart")
    tour.add_argument("--no-progress", action="store_true", help=a.NO_PROGRESS_HELP)
    tour.add_argument(
        "--record",
        type=Path,
        default=None,
        metavar="FILE",
        help="also save every game as a game record (JSON Lines, in plan order; see craits replay)",
    )
    tour.add_argument(
        "--adjusted",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="add each agent's luck-adjusted mean score and its interval (the score less what "
        "the cards did, by a value model: the same expectation; how much narrower its "
        "interval is depends on the model, measured in docs/luck.md); on by default: the "
        "games' records are kept in DIR/records.jsonl and their corrections in DIR/luck.jsonl "
        "(about 0.1 s of numpy a game; --no-adjusted skips it)",
    )
    tour.add_argument(
        "--luck",
        default="model",
        metavar="ESTIMATOR",
        help="what the luck-adjusted scores are corrected by: model (the shipped value model, "
        "the default), or rollouts:R[:K[:S]] (R compiled rollouts of the hand at every chance "
        "event, each seat played as the table plays it, K sampled outcomes, default 8, S "
        "rollouts a sampled outcome, default R: seconds a game, narrower intervals; "
        "docs/luck.md)",
    )
    a.add_rule_args(tour)
    tour.set_defaults(run=run)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Play (or resume) the tournament, write its files and print its table."""
    from craits_env.extras import require

    require("tournament", "craits tournament")
    if args.ray is not None:
        require("ray", "craits tournament --ray")
    a.terminate_as_interrupt()  # SIGTERM: as Ctrl-C, the finished games kept
    from craits.agents.duplicate_tournament import (
        GAMES_FILE,
        ResultStore,
        TournamentConfig,
        TournamentError,
        TournamentRefused,
        collect_records,
        identify,
        results_in_order,
    )
    from craits.agents.progress import Ticks
    from craits.agents.report import write_outputs
    from craits.agents.stats import summarize
    from craits.localray import ClusterError

    from ..tournament_workers import run_tournament

    rules = a.rules_from(args, parser)
    if args.record is not None and args.record.resolve() == (args.out / GAMES_FILE).resolve():
        parser.error(f"--record {args.record} would overwrite the tournament's own {GAMES_FILE}")
    try:
        specs = tuple(args.specs)
        config = TournamentConfig(
            specs,
            args.players,
            args.deals,
            args.seed,
            rules,
            args.schedule,
            rotations=args.rotations,
        )
        # An unknown spec, a bad checkpoint, one trained for another table: status 2, now.
        config = identify(config)
        ResultStore.check(args.out, config)  # another tournament's DIR: refused, unchanged
        if not args.adjusted and args.luck != "model":
            parser.error(f"--luck {args.luck} corrects the adjusted scores: drop --no-adjusted")
        if args.adjusted:
            from craits.agents.luck_tournament import estimator

            estimator(args.luck, args.players, rules)  # a bad --luck: refused before any game
    except TournamentRefused as e:
        a.fail(parser.prog, str(e), *recovery(e, args.out))
        return 2
    except ValueError as e:
        parser.error(str(e))
    progress = Ticks(str(args.out), enabled=not args.no_progress)

    command = "craits tournament " + shlex.join(sys.argv[2:]) if len(sys.argv) > 2 else ""
    try:
        games = run_tournament(
            config,
            args.out,
            workers=args.workers,
            use_ray=args.ray is not None,
            ray_address=args.ray or None,
            progress=progress,
            record=args.record is not None or args.adjusted,
        )
        if args.record is not None:
            from craits_env.records import write_records

            write_records(args.record, collect_records(config, args.out, games))
        luck = None
        if args.adjusted:
            from craits.agents.luck_tournament import tournament_luck

            ticks = Ticks(f"{args.out}: luck", enabled=not args.no_progress)
            with ticks:
                luck = tournament_luck(config, args.out, games, args.workers, ticks, by=args.luck)
    except TournamentRefused as e:
        a.fail(parser.prog, str(e), *recovery(e, args.out))
        return 2
    except ClusterError as e:  # before any game: nothing to resume
        a.fail(parser.prog, str(e))
        return 2
    except (TournamentError, ValueError) as e:  # the same games would fail the same way
        a.fail(parser.prog, str(e), f"finished games are kept in {args.out}")
        return 1
    except OSError as e:  # a full disk, a lost mount: a rerun resumes once it is fixed
        a.fail(
            parser.prog,
            str(e),
            f"finished games are kept in {args.out}; rerun the same command to resume",
        )
        return 1
    except KeyboardInterrupt:
        print(
            f"{parser.prog}: interrupted; finished games are kept in {args.out}; rerun the "
            "same command to resume",
            file=sys.stderr,
        )
        return 130
    finally:
        progress.close()
    ordered = results_in_order(games, config)
    summary = summarize(ordered, list(config.specs), config.seed, luck=luck)
    if luck is not None:
        from craits.agents.luck_tournament import estimator

        summary["luck_estimator"] = estimator(args.luck, config.players, config.rules).model_id
    title = args.title or f"Craits tournament: {args.players} players, {args.deals} deals"
    write_outputs(summary, config.to_dict(), args.out, title, command.strip())
    print((args.out / "results.md").read_text(encoding="utf-8"))
    return 0


def recovery(refusal: Exception, out: Path | None = None) -> list[str]:
    """How to go on from a refusal: for a corrupt line of ``OUT/games.jsonl``, what to remove
    (``out``: the tournament's folder, by default the file's)."""
    found = corrupt_line(str(refusal))
    if found is None:
        return []
    path, line = found
    out = Path(path).parent if out is None else out
    return [
        f"hint: remove line {line} of {path} (that game is played again; the finished games "
        f"on the other lines are kept), or remove {out} to start over"
    ]


def corrupt_line(message: str) -> tuple[str, int] | None:
    """The file and line that a refusal names as corrupt (``DIR/games.jsonl line 7: …``)."""
    found = re.match(r"(.*games\.jsonl(?:\.gz)?) line (\d+): ", message)
    return None if found is None else (found[1], int(found[2]))
