"""AgileRL's masked PPO on ``craits/Craits-v0`` — no glue: ``info["action_mask"]``.

    python experiments/integrations/agilerl_ppo.py --steps 100000 --out DIR

AgileRL's single-agent ``PPO`` with its own on-policy pattern: ``collect_rollouts(agent,
env)`` reads ``info["action_mask"]`` for every action and stores it, and ``agent.learn()``
applies the stored masks in the update, so the policy is masked end to end (AgileRL's
multi-agent ``IPPO`` recomputes its log-probabilities without masks: see
``agilerl_ippo.py``). The environment is the project's Gymnasium view unchanged (one
learner seat against three ``random`` agents, ``flat_obs=True``) in gymnasium's
``SyncVectorEnv`` with same-step autoreset (a finished game's next observation is the new
game's, so every mask handed to AgileRL is a pending decision's). Then the policy plays
``--eval-episodes`` held-out games (seeds not used in training; sampling as AgileRL's
``get_action`` does, torch seeded per game) and its win rate is reported with a 95%
interval (Wilson; shared wins split), before and after training. The Gymnasium view ends
an episode with −1 on an illegal action and says so in ``info``; every training and
evaluation action is checked against its mask: an illegal one stops the script. Writes
``DIR/results.json``, ``DIR/results.md`` (atomically) and the policy ``DIR/ppo.pt``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import torch
from agilerl.algorithms import PPO
from agilerl.rollouts import collect_rollouts

import craits_env
from craits.agents.report import learning_table
from craits.agents.stats import wilson_interval
from craits_env import Rules
from craits_env.fileio import atomic_write_json, atomic_write_text

AGILERL_VERSION = importlib.metadata.version("agilerl")  # the package has no __version__
EVAL_SEED = 10_000_000  # held-out games: seeds far from the training seeds
PROGRESS_EVERY = 10  # updates between progress lines (stderr)
HYPERPARAMETERS = (
    "envs",
    "learn_step",
    "batch_size",
    "epochs",
    "lr",
    "gamma",
    "gae_lambda",
    "clip",
    "entropy",
    "hidden",
)


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000, help="learner steps (100k)")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument(
        "--hand-sizes",
        type=int,
        nargs="+",
        default=[3, 2, 1],
        help="the hand schedule (Rules.hand_sizes; default 3 2 1)",
    )
    parser.add_argument("--envs", type=int, default=4, help="vectorised environments")
    parser.add_argument("--learn-step", type=int, default=2_048, help="steps per PPO update")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=4, help="PPO epochs per update")
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--gae-lambda", type=float, default=0.95)
    parser.add_argument("--clip", type=float, default=0.2)
    parser.add_argument("--entropy", type=float, default=0.01)
    parser.add_argument("--hidden", type=int, default=256, help="units of each of 2 layers")
    parser.add_argument("--eval-episodes", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--out", type=Path, required=True, help="results directory")
    return parser


class CheckedMasks(gymnasium.Wrapper):
    """Counts the actions outside the pending decision's mask (the Gymnasium view ends such
    an episode with −1; this only counts)."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.illegal = self.checked = 0

    def step(self, action: Any) -> Any:
        mask = self.env.unwrapped.action_masks()  # type: ignore[attr-defined]
        self.checked += 1
        self.illegal += int(not mask[int(action)])
        return self.env.step(action)


def env_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "num_players": args.players,
        "opponents": "random",
        "rules": Rules(hand_sizes=tuple(args.hand_sizes)),
        "flat_obs": True,  # the vector alone; the mask in info["action_mask"]
    }


def make_vector_env(args: argparse.Namespace) -> gymnasium.vector.SyncVectorEnv:
    kwargs = env_kwargs(args)
    fns = [lambda: CheckedMasks(gymnasium.make(craits_env.GYM_ENV_ID, **kwargs))] * args.envs
    return gymnasium.vector.SyncVectorEnv(
        fns, autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP
    )


def evaluate(agent: PPO, args: argparse.Namespace, episodes: int) -> dict[str, Any]:
    """The policy against the ``random`` seats on held-out games (masks from ``info``)."""
    env = CheckedMasks(gymnasium.make(craits_env.GYM_ENV_ID, **env_kwargs(args)))
    wins, scores, decisions = 0.0, [], 0
    start = time.perf_counter()
    for e in range(episodes):
        torch.manual_seed(EVAL_SEED + e)  # get_action samples from torch's generator
        obs, info = env.reset(seed=EVAL_SEED + e)
        done = False
        while not done:
            action, *_ = agent.get_action(obs[None], action_mask=info["action_mask"][None])
            obs, _, terminated, truncated, info = env.step(int(np.asarray(action).reshape(-1)[0]))
            decisions += 1
            done = terminated or truncated
        if info["seat"] in info["winners"]:
            wins += 1 / len(info["winners"])
        scores.append(info["scores"][info["seat"]])
    seconds = time.perf_counter() - start
    env.close()
    return {
        "episodes": episodes,
        "win_rate": wins / episodes,
        "win_rate_ci": wilson_interval(wins, episodes),
        "mean_score": float(np.mean(scores)),
        "illegal_actions": env.illegal,
        "decisions_per_second": round(decisions / seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    if min(args.steps, args.envs, args.learn_step, args.batch_size, args.eval_episodes) < 1:
        parser.error("--steps, --envs, --learn-step, --batch-size, --eval-episodes must be >= 1")
    threads = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    try:
        return run(args)
    finally:
        torch.set_num_threads(threads)  # as it was (main() may run inside a larger process)


def run(args: argparse.Namespace) -> int:
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # AgileRL shuffles minibatches with numpy's global generator
    env = make_vector_env(args)
    env.reset(seed=args.seed)
    learn_step = max(args.envs, min(args.learn_step, args.steps))
    agent = PPO(
        env.single_observation_space,
        env.single_action_space,
        num_envs=args.envs,
        net_config={"encoder_config": {"hidden_size": [args.hidden, args.hidden]}},
        batch_size=args.batch_size,
        lr=args.lr,
        learn_step=learn_step,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        clip_coef=args.clip,
        ent_coef=args.entropy,
        update_epochs=args.epochs,
    )
    before = evaluate(agent, args, min(args.eval_episodes, 200))
    steps, updates, episodes = 0, 0, 0
    last: dict[str, Any] = {}
    start = time.perf_counter()
    while steps < args.steps:
        scores, obs, done, running, info = collect_rollouts(agent, env, **last)
        last = {"last_obs": obs, "last_done": done, "last_scores": running, "last_info": info}
        agent.learn()
        steps += learn_step
        updates += 1
        episodes += len(scores)
        if updates % PROGRESS_EVERY == 0:
            print(
                f"update {updates}: {steps:,} steps, {episodes:,} games, "
                f"{time.perf_counter() - start:,.0f} s",
                file=sys.stderr,
                flush=True,
            )
    seconds = time.perf_counter() - start
    illegal = sum(e.illegal for e in env.envs)  # type: ignore[attr-defined]
    checked = sum(e.checked for e in env.envs)  # type: ignore[attr-defined]
    env.close()
    after = evaluate(agent, args, args.eval_episodes)
    if illegal or before["illegal_actions"] or after["illegal_actions"]:
        raise AssertionError("an illegal action was taken: the mask was ignored")
    args.out.mkdir(parents=True, exist_ok=True)
    agent.save_checkpoint(str(args.out / "ppo.pt"))
    command = (
        "python experiments/integrations/agilerl_ppo.py "
        f"--steps {args.steps} --players {args.players} "
        f"--hand-sizes {' '.join(map(str, args.hand_sizes))} --envs {args.envs} "
        f"--learn-step {args.learn_step} --batch-size {args.batch_size} --epochs {args.epochs} "
        f"--eval-episodes {args.eval_episodes} --seed {args.seed} --out {args.out}"
    )
    result = {
        "library": "AgileRL PPO (collect_rollouts + learn, info['action_mask'])",
        "versions": {
            "agilerl": AGILERL_VERSION,
            "torch": torch.__version__,
            "gymnasium": gymnasium.__version__,
            "craits": craits_env.__version__,
            "python": platform.python_version(),
        },
        "env": {k: (v.to_dict() if k == "rules" else v) for k, v in env_kwargs(args).items()},
        "hyperparameters": {k: getattr(args, k) for k in HYPERPARAMETERS},
        "steps": steps,
        "episodes": episodes,
        "updates": updates,
        "train_seconds": round(seconds, 1),
        "steps_per_second": round(steps / seconds, 1),
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
                "# AgileRL masked PPO on craits/Craits-v0 (no glue: info['action_mask'])",
                "",
                f"One learner against {args.players - 1} x `random`, {args.players} players, "
                f"hands {tuple(args.hand_sizes)}; {steps:,} learner steps ({episodes:,} games, "
                f"{updates} updates, {args.envs} envs) in {seconds:,.0f} s "
                f"({result['steps_per_second']:,.0f} steps/s); agilerl {AGILERL_VERSION}, "
                f"torch {torch.__version__}. {checked:,} training actions checked against "
                "their masks: none illegal; none in evaluation either.",
                "",
                "Evaluation: the policy (sampling, as `get_action` does) on held-out seeds.",
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
