"""sb3-contrib's MaskablePPO on ``craits/Craits-v0`` — no glue: the env's ``action_masks()``.

    python experiments/integrations/sb3_maskable_ppo.py --steps 150000 --out DIR

Trains one learner seat against three ``random`` opponents (4 players, the short game)
with Stable-Baselines3's own ``make_vec_env`` and sb3-contrib's ``MaskablePPO``, exactly
as their documentation shows for any masked environment, then plays ``--eval-episodes``
held-out games (seeds not used in training) with the trained policy and reports its win
rate with a 95% interval (Wilson). A coin toss at a 4-seat table wins 0.25. Writes
``DIR/results.json`` and ``DIR/results.md`` (atomically) and the model ``DIR/model.zip``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import sb3_contrib
import stable_baselines3
from sb3_contrib import MaskablePPO
from stable_baselines3.common.env_util import make_vec_env

import craits_env
from craits.agents.report import learning_table
from craits.agents.stats import wilson_interval
from craits_env.fileio import atomic_write_json, atomic_write_text

ENV_KWARGS: dict[str, Any] = {
    "num_players": 4,
    "opponents": "random",
    "rules": craits_env.Rules.short_game(),
    "flat_obs": True,  # an MLP policy on the observation vector; the mask via action_masks()
}
EVAL_SEED = 10_000_000  # held-out episodes: seeds far from the training seeds


def evaluate(model: Any, episodes: int) -> dict[str, Any]:
    """Win rate (shared wins split) and mean game score of the policy over held-out games."""
    env = gymnasium.make("craits/Craits-v0", **ENV_KWARGS)
    wins, scores = 0.0, []
    for e in range(episodes):
        obs, info = env.reset(seed=EVAL_SEED + e)
        done = False
        while not done:
            action, _ = model.predict(
                obs, action_masks=info["action_mask"].astype(bool), deterministic=True
            )
            obs, _, terminated, truncated, info = env.step(int(action))
            done = terminated or truncated
        if info["seat"] in info["winners"]:
            wins += 1 / len(info["winners"])
        scores.append(info["scores"][info["seat"]])
    env.close()
    return {
        "episodes": episodes,
        "win_rate": wins / episodes,
        "win_rate_ci": wilson_interval(wins, episodes),
        "mean_score": float(np.mean(scores)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150_000, help="learner steps (default 150k)")
    parser.add_argument("--envs", type=int, default=4, help="vectorised environments")
    parser.add_argument("--eval-episodes", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True, help="results directory")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.envs < 1 or args.eval_episodes < 1:
        parser.error("--steps, --envs and --eval-episodes must be >= 1")
    vec = make_vec_env("craits/Craits-v0", n_envs=args.envs, seed=args.seed, env_kwargs=ENV_KWARGS)
    model = MaskablePPO(
        "MlpPolicy",
        vec,
        seed=args.seed,
        verbose=0,
        n_steps=max(8, min(512, args.steps // args.envs)),
        batch_size=64,
    )
    before = evaluate(model, min(args.eval_episodes, 200))
    start = time.perf_counter()
    model.learn(total_timesteps=args.steps)
    seconds = time.perf_counter() - start
    after = evaluate(model, args.eval_episodes)
    args.out.mkdir(parents=True, exist_ok=True)
    model.save(args.out / "model.zip")
    command = (
        "python experiments/integrations/sb3_maskable_ppo.py "
        f"--steps {args.steps} --envs {args.envs} --eval-episodes {args.eval_episodes} "
        f"--seed {args.seed} --out {args.out}"
    )
    result = {
        "library": "sb3-contrib MaskablePPO",
        "versions": {
            "stable_baselines3": stable_baselines3.__version__,
            "sb3_contrib": sb3_contrib.__version__,
            "craits": craits_env.__version__,
            "python": platform.python_version(),
        },
        "env": {k: (v.to_dict() if k == "rules" else v) for k, v in ENV_KWARGS.items()},
        "steps": args.steps,
        "train_seconds": round(seconds, 1),
        "before": before,
        "after": after,
        "command": command,
    }
    atomic_write_json(args.out / "results.json", result)
    atomic_write_text(
        args.out / "results.md",
        "\n".join(
            [
                "# sb3-contrib MaskablePPO on craits/Craits-v0 (no glue)",
                "",
                f"One learner against 3 x `random`, 4 players, short game; {args.steps:,} steps in "
                f"{seconds:,.0f} s; stable-baselines3 {stable_baselines3.__version__}, sb3-contrib "
                f"{sb3_contrib.__version__}.",
                "",
                *learning_table(before, after),
                "",
                "A coin toss wins 0.25. Reproduce: `" + command + "`",
                "",
            ]
        ),
    )
    print(json.dumps(after))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
