"""The ``craits serve`` that ``experiments/bench_web.py`` measures: the tree it runs, starting and
stopping it, a player's client, and what is measured of it (latency percentiles, the CPU of its
processes). Imported by the scenarios (``bench_web_load``, ``bench_web_thinking``).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

import httpx
import numpy as np

from craits.web.server import KEEP_ALIVE

REPO = Path(__file__).resolve().parent.parent
URL_LINE = re.compile(r"serving (http://\S+?)/ ")
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
CAPS_OFF = (
    "--client-rate",
    "--client-games",
    "--client-connections",
    "--client-held",
    "--client-think",
)
"""``craits serve``'s per-client caps, each turned off by 0 (those a tree knows are passed)."""


def percentiles(ms: list[float]) -> dict[str, float]:
    if not ms:
        return {"n": 0}
    a = np.array(ms)
    return {
        "n": len(ms),
        "p50_ms": round(float(np.percentile(a, 50)), 2),
        "p95_ms": round(float(np.percentile(a, 95)), 2),
        "p99_ms": round(float(np.percentile(a, 99)), 2),
        "max_ms": round(float(a.max()), 2),
        "mean_ms": round(float(a.mean()), 2),
    }


# ----------------------------------------------------------------------------- the server


def tree_env(root: Path) -> dict[str, str]:
    """The environment that makes ``python -m craits`` run the code of the tree ``root``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH")) if p)
    return env


def serve_flags(root: Path) -> set[str]:
    """The options the ``craits serve`` of the tree ``root`` knows (from its ``--help``)."""
    out = subprocess.run(
        [sys.executable, "-m", "craits", "serve", "--help"],
        cwd=root,
        env=tree_env(root),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    return set(re.findall(r"--[a-z][a-z-]*", out))


WARM_SEARCH = """
from craits.agents.specs import make_agent
from craits_env.engine import Game
from craits_env.public import PublicGame
from craits_env.rules import Rules
game = Game(2, Rules(hand_sizes=(8, 7)), seed=0)
public = PublicGame(game)
agents = [make_agent("pimc:8", s, num_players=2, rules=game.rules) for s in range(2)]
while not game.is_over:
    public.apply(agents[game.current_player].act(public.views[game.current_player]))
"""
"""A short game of two ``pimc`` bots: compiles the tree's search into numba's cache."""


def warm_search(root: Path) -> float:
    """Compile (or load) the search of the tree ``root`` before its server starts, so that
    a warm-up is not a compilation (as the thinkers of ``craits serve`` warm up); seconds."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", WARM_SEARCH], cwd=root, env=tree_env(root), check=True, timeout=600
    )
    return round(time.perf_counter() - start, 1)


def serve_command(games_dir: Path, max_games: int, known: set[str], *extra: str) -> list[str]:
    """``craits serve`` on a free port of 127.0.0.1, every per-client cap it knows off (one
    machine plays every game, or the load must really be there)."""
    caps = [word for flag in CAPS_OFF if flag in known for word in (flag, "0")]
    return [
        sys.executable,
        "-m",
        "craits",
        "serve",
        "--port",
        "0",
        "--games",
        str(games_dir),
        "--max-games",
        str(max_games),
        *caps,
        *extra,
    ]


@contextmanager
def server(
    cmd: list[str], root: Path = REPO, stderr: IO[str] | int = subprocess.DEVNULL
) -> Iterator[tuple[str, int]]:
    """``cmd`` (a :func:`serve_command`) run with the code of ``root`` in its own process
    group; yields its URL and process id. At the end (or on any error) the server is stopped
    with Ctrl-C, then its whole group killed (its bot processes too)."""
    # cwd=root: ``-m`` puts the working directory first on sys.path, before PYTHONPATH
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        cwd=root,
        env=tree_env(root),
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + START_TIMEOUT
        url = None
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"craits serve exited with status {proc.wait()}")
            m = URL_LINE.search(line)
            url = m.group(1) if m else None
        if url is None:
            raise RuntimeError("craits serve did not print its address in time")
        yield url, proc.pid
    finally:
        proc.send_signal(signal.SIGINT)  # uvicorn stops gracefully
        with suppress(subprocess.TimeoutExpired):
            proc.wait(STOP_TIMEOUT)
        with suppress(ProcessLookupError):  # the server's group: itself and its bot processes
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def player_client(url: str, timeout: float, address: str | None = None) -> httpx.AsyncClient:
    """One player's client, with one connection of its own (as a browser tab has): one shared
    pool for hundreds of concurrent requests costs the client more than the server. It keeps a
    connection open less long than the server does (KEEP_ALIVE), so it never sends on a
    connection the server is closing. ``address``: the loopback address it connects from
    (the server counts clients by address)."""
    limits = httpx.Limits(
        max_connections=1, max_keepalive_connections=1, keepalive_expiry=KEEP_ALIVE / 2
    )
    transport = httpx.AsyncHTTPTransport(local_address=address, limits=limits)
    return httpx.AsyncClient(base_url=url, timeout=timeout, transport=transport)


# ----------------------------------------------------------------------------- CPU


def cpu_times() -> dict[int, tuple[int, float, int, str]]:
    """Every process of this machine: ``pid -> (parent, CPU seconds, nice, name)`` (Linux
    ``/proc``)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        name, rest = text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :]
        f = rest.split()  # f[k - 3] is field k of proc(5)
        out[int(entry.name)] = (int(f[1]), (int(f[11]) + int(f[12])) / tick, int(f[16]), name)
    return out


def machine_busy() -> tuple[float, float]:
    """``(busy, total)`` CPU seconds of the whole machine so far (``/proc/stat``)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields) - idle) / tick, sum(fields) / tick


def cpu_use(
    pid: int,
    before: dict[int, Any],
    after: dict[int, Any],
    seconds: float,
    busy: tuple[tuple[float, float], tuple[float, float]],
) -> dict[str, Any]:
    """Cores each process of the server's tree used in the window (the server, its
    children), this client's, and the whole machine's."""
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        children = [q for q, v in after.items() if v[0] == parent and q not in tree]
        tree.update(children)
        frontier += children

    def used(q: int) -> float:
        return (after[q][1] - (before[q][1] if q in before else 0.0)) / seconds

    procs = [
        {
            "pid": q,
            "name": after[q][3],
            "nice": after[q][2],
            "cores": round(used(q), 3),
            "role": "server" if q == pid else "child",
        }
        for q in sorted(tree)
        if q in after
    ]
    me = os.getpid()
    (b0, t0), (b1, t1) = busy
    return {
        "processes": procs,
        "server_cores": round(sum(x["cores"] for x in procs if x["role"] == "server"), 3),
        "children_cores": round(sum(x["cores"] for x in procs if x["role"] == "child"), 3),
        "client_cores": round(used(me), 3) if me in after else None,
        "machine_cores_busy": round((b1 - b0) / seconds, 3),
        "machine_cores": round((t1 - t0) / seconds, 2),
    }


def git_tree(root: Path) -> str:
    """``git describe --always --dirty`` of ``root``, or ``root`` itself if not a checkout."""
    r = subprocess.run(
        ["git", "-C", str(root), "describe", "--always", "--dirty"], capture_output=True, text=True
    )
    return r.stdout.strip() if r.returncode == 0 else str(root)


def stderr_summary(text: str) -> list[str]:
    """The distinct lines of a server's stderr that are not inside a traceback (at Ctrl-C
    uvicorn cancels the requests still waiting: one traceback each)."""
    lines = {x for x in text.splitlines() if x.strip() and not x[0].isspace()}
    return sorted(x for x in lines if not x.startswith("Traceback"))[:10]
