"""``craits evaluate``: an agent on the Craits benchmark, and its report card."""

from __future__ import annotations

import argparse
import contextlib
import shlex
import sys
from pathlib import Path
from typing import Any

from .. import arguments as a

SIZES = ("full", "search", "smoke")  # craits.benchmark.suite.SIZES (not imported: a quick --help)
SIZE_TIMES = (
    "Time with --workers 2 on 2 shared cores, for a fast agent (greedy): smoke 3 to 5 min "
    "(measured); search about 1.5 h, full about 2 h (extrapolated from the smoke card's "
    "per-opponent times); the searching opponents take most of it (champion-search 73%%, pimc "
    "15%% of the smoke card). A searching agent adds its own search (docs/benchmark.md)."
)


def add_parser(sub: Any) -> None:
    """The ``craits evaluate`` parser."""
    ev = sub.add_parser(
        "evaluate",
        help="play an agent on the Craits benchmark and write its report card",
        description="Play SPEC on a benchmark suite (docs/benchmark.md): every table of the suite "
        "(v1: the standard game with 4 players, the 2-player game, the short 4-player game), "
        "against each opponent of the frozen zoo (random, greedy, tactician, expert, champion, "
        "pimc, champion-search) in every other seat, on the suite's fixed deals, every seat "
        "rotation of every deal; then the reference (expert) in SPEC's place, for paired "
        "estimates. Writes OUT/card.json (the report card), card.md and card.png. Games are "
        "kept as they finish under OUT/games (or --games): rerunning the same command resumes, "
        "and the card is the same for any --workers.",
        epilog="Exit status: 0 done; 1 failed while playing (finished games are kept); 2 bad "
        "arguments or a refusal (an unknown spec, a games folder of other agents, a deal set "
        "that does not check, a Ray cluster unreachable, refusing the token, short of CPUs or "
        "with a node that cannot play the agents) — nothing is changed; 130 interrupted, by "
        "Ctrl-C or SIGTERM (rerun the same command to resume).",
    )
    ev.add_argument("spec", metavar="SPEC", help=a.SPECS_HELP)
    ev.add_argument("--suite", default="v1", help="the benchmark suite (default v1)")
    ev.add_argument(
        "--size",
        choices=SIZES,
        default="full",
        help="full: the large deal sets (the small ones against searching opponents); "
        "search: the small deal sets throughout, for a searching agent; smoke: the "
        "first 5 deals of each small set, every table and opponent — a smoke card, "
        "comparable with no other card, to check that an agent runs through the "
        "benchmark (default full). " + SIZE_TIMES,
    )
    ev.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the card goes (default evaluate/SPEC)",
    )
    ev.add_argument(
        "--games",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the games are kept (default OUT/games; evaluations sharing it "
        "share the reference's games)",
    )
    ev.add_argument(
        "--workers",
        type=a.positive_int,
        default=1,
        help="parallel processes on this machine (default 1)",
    )
    a.add_ray_arg(ev, "play the card's games")
    ev.add_argument(
        "--adjusted",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="give the card's luck-adjusted mean scores and paired estimates (docs/luck.md; on "
        "by default: about 0.1 s of numpy a game on top of playing it; --no-adjusted skips "
        "them)",
    )
    ev.add_argument(
        "--luck",
        default="model",
        metavar="ESTIMATOR",
        help="what the adjusted estimates are corrected by, named in the card: model (the "
        "shipped value model, the default) or rollouts:R[:K[:S]] (compiled rollouts: seconds a "
        "game, narrower intervals; docs/luck.md)",
    )
    ev.add_argument("--no-progress", action="store_true", help=a.NO_PROGRESS_HELP)
    ev.set_defaults(run=run)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Evaluate, write the card, print where it is."""
    from craits_env.extras import require

    require("tournament", "craits evaluate")
    if args.ray is not None:
        require("ray", "craits evaluate --ray")
    a.terminate_as_interrupt()  # SIGTERM: as Ctrl-C, the finished games kept
    from craits.agents.duplicate_tournament import TournamentError, TournamentRefused
    from craits.agents.progress import Ticks
    from craits.agents.specs import resolve_agent
    from craits.localray import ClusterError, session

    from ..benchmark.card import seconds_shares
    from ..benchmark.deal_sets import DealSetError
    from ..benchmark.evaluate import Options, evaluate, slug
    from ..benchmark.suite import suite
    from .tournament import recovery

    try:
        chosen = suite(args.suite)
        resolve_agent(args.spec)  # an unknown spec or a bad checkpoint: status 2, now
        if not args.adjusted and args.luck != "model":
            parser.error(f"--luck {args.luck} corrects the adjusted estimates: drop --no-adjusted")
        if args.adjusted:
            from craits.agents.luck_tournament import estimator
            from craits_env import Rules

            estimator(args.luck, 4, Rules())  # a bad --luck: refused before any game
    except ValueError as e:
        parser.error(str(e))
    out = args.out or Path("evaluate") / slug(args.spec)
    shown: dict[str, Ticks] = {}

    def progress(what: str, done: int, total: int) -> None:
        if what not in shown:  # the next tournament
            for ticks in shown.values():
                ticks.close()
            shown.clear()
            shown[what] = Ticks(what, enabled=not args.no_progress)
        shown[what](done, total)

    command = "craits evaluate " + shlex.join(sys.argv[2:]) if len(sys.argv) > 2 else ""
    options = Options(
        out, args.games, args.workers, args.ray is not None, args.ray or None, progress, command,
        adjusted=args.adjusted, luck=args.luck,
    )  # fmt: skip
    try:
        with (
            session(args.ray or None, include_dashboard=False, log_to_driver=False, cpus=1)
            if args.ray is not None
            else contextlib.nullcontext()
        ):  # one connection for every tournament of the card
            card = evaluate(args.spec, chosen, args.size, options)
    except (TournamentRefused, DealSetError) as e:
        a.fail(parser.prog, str(e), *recovery(e))
        return 2
    except ClusterError as e:  # before any game: nothing to resume
        a.fail(parser.prog, str(e))
        return 2
    except (TournamentError, ValueError, OSError) as e:
        a.fail(
            parser.prog,
            str(e),
            f"finished games are kept in {options.games}; rerun the same command to resume",
        )
        return 1
    except KeyboardInterrupt:
        print(
            f"{parser.prog}: interrupted; finished games are kept in {options.games}; "
            "rerun the same command to resume",
            file=sys.stderr,
        )
        return 130
    finally:
        for ticks in shown.values():
            ticks.close()
    table = card["tables"][0]
    smoke = " (a smoke card: comparable with no other card)" if args.size == "smoke" else ""
    print(
        f"Report card of {args.spec} ({card['agent']['identity']}) on benchmark "
        f"{card['suite']}{smoke}: {out / 'card.json'} (and card.md, card.png)"
    )
    print(
        f"  {card['compute']['seconds']:.0f} s; by opponent: "
        f"{seconds_shares(card['compute']['seconds_by_opponent'])}"
    )
    for o in table["opponents"]:
        paired = f", paired {o['paired']['mean']:+.1f}" if o["paired"] else ""
        print(
            f"  {table['name']} vs {o['opponent']:16} win rate {o['win_rate']:.3f}, "
            f"mean score {o['mean_score']:.1f}{paired}"
        )
    return 0
