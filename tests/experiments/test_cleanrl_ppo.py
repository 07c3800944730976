"""The one-file masked PPO on the batched engine (experiments/cleanrl_ppo.py): its advantages
over each seat's own chain of decisions, exactly, and a short run end to end."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from experiments import cleanrl_ppo
from experiments.cleanrl_ppo import Config, gae

ROOT = Path(__file__).resolve().parents[2]


def test_advantages_follow_each_seats_chain() -> None:
    # One game, three steps: seat A decides at t=0 and t=2, seat B at t=1. A's chain runs
    # t=0 -> t=2 and its game ends after t=2; B's decision is still open: bootstrapped (0.5).
    c = Config(gamma=0.9, gae_lambda=0.8)
    rew = np.array([[1.0], [0.0], [2.0]], np.float32)
    val = np.array([[0.3], [0.1], [0.7]], np.float32)
    nxt = np.array([[2], [-1], [-1]], np.int64)
    term = np.array([[0.0], [0.0], [1.0]], np.float32)
    boot = np.array([[9.0], [0.5], [9.0]], np.float32)  # only B's (t=1) is read
    adv, ret = gae(c, rew, val, nxt, term, boot)
    a2 = 2.0 - 0.7  # terminal: no next value
    a1 = 0.0 + 0.9 * 0.5 - 0.1  # bootstrapped, nothing after it
    a0 = 1.0 + 0.9 * 0.7 - 0.3 + 0.9 * 0.8 * a2  # A's next decision is t=2, not t=1
    assert adv[:, 0].tolist() == pytest.approx([a0, a1, a2])
    assert ret[:, 0].tolist() == pytest.approx([a0 + 0.3, a1 + 0.1, a2 + 0.7])


@pytest.mark.slow
def test_every_reward_reaches_the_seat_it_was_paid_to(monkeypatch: pytest.MonkeyPatch) -> None:
    # Record each rollout's rewards as gae receives them, and the engine's payments.
    paid, booked = [], []
    real_gae, real_step = cleanrl_ppo.gae, cleanrl_ppo.VectorGame.step

    def spy_gae(c, rew, val, nxt, term, boot):  # type: ignore[no-untyped-def]
        booked.append(float(rew.sum()))
        return real_gae(c, rew, val, nxt, term, boot)

    def spy_step(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        rewards, done = real_step(self, *args, **kwargs)
        paid.append(rewards.copy())
        return rewards, done

    monkeypatch.setattr(cleanrl_ppo, "gae", spy_gae)
    monkeypatch.setattr(cleanrl_ppo.VectorGame, "step", spy_step)
    c = Config(num_envs=8, num_steps=200, total_decisions=8 * 200, num_minibatches=4)
    cleanrl_ppo.train(c)
    # One rollout from the deal: every seat decides in a game's first hand (8 cards) before
    # any hand ends, so every payment finds its seat's open decision: nothing is lost (a
    # payment before a seat's first decision of a rollout belongs to the last bootstrap).
    assert len(booked) == 1 and len(paid) == 200
    assert any(np.any(r != 0) for r in paid)  # hands did end
    assert math.isclose(booked[0], float(np.sum(paid, dtype=np.float64)), abs_tol=1e-3)


@pytest.mark.slow
def test_a_short_run_writes_its_results(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "experiments/cleanrl_ppo.py", "--num-envs", "16", "--num-steps", "32",
         "--total-decisions", "1024", "--num-minibatches", "4", "--eval-deals", "6",
         "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads((out / "results.json").read_text())
    assert [p["decisions"] for p in result["curve"]] == [512, 1024]
    ev = result["eval_vs_3_expert"]
    assert (ev["deals"], ev["games"]) == (6, 24)
    assert 0.0 <= ev["win_share"]["mean"] <= 1.0
    assert ev["mean_score"]["mean"] > 0
    assert (out / "agent.pt").stat().st_size > 100_000
