"""The compiled heuristic bots against the Python ones, on the same positions, in one run.

For each compiled bot (:mod:`craits.agents.compiled_bots`), ``--num-envs`` games of the
standard rules are played by that bot for ``--warmup`` steps (mid-hand positions); then, in
each of ``--rounds`` rounds, the same positions are decided by

* the compiled bot: ``CompiledBot(name).act(vector_game)``, one call for every row (repeated
  until ``--seconds`` pass), and
* the Python bot: ``act(view)`` on each row's position rebuilt as a Python game
  (``Game.from_snapshot``) with its ``PublicGame`` view (the rebuilding is not timed),

checked to give the same actions; the games then advance ``--between`` steps. Prints the
median decisions per second of each and their ratio. Usage::

    python experiments/bench_compiled_bots.py --num-envs 1024 --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from craits.agents.compiled_bots import COMPILED_BOTS, CompiledBot
from craits.agents.specs import make_agent
from craits_env import Game, Rules
from craits_env.public import PublicGame
from craits_env.vector import VectorGame


def compiled_rate(bot: CompiledBot, vg: VectorGame, seconds: float) -> float:
    """Decisions per second of one compiled call over every row, repeated for ``seconds``."""
    out = np.empty(vg.num_envs, np.int64)
    calls = 0
    start = time.perf_counter()
    while True:
        bot.act(vg, out=out)
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return calls * vg.num_envs / elapsed


def python_rate(name: str, vg: VectorGame, expected: np.ndarray) -> float:
    """Decisions per second of the Python bot over every row's position (checked equal)."""
    agent = make_agent(name)
    views = []
    for b in range(vg.num_envs):
        game = Game.from_snapshot(vg.snapshot(b))
        views.append(PublicGame(game).view(game.current_player))
    start = time.perf_counter()
    actions = [agent.act(view) for view in views]
    elapsed = time.perf_counter() - start
    if actions != expected.tolist():
        raise SystemExit(f"{name}: the compiled and Python bots differ on these positions")
    return len(views) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=20, help="steps before the first round")
    parser.add_argument("--between", type=int, default=7, help="steps between rounds")
    parser.add_argument("--seconds", type=float, default=0.5, help="compiled timing per round")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(
        f"{args.num_envs} games, {args.players} players, standard rules; medians of "
        f"{args.rounds} rounds\n"
    )
    print("| bot | compiled decisions/s | Python decisions/s | ratio |")
    print("|---|---:|---:|---:|")
    for name in COMPILED_BOTS:
        bot = CompiledBot(name)
        vg = VectorGame(args.num_envs, args.players, Rules(), seed=args.seed)
        for _ in range(args.warmup):
            vg.step(bot.act(vg))
        compiled, python = [], []
        for _ in range(args.rounds):
            compiled.append(compiled_rate(bot, vg, args.seconds))
            python.append(python_rate(name, vg, bot.act(vg)))
            for _ in range(args.between):
                vg.step(bot.act(vg))
        c, p = statistics.median(compiled), statistics.median(python)
        print(f"| `{name}` | {c:,.0f} | {p:,.0f} | {c / p:,.0f}× |")


if __name__ == "__main__":
    main()
