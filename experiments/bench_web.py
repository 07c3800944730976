"""Load tests of ``craits serve``: many simultaneous games, and one client's searching bots.

The default run measures, on this machine (the client and the server share its cores):

* **anchor, in process** — the same games played through the server's own
  :class:`craits.web.sessions.SessionStore` (its bots in a thread: ``Thinkers(0)``, its
  store in memory) and the seat view, no HTTP: the time per move (the person's move, the
  bots' replies, the narration, the view);
* **one client** — a few games one after another over HTTP to ``craits serve`` (a separate
  process on 127.0.0.1): the latency of a move with nothing else going on;
* **load** — ``--games`` games (default 128) started at once and then played at once, each
  by its own asynchronous client, every game open on the server until all have ended:
  latency percentiles of creating a game, of a move, of a view; requests per second; errors;
* **restart** — every game saved, the server stopped and started again on the same folder:
  how many records the new server lists, and that one replays.

Every game is checked: it reaches ``game_over`` and its final view's scores are the scores of
its saved record. Writes ``experiments/results/web/bench_web.json`` and ``.md`` atomically.

``--thinking`` measures instead whether one client's thinking bots freeze everyone else
(issue 28, finding 2): one client (127.0.0.1) keeps ``--thinkers`` games (default 80) of
nine ``pimc:2048`` bots thinking — each game posts its next legal move as soon as the last
response came — while a second client (127.0.1.2) probes every ~100 ms, in turn, a page, a
static file, ``/api/specs``, ``/api/records``, the view of its own game and a move in its own
game against one ``expert``. After the warm-up (every thinking game has had a move answered)
it measures for ``--seconds``: p50, p95 and max of each probe kind, the thinking client's
moves and its bots' narrated moves a second, and the CPU each process of the server used.
The per-client caps of the server are off (every one its ``craits serve --help`` lists), so
that the load is really there. ``--server-root DIR`` or ``--server-commit C`` (a ``git
archive`` of commit ``C``) serves another tree's code from the same interpreter; the run is
stored under ``--label`` in ``bench_web_thinking.json`` beside the other labels, and
``bench_web_thinking.md`` shows them side by side. Usage::

    python experiments/bench_web.py --games 128
    python experiments/bench_web.py --thinking --server-commit 15776f6 --label before
    python experiments/bench_web.py --thinking --label after

This script is the command line and the results' files; beside it, imported by name:
``bench_web_server.py`` (the server under test, its clients, what is measured of it),
``bench_web_load.py`` (the default run), ``bench_web_thinking.py`` (``--thinking``) and
``bench_web_report.py`` (the Markdown reports).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

# A script: its own directory is on sys.path, so its sibling modules import by name.
from bench_web_load import Config, check_restart, in_process, run_games
from bench_web_report import thinking_markdown, to_markdown
from bench_web_server import REPO, git_tree, serve_command, serve_flags, server
from bench_web_thinking import Thinking, thinking

from craits_env.fileio import atomic_write_json, atomic_write_text

RESULTS = REPO / "experiments" / "results" / "web"


def thinking_main(args: argparse.Namespace, command: str) -> int:
    """``--thinking``: one run, stored under its label beside the others."""
    config = Thinking(
        thinkers=args.thinkers,
        opponents=tuple(args.opponents.split(",")),
        hand_sizes=tuple(int(x) for x in args.hand_sizes.split(",")) if args.hand_sizes else None,
        seconds=args.seconds,
        warmup=args.warmup,
        bot_workers=args.bot_workers,
        seed=args.seed,
    )
    with tempfile.TemporaryDirectory() as tmp:
        if args.server_commit:
            root = Path(tmp) / "tree"
            root.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(REPO), "archive", args.server_commit],
                capture_output=True,
                check=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
            tree = args.server_commit
        else:
            root = (args.server_root or REPO).resolve()
            tree = git_tree(root)
        run = thinking(config, root, tree)
    run = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, CPython {platform.python_version()}",
        "command": command,
        "config": asdict(config),
        **run,
    }
    path = args.out / "bench_web_thinking.json"
    runs = json.loads(path.read_text())["runs"] if path.exists() else {}
    runs[args.label] = run
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"runs": runs})
    atomic_write_text(args.out / "bench_web_thinking.md", thinking_markdown(runs))
    for kind, q in run["probes"].items():
        print(f"{kind}: {q}")
    print(f"thinking: {run['thinking']}\ncpu: {run['cpu']}")
    return 0 if not run["thinking"]["errors"] and not run["probe_errors"] else 1


def load_main(args: argparse.Namespace, command: str) -> int:
    """The default run: the anchor, one client, the load and the restart."""
    config = Config(games=args.games, sequential_games=args.sequential_games, seed=args.seed)
    load_start = round(os.getloadavg()[0], 1)
    anchor = in_process(config)
    print(f"in process: {anchor['move']}", flush=True)
    known = serve_flags(REPO)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = serve_command(Path(tmp), config.games + 16, known)
        with server(cmd) as (url, _):
            seq = [config.seed + i for i in range(config.sequential_games)]
            one = asyncio.run(run_games(url, config, seq, at_once=False))
            print(f"one client: {one['move']}", flush=True)
            seeds = [config.seed + 1000 + i for i in range(config.games)]
            load = asyncio.run(run_games(url, config, seeds, at_once=True))
            print(f"load: {load['requests_per_s']} req/s, move {load['move']}", flush=True)
        with server(cmd) as (url, _):  # the same folder: a restart
            restart = check_restart(url, one.pop("_saved") + load.pop("_saved"))
    out = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, CPython {platform.python_version()}",
        "command": command,
        "config": asdict(config),
        "load_average": [load_start, round(os.getloadavg()[0], 1)],
        "in_process": anchor,
        "one_client": one,
        "load": load,
        "restart": restart,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.out / "bench_web.json", out)
    atomic_write_text(args.out / "bench_web.md", to_markdown(out))
    print(to_markdown(out))
    errors = load["error_count"] + one["error_count"]
    restarted = restart["listed_after_restart"] == restart["saved"] == restart["scores_match"]
    ok = errors == 0 and load["finished"] == load["games"] and restarted
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=Config.games)
    p.add_argument("--sequential-games", type=int, default=Config.sequential_games)
    p.add_argument("--seed", type=int, default=Config.seed)
    p.add_argument("--out", type=Path, default=RESULTS)
    t = p.add_argument_group("the thinking load (--thinking)")
    t.add_argument(
        "--thinking",
        action="store_true",
        help="measure the probes of a second client while one client's bots think",
    )
    t.add_argument(
        "--thinkers",
        type=int,
        default=Thinking.thinkers,
        help="games the thinking client keeps thinking",
    )
    t.add_argument(
        "--opponents",
        default=",".join(Thinking.opponents),
        help="the bots of each thinking game, comma-separated",
    )
    t.add_argument(
        "--hand-sizes",
        default=None,
        help="the schedule of every game, e.g. 8,7,6 (default: the rules' own)",
    )
    t.add_argument("--seconds", type=float, default=Thinking.seconds)
    t.add_argument("--warmup", type=float, default=Thinking.warmup)
    t.add_argument(
        "--bot-workers",
        type=int,
        default=None,
        help="craits serve --bot-workers (default: its own, one per core)",
    )
    where = t.add_mutually_exclusive_group()
    where.add_argument(
        "--server-root",
        type=Path,
        default=None,
        help="serve the code of this folder (default: this checkout)",
    )
    where.add_argument(
        "--server-commit",
        default=None,
        help="serve the code of this commit (git archive, a temporary folder)",
    )
    t.add_argument("--label", default="after", help="the run's name in the results")
    args = p.parse_args(argv)
    command = " ".join(
        ["python experiments/bench_web.py", *(argv if argv is not None else sys.argv[1:])]
    )
    return thinking_main(args, command) if args.thinking else load_main(args, command)


if __name__ == "__main__":
    sys.exit(main())
