"""Write ``experiments/results/ladder.md`` from a tournament's ``results.json``.

Checks the ladder ``random < greedy < tactician < expert < pimc`` (by mean game score,
lower is better; ``--ladder`` names another, weakest first) and whether the 95% confidence
intervals of neighbours overlap. Usage::

    craits tournament random greedy tactician expert pimc --players 4 --deals 2000 \\
        --schedule cycle --short --workers 2 --seed 0 --out experiments/results/ladder
    python experiments/ladder_report.py experiments/results/ladder/results.json
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from craits_env.fileio import atomic_write_text

LADDER = ("random", "greedy", "tactician", "expert", "pimc")


def report(results: dict, ladder: tuple[str, ...] = LADDER) -> tuple[str, bool]:
    agents = {a["spec"]: a for a in results["agents"]}
    missing = [s for s in ladder if s not in agents]
    if missing:
        raise ValueError(f"results.json has no agent {missing}; it has {sorted(agents)}")
    lines = [
        "| step | mean game score [95% CI] | win rate [95% CI] | CI separated from the next |",
        "|---|---|---|---|",
    ]
    holds = True
    for i, spec in enumerate(ladder):
        a = agents[spec]
        lo, hi = a["mean_score_ci"]
        sep = ""
        if i + 1 < len(ladder):
            b = agents[ladder[i + 1]]
            separated = b["mean_score_ci"][1] < lo  # the stronger agent scores lower
            better = b["mean_score"] < a["mean_score"]
            holds = holds and separated and better
            sep = "yes" if separated and better else "**no**"
        wlo, whi = a["win_rate_ci"]
        lines.append(
            f"| `{spec}` | {a['mean_score']:.1f} [{lo:.1f}, {hi:.1f}] "
            f"| {a['win_rate']:.3f} [{wlo:.3f}, {whi:.3f}] | {sep} |"
        )
    return "\n".join(lines), holds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, help="a tournament's results.json")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "ladder.md")
    ap.add_argument(
        "--ladder",
        nargs="+",
        default=list(LADDER),
        metavar="SPEC",
        help="the expected order, weakest first (default: %(default)s)",
    )
    ap.add_argument(
        "--notes",
        type=Path,
        default=None,
        metavar="FILE",
        help="Markdown inserted after the verdict (costs, context)",
    )
    args = ap.parse_args(argv)
    ladder = tuple(args.ladder)
    try:
        results = json.loads(args.results.read_text(encoding="utf-8"))
        table, holds = report(results, ladder)
        notes = args.notes.read_text(encoding="utf-8").strip() if args.notes else ""
    except (OSError, ValueError) as e:
        ap.error(str(e))
    cfg = results["config"]
    hand_sizes = cfg["rules"]["hand_sizes"]
    sizes = ", ".join(map(str, hand_sizes))
    kinds = {
        (8, 7, 6, 5, 4, 3, 2, 1): "the short game",
        (8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8): "the standard game",
    }
    kind = kinds.get(tuple(hand_sizes), "custom schedule")
    verdict = (
        "**The ladder holds**: every pair of neighbours is ordered and their 95% confidence "
        "intervals on mean game score do not overlap."
        if holds
        else "**The ladder does not hold** with non-overlapping intervals (see the table)."
    )
    full = (args.results.parent / "results.md").read_text(encoding="utf-8")
    intro = (
        f"A {cfg['players']}-player duplicate tournament of {cfg['deals']:,} deals (seed "
        f"{cfg['seed']}, schedule `{cfg.get('schedule', 'all')}`: every deal is played under "
        f"all {cfg['players']} seat rotations by one line-up of {cfg['players']} of the "
        f"{len(results['agents'])} agents, the line-ups in turn; {results['games']:,} games); "
        f"hands {sizes} ({kind}), default rules otherwise."
    )
    parts = [
        "# The ladder: " + " < ".join(ladder),
        "",
        intro,
        "",
        "Mean game score: lower is better; 95% intervals: percentile bootstrap over deals.",
        "",
        table,
        "",
        verdict,
        "",
        *([notes, ""] if notes else []),
        "Reproduce:",
        "",
        "```bash",
        results["command"],
        "python experiments/ladder_report.py " + shlex.join(sys.argv[1:] if argv is None else argv),
        "```",
        "",
        "## The full table",
        "",
        full.split("\n", 1)[1] if full.startswith("# ") else full,
    ]
    text = "\n".join(parts)
    atomic_write_text(args.out, text)
    print(text)
    return 0 if holds else 1


if __name__ == "__main__":
    sys.exit(main())
