"""craits train --ray: rollout workers as Ray actors, one synchronous PPO learner.

The worker on its own (without Ray) is the single-process rollout; on a local Ray
instance one worker trains exactly what ``craits train`` trains, the same seed and
worker count give the same parameters, a checkpoint resumes bit-identically with the
same workers (and continues with new games on another count), and a ``craits train
--ray`` whose worker process is killed replaces it and goes on, its checkpoints intact.
"""

from __future__ import annotations

import logging
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from craits import localray
from craits.agents.checkpoint import load_checkpoint
from craits.agents.network import PolicyNet
from craits.training.buffer import Segment
from craits.training.config import to_toml
from craits.training.distributed import (
    RayOptions,
    RolloutWorker,
    WorkersFailed,
    merge,
    split_batch,
)
from craits.training.pool import OpponentPool
from craits.training.ppo import gae_linked
from craits.training.rollouts import LocalRollouts
from craits.training.selfplay import SelfPlayRollout
from craits.training.train import find_checkpoint, train

from .test_training import tiny

pytestmark = pytest.mark.slow  # Ray

torch.set_num_threads(1)


def quiet(lines: list[str] | None = None) -> dict[str, Any]:
    return {"progress": False, "echo": (lambda s: None) if lines is None else lines.append}


def same_policy(a: Path, b: Path) -> bool:
    pa, pb = load_checkpoint(a)["policy"], load_checkpoint(b)["policy"]
    return pa.keys() == pb.keys() and all(torch.equal(pa[k], pb[k]) for k in pa)


def scalars(run: Path, tag: str) -> list[float]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run))
    events.Reload()
    return [e.value for e in events.Scalars(tag)]


# ----------------------------------------------------------------------------- without Ray


def test_split_batch_shares_out_every_transition_in_worker_order() -> None:
    assert split_batch(10, 3) == [4, 3, 3]
    assert split_batch(96, 2) == [48, 48] and split_batch(7, 7) == [1] * 7
    for bad in (0, 11):
        with pytest.raises(ValueError, match=rf"workers: got {bad}, allowed 1 to batch_size"):
            split_batch(10, bad)
    with pytest.raises(ValueError, match="workers: got 0, allowed an int >= 1"):
        RayOptions(workers=0)


def test_worker_zero_is_the_single_process_rollout_and_its_state_round_trips() -> None:
    config = tiny()
    torch.manual_seed(0)
    net = PolicyNet(SelfPlayRollout.observation_size(config), config.hidden_sizes)
    spec = net.spec()
    pool = OpponentPool(config.opponents, spec, config.pool_size)
    local = LocalRollouts(config, pool)
    worker = RolloutWorker(config.to_dict(), spec, 0, 0, [])
    other = RolloutWorker(config.to_dict(), spec, 1, 0, [])
    for version in range(4):  # snapshots added and retired (pool_size 2) on the way
        segment, stats = local.collect(net, version, 96)
        result = worker.collect(96, net.state_dict(), version)
        assert result.version == version and result.stats.steps == stats.steps
        for key in (
            "obs",
            "hands",
            "masks",
            "actions",
            "log_probs",
            "values",
            "rewards",
            "dones",
            "next_index",
            "open",
        ):
            assert np.array_equal(getattr(segment, key), getattr(result.segment, key)), key
        assert not np.array_equal(
            other.collect(96, net.state_dict(), version).segment.obs[:8], segment.obs[:8]
        )
        with torch.no_grad():  # the next update's network
            for p in net.parameters():
                p.add_(0.05 * torch.randn_like(p))
        pool.add_snapshot(net, version + 1)
        local.snapshot_added(pool)
        newest = pool.state_dict()["snapshots"][-1]
        worker.add_snapshot(newest)
        worker.add_snapshot(newest)  # sent twice (a replaced worker): seated once
        assert [s.update for s in worker.pool.snapshots] == [s.update for s in pool.snapshots]
        assert [s.update for s in worker.pool.retired] == [s.update for s in pool.retired]
    # A worker restored from another's state continues exactly as that one.
    copy = RolloutWorker(config.to_dict(), spec, 0, 5, [])
    copy.load_state(worker.state(), pool.state_dict()["snapshots"])
    a, b = worker.collect(96, net.state_dict(), 9), copy.collect(96, net.state_dict(), 9)
    assert np.array_equal(a.segment.actions, b.segment.actions) and a.stats.steps == b.stats.steps


def test_workers_segments_concatenated_give_each_transition_its_own_advantage() -> None:
    """merge: the segments of two workers one after another, their links shifted: GAE over the
    concatenation gives every transition what GAE over its own worker's segment gives it."""
    config = tiny(opponents={"self": 1.0, "greedy": 1.0})
    torch.manual_seed(0)
    net = PolicyNet(SelfPlayRollout.observation_size(config), config.hidden_sizes)
    workers = [RolloutWorker(config.to_dict(), net.spec(), k, 0, []) for k in range(2)]
    results = [w.collect(n, net.state_dict(), 0) for w, n in zip(workers, (48, 48), strict=True)]
    segment, stats = merge(results)
    assert len(segment) == sum(len(r.segment) for r in results)
    assert stats.steps == sum(r.stats.steps for r in results)

    def advantages(s: Segment) -> np.ndarray:
        return gae_linked(s.rewards, s.values, s.dones, s.next_index, 0.99, 0.95, s.open)

    together = advantages(segment)
    alone = np.concatenate([advantages(r.segment) for r in results])
    assert np.array_equal(together, alone)
    first = len(results[0].segment)
    linked = segment.next_index[first:] >= 0
    assert (segment.next_index[first:][linked] >= first).all()  # the streams stay apart
    batch = segment.batch(together)
    parts = [r.segment.batch(advantages(r.segment)) for r in results]
    for key in ("obs", "actions", "advantages", "returns"):
        assert np.array_equal(
            getattr(batch, key), np.concatenate([getattr(p, key) for p in parts])
        ), key


# ----------------------------------------------------------------------------- on Ray


@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    import ray  # the dev extra installs it: never skipped

    localray.init(num_cpus=2, log_to_driver=False, logging_level=logging.ERROR)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def two_worker_run(ray_local: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ray2") / "run"
    lines: list[str] = []
    result = train(tiny(), out=out, rollouts=RayOptions(workers=2), **quiet(lines))
    assert result.updates >= 4 and result.interrupted is None
    assert re.search(r"2 rollout workers on .*worker 0 pid \d+ .*worker 1 pid \d+", lines[1])
    return out


def test_one_ray_worker_trains_exactly_what_one_process_trains(
    ray_local: None, tmp_path: Path
) -> None:
    here = train(tiny(), out=tmp_path / "here", **quiet())
    on_ray = train(tiny(), out=tmp_path / "ray", rollouts=RayOptions(workers=1), **quiet())
    assert (here.global_step, here.updates) == (on_ray.global_step, on_ray.updates)
    assert same_policy(here.final_checkpoint, on_ray.final_checkpoint)
    # Their checkpoints are interchangeable: the games move between the two exactly.
    for source, rollouts in ((here.run_dir, RayOptions(workers=1)), (on_ray.run_dir, None)):
        out = tmp_path / f"{source.name}_moved"
        (out / "checkpoints").mkdir(parents=True)
        shutil.copy(source / "checkpoints" / "step_000002.pt", out / "checkpoints")
        lines: list[str] = []
        result = train(resume=out, rollouts=rollouts, **quiet(lines))
        assert not any("new games" in line for line in lines), lines
        assert result.global_step == here.global_step
        assert same_policy(here.final_checkpoint, result.final_checkpoint)


def test_a_hands_head_run_on_ray_trains_what_one_process_trains(
    ray_local: None, tmp_path: Path
) -> None:
    config = tiny(hands_coef=0.5, total_steps=400)  # the hands travel with the segments
    here = train(config, out=tmp_path / "here", **quiet())
    on_ray = train(config, out=tmp_path / "ray", rollouts=RayOptions(workers=1), **quiet())
    assert load_checkpoint(on_ray.final_checkpoint)["network"]["hands_out"] > 0
    assert (here.global_step, here.updates) == (on_ray.global_step, on_ray.updates)
    assert same_policy(here.final_checkpoint, on_ray.final_checkpoint)


def test_same_seed_and_worker_count_give_the_same_parameters(
    two_worker_run: Path, tmp_path: Path
) -> None:
    again = train(tiny(), out=tmp_path / "again", rollouts=RayOptions(workers=2), **quiet())
    assert same_policy(two_worker_run / "final.pt", again.final_checkpoint)
    steps = [
        load_checkpoint(p)["global_step"]
        for p in (again.final_checkpoint, two_worker_run / "final.pt")
    ]
    assert steps[0] == steps[1]
    other = train(tiny(seed=2), out=tmp_path / "other", rollouts=RayOptions(workers=2), **quiet())
    assert not same_policy(two_worker_run / "final.pt", other.final_checkpoint)
    # TensorBoard: each worker's SPS, the policy lag (0: synchronous), no restart.
    updates = len(scalars(two_worker_run, "charts/SPS"))
    for k in (0, 1):
        sps = scalars(two_worker_run, f"charts/worker_{k}_sps")
        assert len(sps) == updates and min(sps) > 0
    assert scalars(two_worker_run, "charts/policy_lag") == [0.0] * updates
    assert scalars(two_worker_run, "charts/worker_restarts") == [0.0] * updates
    assert min(scalars(two_worker_run, "charts/broadcast_ms")) > 0
    # The run directory is craits train's.
    names = {p.name for p in two_worker_run.iterdir()}
    assert {"config.toml", "final.pt", "checkpoints"} <= names
    assert any(n.startswith("events.out.tfevents") for n in names)


def test_a_ray_checkpoint_resumes_bit_identically_with_the_same_workers(
    two_worker_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "resumed"
    (out / "checkpoints").mkdir(parents=True)
    shutil.copy(two_worker_run / "checkpoints" / "step_000002.pt", out / "checkpoints")
    stored = load_checkpoint(out / "checkpoints" / "step_000002.pt")
    assert "rollout" not in stored and len(stored["workers"]["states"]) == 2
    lines: list[str] = []
    result = train(resume=out, rollouts=RayOptions(workers=2), **quiet(lines))
    assert not any("new games" in line for line in lines)
    final = load_checkpoint(two_worker_run / "final.pt")
    assert (result.global_step, result.updates) == (final["global_step"], final["update"])
    assert same_policy(two_worker_run / "final.pt", result.final_checkpoint)


def test_a_checkpoint_continues_with_new_games_on_another_worker_count(
    two_worker_run: Path, tmp_path: Path
) -> None:
    step2 = two_worker_run / "checkpoints" / "step_000002.pt"
    for name, rollouts, said in (
        (
            "one",
            RayOptions(workers=1),
            "played by 2 rollout workers: new games are dealt on 1 worker (",
        ),
        ("here", None, "played by 2 rollout workers: new games are dealt here"),
    ):
        out = tmp_path / name
        (out / "checkpoints").mkdir(parents=True)
        shutil.copy(step2, out / "checkpoints")
        lines: list[str] = []
        result = train(
            resume=out,
            total_steps=int(load_checkpoint(step2)["global_step"]) + 200,
            rollouts=rollouts,
            **quiet(lines),
        )
        assert any(said in line for line in lines), lines
        assert result.updates > 2 and (out / "final.pt").is_file()
    # A single-process checkpoint goes on to Ray workers the same way.
    local = train(tiny(total_steps=300), out=tmp_path / "local", **quiet())
    lines = []
    result = train(
        resume=local.run_dir,
        total_steps=local.global_step + 200,
        rollouts=RayOptions(workers=2),
        **quiet(lines),
    )
    assert any("played by one process: new games are dealt on 2 workers" in ln for ln in lines)
    assert result.updates == local.updates + 1
    assert [
        s["incarnation"] for s in load_checkpoint(result.final_checkpoint)["workers"]["states"]
    ] == [1, 1]


class DyingWorker(RolloutWorker):
    """A worker whose process ends at its first batch (a machine that keeps failing)."""

    def collect(self, batch_size: int, weights: dict[str, torch.Tensor], version: int) -> Any:
        os._exit(1)


def test_a_worker_that_keeps_dying_stops_the_run_in_one_line(ray_local: None) -> None:
    import ray

    config = tiny()
    net = PolicyNet(SelfPlayRollout.observation_size(config), config.hidden_sizes)
    rollouts = RayOptions(workers=1)(config, OpponentPool(config.opponents, net.spec(), 2))
    try:
        rollouts.actor_class = ray.remote(num_cpus=1, max_restarts=0)(DyingWorker)
        ray.kill(rollouts.handles[0], no_restart=True)  # its replacements are DyingWorkers
        gives_up = r"^rollout worker 0 died 4 times in a row \(.*\); giving up$"
        with pytest.raises(WorkersFailed, match=gives_up) as info:
            rollouts.collect(net, 0, 96)
        assert "\n" not in str(info.value) and rollouts.restarts == 3
    finally:
        died = [line.split(" (")[0] for line in rollouts.close()]  # the lines not yet shown
    assert died == ["rollout worker 0 died"] * 3


# ----------------------------------------------------------------------------- the command


def _craits(*args: str) -> list[str]:
    return [sys.executable, "-m", "craits", *args]


def _lines(stream: Any) -> queue.Queue[str]:
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    return lines


def _wait_for(what: str, ready: Any, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = ready()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _next_line(lines: queue.Queue[str], start: str) -> str:
    """The next line that starts with ``start`` (Ray prints its own notice of a death too)."""
    while not (line := lines.get(timeout=120)).startswith(start):
        pass
    return line


def _latest_update(out: Path) -> int:
    steps = [int(p.stem.split("_")[1]) for p in (out / "checkpoints").glob("step_*.pt")]
    return max(steps, default=0)


def test_craits_train_ray_survives_a_killed_worker(ray_local: None, tmp_path: Path) -> None:
    config = tmp_path / "long.toml"
    config.write_text(to_toml(tiny(total_steps=50_000_000)))
    out = tmp_path / "run"
    with open(tmp_path / "stderr.txt", "w+") as err:
        proc = subprocess.Popen(
            _craits(
                "train",
                "--ray",
                "--workers",
                "2",
                "--config",
                str(config),
                "--out",
                str(out),
                "--no-progress",
            ),
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            assert proc.stdout is not None
            lines = _lines(proc.stdout)
            assert lines.get(timeout=120).startswith("run craits_v0__")
            where = lines.get(timeout=120)
            pid = int(re.search(r"worker 1 pid (\d+)", where).group(1))  # type: ignore[union-attr]
            _wait_for("two checkpoints", lambda: _latest_update(out) >= 2)
            kept = {p.name: p.read_bytes() for p in (out / "checkpoints").glob("*.pt")}
            os.kill(pid, signal.SIGKILL)  # the worker's own process, as a lost machine
            died = _wait_for("the restart", lambda: _next_line(lines, "rollout worker"))
            assert re.match(
                rf"rollout worker 1 died \(pid {pid} on .*\); replaced by pid \d+ "
                r"\(incarnation 1, new games\)",
                died,
            ), died
            after = _latest_update(out)
            _wait_for("two more updates", lambda: _latest_update(out) >= after + 2)
            proc.send_signal(signal.SIGINT)  # Ctrl-C: a checkpoint at the end of the update
            proc.wait(timeout=120)
        finally:
            proc.kill()
        err.seek(0)
        stderr = err.read()
    assert proc.returncode == 130, stderr
    assert f"craits train --resume {out}" in stderr
    for name, data in kept.items():  # nothing checkpointed before the kill was lost
        assert (out / "checkpoints" / name).read_bytes() == data, name
    latest = find_checkpoint(out)
    stored = load_checkpoint(latest)
    assert [s["incarnation"] for s in stored["workers"]["states"]] == [0, 1]
    restarts = scalars(out, "charts/worker_restarts")
    assert restarts[0] == 0 and restarts[-1] == 1
    # The run resumes from its latest checkpoint (here, on the test's own Ray instance).
    result = train(
        resume=out,
        total_steps=int(stored["global_step"]) + 100,
        rollouts=RayOptions(workers=2),
        **quiet(),
    )
    assert result.updates == int(stored["update"]) + 1 and result.interrupted is None


def test_cli_ray_arguments_are_checked_in_one_line(
    ray_local: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Checked before anything is written, also when this process is already connected."""
    from craits.cli import main

    never = str(tmp_path / "never")
    short = ["--total-steps", "100", "--out", never]  # were a check to fail: a short run

    for argv, said in (
        (["train", "--workers", "2"], "--workers counts Ray rollout workers"),
        (["train", "--ray", "--workers", "0"], "expected an int >= 1"),
        (["train", "--ray", "--workers", "two"], "expected an int >= 1"),
        (["train", "--resume", "x", "--ray", "--seed", "1"], "--ray, --workers"),
        (["train", "--ray", "127.0.0.1:1", *short], "Ray cluster at 127.0.0.1:1: cannot connect"),
        (["train", "--ray", "nowhere", *short], "expected auto, HOST:PORT or ray://HOST:PORT"),
    ):
        try:
            code = main(argv)  # a refusal of the cluster: returned
        except SystemExit as e:  # a bad argument: argparse's exit
            code = e.code
        assert code == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and said in err, err
    assert not Path(never).exists()
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--ray [ADDRESS]" in text and "--workers K" in text and "--ray --workers 2" in text


def test_craits_train_ray_without_ray_names_the_extra(tmp_path: Path) -> None:
    never = tmp_path / "never"
    blocker = textwrap.dedent(f"""
        import importlib.abc, sys
        class Blocker(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] == "ray":
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        sys.meta_path.insert(0, Blocker())
        from craits.cli import main
        sys.exit(main(["train", "--ray", "--workers", "2", "--total-steps", "100",
                       "--out", {str(never)!r}]))
    """)
    proc = subprocess.run(
        [sys.executable, "-c", blocker], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "pip install 'craits[ray]'" in proc.stderr
    assert not never.exists()
