"""The committed report cards of the zoo on the Craits benchmark (the leaderboard).

Runs ``craits evaluate`` for every zoo member of a suite, the reference first (its games are
then shared by every other card through one games folder), the searching members with
``--size search`` (the small deal sets throughout: about an hour each on 2 cores). Cards go
to ``experiments/results/benchmark/SUITE/SPEC/card.{json,md,png}``; the games to
``runs/benchmark-SUITE-games`` (not committed: a card holds every game's score). A rerun
resumes. Usage::

    python experiments/benchmark_zoo.py --workers 2            # every zoo member
    python experiments/benchmark_zoo.py --workers 2 expert greedy
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from craits.benchmark.evaluate import slug
from craits.benchmark.suite import is_searching, suite

RESULTS = Path("experiments/results/benchmark")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*", help="zoo members to evaluate (default: all)")
    parser.add_argument("--suite", default="v1")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    chosen = suite(args.suite)
    specs = args.specs or [chosen.reference, *(s for s in chosen.zoo if s != chosen.reference)]
    for spec in specs:
        size = "search" if is_searching(spec) else "full"
        command = [
            sys.executable,
            "-m",
            "craits",
            "evaluate",
            spec,
            "--suite",
            chosen.name,
            "--size",
            size,
            "--workers",
            str(args.workers),
            "--out",
            str(RESULTS / chosen.name / slug(spec)),
            "--games",
            f"runs/benchmark-{chosen.name}-games",
        ]
        print("$", " ".join(command[1:]), flush=True)
        status = subprocess.run(command).returncode
        if status:
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
