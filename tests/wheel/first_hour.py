"""A new user's first hour, against an installed wheel (``make test-wheel``).

Run with the venv's Python from an empty directory (or one holding a user's own
``agents.py``): every command is that venv's ``craits``; nothing of the source tree is on
the path. Each step checks its exit status and the one thing it must print; the first
failure exits 1 naming the step.

    python tests/wheel/first_hour.py VENV_BIN
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CRAITS = "craits"  # main() sets the venv's
QUICK = ["-r", "hand_sizes=3,2,1"]
# Piped moves that answer every kind of decision within a cycle of 25 lines (a move that is not
# legal now is refused and the next line read): a card by its number in the hand, draw, a suit
# call, the one-card declaration.
MOVES = "".join(f"{k}\n" for k in range(1, 21)) + "draw\nc\nd\nh\nsilent\n"
MOVES *= 200


def step(name: str, args: list[str], expect: str, stdin: str = "", timeout: int = 600) -> str:
    started = time.monotonic()
    proc = subprocess.run(
        [CRAITS, *args], input=stdin, capture_output=True, text=True, timeout=timeout
    )
    took = time.monotonic() - started
    if proc.returncode != 0 or expect not in proc.stdout:
        print(
            f"first hour: {name} failed (exit {proc.returncode}, {took:.0f} s)\n"
            f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        )
        sys.exit(1)
    print(f"first hour: {name} ok ({took:.1f} s)")
    return proc.stdout


def serve_pages() -> None:
    proc = subprocess.Popen(
        [CRAITS, "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = next(w for w in line.split() if w.startswith("http://127.0.0.1:")).rstrip("/.,")
        for page, expect in (("/", "Craits"), ("/play", "Craits"), ("/api/specs", "champion")):
            with urllib.request.urlopen(url + page, timeout=30) as r:
                body = r.read().decode()
                if r.status != 200 or expect not in body:
                    print(f"first hour: serve {page} failed ({r.status})")
                    sys.exit(1)
        print(f"first hour: serve pages ok ({url})")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    global CRAITS
    CRAITS = str(Path(sys.argv[1]).resolve() / "craits")
    step("version", ["--version"], "craits ")
    step("demo", ["demo", "--players", "4", "--seed", "3"], "hand")
    step(
        "play",
        [
            "play",
            "--opponents",
            "expert",
            "champion",
            "greedy",
            "--seed",
            "1",
            *QUICK,
            "--record",
            "mine.jsonl",
        ],
        "Craits",
        stdin=MOVES,
    )
    step("replay", ["replay", "mine.jsonl"], "")
    step(
        "tournament",
        [
            "tournament",
            "champion",
            "champion-search:32",
            "expert",
            "greedy",
            "--players",
            "4",
            "--deals",
            "2",
            *QUICK,
            "--out",
            "t",
        ],
        "champion",
    )
    step(
        "train",
        [
            "train",
            "--total-steps",
            "20000",
            "--set",
            "final_eval_deals=2",
            "--set",
            "eval_every=0",
            "--out",
            "run",
            "--no-progress",
        ],
        "steps in",
    )
    step(
        "play the trained agent",
        [
            "tournament",
            "ppo:run",
            "random",
            "random",
            "random",
            "--players",
            "4",
            "--deals",
            "2",
            *QUICK,
            "--out",
            "t2",
        ],
        "ppo:run",
    )
    serve_pages()
    print("first hour: all ok")


if __name__ == "__main__":
    main()
