"""Training throughput: environment steps per second and where the time goes.

Runs ``craits train``'s loop (a named configuration, evaluation off) for a
number of environment steps in this process and prints the steps per second
of collecting and learning together, the split of that time — environment
(engine, bots, rewards and bookkeeping), encoding, the network's forward
passes (with sampling), the PPO update — and the process's peak memory.

    python experiments/bench_training.py --config ppo_4p --steps 3000000
    python experiments/bench_training.py --config ppo_4p --steps 3000000 --json

An environment step is one decision of any seat: the learner's, the other
network seats', the bots' and the forced ones (which are applied without asking
the network and are not training transitions).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from craits.training.config import DEFAULT_CONFIG, load_config
from craits.training.train import train
from craits_env.fileio import atomic_write_text


def bench(config_name: str, steps: int, overrides: list[str]) -> dict[str, Any]:
    config = load_config(
        config_name,
        [
            f"total_steps={steps}",
            "eval_every=0",
            "final_eval_deals=0",
            "checkpoint_every=0",
            *overrides,
        ],
    )
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = train(config, out=Path(tmp) / "run", progress=False, echo=lambda s: None)
        wall = time.perf_counter() - start
    busy = sum(result.seconds.values())
    return {
        "config": config.name,
        "overrides": overrides,
        "steps": result.global_step,
        "updates": result.updates,
        "sps": round(result.sps),
        "sps_wall": round(result.global_step / wall),
        "seconds": {k: round(v, 2) for k, v in result.seconds.items()},
        "share": {k: round(v / busy, 3) for k, v in result.seconds.items()},
        "peak_rss_mb": round(result.peak_rss_mb),
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "load_average": round(os.getloadavg()[0], 2),  # other processes share the machine
    }


def to_markdown(r: dict[str, Any], command: str) -> str:
    seconds, share = r["seconds"], r["share"]
    lines = [
        "# Training throughput",
        "",
        f"{time.strftime('%Y-%m-%d')}; {r['machine']}, CPython {r['python']}, torch {r['torch']}, "
        f"{r['torch_threads']} torch thread(s); configuration `{r['config']}`"
        + (f" with {' '.join(r['overrides'])}" if r["overrides"] else "")
        + f"; {r['steps']:,} environment steps, {r['updates']} PPO updates, evaluation off.",
        "",
        f"**{r['sps']:,} environment steps per second** (collecting and learning; every seat's "
        f"decisions, bots' and forced ones included); {r['sps_wall']:,} with the setup. "
        "Target: >= 10,000 on 2 CPU cores.",
        "",
        "| where the time goes | seconds | share |",
        "|---|---:|---:|",
    ]
    labels = {
        "env": "environment: engine, bots, rewards, bookkeeping",
        "encode": "encoding observations and masks",
        "forward": "network forward passes and sampling",
        "update": "PPO update (GAE, epochs, optimiser)",
    }
    for k, label in labels.items():
        lines.append(f"| {label} | {seconds[k]:.1f} | {share[k]:.1%} |")
    lines += [
        "",
        f"Peak resident memory of the process: {r['peak_rss_mb']} MB. The machine has "
        f"{r['cpu_count']} cores; its 1-minute load average at the end was "
        f"{r['load_average']} (other work shares it).",
        "",
        f"Reproduce: `{command}`",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=DEFAULT_CONFIG, help="a named configuration")
    p.add_argument("--steps", type=int, default=2_000_000, help="environment steps to run")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="config overrides, as craits train --set",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--md",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write the result as Markdown (and JSON beside it)",
    )
    args = p.parse_args()
    r = bench(args.config, args.steps, args.set)
    if args.md:
        command = "python experiments/bench_training.py " + shlex.join(sys.argv[1:])
        atomic_write_text(args.md, to_markdown(r, command))
        atomic_write_text(args.md.with_suffix(".json"), json.dumps(r, indent=2) + "\n")
    if args.json:
        print(json.dumps(r))
        return
    print(
        f"{r['config']} {' '.join(args.set)}: {r['steps']:,} environment steps, "
        f"{r['updates']} updates, {r['torch_threads']} torch thread(s)"
    )
    print(f"  SPS (collect + learn): {r['sps']:,}   wall, setup included: {r['sps_wall']:,}")
    for k, v in r["seconds"].items():
        print(f"  {k:>8}: {v:8.1f} s  {r['share'][k]:6.1%}")
    print(f"  peak RSS: {r['peak_rss_mb']} MB")


if __name__ == "__main__":
    main()
