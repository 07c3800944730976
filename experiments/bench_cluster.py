"""Self-play PPO on a multi-node Ray cluster, measured: steps per second against rollout workers
on the test cluster of experiments/ray_test_cluster.py (``ray start`` nodes on 127.0.0.x in a
network namespace of their own, each declaring its CPUs), beside the single-process run and
beside the model of experiments/bench_distributed.py (its committed projection).

    unshare -n python -m experiments.bench_cluster --config ppo_4p --steps 90000 --rounds 2 \\
        --cpus 1 1 1 --workers 1 2 3 --out experiments/results/cluster

Each round runs ``craits train``'s loop once in this process (no Ray) and once per worker
count on the cluster (``craits train --ray HEAD --workers K``), interleaved so that the
machine's other load falls on every mode alike; the table gives each mode's median. The
learner runs where ``craits train`` puts it: on CUDA when this machine has it (the config's
``device = "auto"``), else on the CPU; the device used is recorded. The nodes are processes of
one machine: workers beyond its cores share them (the table says how many cores it had).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from craits.training.config import DEFAULT_CONFIG, load_config
from craits.training.distributed import RayOptions
from craits.training.train import train
from craits_env.fileio import atomic_write_text
from experiments.ray_test_cluster import LocalCluster

MODEL = Path(__file__).parent / "results" / "distributed" / "results.json"
LOCAL = "local"


def one_run(config: Any, workers: int | None, address: str | None) -> dict[str, Any]:
    rollouts = RayOptions(workers=workers, address=address) if workers else None
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = train(
            config, out=Path(tmp) / "run", rollouts=rollouts, progress=False, echo=lambda s: None
        )
        wall = time.perf_counter() - start
    return {
        "mode": f"ray{workers}" if workers else LOCAL,
        "workers": workers or 0,
        "steps": result.global_step,
        "updates": result.updates,
        "sps": result.sps,
        "wall_s": wall,
    }


def model_rows(workers: list[int]) -> dict[int, float]:
    """The committed model's projected steps/s (experiments/results/distributed), by workers."""
    rows = json.loads(MODEL.read_text())["projection"]["rows"]
    known = {int(r["workers"]): float(r["sps"]) for r in rows}
    out = {}
    for n in workers:  # the model's rows are powers of two: between two, interpolated
        lower = max(k for k in known if k <= n)
        upper = min(k for k in known if k >= n)
        if lower == upper:
            out[n] = known[n]
        else:
            share = (n - lower) / (upper - lower)
            out[n] = known[lower] + share * (known[upper] - known[lower])
    return out


def markdown(report: dict[str, Any]) -> str:
    one = report["summary"]["ray1"]["sps"]
    model = report["model"]
    lines = [
        "# Self-play PPO on a three-node Ray cluster: steps per second against workers",
        "",
        f"`{report['command']}` ({report['date']}; {report['cpu_count']} cores shared by the "
        f"nodes, load {report['load_before']:.1f} before and {report['load_after']:.1f} after; "
        f"learner on {report['device']}; medians of {report['rounds']} rounds of "
        f"{report['steps']:,} steps of `{report['config']}`; nodes declaring "
        f"{', '.join(f'{c:g}' for c in report['cpus'])} CPUs).",
        "",
        "| mode | workers | measured steps/s | vs 1 worker | model steps/s | model vs 1 worker |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    local = report["summary"][LOCAL]["sps"]
    lines.append(f"| one process | 0 | {local:,.0f} | {local / one:.2f} | | |")
    m1 = model.get("1")
    for n in report["workers"]:
        s = report["summary"][f"ray{n}"]["sps"]
        m = model.get(str(n))
        lines.append(
            f"| cluster | {n} | {s:,.0f} | {s / one:.2f} | {m:,.0f} | {m / m1:.2f} |"
            if m and m1
            else f"| cluster | {n} | {s:,.0f} | {s / one:.2f} | | |"
        )
    lines += [
        "",
        "The model: experiments/bench_distributed.py's projection (Amdahl's law with the parts "
        "of an update measured on one machine, one CPU per worker, a 10 Gbit/s link), from "
        "experiments/results/distributed/results.json; between its rows (powers of two) "
        "interpolated.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=DEFAULT_CONFIG)
    parser.add_argument("--steps", type=int, default=90_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cpus", type=float, nargs="+", default=[1, 1, 1])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    config = load_config(
        args.config,
        [f"total_steps={args.steps}", "eval_every=0", "final_eval_deals=0", "checkpoint_every=0"],
    )
    device = "cuda" if torch.cuda.is_available() and config.device in ("auto", "cuda") else "cpu"
    load_before = os.getloadavg()[0]
    runs: list[dict[str, Any]] = []
    with LocalCluster(list(args.cpus)) as cluster:
        os.environ["HOME"] = str(cluster.home)  # this process drives: the cluster's token
        for r in range(args.rounds):
            for workers in [None, *args.workers]:
                run = one_run(config, workers, cluster.address if workers else None)
                run["round"] = r
                runs.append(run)
                print(f"round {r} {run['mode']}: {run['sps']:,.0f} steps/s", flush=True)
    summary = {}
    for mode in [LOCAL, *(f"ray{n}" for n in args.workers)]:
        mine = [x for x in runs if x["mode"] == mode]
        summary[mode] = {"sps": statistics.median(x["sps"] for x in mine)}
        summary[mode]["sps_rounds"] = [round(x["sps"]) for x in mine]
    report = {
        "date": time.strftime("%Y-%m-%d"),
        "config": args.config,
        "steps": args.steps,
        "rounds": args.rounds,
        "cpus": args.cpus,
        "workers": args.workers,
        "device": device,
        "runs": runs,
        "summary": summary,
        "model": {str(k): v for k, v in model_rows(args.workers).items()},
        "cpu_count": os.cpu_count(),
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
        "machine": platform.machine(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "command": "unshare -n python -m experiments.bench_cluster " + shlex.join(sys.argv[1:]),
    }
    text = markdown(report)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(args.out / "results.json", json.dumps(report, indent=1) + "\n")
        atomic_write_text(args.out / "results.md", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
