"""The Gymnasium and SB3 vector faces of the batched engine against the single Gym view, in one run.

1. **Gymnasium**: environment steps per second (learner steps, summed over the rows) of
   ``gymnasium.make_vec("craits/Craits-v0", num_envs=N, vectorization_mode="vector_entry_point",
   opponents=["expert"] * 3)`` against ``vectorization_mode="sync"`` (gymnasium's
   ``SyncVectorEnv`` of the single view, the same opponents as Python bots), the learner
   playing a random legal action in every row, for each N of ``--sizes``.
2. **SB3**: sb3-contrib ``MaskablePPO``'s rollout collection (``learn`` timed between its
   rollouts' start and end, 64 steps per row, the policy sampling masked actions) on
   :class:`craits_env.integrations.sb3.CraitsVecEnv` against
   ``make_vec_env`` of the single view (SB3's ``DummyVecEnv``), the same policy weights, for
   each N of ``--sb3-sizes``.

Each measurement runs for ``--seconds``; the two sides alternate ``--rounds`` times and each
side's median is kept (the machine may be shared); the ratios are of the same run.
Usage::

    python experiments/bench_vector_faces.py --out experiments/results/vector_faces
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from craits_env import GYM_ENV_ID

OPPONENTS = ["expert"] * 3


def gym_rate(mode: str, num_envs: int, seconds: float) -> float:
    """Learner steps per second of a make_vec env of ``mode``, random legal actions."""
    env = gymnasium.make_vec(
        GYM_ENV_ID, num_envs=num_envs, vectorization_mode=mode, opponents=OPPONENTS, flat_obs=True
    )
    _, infos = env.reset(seed=0)
    rng = np.random.default_rng(0)
    steps = 0
    start = time.perf_counter()
    while True:
        mask = infos["action_mask"].astype(bool)
        noise = rng.random(mask.shape) * mask  # a random legal action; 0 where none (reset)
        _, _, _, _, infos = env.step(noise.argmax(1))
        steps += num_envs
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            env.close()
            return steps / elapsed


def sb3_rate(env: Any, weights: dict[str, Any] | None, seconds: float) -> tuple[float, Any]:
    """Steps per second of MaskablePPO's rollout collection on ``env`` (n_steps=64; the
    updates between rollouts, with learning rate 0 so the policy stays the same, not timed)."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    class RolloutClock(BaseCallback):
        """Times the rollouts only; stops learning once they took ``seconds``."""

        def __init__(self) -> None:
            super().__init__()
            self.seconds, self.steps, self.since = 0.0, 0, 0.0

        def _on_rollout_start(self) -> None:
            self.since = time.perf_counter()

        def _on_rollout_end(self) -> None:
            self.seconds += time.perf_counter() - self.since

        def _on_step(self) -> bool:
            self.steps += env.num_envs
            return self.seconds + time.perf_counter() - self.since < seconds

    model = MaskablePPO(
        "MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, learning_rate=0.0, seed=0,
        device="cpu",
    )  # fmt: skip
    if weights is not None:
        model.policy.load_state_dict(weights)
    clock = RolloutClock()
    model.learn(10**9, callback=clock)
    env.close()
    return clock.steps / (clock.seconds + time.perf_counter() - clock.since), (
        model.policy.state_dict()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 64, 256, 1024])
    parser.add_argument("--sb3-sizes", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    import torch
    from stable_baselines3.common.env_util import make_vec_env

    from craits_env.integrations.sb3 import CraitsVecEnv

    torch.set_num_threads(1)
    gym_vector_env = "gymnasium.make_vec vector_entry_point"
    gym_sync_env = "gymnasium.make_vec sync (single view)"
    sb3_ours = "CraitsVecEnv"
    sb3_theirs = "make_vec_env (single view)"
    rows: list[dict[str, Any]] = []
    gym_rate("vector_entry_point", 4, 0.1)  # the compiled kernels loaded before timing
    for n in args.sizes:
        pairs = [
            (gym_rate("vector_entry_point", n, args.seconds), gym_rate("sync", n, args.seconds))
            for _ in range(args.rounds)
        ]
        ours, theirs = (statistics.median(side) for side in zip(*pairs, strict=True))
        rows.append({"face": "gymnasium", "num_envs": n, "vector": ours, "single": theirs})
        print(f"gymnasium N={n}: {gym_vector_env} {ours:,.0f}/s, {gym_sync_env} {theirs:,.0f}/s, "
              f"{ours / theirs:.1f}x", flush=True)  # fmt: skip
    for n in args.sb3_sizes:
        pairs, weights = [], None
        for _ in range(args.rounds):
            vector_env = CraitsVecEnv(num_envs=n, opponents=OPPONENTS, flat_obs=True)
            ours, weights = sb3_rate(vector_env, weights, args.seconds)
            single = make_vec_env(
                GYM_ENV_ID, n_envs=n, seed=0, env_kwargs={"opponents": OPPONENTS, "flat_obs": True}
            )
            theirs, _ = sb3_rate(single, weights, args.seconds)
            pairs.append((ours, theirs))
        ours, theirs = (statistics.median(side) for side in zip(*pairs, strict=True))
        rows.append({"face": "sb3", "num_envs": n, "vector": ours, "single": theirs})
        print(f"sb3 MaskablePPO rollouts N={n}: {sb3_ours} {ours:,.0f}/s, "
              f"{sb3_theirs} {theirs:,.0f}/s, {ours / theirs:.1f}x", flush=True)  # fmt: skip
    if args.out is None:
        return
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {"python": platform.python_version(), "machine": platform.machine(),
            "seconds": args.seconds, "rounds": args.rounds, "opponents": OPPONENTS}  # fmt: skip
    (args.out / "results.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    lines = [
        "# The vector faces against the single Gym view",
        "",
        "`python experiments/bench_vector_faces.py --out experiments/results/vector_faces`"
        f" (`--seconds {args.seconds:g}` per measurement, the sides alternated, medians of "
        f"`--rounds {args.rounds}`; one run). The learner against three "
        "`expert` (compiled in the vector faces, the Python bots in the single view); steps are "
        "the learner's, summed over the rows, per second.",
        "",
        "| face | N | vector face (steps/s) | single view (steps/s) | ratio |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['face']} | {row['num_envs']} | {row['vector']:,.0f} | {row['single']:,.0f} "
            f"| {row['vector'] / row['single']:.1f}x |"
        )
    lines += [
        "",
        f"Gymnasium: `{gym_vector_env}` against `{gym_sync_env}`, random legal learner actions. "
        f"SB3: sb3-contrib `MaskablePPO.learn`'s rollouts timed (n_steps=64, the same policy "
        f"weights, learning rate 0, torch on one CPU thread) on `{sb3_ours}` against "
        f"`{sb3_theirs}`.",
    ]
    (args.out / "results.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
