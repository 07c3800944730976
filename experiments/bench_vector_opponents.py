"""Rollout collection against bots: ``backend=vector`` (compiled bots) vs ``backend=python``.

Builds one configuration (default ``ppo_4p``, 4 players, standard rules, ``--num-games`` games)
whose opponents are all ``--opponent`` (default ``expert``: three of them beside the learner)
on each backend, with the same learner network (``hidden_sizes`` of the configuration, the
same initial weights), and times only the rollout's collection (``collect``: the games, the
bots, the learner's forward passes and sampling; no PPO update). Each backend first collects
one batch untimed (numba's kernels, the first games); then they take turns, ``--rounds``
times, collecting ``--steps`` environment steps each (every seat's decisions, forced ones
included, as ``craits train``'s SPS counts), so that the machine's load falls on both alike.
Prints the steps per second of each round, the medians and their ratio.

    python experiments/bench_vector_opponents.py --steps 4000 --rounds 3
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np
import torch

from craits.agents.network import PolicyNet
from craits.training.config import TrainConfig, load_config
from craits.training.pool import OpponentPool
from craits.training.selfplay import SelfPlayRollout
from craits.training.vector_selfplay import VectorSelfPlayRollout

BATCH = 1024  # transitions a collect call gathers (the learner's decisions)


def make_rollout(config: TrainConfig) -> SelfPlayRollout | VectorSelfPlayRollout:
    pool = OpponentPool(config.opponents, {}, 1)
    rng = np.random.default_rng(config.seed)
    if config.backend == "vector":
        return VectorSelfPlayRollout(config, pool, rng)
    return SelfPlayRollout(config, pool, rng)


def collect_steps(
    rollout: SelfPlayRollout | VectorSelfPlayRollout,
    net: PolicyNet,
    steps: int,
    gen: torch.Generator,
) -> tuple[int, float]:
    """Collect batches until ``steps`` environment steps are taken; (steps, seconds)."""
    taken, t0 = 0, time.perf_counter()
    while taken < steps:
        _, stats = rollout.collect(net, BATCH, gen)
        taken += stats.steps
    return taken, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="ppo_4p")
    parser.add_argument("--opponent", default="expert")
    parser.add_argument("--num-games", type=int, default=128)
    parser.add_argument("--steps", type=int, default=4000, help="environment steps a round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    overrides = [
        f"num_games={args.num_games}", "device=cpu", f"batch_size={BATCH}", "opponents.self=0",
        "opponents.past=0", "opponents.greedy=0", "opponents.tactician=0", "opponents.expert=0",
        f"opponents.{args.opponent}=1",
    ]  # fmt: skip
    backends = ("python", "vector")
    configs = {b: load_config(args.config, [*overrides, f"backend={b}"]) for b in backends}
    torch.manual_seed(0)
    config = configs["python"]
    net = PolicyNet(SelfPlayRollout.observation_size(config), config.hidden_sizes).eval()
    rollouts = {b: make_rollout(configs[b]) for b in backends}
    gens = {b: torch.Generator().manual_seed(1) for b in backends}
    for b in backends:  # warm-up: numba's kernels, the first games
        collect_steps(rollouts[b], net, 1, gens[b])
    rates: dict[str, list[float]] = {b: [] for b in backends}
    for r in range(args.rounds):
        for b in backends:
            steps, seconds = collect_steps(rollouts[b], net, args.steps, gens[b])
            rates[b].append(steps / seconds)
            print(f"round {r + 1} {b:6s}: {steps:6d} steps in {seconds:6.2f} s, "
                  f"{steps / seconds:9,.0f} steps/s")  # fmt: skip
    med = {b: statistics.median(rates[b]) for b in backends}
    print(
        f"{config.num_players} players, {args.num_games} games, learner {config.hidden_sizes} "
        f"vs three {args.opponent}; {platform.processor() or platform.machine()}, one torch "
        f"thread"
    )
    for b in backends:
        print(f"median {b:6s}: {med[b]:9,.0f} steps/s")
    print(f"ratio vector / python: {med['vector'] / med['python']:.1f}x")


if __name__ == "__main__":
    main()
