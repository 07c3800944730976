"""Where the champion stands: ``experiments/results/champion/README.md`` from its evaluations.

Reads the two target tournaments (the champion against three ``pimc``, against three
``expert``; held-out deals of the standard game), the training run's final checkpoint (its
steps and CPU seconds) and times ``champion-search`` and ``pimc`` per searched decision on
the same positions (the end of hands of 4-expert standard games, as
``experiments/bench_pimc.py``). Checks the issue's targets and writes the report::

    python experiments/champion_report.py --vs-pimc DIR/results.json --vs-expert DIR/results.json \\
        --checkpoint experiments/results/champion/final.pt --notes FILE
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

# A script: its own directory is on sys.path, so its sibling module imports by name.
from bench_pimc import searched_decisions, time_decisions

from craits.agents.champion import CHAMPION, CHAMPION_SEARCH, SEARCH_SIMULATIONS
from craits.agents.checkpoint import load_checkpoint
from craits.agents.specs import make_agent
from craits_env import Rules
from craits_env.fileio import atomic_write_text

OUT = Path(__file__).resolve().parent / "results" / "champion" / "README.md"
SEARCH_MS_LIMIT = 50.0  # the bound per searched decision of champion-search


def table_row(results: dict[str, Any], opponent: str) -> dict[str, Any]:
    agents = {a["spec"]: a for a in results["agents"]}
    if CHAMPION not in agents or opponent not in agents:
        raise ValueError(f"results.json has {sorted(agents)}; expected {CHAMPION} and {opponent}")
    me, them = agents[CHAMPION], agents[opponent]
    return {
        "me": me,
        "them": them,
        "deals": results["config"]["deals"],
        "seed": results["config"]["seed"],
        "games": results["games"],
        "command": results["command"],
    }


def ci(v: list[float], digits: int) -> str:
    return f"[{v[0]:.{digits}f}, {v[1]:.{digits}f}]"


def report(args: argparse.Namespace) -> tuple[str, bool]:
    pimc = table_row(json.loads(args.vs_pimc.read_text(encoding="utf-8")), "pimc")
    expert = table_row(json.loads(args.vs_expert.read_text(encoding="utf-8")), "expert")
    data = load_checkpoint(args.checkpoint)
    views = searched_decisions(Rules(), args.positions, seed=args.seed)
    search_s, _ = time_decisions(views, make_agent(CHAMPION_SEARCH, 0))  # type: ignore[arg-type]
    pimc_s, _ = time_decisions(views, make_agent("pimc", 0))  # type: ignore[arg-type]
    me, them = pimc["me"], pimc["them"]
    checks = {
        "vs 3 pimc: win-rate interval above 0.25": me["win_rate_ci"][0] > 0.25,
        "vs 3 pimc: mean-score interval below theirs": me["mean_score_ci"][1]
        < them["mean_score_ci"][0],
        "vs 3 expert: win rate >= 0.35": expert["me"]["win_rate"] >= 0.35,
        f"champion-search <= {SEARCH_MS_LIMIT:.0f} ms per searched decision": search_s * 1000
        <= SEARCH_MS_LIMIT,
    }
    lines = [
        "# The champion: where it stands",
        "",
        "`champion` plays the policy of its training checkpoint (`final.pt`, kept out of the "
        "repository: see `experiments/results/README.md`), shipped as the playing weights "
        "`agents/weights/champion.npz` (`experiments/export_champion.py`; argmax of the "
        "policy, no search); "
        f"`champion-search` is PIMC ({SEARCH_SIMULATIONS} compiled rollouts per searched "
        "decision) with the champion as its prior. Standard game (15 hands), 4 players, "
        "duplicate deals from seeds never used in training or tuning.",
        "",
        "| table | deals (games) | champion's win rate | champion's mean game score "
        "| the bots' mean game score |",
        "|---|---:|---|---|---|",
    ]
    for name, t in (("3 × `pimc`", pimc), ("3 × `expert`", expert)):
        m, o = t["me"], t["them"]
        lines.append(
            f"| champion + {name} | {t['deals']:,} ({t['games']:,}) | {m['win_rate']:.3f} "
            f"{ci(m['win_rate_ci'], 3)} | {m['mean_score']:.1f} {ci(m['mean_score_ci'], 1)} "
            f"| {o['mean_score']:.1f} {ci(o['mean_score_ci'], 1)} |"
        )
    lines += ["", "| target (issue) | holds |", "|---|---|"]
    lines += [f"| {k} | {'yes' if v else '**no**'} |" for k, v in checks.items()]
    seconds = data.get("seconds", {})
    lines += [
        "",
        f"Time per searched decision, the same {len(views)} end-of-hand positions of standard "
        f"4-expert games, one process: `champion-search` {search_s * 1000:.1f} ms, `pimc` "
        f"{pimc_s * 1000:.1f} ms.",
        "",
        f"Training (this checkpoint's run): {data['global_step']:,} environment steps, "
        f"{data['update']:,} updates, {sum(seconds.values()) / 3600:.2f} CPU-hours of "
        "collecting and learning (one thread: "
        + ", ".join(f"{k} {v / 60:.1f} min" for k, v in seconds.items())
        + ").",
    ]
    if args.notes:
        lines += ["", args.notes.read_text(encoding="utf-8").strip()]
    lines += [
        "",
        "Reproduce:",
        "",
        "```bash",
        pimc["command"],
        expert["command"],
        "python experiments/champion_report.py " + shlex.join(sys.argv[1:]),
        "```",
        "",
    ]
    return "\n".join(lines), all(checks.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vs-pimc", type=Path, required=True, metavar="RESULTS_JSON")
    ap.add_argument("--vs-expert", type=Path, required=True, metavar="RESULTS_JSON")
    ap.add_argument("--checkpoint", type=Path, required=True, help="the champion's final.pt")
    ap.add_argument("--positions", type=int, default=100, help="searched decisions timed")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--notes", type=Path, default=None, help="Markdown appended (how trained)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    try:
        text, holds = report(args)
    except (OSError, ValueError, KeyError) as e:
        ap.error(str(e))
    atomic_write_text(args.out, text)
    print(text)
    return 0 if holds else 1


if __name__ == "__main__":
    sys.exit(main())
