"""The timing side channel of ``craits serve`` (issue 43, F): does the latency of
``POST /api/games/{id}/actions`` tell whether a searching bot had more than one real option?

The attack of the issue, bounded and on 127.0.0.1 only: play whole games against one
searching bot (``pimc:N``, two players) with uniformly random legal moves, time each move's
answer, and afterwards — the store holds every action, the seed is known — label each
answer "the bot searched" (one of the bot decisions it answered had more than one legal
action and no declaration: ``PIMCAgent`` searches exactly then) or not. A threshold on the
latency per bot decision (the number of decisions is public: the view's ``decision``) is
fitted on every other answer and judged on the rest: its accuracy against the base rate
(always guessing the more frequent label).

Run with the server's even timing on and off (``craits.web.timing``; ``Settings.even_timing``)::

    python experiments/bench_web_timing.py --spec pimc:2048 --games 12 \\
        --out experiments/results/web/bench_web_timing.json
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from craits.table import HumanTable
from craits.web.app import Settings, create_app
from craits.web.server import running
from craits_env.actions import DECLARE
from craits_env.rules import Rules

RULES = {"hand_sizes": [6, 5, 4]}
"""A short game of three hands (about 40 answers a game against one bot)."""
MAX_MOVES = 2000  # moves of one game at most (bounded loops)


@dataclass(frozen=True)
class Answer:
    """One timed move: its latency, the bot decisions it answered, whether one searched."""

    seconds: float
    bot_decisions: int
    searched: bool


def _searched_at(stored: Any) -> list[bool]:
    """Per decision of a stored game: whether a searching bot would search there (more
    than one legal action, no declaration among them)."""
    table = HumanTable(
        stored.opponents,
        seat=stored.seat,
        seed=stored.seed,
        rules=Rules.from_dict(stored.rules),
        source="craits serve",
        agents=False,
    )
    table.start()
    searched = []
    for action in stored.actions:
        legal = table.game.legal_actions()
        searched.append(len(legal) > 1 and DECLARE not in legal)
        table.decide(action)
    return searched


def play(url: str, store: Any, spec: str, games: int, seed: int) -> list[Answer]:
    """Play ``games`` whole games against ``spec`` through the API; every move timed."""
    rng = random.Random(seed)
    answers: list[Answer] = []
    with httpx.Client(base_url=url, timeout=300) as http:
        for g in range(games):
            asked = {"opponents": [spec], "seed": seed + g, "rules": RULES}
            r = http.post("/api/games", json=asked)
            r.raise_for_status()
            game_id, token = r.json()["game_id"], r.json()["token"]
            view = http.get(f"/api/games/{game_id}", params={"token": token}).json()
            spans: list[tuple[float, int, int]] = []  # (seconds, first bot decision, after)
            for _ in range(MAX_MOVES):
                if view["game_over"] or not view["legal"]:
                    break
                action = rng.choice(view["legal"])["action"]
                body = {"token": token, "action": action, "decision": view["decision"]}
                start = time.perf_counter()
                r = http.post(f"/api/games/{game_id}/actions", json=body)
                seconds = time.perf_counter() - start
                r.raise_for_status()
                after = r.json()
                spans.append((seconds, view["decision"] + 1, after["decision"]))
                view = after
            searched = _searched_at(store.database.load(game_id))
            for seconds, first, end in spans:
                if end > first:  # the bot moved at least once
                    answers.append(Answer(seconds, end - first, any(searched[first:end])))
    return answers


def _fit(train: list[Answer]) -> tuple[float, bool]:
    """The latency cut (and its side) that labels ``train`` best."""
    best = (-1.0, 0.0, True)
    for cut in sorted({a.seconds for a in train}):
        for above in (True, False):
            right = sum(((a.seconds > cut) == above) == a.searched for a in train)
            if right > best[0]:
                best = (right, cut, above)
    return best[1], best[2]


def attack(answers: list[Answer]) -> dict[str, float]:
    """The threshold attack, per number of bot decisions answered (public: the view's
    ``decision``), fitted on every other answer and judged on the rest; against the base
    rate of the same groups (the more frequent label of each, which the public count
    alone predicts)."""
    right = base = judged = 0
    for k in sorted({a.bot_decisions for a in answers}):
        group = [a for a in answers if a.bot_decisions == k]
        train, test = group[0::2], group[1::2]
        if not train or not test:
            continue
        cut, above = _fit(train)
        right += sum(((a.seconds > cut) == above) == a.searched for a in test)
        majority = 2 * sum(a.searched for a in train) >= len(train)
        base += sum(a.searched == majority for a in test)
        judged += len(test)
    return {
        "answers": len(answers),
        "judged": judged,
        "accuracy": right / judged,
        "base_rate": base / judged,
        "searched_share": sum(a.searched for a in answers) / len(answers),
        "p50_ms_searched": 1000 * _median([a.seconds for a in answers if a.searched]),
        "p50_ms_not_searched": 1000 * _median([a.seconds for a in answers if not a.searched]),
    }


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def run(
    spec: str = "pimc:2048",
    games: int = 12,
    even_timing: bool = True,
    workers: int = 0,
    seed: int = 0,
) -> dict[str, Any]:
    """One attack against a fresh server (in this process, on 127.0.0.1)."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            games_dir=Path(tmp),
            store=":memory:",
            even_timing=even_timing,
            bot_workers=workers,
            client_games=0,
            client_think=0,
        )
        app = create_app(settings)
        with running(app) as url:
            answers = play(url, app.state.store, spec, games, seed)
    return {"spec": spec, "games": games, "even_timing": even_timing, **attack(answers)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default="pimc:2048")
    parser.add_argument("--games", type=int, default=12)
    parser.add_argument("--workers", type=int, default=1, help="bot processes (0: a thread)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows = [run(args.spec, args.games, even, args.workers) for even in (False, True)]
    for row in rows:
        print(json.dumps(row))
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
