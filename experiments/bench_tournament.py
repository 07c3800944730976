"""Tournament throughput and the search bot's time per move (issue: baselines and tournaments).

Measures, in one run:

* the engine's own random-play speed (``craits bench engine``: games/s and decisions/s);
* ``craits tournament`` throughput — games/s and decisions/s, whole pipeline (agents, public
  tracking, result store) — for random agents and for a line-up of heuristics, with 1 and 2
  worker processes;
* ``pimc``'s time per searched decision at its default budget (the end of a hand, when some
  player holds ``craits.agents.pimc.ENDGAME`` cards or fewer), and per decision overall.

The heuristics must not be the bottleneck: a tournament of heuristics should run at >= 50% of
the engine's random-play speed in games/s. Writes ``experiments/results/bench_tournament.json``
and ``.md`` atomically. Usage::

    python experiments/bench_tournament.py --seconds 10
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from craits.agents.duplicate_tournament import TournamentConfig
from craits.agents.pimc import ENDGAME
from craits.agents.specs import make_agent
from craits.bench import bench_engine
from craits.tournament_workers import run_tournament
from craits_env import Game, Phase, Rules
from craits_env.fileio import atomic_write_json, atomic_write_text
from craits_env.public import PublicGame

RESULTS = Path(__file__).resolve().parent / "results"
LINEUPS = {
    "random": ("random", "random", "random", "random"),
    "heuristics": ("greedy", "tactician", "expert", "greedy"),
}


def tournament_speed(specs: tuple[str, ...], seconds: float, workers: int) -> dict[str, Any]:
    """Play deals until ``seconds`` have passed (whole deals); games/s, decisions/s."""
    deals = 1
    while True:
        with tempfile.TemporaryDirectory() as tmp:
            cfg = TournamentConfig(specs, len(specs), deals, 0, Rules())
            start = time.perf_counter()
            games = run_tournament(cfg, Path(tmp), workers=workers)
            elapsed = time.perf_counter() - start
        if elapsed >= seconds or deals >= 4096:
            decisions = sum(g["decisions"] for g in games.values())
            return {
                "specs": list(specs),
                "workers": workers,
                "games": len(games),
                "seconds": round(elapsed, 2),
                "games_per_s": round(len(games) / elapsed, 2),
                "decisions_per_s": round(decisions / elapsed),
                "decisions_per_game": round(decisions / len(games), 1),
            }
        deals = max(deals * 2, int(deals * seconds / max(elapsed, 1e-3) * 1.1))


def pimc_time_per_move(spec: str, moves: int, seed: int = 0) -> dict[str, Any]:
    """pimc's decision times in 4-player games against greedy bots: over every decision with
    more than one legal action, and over the searched ones (the end of a hand, when some
    player holds ``ENDGAME`` cards or fewer; before that it plays its prior's move). The
    first searched decision is played but not timed: it pays numba's compilation (or the
    loading of its cache) once per process, which no later decision does."""
    agent = make_agent(spec, seed)
    others = [make_agent("greedy", seed + i) for i in range(1, 4)]
    r = random.Random(seed)
    timings: list[float] = []
    searched: list[float] = []
    game_seed = seed
    warm = False
    while len(searched) < moves:
        game = Game(4, Rules(), seed=game_seed)
        game_seed += 1
        pg = PublicGame(game)
        agent.reset(r.randrange(2**31))
        for o in others:
            o.reset(r.randrange(2**31))
        while not game.is_over and len(searched) < moves:
            p = game.current_player
            assert p is not None
            if p == 0:
                choice = len(game.legal_actions()) > 1 and game.phase != Phase.DECLARE
                endgame = min(len(h) for h in game.hands) <= ENDGAME
                t = time.perf_counter()
                action = agent.act(pg.view(0))
                if choice and endgame and not warm:  # the first search: compile, untimed
                    warm = True
                elif choice:
                    timings.append(time.perf_counter() - t)
                    if endgame:
                        searched.append(timings[-1])
            else:
                action = others[p - 1].act(pg.view(p))
            pg.apply(action)
    searched.sort()
    return {
        "spec": spec,
        "endgame_cards": ENDGAME,
        "decisions_with_choice": len(timings),
        "mean_ms_per_decision": round(1000 * sum(timings) / len(timings), 2),
        "searched_moves": len(searched),
        "mean_ms": round(1000 * sum(searched) / len(searched), 2),
        "median_ms": round(1000 * searched[len(searched) // 2], 2),
        "p95_ms": round(1000 * searched[int(len(searched) * 0.95)], 2),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="per measurement")
    ap.add_argument("--pimc", default="pimc", help="the search bot's spec (default budget)")
    ap.add_argument("--pimc-moves", type=int, default=200, help="searched moves to time")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    engine = bench_engine(args.seconds, 4, seed=0)
    print(f"engine: {engine['games_per_s']} games/s, {engine['decisions_per_s']:,.0f} dec/s")
    runs = []
    for name, specs in LINEUPS.items():
        for workers in (1, 2):
            res = tournament_speed(specs, args.seconds, workers)
            res["lineup"] = name
            share = res["games_per_s"] / engine["games_per_s"]
            res["share_of_engine_games_per_s"] = round(share, 3)
            runs.append(res)
            print(f"{name} x{workers}: {res['games_per_s']} games/s ({share:.0%} of the engine)")
    pimc = pimc_time_per_move(args.pimc, args.pimc_moves)
    print(f"{args.pimc}: {pimc['mean_ms']} ms per searched move (median {pimc['median_ms']})")
    command = "python experiments/bench_tournament.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}",
        "engine_random_play": engine,
        "tournaments": runs,
        "pimc": pimc,
        "command": command,
    }
    lines = [
        "# Tournament throughput (same run)",
        "",
        f"{result['date']}; {result['machine']}; full standard 4-player games.",
        "",
        f"Engine alone, random play: **{engine['games_per_s']} games/s** "
        f"({engine['decisions_per_s']:,.0f} decisions/s, {engine['decisions_per_game']} "
        "decisions per game).",
        "",
        "| line-up | workers | games/s | decisions/s | decisions/game | games/s ÷ engine |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in runs:
        lines.append(
            f"| {' '.join(r['specs'])} | {r['workers']} | {r['games_per_s']} | "
            f"{r['decisions_per_s']:,} | {r['decisions_per_game']} | "
            f"{r['share_of_engine_games_per_s']:.0%} |"
        )
    lines += [
        "",
        f"`{pimc['spec']}` (default budget) against three `greedy`: {pimc['mean_ms']} ms per "
        f"searched decision (median {pimc['median_ms']} ms, 95th percentile {pimc['p95_ms']} "
        f"ms, {pimc['searched_moves']} decisions with a choice once some player held "
        f"{pimc['endgame_cards']} cards or fewer); {pimc['mean_ms_per_decision']} ms per "
        f"decision with a choice over the whole game ({pimc['decisions_with_choice']} "
        "decisions; before the end of a hand it plays the expert's move; forced decisions "
        "cost nothing).",
        "",
        f"Reproduce: `{command}`",
        "",
    ]
    atomic_write_json(args.out / "bench_tournament.json", result)
    atomic_write_text(args.out / "bench_tournament.md", "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
