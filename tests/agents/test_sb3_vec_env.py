"""craits_env.integrations.sb3.CraitsVecEnv: an SB3 VecEnv on the batched engine, the same
games as SB3's DummyVecEnv of single Gym views, and MaskablePPO on it with no wrapper."""

from __future__ import annotations

import random
from typing import Any

import gymnasium
import numpy as np
import pytest
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv

from craits_env import GYM_ENV_ID, Rules
from craits_env.integrations import sb3
from craits_env.integrations.sb3 import CraitsVecEnv

RESULTS = ("seat", "winners", "scores", "place", "hand_points", "TimeLimit.truncated")


def test_the_module_holds_one_vec_env_class() -> None:
    classes = [v for v in vars(sb3).values() if isinstance(v, type) and issubclass(v, VecEnv)]
    assert classes == [VecEnv, CraitsVecEnv] or classes == [CraitsVecEnv, VecEnv]
    assert sb3.__all__ == ["CraitsVecEnv"]


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"num_players": 4, "opponents": ["expert", "greedy", "random"],
                      "flat_obs": True}, marks=pytest.mark.slow),
        {"num_players": 3, "opponents": "tactician", "reward": "win", "max_steps": 25},
    ],
)  # fmt: skip
def test_same_games_as_dummy_vec_env_of_single_views(kwargs: dict[str, Any]) -> None:
    kwargs = {"rules": Rules.short_game(), **kwargs}
    ours = CraitsVecEnv(num_envs=3, **kwargs)
    theirs = DummyVecEnv([lambda: gymnasium.make(GYM_ENV_ID, **kwargs)] * 3)
    ours.seed(11)
    theirs.seed(11)
    same_obs(ours.reset(), theirs.reset())
    r = random.Random(0)
    ended = 0
    while ended < 6:
        masks = np.stack(ours.env_method("action_masks"))
        assert masks.shape == (3, 59) and masks.dtype == bool
        assert np.array_equal(masks, np.stack(theirs.env_method("action_masks")))
        actions = np.array([np.flatnonzero(m)[r.randrange(m.sum())] for m in masks])
        obs, rewards, dones, infos = ours.step(actions)
        obs2, rewards2, dones2, infos2 = theirs.step(actions)
        same_obs(obs, obs2)
        assert np.array_equal(rewards, rewards2) and rewards.dtype == rewards2.dtype
        assert np.array_equal(dones, dones2)
        for b in np.flatnonzero(dones):
            same_obs(infos[b]["terminal_observation"], infos2[b]["terminal_observation"])
            assert [infos[b][k] for k in RESULTS] == [infos2[b][k] for k in RESULTS]
        ended += int(dones.sum())


def same_obs(a: Any, b: Any) -> None:
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for key in a:
            assert np.array_equal(a[key], b[key])
    else:
        assert np.array_equal(a, b) and a.dtype == b.dtype


def test_vec_env_methods() -> None:
    env = CraitsVecEnv(num_envs=4, num_players=2, opponents="greedy", flat_obs=True)
    assert env.reset().shape == (4, env.observation_space.shape[0])
    assert env.get_attr("num_players") == [2] * 4 and env.get_attr("seats", [1, 2])[0].shape == (4,)
    assert env.has_attr("action_masks") and not env.has_attr("no_such_thing")
    assert env.env_is_wrapped(gymnasium.Wrapper) == [False] * 4
    assert len(env.env_method("action_masks", indices=[0, 3])) == 2
    env.set_attr("illegal_action", "raise")
    assert env.get_attr("illegal_action") == ["raise"] * 4
    with pytest.raises(ValueError, match="shared by all games; allowed indices=None"):
        env.set_attr("illegal_action", "terminate", indices=[0])
    assert env.seed(5) == [5, 6, 7, 8]
    first = env.reset()
    env.seed(5)
    assert np.array_equal(env.reset(), first)
    with pytest.raises(ValueError, match="autoreset_mode: SB3 resets in the same step"):
        CraitsVecEnv(num_envs=2, autoreset_mode="NextStep")
    env.close()


@pytest.mark.slow
def test_maskable_ppo_trains_with_no_wrapper() -> None:
    opponents = ["expert", "tactician", "random"]
    # illegal_action="raise": an action outside the mask fails the test
    env = CraitsVecEnv(num_envs=8, opponents=opponents, flat_obs=True, illegal_action="raise")
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=2, seed=0)
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(512)
    assert model.num_timesteps == 512
    after = list(model.policy.parameters())
    assert any(not np.array_equal(a, b.detach()) for a, b in zip(before, after, strict=True))
    env.close()
