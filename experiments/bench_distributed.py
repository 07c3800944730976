"""Self-play PPO on Ray rollout workers: steps per second with 1, 2, ... workers, beside the
single-process ``craits train`` in the same run, and a projection for N workers.

Each round runs ``craits train``'s loop (a named configuration, evaluation and periodic
checkpoints off) once in this process and once per worker count on a local Ray instance
(``craits train --ray --workers K``), interleaved so that the machine's other load falls
on every mode alike. The SPS is environment steps per second of collecting and learning
(the run's ``charts/SPS``); the Ray runs' TensorBoard scalars give the split of an update:
the learner's PPO update, each worker's collecting (``charts/worker_<k>_sps``), the
weights' broadcast and the gathering of the batches.

    python experiments/bench_distributed.py --config ppo_4p --steps 1000000 --rounds 2 \\
        --workers 1 2 --out experiments/results/distributed

**The projection** (:func:`project`) is Amdahl's law with the measured parts of an
update. With N workers (one CPU each, on any number of machines) an update takes::

    T(N) = t_learn + t_bcast + t_gather + N * t_call
           + steps_per_update * straggle / (N * worker_sps)
           + (N * weights_bytes + batch_bytes) / bandwidth

measured here: ``t_learn`` (the PPO update, serial, on the learner) and ``worker_sps``
(one worker's collecting) as the CPU time they take in this process (:func:`calibrate`:
the learner's own ``collect`` and ``learn``, which a worker and the Ray learner run
unchanged; CPU time, because on a shared machine the wall clock also counts the waits for
a core, which a worker with its own CPU does not have), ``t_bcast`` (putting the weights
in the object store and loading them), ``straggle`` (the slowest of 2 workers' collecting over
their mean: a synchronous update waits for the slowest), ``t_call`` (one actor call's
round trip, timed on a no-op; the learner takes the N replies one by one) and ``t_gather``
(the rest of the 1-worker run's gathering: the batch's transfer and concatenation, the
same total for any N). Assumed: ``bandwidth``, the learner machine's network link (every
worker pulls the weights from it and sends its share of the batch to it), 10 Gbit/s by
default. The speed tends to ``steps_per_update / (t_learn + t_bcast + t_gather)`` (the
serial part) and falls again once the per-worker costs outgrow the rollout time saved.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import os
import platform
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from craits import localray
from craits.agents.network import PolicyNet
from craits.training.config import DEFAULT_CONFIG, TrainConfig, load_config
from craits.training.distributed import RayOptions
from craits.training.pool import OpponentPool
from craits.training.rollouts import rollout_generators
from craits.training.selfplay import SelfPlayRollout
from craits.training.state import TrainingState
from craits.training.train import train, update
from craits_env.fileio import atomic_write_text

LOCAL = "local"
BANDWIDTH = 1.25e9  # bytes/s: 10 Gbit/s, the assumed link of the learner's machine
PROJECTED = (1, 2, 4, 8, 16, 32, 64, 128, 256)
ENOUGH = 1.10  # a doubling of the workers that gains less than 10% no longer scales
FAST_LEARNER = 10.0  # the hypothetical column: an update this many times faster (a GPU, say)
CALLS = 300  # no-op actor calls timed for t_call


class _Echo:
    def noop(self) -> None:
        return None


def call_seconds() -> float:
    """One actor call's round trip (``ray.get(actor.noop.remote())``), the median of CALLS."""
    import ray

    actor: Any = ray.remote(num_cpus=0)(_Echo).remote()  # Ray's stubs: a handle of _Echo
    ray.get(actor.noop.remote())
    times = []
    for _ in range(CALLS):
        t0 = time.perf_counter()
        ray.get(actor.noop.remote())
        times.append(time.perf_counter() - t0)
    ray.kill(actor)
    return statistics.median(times)


def _scalars(run: Path, tag: str) -> list[float]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run), size_guidance={"scalars": 0})
    events.Reload()
    return [e.value for e in events.Scalars(tag)] if tag in events.Tags()["scalars"] else []


def one_run(config: TrainConfig, workers: int | None) -> dict[str, Any]:
    """``craits train`` here (``workers`` None) or on ``workers`` Ray workers: the numbers."""
    rollouts = RayOptions(workers=workers) if workers else None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        start = time.perf_counter()
        result = train(config, out=out, rollouts=rollouts, progress=False, echo=lambda s: None)
        wall = time.perf_counter() - start
        busy = result.global_step / result.sps
        r: dict[str, Any] = {
            "mode": f"ray{workers}" if workers else LOCAL,
            "workers": workers or 0,
            "steps": result.global_step,
            "updates": result.updates,
            "sps": result.sps,
            "busy_s": busy,
            "setup_s": wall - busy,  # starting the workers, the last checkpoint, closing
            "learn_s": result.seconds["update"] / result.updates,  # per update
            "collect_s": (busy - result.seconds["update"]) / result.updates,
        }
        if workers:
            sps = [_scalars(out, f"charts/worker_{k}_sps") for k in range(workers)]
            times = np.array([[1 / v for v in s[1:]] for s in sps])  # seconds per step, per update
            r["worker_sps"] = [statistics.median(s[1:]) for s in sps]  # the first: warming up
            r["straggle"] = float(np.mean(times.max(axis=0) / times.mean(axis=0)))
            for tag in ("broadcast_ms", "gather_ms", "policy_lag", "worker_restarts"):
                r[tag] = statistics.median(_scalars(out, f"charts/{tag}")[1:])
    return r


def calibrate(config: TrainConfig, updates: int) -> dict[str, float]:
    """The compute of an update in this process: collecting (the rollouts' ``collect``) and
    learning (the rest of :func:`craits.training.train.update`: GAE and the PPO epochs), CPU
    and wall seconds (medians over ``updates`` after a first, warming-up one)."""
    state = TrainingState(config, torch.device("cpu"), "calibration")
    collect, clock = state.rollouts.collect, {"cpu": 0.0, "wall": 0.0}

    def timed_collect(*args: Any) -> Any:
        c0, w0 = time.thread_time(), time.perf_counter()
        result = collect(*args)
        clock["cpu"], clock["wall"] = time.thread_time() - c0, time.perf_counter() - w0
        return result

    state.rollouts.collect = timed_collect  # type: ignore[method-assign]
    update(state)
    rows: dict[str, list[float]] = {
        k: [] for k in ("steps", "collect_cpu_s", "learn_cpu_s", "collect_wall_s", "learn_wall_s")
    }
    for _ in range(updates):
        c0, w0 = time.thread_time(), time.perf_counter()
        _, stats = update(state)
        cpu, wall = time.thread_time() - c0, time.perf_counter() - w0
        for key, value in (
            ("steps", stats.steps),
            ("collect_cpu_s", clock["cpu"]),
            ("learn_cpu_s", cpu - clock["cpu"]),
            ("collect_wall_s", clock["wall"]),
            ("learn_wall_s", wall - clock["wall"]),
        ):
            rows[key].append(value)
    state.close()
    return {k: statistics.median(v) for k, v in rows.items()}


def payload_bytes(config: TrainConfig) -> dict[str, float]:
    """The weights' size and a batch's per transition (what travels over the network)."""
    net = PolicyNet(SelfPlayRollout.observation_size(config), config.hidden_sizes)
    weights = sum(t.numel() * t.element_size() for t in net.state_dict().values())
    small = config.replace(num_games=8, batch_size=64, num_minibatches=1)
    rng, gen = rollout_generators(small.seed)
    pool = OpponentPool(small.opponents, net.spec(), small.pool_size)
    segment, _ = SelfPlayRollout(small, pool, rng).collect(net, 64, gen)
    per = sum(getattr(segment, k).nbytes for k in vars(segment)) / len(segment)
    return {"weights_bytes": float(weights), "transition_bytes": per}


def summarise(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per mode: the median of each number over the rounds."""
    modes: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        modes.setdefault(r["mode"], []).append(r)
    out = {}
    for mode, rs in modes.items():
        keys = [k for k, v in rs[0].items() if isinstance(v, int | float) and k != "workers"]
        m: dict[str, Any] = {k: statistics.median(r[k] for r in rs) for k in keys}
        m["workers"] = rs[0]["workers"]
        m["sps_rounds"] = [round(r["sps"]) for r in rs]
        if "worker_sps" in rs[0]:
            m["worker_sps"] = [
                statistics.median(r["worker_sps"][k] for r in rs)
                for k in range(len(rs[0]["worker_sps"]))
            ]
        out[mode] = m
    return out


def update_seconds(i: dict[str, float], n: int, learn_s: float) -> tuple[float, float]:
    """The model's update time with ``n`` workers and its rollout part."""
    rollout = i["steps_per_update"] * (i["straggle"] if n > 1 else 1.0) / (n * i["worker_sps"])
    network = (n * i["weights_bytes"] + i["batch_bytes"]) / i["bandwidth_bytes_per_s"]
    serial = learn_s + i["broadcast_s"] + i["gather_s"] + n * i["call_s"] + network
    return serial + rollout, rollout


def _stops(rows: list[dict[str, Any]], key: str) -> int:
    """The worker count past which a doubling gains less than ENOUGH."""
    pairs = itertools.pairwise(rows)
    return next((a["workers"] for a, b in pairs if b[key] < ENOUGH * a[key]), PROJECTED[-1])


def project(
    summary: dict[str, dict[str, Any]],
    compute: dict[str, float],
    sizes: dict[str, float],
    batch_size: int,
    call_s: float,
    bandwidth: float = BANDWIDTH,
) -> dict[str, Any]:
    """The model of the module docstring, from the measured runs and :func:`calibrate`."""
    one, two = summary["ray1"], summary["ray2"]
    i = {
        "steps_per_update": compute["steps"],
        "worker_sps": compute["steps"] / compute["collect_cpu_s"],
        "learn_s": compute["learn_cpu_s"],
        "broadcast_s": 1e-3 * statistics.mean([one["broadcast_ms"], two["broadcast_ms"]]),
        "call_s": call_s,
        "gather_s": max(0.0, 1e-3 * one["gather_ms"] - call_s),
        "straggle": two["straggle"],
        "bandwidth_bytes_per_s": bandwidth,
        "batch_bytes": batch_size * sizes["transition_bytes"],
        **sizes,
    }
    rows = []
    for n in PROJECTED:
        t, rollout = update_seconds(i, n, i["learn_s"])
        fast, _ = update_seconds(i, n, i["learn_s"] / FAST_LEARNER)
        rows.append(
            {
                "workers": n,
                "update_s": t,
                "rollout_s": rollout,
                "serial_s": t - rollout,
                "sps": i["steps_per_update"] / t,
                "sps_fast_learner": i["steps_per_update"] / fast,
            }
        )
    for row in rows:
        row["speedup"] = row["sps"] / rows[0]["sps"]
        row["efficiency"] = row["speedup"] / row["workers"]
    serial = i["broadcast_s"] + i["gather_s"] + i["batch_bytes"] / bandwidth
    fast_learner = i["learn_s"] / FAST_LEARNER
    predicted_two = i["steps_per_update"] / update_seconds(i, 2, i["learn_s"])[0]
    return {
        "inputs": i,
        "rows": rows,
        "stops_scaling_at": _stops(rows, "sps"),
        "ceiling_sps": i["steps_per_update"] / (i["learn_s"] + serial),
        "stops_scaling_at_fast_learner": _stops(rows, "sps_fast_learner"),
        "ceiling_sps_fast_learner": i["steps_per_update"] / (fast_learner + serial),
        "predicted_sps_two_workers": predicted_two,
    }


def to_markdown(r: dict[str, Any], command: str) -> str:
    s, p = r["summary"], r["projection"]
    base = s[LOCAL]["sps"]
    lines = [
        "# Self-play PPO on Ray rollout workers",
        "",
        f"{r['date']}; {r['machine']}, {r['cpu_count']} cores shared with other work (1-minute "
        f"load average {r['load_before']} before, {r['load_after']} after), CPython "
        f"{r['python']}, torch {r['torch']}, Ray {r['ray']}; configuration `{r['config']}` "
        f"({r['steps']:,} environment steps a run, evaluation off), {r['rounds']} rounds "
        "interleaved; medians over the rounds. Learner on the CPU (no GPU here).",
        "",
        "| mode | SPS (collect + learn) | × single process | per update: collect | learn "
        "| worker SPS | broadcast | gather | policy lag | setup |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for mode, m in s.items():
        ray = mode != LOCAL
        name = "`craits train`" if not ray else f"`--ray --workers {m['workers']}`"
        workers = " / ".join(f"{v:,.0f}" for v in m["worker_sps"]) if ray else "-"
        extra = (
            f"{m['broadcast_ms']:.1f} ms | {m['gather_ms']:.1f} ms | {m['policy_lag']:g}"
            if ray
            else "- | - | -"
        )
        lines.append(
            f"| {name} | {m['sps']:,.0f} ({', '.join(f'{v:,}' for v in m['sps_rounds'])})"
            f" | {m['sps'] / base:.2f} | {m['collect_s'] * 1e3:.0f} ms | "
            f"{m['learn_s'] * 1e3:.0f} ms | {workers} | {extra} | "
            f"{m['setup_s']:.1f} s |"
        )
    i, c = p["inputs"], r["compute"]
    two = s.get("ray2", {}).get("sps", float("nan"))
    lines += [
        "",
        "SPS counts every seat's decisions (bots' and forced ones included), collecting and "
        "learning, as `charts/SPS`; *collect* is the learner's wait for the batch (with Ray: "
        "broadcast, the slowest worker, gathering), *learn* the PPO update; *worker SPS* each "
        "worker's own collecting; *setup* is starting the workers and the last checkpoint.",
        "",
        "On a machine shared with other work, a mode's SPS also measures the share of the "
        "cores it gets: a Ray run has more processes (a worker's and the learner's), so it "
        "gets more of a loaded machine — one worker computes exactly what the single process "
        "computes (bit for bit, tested), so a ratio above 1 for it is that share, not a "
        "faster computation. The projection below therefore takes the compute in CPU "
        "seconds, which a dedicated CPU per worker would give.",
        "",
        "## Projection for N workers",
        "",
        f"Measured inputs: {i['steps_per_update']:,.0f} environment steps per update; "
        f"collecting them takes {c['collect_cpu_s'] * 1e3:.0f} ms of CPU (one worker: "
        f"{i['worker_sps']:,.0f} steps/s), the PPO update {i['learn_s'] * 1e3:.0f} ms (serial: "
        f"the CPU learner) — CPU time in this process, against {c['collect_wall_s'] * 1e3:.0f} "
        f"and {c['learn_wall_s'] * 1e3:.0f} ms by the wall clock on the shared machine; "
        "broadcasting the weights "
        f"({i['weights_bytes'] / 1e6:.2f} MB) {i['broadcast_s'] * 1e3:.1f} ms; an actor "
        f"call's round trip {i['call_s'] * 1e3:.2f} ms; the rest of gathering the batch "
        f"{i['gather_s'] * 1e3:.1f} ms; the slowest of 2 workers takes {i['straggle']:.2f}× "
        f"their mean. Assumed: the learner's link carries "
        f"{i['bandwidth_bytes_per_s'] * 8 / 1e9:g} Gbit/s (each worker pulls the weights; "
        f"the batch, {i['batch_bytes'] / 1e6:.1f} MB, comes in). Check on this machine: the "
        f"model gives {p['predicted_sps_two_workers']:,.0f} SPS for 2 workers, measured "
        f"{two:,.0f} — here 2 workers, the learner and other work share {r['cpu_count']} "
        "cores, which the model (one CPU per worker) does not.",
        "",
        f"| workers | update | of which serial | SPS | speedup | efficiency | SPS, learner "
        f"{FAST_LEARNER:g}× faster (hypothetical) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in p["rows"]:
        lines.append(
            f"| {row['workers']} | {row['update_s'] * 1e3:.0f} ms | "
            f"{row['serial_s'] * 1e3:.0f} ms | {row['sps']:,.0f} | "
            f"{row['speedup']:.1f} | {row['efficiency']:.0%} | "
            f"{row['sps_fast_learner']:,.0f} |"
        )
    lines += [
        "",
        f"**Where it stops scaling**: past about **{p['stops_scaling_at']} workers** a "
        f"doubling gains less than {ENOUGH - 1:.0%}, and the speed cannot pass "
        f"{p['ceiling_sps']:,.0f} steps/s: the serial part's limit (Amdahl: the PPO update, "
        "the broadcast and the gathering happen once per update however many workers "
        "collect; the synchronous learner idles while the workers play and they idle while "
        "it learns). The CPU learner's update is the bulk of it. A learner "
        f"{FAST_LEARNER:g}× faster (a GPU: not measured here, hypothetical) would move the "
        f"point to about {p['stops_scaling_at_fast_learner']} workers and the limit to "
        f"{p['ceiling_sps_fast_learner']:,.0f} steps/s; a larger batch per update also "
        "spreads the fixed costs. The model is optimistic: the straggler factor is measured "
        "on 2 workers and grows with more, and the object store's transfers are taken at "
        "one link's bandwidth; past the limit only asynchronous collection (which must "
        "correct for the policy lag, e.g. V-trace) overlaps playing and learning.",
        "",
        f"Reproduce: `{command}`",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=DEFAULT_CONFIG, help="a named configuration")
    p.add_argument("--steps", type=int, default=1_000_000, help="environment steps a run")
    p.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1, 2],
        help="worker counts (1 and 2 are needed for the projection)",
    )
    p.add_argument("--rounds", type=int, default=2, help="rounds of every mode, interleaved")
    p.add_argument(
        "--calibration-updates",
        type=int,
        default=6,
        help="updates timed in CPU seconds a round (for the projection)",
    )
    p.add_argument(
        "--bandwidth-gbit",
        type=float,
        default=BANDWIDTH * 8 / 1e9,
        help="the learner's assumed network link, Gbit/s (the projection)",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="config overrides, as craits train --set",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="write results.md and results.json there",
    )
    args = p.parse_args()
    import ray

    torch.set_num_threads(1)
    config = load_config(
        args.config,
        [
            f"total_steps={args.steps}",
            "eval_every=0",
            "final_eval_deals=0",
            "checkpoint_every=0",
            *args.set,
        ],
    )
    load_before = round(os.getloadavg()[0], 2)
    localray.init(
        num_cpus=max(os.cpu_count() or 1, *args.workers),
        log_to_driver=False,
        logging_level=logging.ERROR,
    )
    call_s = call_seconds()
    runs, computes = [], []
    for round_ in range(args.rounds):
        computes.append(calibrate(config, args.calibration_updates))
        c = computes[-1]
        print(
            f"round {round_} compute: collect {c['collect_cpu_s'] * 1e3:.0f} ms CPU "
            f"({c['collect_wall_s'] * 1e3:.0f} wall), learn {c['learn_cpu_s'] * 1e3:.0f} ms "
            f"CPU ({c['learn_wall_s'] * 1e3:.0f} wall) per update",
            flush=True,
        )
        for workers in [None, *args.workers]:
            r = one_run(config, workers)
            r["round"] = round_
            runs.append(r)
            print(
                f"round {round_} {r['mode']:>6}: {r['sps']:9,.0f} SPS, collect "
                f"{r['collect_s'] * 1e3:.0f} ms, learn {r['learn_s'] * 1e3:.0f} ms per update",
                flush=True,
            )
    ray.shutdown()
    summary = summarise(runs)
    compute = {k: statistics.median(c[k] for c in computes) for k in computes[0]}
    sizes = payload_bytes(config)
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "config": config.name,
        "overrides": args.set,
        "steps": args.steps,
        "rounds": args.rounds,
        "runs": runs,
        "summary": summary,
        "compute": compute,
        "projection": project(
            summary, compute, sizes, config.batch_size, call_s, args.bandwidth_gbit * 1e9 / 8
        ),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "load_before": load_before,
        "load_after": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "ray": ray.__version__,
    }
    command = "python experiments/bench_distributed.py " + shlex.join(sys.argv[1:])
    result["command"] = command
    text = to_markdown(result, command)
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(args.out / "results.md", text)
        atomic_write_text(args.out / "results.json", json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
