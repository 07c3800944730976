"""What a training run's evaluation pays for its luck-adjusted figures (``eval_adjusted``).

The champion's policy as a checkpoint (``experiments/export_champion.py``'s
:func:`checkpoint_from_weights`) is evaluated against three ``expert`` on ``--deals`` deals of
the standard table, every seat rotation (:func:`craits.training.evaluate.evaluate`, as
``craits train`` does), in memory as the periodic evaluations are and stored as the final one
is, each with ``adjusted`` off and on, in this order in one process: off, on (in memory), then
off, on and on again (stored: the rerun reads ``luck.jsonl``). The times, the share the
corrections add, and the plain and adjusted intervals of the agent's mean score go to
``experiments/results/luck/eval_cost.md`` and ``eval_cost.json``. Usage::

    python experiments/bench_eval_luck.py --deals 25
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

# A script: its own directory is on sys.path, so its sibling module imports by name.
from export_champion import checkpoint_from_weights

from craits.agents.checkpoint import save_checkpoint
from craits.training.evaluate import evaluate
from craits_env import Rules
from craits_env.fileio import atomic_write_json, atomic_write_text

OUT = Path(__file__).resolve().parent / "results" / "luck"
PLAYERS = 4
OPPONENT = "expert"


def timed(checkpoint: Path, deals: int, adjusted: bool, out: Path | None) -> dict[str, Any]:
    start = time.perf_counter()
    result = evaluate(checkpoint, OPPONENT, PLAYERS, Rules(), deals, out=out, adjusted=adjusted)
    seconds = time.perf_counter() - start
    row = {
        k: v
        for k, v in result["agent"].items()
        if "score" in k or k in ("games", "deals", "adjusted_width_ratio")
    }
    return {"adjusted": adjusted, "stored": out is not None, "seconds": seconds, **row}


def markdown(report: dict[str, Any]) -> str:
    runs = report["runs"]
    lines = [
        "# The cost of a training evaluation's luck-adjusted figures",
        "",
        f"The champion's policy against three `{OPPONENT}`, standard table, {report['deals']} "
        f"deals × {PLAYERS} rotations ({runs[0]['games']} games of the agent), "
        f"{report['machine']} (load average {report['load'][0]:.1f} before, "
        f"{report['load'][1]:.1f} after: other work shared the cores). `{report['command']}`",
        "",
        "| evaluation | adjusted | seconds | mean score [95%] | adjusted [95%] (width ×) |",
        "|---|---|---:|---|---|",
    ]
    for r in runs:
        lo, hi = r["mean_score_ci"]
        adjusted = "—"
        if r["adjusted"]:
            alo, ahi = r["adjusted_mean_score_ci"]
            adjusted = (
                f"{r['adjusted_mean_score']:.1f} [{alo:.1f}, {ahi:.1f}] "
                f"(×{r['adjusted_width_ratio']:.2f})"
            )
        where = "stored" + (" (rerun)" if r.get("rerun") else "") if r["stored"] else "in memory"
        lines.append(
            f"| {where} | {'on' if r['adjusted'] else 'off'} | {r['seconds']:.1f} "
            f"| {r['mean_score']:.1f} [{lo:.1f}, {hi:.1f}] | {adjusted} |"
        )
    lines += [
        "",
        f"In memory (the periodic evaluations) the corrections multiply the evaluation's time "
        f"by {report['in_memory_ratio']:.2f}; stored (the final one), by "
        f"{report['stored_ratio']:.2f}, and a rerun into the same folder computes none "
        f"({report['rerun_seconds']:.1f} s). `eval_adjusted = false` leaves them out.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=25, help="deals (default 25)")
    parser.add_argument("--out", type=Path, default=OUT, help="results folder")
    args = parser.parse_args(argv)
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        checkpoint = Path(tmp) / "champion.pt"
        save_checkpoint(checkpoint, checkpoint_from_weights())
        runs = [timed(checkpoint, args.deals, adjusted, None) for adjusted in (False, True)]
        runs += [timed(checkpoint, args.deals, False, Path(tmp) / "plain")]
        runs += [timed(checkpoint, args.deals, True, Path(tmp) / "adjusted") for _ in range(2)]
        runs[-1]["rerun"] = True
    load.append(os.getloadavg()[0])
    report = {
        "command": f"python experiments/bench_eval_luck.py --deals {args.deals}",
        "deals": args.deals,
        "machine": f"{platform.processor() or platform.machine()}, Python "
        f"{platform.python_version()}, one process",
        "load": load,
        "runs": runs,
        "in_memory_ratio": runs[1]["seconds"] / runs[0]["seconds"],
        "stored_ratio": runs[3]["seconds"] / runs[2]["seconds"],
        "rerun_seconds": runs[4]["seconds"],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.out / "eval_cost.json", report)
    atomic_write_text(args.out / "eval_cost.md", markdown(report))
    print(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
