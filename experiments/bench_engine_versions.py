"""The rules engine's speed against an earlier commit's, measured in the same run: a ratio.

The tree at ``REF`` is exported with ``git archive`` into a temporary folder; then, for
``--rounds`` rounds, each tree's engine plays random full games for ``--seconds`` in a
fresh interpreter whose ``PYTHONPATH`` is that tree (both use this interpreter and its
packages). The two trees alternate, and which one goes first alternates from round to
round, so that drift on a shared machine hits them alike. Each round prints both trees'
decisions per second of wall clock and per second of the process's CPU time (less
disturbed by other processes on a shared machine), and the ratios current / baseline;
the last line holds the medians (of the rates, and of the ratios).

The loop is ``craits bench engine``'s (:func:`craits.bench.bench_engine`: full games of
the standard schedule, 4 players, each decision a uniformly random legal action), written
out once below so that the two trees run the same code around their engines (an old tree
may have no ``craits.bench``). ``--current REF2`` measures the tree of another commit in
place of the working tree.

``--callgrind N`` also counts, with valgrind's callgrind, the machine instructions each
tree executes to play the same N games (seeds 0 to N - 1, one policy generator seeded with
``--seed``, ``PYTHONHASHSEED=0``; a warm-up game and the interpreter's start are not
counted): a deterministic measure, the same on a busy machine as on a quiet one, that
follows time closely for this pure-Python loop. ``--markdown`` writes what is printed to a
file.

Usage::

    python experiments/bench_engine_versions.py 9f11649 --rounds 7 --seconds 5
    python experiments/bench_engine_versions.py 9f11649 --rounds 7 --callgrind 30
    python experiments/bench_engine_versions.py 9f11649 --current 15776f6 --callgrind 30
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The loop of craits.bench.bench_engine, run in each tree's interpreter; prints its counts.
LOOP = """
import json, random, sys, time
from craits_env.actions import PHASE_GAME_OVER
from craits_env.engine import Game
from craits_env.rules import Rules

seconds, num_players, seed = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rules = Rules()
policy = random.Random(seed)
decisions = games = 0
start, cpu_start = time.perf_counter(), time.process_time()
deadline = start + seconds
while True:
    g = Game(num_players, rules, seed=seed + games)
    legal_actions, apply, randrange = g.legal_actions, g.apply, policy.randrange
    while g.phase != PHASE_GAME_OVER:
        legal = legal_actions()
        apply(legal[randrange(len(legal))])
        decisions += 1
    games += 1
    if time.perf_counter() >= deadline:
        break
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
print(json.dumps({"decisions": decisions, "seconds": elapsed, "cpu_seconds": cpu}))
"""

# The same loop over a fixed number of games, for callgrind: sys.getswitchinterval() marks
# where counting starts (--zero-before), after the imports and one warm-up game.
FIXED_GAMES = """
import random, sys
from craits_env.actions import PHASE_GAME_OVER
from craits_env.engine import Game
from craits_env.rules import Rules

def play(games, num_players, seed):
    rules = Rules()
    policy = random.Random(seed)
    for i in range(games):
        g = Game(num_players, rules, seed=i)
        legal_actions, apply, randrange = g.legal_actions, g.apply, policy.randrange
        while g.phase != PHASE_GAME_OVER:
            legal = legal_actions()
            apply(legal[randrange(len(legal))])

games, num_players, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
play(1, num_players, seed)
sys.getswitchinterval()
play(games, num_players, seed)
"""

HEADER = (
    "| round | baseline decisions/s | current decisions/s | ratio | baseline per CPU s "
    "| current per CPU s | ratio (CPU) |\n|---:|---:|---:|---:|---:|---:|---:|"
)


def export(ref: str, into: Path) -> str:
    """Write the tree of ``ref`` into ``into``; its full commit id."""
    commit = subprocess.run(
        ["git", "rev-parse", "--verify", f"{ref}^{{commit}}"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    archive = subprocess.run(
        ["git", "archive", commit], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return commit


def decisions_per_s(tree: Path, seconds: float, num_players: int, seed: int) -> tuple[float, float]:
    """One timed run of :data:`LOOP` in a fresh interpreter with ``tree`` on its path:
    decisions per second of wall clock and per second of the process's CPU time."""
    out = subprocess.run(
        [sys.executable, "-c", LOOP, str(seconds), str(num_players), str(seed)],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result = json.loads(out)
    decisions = float(result["decisions"])
    return decisions / float(result["seconds"]), decisions / float(result["cpu_seconds"])


def collected(tree: Path, games: int, num_players: int, seed: int) -> int:
    """The instructions callgrind counts from the marker of :data:`FIXED_GAMES` to the end."""
    with tempfile.TemporaryDirectory(prefix="craits-callgrind-") as folder:
        err = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--zero-before=sys_getswitchinterval",
                f"--callgrind-out-file={folder}/out",
                sys.executable,
                "-c",
                FIXED_GAMES,
                str(games),
                str(num_players),
                str(seed),
            ],
            cwd=tree,
            env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0"},
            check=True,
            capture_output=True,
            text=True,
        ).stderr
    found = re.search(r"Collected : (\d+)", err)
    if found is None:
        raise RuntimeError(f"callgrind printed no count:\n{err[-2000:]}")
    return int(found.group(1))


def instructions(tree: Path, games: int, num_players: int, seed: int) -> int:
    """The instructions ``tree``'s engine executes to play :data:`FIXED_GAMES`' games (the
    interpreter's exit, counted in both runs, cancels out)."""
    return collected(tree, games, num_players, seed) - collected(tree, 0, num_players, seed)


def row(
    name: object,
    base: tuple[float, float],
    cur: tuple[float, float],
    ratio: float,
    cpu_ratio: float,
) -> str:
    """One line of the table: wall-clock and CPU-time rates of both trees and their ratios."""
    return (
        f"| {name} | {base[0]:,.0f} | {cur[0]:,.0f} | {ratio:.3f} | {base[1]:,.0f} "
        f"| {cur[1]:,.0f} | {cpu_ratio:.3f} |"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ref", help="the earlier commit (any git ref)")
    parser.add_argument("--current", metavar="REF2", help="a commit instead of the working tree")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=5.0, help="per tree and round")
    parser.add_argument("--num-players", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--callgrind", type=int, metavar="N", help="count instructions too")
    parser.add_argument("--markdown", type=Path, help="write what is printed here too")
    args = parser.parse_args(argv)

    lines: list[str] = []

    def say(line: str) -> None:
        lines.append(line)
        print(line, flush=True)

    median = statistics.median
    with tempfile.TemporaryDirectory(prefix="craits-trees-") as folder:
        baseline = Path(folder) / "baseline"
        baseline.mkdir()
        commit = export(args.ref, baseline)
        current, against = ROOT, "the working tree"
        if args.current is not None:
            current = Path(folder) / "current"
            current.mkdir()
            against = export(args.current, current)[:12]
        trees = [("baseline", baseline), ("current", current)]
        say(
            f"baseline {commit[:12]} against {against}: {args.rounds} rounds of "
            f"{args.seconds:g} s per tree, {args.num_players} players"
        )
        say("")
        say(HEADER)
        rows = []
        for r in range(args.rounds):
            speed = {}
            for name, tree in trees if r % 2 == 0 else trees[::-1]:
                speed[name] = decisions_per_s(tree, args.seconds, args.num_players, args.seed)
            base, cur = speed["baseline"], speed["current"]
            rows.append((base, cur))
            say(row(r + 1, base, cur, cur[0] / base[0], cur[1] / base[1]))
        say(
            row(
                "median",
                (median(b[0] for b, _ in rows), median(b[1] for b, _ in rows)),
                (median(c[0] for _, c in rows), median(c[1] for _, c in rows)),
                median(c[0] / b[0] for b, c in rows),
                median(c[1] / b[1] for b, c in rows),
            )
        )
        if args.callgrind:
            count = {
                name: instructions(tree, args.callgrind, args.num_players, args.seed)
                for name, tree in trees
            }
            say("")
            say(
                f"Instructions to play games 0 to {args.callgrind - 1} (callgrind): baseline "
                f"{count['baseline']:,}, current {count['current']:,}; baseline / current "
                f"{count['baseline'] / count['current']:.3f}"
            )
    if args.markdown is not None:
        args.markdown.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
