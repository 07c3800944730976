"""The compiled heuristic bots against the Python ones, on the same positions, in one run.

For each compiled bot (:mod:`craits.agents.compiled_bots`), ``--num-envs`` games of the
standard rules are played by that bot for ``--warmup`` steps (mid-hand positions); then, in
each of ``--rounds`` rounds, the same positions are decided by

* the compiled bot: ``CompiledBot(name).act(vector_game)``, one call for every row, and
* the Python bot: ``act(view)`` on each row's twin, the Python game made from the row's
  generator and played in lockstep with it (``PublicGame``: the expert's memory is the
  same),

each repeated until ``--seconds`` pass and checked to give the same actions; the games then
advance ``--between`` steps (both engines).
Prints the median decisions per second of each and their ratio. Usage::

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
from craits_env.seeding import derive_seed
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


class Twins:
    """The rows' Python twins (``Game(n, rules, rng=default_rng(derive_seed(seed, b)))``,
    the next game from the same generator when one ends), stepped with the rows."""

    def __init__(self, vg: VectorGame, seed: int) -> None:
        self.vg = vg
        self.rngs = [np.random.default_rng(derive_seed(seed, b)) for b in range(vg.num_envs)]
        self.pubs = [self._new_game(b) for b in range(vg.num_envs)]

    def _new_game(self, b: int) -> PublicGame:
        game = Game(self.vg.num_players, self.vg.rules, rng=self.rngs[b])
        while game.is_over:  # the vector engine skips games over before any decision
            game = Game(self.vg.num_players, self.vg.rules, rng=self.rngs[b])
        return PublicGame(game)

    def step(self, bot: CompiledBot) -> None:
        """Both engines play the compiled bot's actions for one step."""
        actions = bot.act(self.vg)
        bot.observe(self.vg, actions)
        _, done = self.vg.step(actions)
        for b, pub in enumerate(self.pubs):
            pub.apply(int(actions[b]))
            if done[b]:
                self.pubs[b] = self._new_game(b)

    def python_rate(self, name: str, expected: np.ndarray, seconds: float) -> float:
        """Decisions per second of the Python bot over every twin (checked equal), all of
        them decided again until ``seconds`` pass."""
        agent = make_agent(name)
        views = [pub.view(pub.game.current_player) for pub in self.pubs]
        passes = 0
        start = time.perf_counter()
        while True:
            actions = [agent.act(view) for view in views]
            passes += 1
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                break
        if actions != expected.tolist():
            raise SystemExit(f"{name}: the compiled and Python bots differ on these positions")
        return passes * len(views) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=20, help="steps before the first round")
    parser.add_argument("--between", type=int, default=7, help="steps between rounds")
    parser.add_argument("--seconds", type=float, default=0.5, help="timing of each, per round")
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
        twins = Twins(vg, args.seed)
        for _ in range(args.warmup):
            twins.step(bot)
        compiled, python = [], []
        for _ in range(args.rounds):
            compiled.append(compiled_rate(bot, vg, args.seconds))
            python.append(twins.python_rate(name, bot.act(vg), args.seconds))
            for _ in range(args.between):
                twins.step(bot)
        c, p = statistics.median(compiled), statistics.median(python)
        print(f"| `{name}` | {c:,.0f} | {p:,.0f} | {c / p:,.0f}× |")


if __name__ == "__main__":
    main()
