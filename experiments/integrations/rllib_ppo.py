"""RLlib's multi-agent PPO (new API stack) on the AEC ``craits_v0`` — the project's adapter only.

    python experiments/integrations/rllib_ppo.py --steps 400000 --out DIR

``craits_env.integrations.rllib.ppo_config`` is all the set-up: RLlib's ``PettingZooEnv``
over ``craits_v0.env(...)`` with the observation keys of RLlib's
``ActionMaskingTorchRLModule``, that module (``"learner"``) for seat 0 and a never-trained
masked-random module (``"random"``) for the other seats, RLlib's ``PPO`` with its own
GAE, learner and env runner (``--env-runners``, default 1, on a local Ray started here
with ``--env-runners + 1`` CPUs and no dashboard). The learner is trained until
``--steps`` env steps (every seat's) were sampled; then it plays ``--eval-episodes``
held-out games (seeds not used in training; its most probable legal action,
``RLlibAgent``) against three ``random`` agents (``craits.agents.make_agent``), and its win
rate is reported with a 95% interval (Wilson; shared wins split), before and after
training. Every action RLlib sampled is checked against the mask it answered
(``craits/illegal_actions``), every evaluation action by the engine: an illegal one
stops the script. Writes ``DIR/results.json`` and ``DIR/results.md`` (atomically) and
the learner module's state ``DIR/learner.pt``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pettingzoo
import ray
import torch

import craits_env
from craits import localray
from craits.agents import make_agent
from craits.agents.arena import play_game
from craits.agents.report import learning_table
from craits.agents.stats import wilson_interval
from craits_env import Game, Rules, craits_v0
from craits_env.fileio import atomic_write_json, atomic_write_text
from craits_env.integrations import rllib as craits_rllib

EVAL_SEED = 10_000_000  # held-out games: seeds far from the training seeds
LEARNER_SEAT = 0
PROGRESS_EVERY = 10  # iterations between progress lines (stderr)
HYPERPARAMETERS = (
    "batch",
    "minibatch",
    "epochs",
    "lr",
    "gamma",
    "lmbda",
    "clip",
    "entropy",
    "hidden",
)


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400_000, help="env steps, all seats (400k)")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument(
        "--hand-sizes",
        type=int,
        nargs="+",
        default=[3, 2, 1],
        help="the hand schedule (Rules.hand_sizes; default 3 2 1)",
    )
    parser.add_argument("--reward", default="relative", choices=craits_v0.REWARD_MODES)
    parser.add_argument("--env-runners", type=int, default=1, help="RLlib env runners (1)")
    parser.add_argument("--batch", type=int, default=4_000, help="env steps per PPO update")
    parser.add_argument("--minibatch", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=6, help="PPO epochs per update")
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--lmbda", type=float, default=0.95)
    parser.add_argument("--clip", type=float, default=0.2)
    parser.add_argument("--entropy", type=float, default=0.01)
    parser.add_argument("--hidden", type=int, default=256, help="units of each of 2 layers")
    parser.add_argument("--eval-episodes", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (driver)")
    parser.add_argument("--out", type=Path, required=True, help="results directory")
    return parser


def evaluate(module: Any, rules: Rules, players: int, episodes: int) -> dict[str, Any]:
    """The learner (seat 0, its most probable legal action) against ``random`` agents on
    held-out games; the engine refuses an illegal action (``agents.IllegalAction``)."""
    learner = craits_rllib.RLlibAgent(module)
    wins, scores, decisions = 0.0, [], 0
    start = time.perf_counter()
    for e in range(episodes):
        seed = EVAL_SEED + e
        seats = [learner, *(make_agent("random") for _ in range(players - 1))]
        game = Game(players, rules, seed=seed)
        decisions += play_game(game, seats, seeds=[seed + s for s in range(players)])
        winners = game.winners()
        if LEARNER_SEAT in winners:
            wins += 1 / len(winners)
        scores.append(game.scores[LEARNER_SEAT])
    seconds = time.perf_counter() - start
    return {
        "episodes": episodes,
        "win_rate": wins / episodes,
        "win_rate_ci": wilson_interval(wins, episodes),
        "mean_score": float(np.mean(scores)),
        "illegal_actions": 0,  # play_game raised otherwise
        "decisions_per_second": round(decisions / seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    if args.steps < 1 or args.batch < 1 or args.minibatch < 1 or args.eval_episodes < 1:
        parser.error("--steps, --batch, --minibatch and --eval-episodes must be >= 1")
    if args.env_runners < 0:
        parser.error("--env-runners must be >= 0")
    threads = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    started_here = not ray.is_initialized()
    if started_here:  # a local Ray: nothing but this machine, no dashboard
        localray.init(num_cpus=args.env_runners + 1, log_to_driver=False)
    try:
        return run(args)
    finally:
        if started_here:
            ray.shutdown()
        torch.set_num_threads(threads)  # as it was (main() may run inside a larger process)


def run(args: argparse.Namespace) -> int:
    rules = Rules(hand_sizes=tuple(args.hand_sizes))
    config = craits_rllib.ppo_config(
        num_players=args.players,
        rules=rules,
        learning_seats=(LEARNER_SEAT,),
        reward=args.reward,
        env_runners=args.env_runners,
        hidden=(args.hidden, args.hidden),
        seed=args.seed,
    ).training(
        train_batch_size_per_learner=min(args.batch, args.steps),
        minibatch_size=min(args.minibatch, args.batch, args.steps),
        num_epochs=args.epochs,
        lr=args.lr,
        gamma=args.gamma,
        lambda_=args.lmbda,
        clip_param=args.clip,
        entropy_coeff=args.entropy,
    )
    algo = config.build_algo()
    try:
        before = evaluate(
            algo.get_module(craits_rllib.LEARNER), rules, args.players, min(args.eval_episodes, 200)
        )
        steps, iterations, runners = 0, 0, {}
        start = time.perf_counter()
        while steps < args.steps:
            runners = algo.train()["env_runners"]
            steps = int(runners["num_env_steps_sampled_lifetime"])
            iterations += 1
            if iterations % PROGRESS_EVERY == 0:
                returns = runners.get("module_episode_returns_mean", {}).get(craits_rllib.LEARNER)
                elapsed = time.perf_counter() - start
                print(
                    f"iteration {iterations}: {steps:,} env steps, {elapsed:,.0f} s, "
                    f"learner return {returns}",
                    file=sys.stderr,
                    flush=True,
                )
        seconds = time.perf_counter() - start
        module = algo.get_module(craits_rllib.LEARNER)
        after = evaluate(module, rules, args.players, args.eval_episodes)
        state = module.get_state()
    finally:
        algo.stop()
    illegal = int(runners.get(craits_rllib.ILLEGAL_METRIC, 0))
    checked = int(runners.get(craits_rllib.CHECKED_METRIC, 0))
    if illegal or not checked:
        raise AssertionError(f"{illegal} of {checked} actions illegal: the mask was ignored")
    args.out.mkdir(parents=True, exist_ok=True)
    torch.save(state, args.out / "learner.pt")
    command = (
        "python experiments/integrations/rllib_ppo.py "
        f"--steps {args.steps} --players {args.players} "
        f"--hand-sizes {' '.join(map(str, args.hand_sizes))} --reward {args.reward} "
        f"--env-runners {args.env_runners} --batch {args.batch} --minibatch {args.minibatch} "
        f"--epochs {args.epochs} --eval-episodes {args.eval_episodes} --seed {args.seed} "
        f"--out {args.out}"
    )
    learner_returns = runners.get("module_episode_returns_mean", {}).get(craits_rllib.LEARNER)
    result = {
        "library": "RLlib PPO (new API stack; PettingZooEnv + ActionMaskingTorchRLModule)",
        "versions": {
            "ray": ray.__version__,
            "torch": torch.__version__,
            "gymnasium": gymnasium.__version__,
            "pettingzoo": pettingzoo.__version__,
            "craits": craits_env.__version__,
            "python": platform.python_version(),
        },
        "env": {"num_players": args.players, "rules": rules.to_dict(), "reward": args.reward},
        "learner_seat": LEARNER_SEAT,
        "env_runners": args.env_runners,
        "hyperparameters": {k: getattr(args, k) for k in HYPERPARAMETERS},
        "steps": steps,
        "iterations": iterations,
        "episodes": int(runners.get("num_episodes_lifetime", 0)),
        "train_seconds": round(seconds, 1),
        "steps_per_second": round(steps / seconds, 1),
        "learner_return_mean_last": None if learner_returns is None else float(learner_returns),
        "illegal_actions_in_training": illegal,
        "checked_actions_in_training": checked,
        "before": before,
        "after": after,
        "command": command,
    }
    atomic_write_json(args.out / "results.json", result)
    atomic_write_text(
        args.out / "results.md",
        "\n".join(
            [
                "# RLlib multi-agent PPO on craits_v0 (craits_env.integrations.rllib)",
                "",
                f"Seat {LEARNER_SEAT} learns (RLlib's PPO, new API stack, "
                f"`ActionMaskingTorchRLModule` through `PettingZooEnv`) against "
                f"{args.players - 1} x a masked-random module, {args.players} players, hands "
                f"{tuple(args.hand_sizes)}, reward `{args.reward}`; {steps:,} env steps (all "
                f"seats) in {seconds:,.0f} s ({result['steps_per_second']:,.0f} steps/s, "
                f"{args.env_runners} env runner); ray {ray.__version__}, torch "
                f"{torch.__version__}. {checked:,} sampled actions checked against their "
                "masks: none illegal; none in evaluation either.",
                "",
                "Evaluation: the learner's most probable legal action against 3 x `random` "
                "(`craits.agents.make_agent`), held-out seeds.",
                "",
                *learning_table(before, after),
                "",
                f"A coin toss wins {1 / args.players:.3f}. Reproduce: `" + command + "`",
                "",
            ]
        ),
    )
    print(json.dumps(after))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
