"""Tianshou and TorchRL train on the AEC ``craits_v0`` through their own PettingZoo wrappers,
with no glue: each example under experiments/integrations runs a few hundred steps against
the installed library (installed by the project's extras — never skipped), honours every
action mask, and writes its results files. The mask checks themselves are checked: an
action outside the mask is counted."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.experiments.test_integrations import load_example

pytestmark = pytest.mark.slow  # RL libraries training

SHORT = ["--hand-sizes", "3", "2", "1", "--players", "2"]


def test_tianshou_multi_agent_dqn_trains_and_evaluates(tmp_path: Path) -> None:
    example = load_example("tianshou_dqn")
    assert (
        example.main(
            [
                "--steps",
                "400",
                "--envs",
                "2",
                "--eval-episodes",
                "3",
                "--buffer-size",
                "2000",
                *SHORT,
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    result = json.loads((tmp_path / "results.json").read_text())
    assert result["steps"] >= 400 and result["after"]["episodes"] == 3
    assert result["gradient_steps"] > 0 and result["illegal_actions_in_buffer"] == 0
    assert result["before"]["illegal_actions"] == result["after"]["illegal_actions"] == 0
    assert 0 <= result["after"]["win_rate"] <= 1 and result["collect_steps_per_second"] > 0
    assert set(result["versions"]) >= {"tianshou", "torch", "pettingzoo"}
    assert (tmp_path / "learner.pt").is_file()
    assert "PettingZooEnv" in (tmp_path / "results.md").read_text()


def test_tianshou_wrapper_reads_the_mask_and_the_check_counts_illegal_actions() -> None:
    from tianshou.data import Batch, Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv

    example = load_example("tianshou_dqn")
    kwargs = {"num_players": 2, "rules": example.craits_env.Rules(hand_sizes=(1,))}
    env = example.make_env(kwargs)
    obs, _ = env.reset(seed=0)
    legal = example.craits_v0.env(**kwargs)
    legal.reset(seed=0)
    assert obs["agent_id"] == legal.agent_selection
    assert np.array_equal(obs["mask"], legal.observe(legal.agent_selection)["action_mask"] == 1)
    venv = DummyVectorEnv([lambda: example.make_env(kwargs)])
    buffer = VectorReplayBuffer(100, 1)

    class Unmasked:  # plays action 0 whatever the mask says
        def __call__(self, batch: Batch, state: object = None, **_: object) -> Batch:
            return Batch(act=np.zeros(len(batch.obs.mask), dtype=int))

    args = example.make_parser().parse_args(["--hidden", "8", "--out", "unused"])
    algorithm = example.build(args, env)
    algorithm.policy.forward = Unmasked()  # type: ignore[method-assign]
    Collector[CollectStats](algorithm, venv, buffer).collect(n_step=5, reset_before_collect=True)
    assert example.check_masks(buffer) > 0


def test_torchrl_masked_ppo_trains_and_evaluates(tmp_path: Path) -> None:
    example = load_example("torchrl_ppo")
    assert (
        example.main(
            [
                "--steps",
                "400",
                "--frames-per-batch",
                "200",
                "--eval-episodes",
                "2",
                "--minibatch",
                "64",
                *SHORT,
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    result = json.loads((tmp_path / "results.json").read_text())
    assert result["steps"] == 400 and 0 < result["learner_steps"] < 400
    assert result["gradient_steps"] > 0 and result["illegal_actions_in_training"] == 0
    assert result["before"]["illegal_actions"] == result["after"]["illegal_actions"] == 0
    assert 0 <= result["after"]["win_rate"] <= 1 and result["collect_steps_per_second"] > 0
    assert set(result["versions"]) >= {"torchrl", "tensordict", "torch", "pettingzoo"}
    assert (tmp_path / "learner.pt").is_file()
    assert "PettingZooWrapper" in (tmp_path / "results.md").read_text()


def test_torchrl_wrapper_reads_the_mask_and_the_check_counts_illegal_actions() -> None:
    import torch
    from tensordict.nn import TensorDictSequential

    example = load_example("torchrl_ppo")
    kwargs = {"num_players": 2, "rules": example.craits_env.Rules(hand_sizes=(1,))}
    env = example.make_env(kwargs, seed=0)
    td = env.reset(seed=0)
    legal = example.craits_v0.env(**kwargs)
    legal.reset(seed=0)
    seat = legal.agent_selection
    assert bool(td[seat, "mask"].all())  # the acting seat
    expected = torch.as_tensor(legal.observe(seat)["action_mask"] == 1)
    assert torch.equal(td[seat, "action_mask"].reshape(-1), expected)
    policy = TensorDictSequential(*(example.random_masked(g) for g in env.group_map))
    data = env.rollout(20, policy, break_when_any_done=False)
    assert example.illegal_actions(data, list(env.group_map)) == 0
    data[seat, "action"] = torch.zeros_like(data[seat, "action"])  # action 0, mask or not
    illegal = data[seat, "mask"].reshape(-1) & ~data[seat, "action_mask"].reshape(-1, 59)[:, 0]
    assert example.illegal_actions(data, [seat]) == int(illegal.sum()) > 0
