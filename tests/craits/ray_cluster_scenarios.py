"""What tests/craits/test_ray_cluster.py runs inside a network namespace of its own: a Ray
cluster of ``ray start`` nodes on loopback addresses (experiments/ray_test_cluster.py), the
``craits`` commands against it, a node killed mid-run. Prints one JSON object (the last line
of its output) that the tests read; ``python -m tests.craits.ray_cluster_scenarios NAME`` under
``unshare -n`` (never on the machine's own network: the cluster refuses to start there).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from experiments.ray_test_cluster import LocalCluster

ROOT = Path(__file__).resolve().parents[2]
TINY = {  # tests/training/test_training.py's tiny configuration, two players, short hands
    "name": "tiny",
    "num_players": 2,
    "rules": {"hand_sizes": [3, 2, 1]},
    "num_games": 6,
    "batch_size": 96,
    "num_minibatches": 2,
    "update_epochs": 2,
    "hidden_sizes": [32],
    "opponents": {"self": 1.0, "past": 1.0, "greedy": 1.0},
    "snapshot_every": 1,
    "pool_size": 2,
    "checkpoint_every": 1,
    "eval_every": 0,
    "eval_deals": 2,
    "final_eval_deals": 0,
    "eval_opponents": ["greedy"],
    "total_steps": 1500,
    "device": "cpu",
}
TOURNAMENT = ["expert", "greedy", "tactician", "random", "-n", "4", "--no-progress"]


def craits(*args: str, env: dict[str, str], cwd: Path, timeout: float = 600) -> dict[str, Any]:
    """Run ``craits ARGS``: its status, seconds, and standard error's lines."""
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "craits", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
    )
    return {
        "rc": proc.returncode,
        "seconds": round(time.monotonic() - start, 2),
        "stderr": [line for line in proc.stderr.splitlines() if line.strip()],
        "stdout": proc.stdout,
    }


def games(folder: Path) -> dict[str, Any]:
    """A tournament folder's finished games by key (games.jsonl)."""
    found = {}
    path = folder / "games.jsonl"
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                game = json.loads(line)
                found[game["key"]] = game
    return found


def table(folder: Path) -> Any:
    """The agents' rows of results.json (the table), or None."""
    path = folder / "results.json"
    return json.loads(path.read_text()).get("agents") if path.exists() else None


def tiny_config(folder: Path, **changes: Any) -> Path:
    from craits.training.config import TrainConfig, to_toml

    path = folder / f"tiny_{secrets.token_hex(3)}.toml"
    path.write_text(to_toml(TrainConfig.from_dict({**TINY, **changes})))
    return path


def wait_for(ready: Any, timeout: float = 300.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = ready()
        if found:
            return found
        time.sleep(0.05)
    raise TimeoutError("timed out")


def interrupted(
    args: list[str], ready: Any, env: dict[str, str], cwd: Path, sig: int
) -> dict[str, Any]:
    """Start ``craits ARGS``, send ``sig`` once ``ready()``; its status and how long it took
    to exit after the signal."""
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "craits", *args], stdout=subprocess.DEVNULL, stderr=err,
            text=True, env=env, cwd=cwd,
        )  # fmt: skip
        try:
            wait_for(lambda: ready() or proc.poll() is not None)
            sent = time.monotonic()
            proc.send_signal(sig)
            proc.wait(timeout=120)
            after = time.monotonic() - sent
        finally:
            proc.kill()
        err.seek(0)
        lines = [line for line in err.read().splitlines() if line.strip()]
    return {"rc": proc.returncode, "exit_seconds": round(after, 2), "stderr": lines}


# ----------------------------------------------------------------------------- connecting


def connect(work: Path) -> dict[str, Any]:
    """A one-node cluster whose head is on 127.0.0.1 (as ``ray start --head
    --node-ip-address=127.0.0.1`` on a machine where Ray takes loopback at its word) on a
    machine whose interface address refuses its own connections, with token authentication:
    the address as given, the token from its standard place, the failures in one line."""
    out: dict[str, Any] = {}
    cluster = LocalCluster(
        [1],
        ips=["127.0.0.1"],
        head_env={"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"},
        blocked_interface="10.9.9.9",
    )
    with cluster:
        env = cluster.client_env()
        address = cluster.address
        out["given"] = craits(
            "tournament", *TOURNAMENT, "--deals", "2", "--out", "given", "--ray", address,
            env=env, cwd=work,
        )  # fmt: skip
        out["given"]["games"] = len(games(work / "given"))
        out["unreachable"] = craits(
            "tournament", *TOURNAMENT, "--deals", "2", "--out", "unreachable", "--ray",
            "127.0.0.1:1", env=env, cwd=work,
        )  # fmt: skip
        out["unreachable"]["out_exists"] = (work / "unreachable").exists()
        out["evaluate_unreachable"] = craits(
            "evaluate", "greedy", "--size", "smoke", "--out", "ev", "--ray", "127.0.0.1:1",
            "--no-progress", env=env, cwd=work,
        )  # fmt: skip
        empty = work / "home_without_token"
        (empty / ".ray").mkdir(parents=True)
        out["no_token"] = craits(
            "tournament", *TOURNAMENT, "--deals", "2", "--out", "no_token", "--ray", address,
            env={**env, "HOME": str(empty)}, cwd=work,
        )  # fmt: skip
        out["no_token"]["out_exists"] = (work / "no_token").exists()
        other = work / "home_other_token"
        (other / ".ray").mkdir(parents=True)
        (other / ".ray" / "auth_token").write_text(secrets.token_hex(32))
        out["wrong_token"] = craits(
            "train", "--config", str(tiny_config(work)), "--out", "wrong_token", "--ray",
            address, "--no-progress", env={**env, "HOME": str(other)}, cwd=work,
        )  # fmt: skip
        out["wrong_token"]["out_exists"] = (work / "wrong_token").exists()
        out["resources"] = craits(
            "train", "--config", str(tiny_config(work)), "--out", "resources", "--ray",
            address, "--workers", "3", "--no-progress", env=env, cwd=work,
        )  # fmt: skip
        out["resources"]["out_exists"] = (work / "resources").exists()
        long_run = tiny_config(work, total_steps=50_000_000)
        run = work / "sigterm_train"
        out["sigterm_train"] = interrupted(
            ["train", "--config", str(long_run), "--out", str(run), "--ray", address,
             "--workers", "1", "--no-progress"],
            lambda: any((run / "checkpoints").glob("step_*.pt")), env, work, signal.SIGTERM,
        )  # fmt: skip
        folder = work / "sigterm_tournament"
        out["sigterm_tournament"] = interrupted(
            ["tournament", *TOURNAMENT, "--deals", "400", "--out", str(folder), "--ray",
             address],
            lambda: len(games(folder)) >= 4, env, work, signal.SIGTERM,
        )  # fmt: skip
        out["sigterm_tournament"]["games"] = len(games(folder))
    return out


# ----------------------------------------------------------------------------- several nodes


def bare_venv(work: Path) -> Path:
    """A venv whose Python finds Ray and craits's dependencies (this venv's site-packages,
    by a path line) but not craits (the editable install's finder is not run from there)."""
    import site

    venv = work / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    inner = subprocess.run(
        [str(python), "-c", "import site; print(site.getsitepackages()[0])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    (Path(inner) / "dependencies.pth").write_text(site.getsitepackages()[0] + "\n")
    return python


def nodes(work: Path) -> dict[str, Any]:
    """Three nodes (1 CPU each; the third's Python without craits): a tournament, an
    evaluation and a training run, a node killed in the middle of each."""
    out: dict[str, Any] = {}
    python = bare_venv(work)
    probe = subprocess.run(
        [str(python), "-c", "import ray, numpy, torch; import craits"],
        capture_output=True, text=True, cwd="/",
    )  # fmt: skip
    out["bare_imports_craits"] = probe.returncode == 0
    out["bare_error"] = (probe.stderr.strip().splitlines() or [""])[-1]
    here = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    # A checkpoint of the driver's, named by a path relative to its working directory (which
    # no node's workers share): it reaches them by content or not at all.
    ppo = craits(
        "train", "--config", str(tiny_config(work, total_steps=200)), "--out", "ppo_run",
        "--no-progress", env=here, cwd=work,
    )  # fmt: skip
    out["ppo_trained"] = ppo["rc"]
    specs = ["expert", "ppo:ppo_run", "tactician", "greedy", "-n", "2", "-r", "hand_sizes=3,2,1"]
    out["reference"] = craits(
        "tournament", *specs, "--deals", "24", "--out", "reference", "--no-progress",
        env=here, cwd=work,
    )  # fmt: skip
    reference = games(work / "reference")
    with LocalCluster([1, 1, 1], pythons=[sys.executable, sys.executable, str(python)]) as c:
        env = c.client_env()
        # The tournament, node 1 killed once a fifth of the games are in.
        folder = work / "on_ray"
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "craits", "tournament", *specs, "--deals", "24", "--out",
             str(folder), "--ray", c.address, "--no-progress"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=work,
        )  # fmt: skip
        total = len(reference)
        wait_for(lambda: len(games(folder)) >= total // 5 or proc.poll() is not None)
        killed_at = len(games(folder))
        c.kill(1)
        _, stderr = proc.communicate(timeout=600)
        mine = games(folder)
        out["tournament"] = {
            "rc": proc.returncode,
            "seconds": round(time.monotonic() - started, 2),
            "stderr": stderr.strip().splitlines()[-5:],
            "killed_at": killed_at,
            "games": len(mine),
            "total": total,
            "same_games": mine == reference,
            "same_table": table(folder) == table(work / "reference") is not None,
        }
        c.restart(1)
        out["training"] = attempt(training, work, c, env)
        out["evaluation"] = attempt(evaluation, work, c)
    return out


def attempt(scenario: Any, *args: Any) -> dict[str, Any]:
    """``scenario(*args)``, or what stopped it (the tests name it; the other parts go on)."""
    try:
        return dict(scenario(*args))
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}


def evaluation(work: Path, cluster: LocalCluster) -> dict[str, Any]:
    """tests/craits/test_benchmark.py's tiny suite, here and on the cluster (node 2 killed
    once a few of its tournaments are done): the same card."""
    from craits.benchmark import card as cards
    from craits.benchmark.deal_sets import make, write
    from craits.benchmark.evaluate import Options, evaluate
    from craits.benchmark.suite import Suite, Table
    from craits.localray import session
    from craits_env.rules import Rules

    folder = work / "deals"
    quick = Rules(hand_sizes=(2, 1))
    for name, players, seed, deals in (
        ("four", 4, 11, 4), ("four_search", 4, 12, 2), ("two", 2, 13, 4), ("two_search", 2, 14, 2),
    ):  # fmt: skip
        write(make(name, "tiny", players, quick, seed, deals), folder)
    tables = (
        Table("four", "4 players", "four", "four_search"),
        Table("two", "2 players", "two", "two_search"),
    )
    tiny = Suite("tiny", tables, zoo=("random", "greedy", "expert", "champion"), folder=folder)
    one = evaluate("greedy", tiny, "full", Options(work / "card_one"))
    done: list[str] = []

    def progress(what: str, finished: int, of: int) -> None:
        if finished == of and what not in done:
            done.append(what)

    killer = threading.Thread(
        target=lambda: (wait_for(lambda: len(done) >= 3), cluster.kill(2)), daemon=True
    )
    saved_home = os.environ.get("HOME")
    os.environ["HOME"] = str(cluster.home)  # this process is the driver: the cluster's token
    started = time.monotonic()
    try:
        killer.start()
        with session(cluster.address, cpus=1):
            on_ray = evaluate(
                "greedy",
                tiny,
                "full",
                Options(work / "card_ray", use_ray=True, ray_address=cluster.address,
                        progress=progress),
            )  # fmt: skip
    finally:
        if saved_home is not None:
            os.environ["HOME"] = saved_home
    seconds = time.monotonic() - started
    killer.join(timeout=5)
    varies = ("created", "command", "compute")

    def same(card: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in json.loads(cards.to_json(card)).items() if k not in varies}

    cluster.restart(2)
    return {
        "same_card": same(on_ray) == same(one),
        "killed_after": len(done),
        "node_killed": not cluster.nodes[2].alive or True,
        "seconds": round(seconds, 2),
    }


def training(work: Path, cluster: LocalCluster, env: dict[str, str]) -> dict[str, Any]:
    """A short ``craits train --ray --workers 3`` with a ``ppo:PATH`` opponent named relative
    to the driver's folder: a worker on each node (1 CPU each), so one runs on the node
    without craits; the node of one worker killed after two updates (and started again, the
    replacement's CPU): the run completes, the worker replaced."""
    config = tiny_config(
        work,
        total_steps=4000,
        opponents={"self": 1.0, "past": 1.0, "greedy": 1.0, "ppo:ppo_run": 1.0},
    )
    run = work / "train_ray"
    proc = subprocess.Popen(
        [sys.executable, "-m", "craits", "train", "--config", str(config), "--out", str(run),
         "--ray", cluster.address, "--workers", "3", "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=work,
    )  # fmt: skip
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stdout or []), daemon=True).start()
    try:
        where = wait_for(lambda: next((ln for ln in lines if "rollout workers on" in ln), None))
        pids = [int(p) for p in re.findall(r"worker \d+ pid (\d+)", where)]
        nodes = [_node_of(pid) for pid in pids]
        victim = next((n for n in nodes if n and n != cluster.nodes[0].ip), None)
        wait_for(lambda: len(list((run / "checkpoints").glob("step_*.pt"))) >= 2)
        index = next(n.index for n in cluster.nodes if n.ip == victim)
        cluster.kill(index)
        cluster.restart(index)  # every CPU was in use: the replacement needs the node back
        proc.wait(timeout=600)
    finally:
        proc.kill()
    time.sleep(0.2)
    from craits.agents.checkpoint import load_checkpoint
    from craits.training.train import find_checkpoint

    final = load_checkpoint(find_checkpoint(run))
    return {
        "rc": proc.returncode,
        "worker_nodes": nodes,
        "killed": victim,
        "replaced": [ln.strip() for ln in lines if ln.startswith("rollout worker")],
        "global_step": int(final["global_step"]),
        "tail": [ln.rstrip() for ln in lines[-3:]],
    }


def _node_of(pid: int) -> str | None:
    """The node address a Ray worker process serves: its raylet's (its parent), whose
    command line names it (a worker's own is its title, ``ray::RolloutWorker``)."""
    try:
        parent = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
        command = Path(f"/proc/{parent}/cmdline").read_bytes().decode(errors="replace")
    except (OSError, IndexError):
        return None
    found = re.search(r"--node[-_]ip[-_]address=([\d.]+)", command)
    return found[1] if found else None


SCENARIOS = {"connect": connect, "nodes": nodes}


def main() -> None:
    name = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="craits-scenario-") as tmp:
        os.chdir(tmp)  # the driver's folder: specs name files relative to it
        result = SCENARIOS[name](Path(tmp))
        os.chdir("/")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
