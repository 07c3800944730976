"""TorchRL through its Gymnasium vector support (issue 40): ``GymWrapper`` over the vector env
on the batched engine, ``ActionMask`` reading the env's masks (docs/lib-torchrl.md)."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
import torch

import craits_env  # noqa: F401  (registers craits/Craits-v0)

pytestmark = pytest.mark.slow


def rollout(seed: int, steps: int) -> tuple[object, object]:
    from torchrl.envs import ActionMask, GymWrapper, TransformedEnv
    from torchrl.envs.libs.gym import set_gym_backend

    vec = gymnasium.make_vec(
        "craits/Craits-v0", num_envs=4, vectorization_mode="vector_entry_point",
        opponents="expert", flat_obs=True, autoreset_mode="SameStep",
    )  # fmt: skip
    with set_gym_backend("gymnasium"), warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Nested TransformedEnvs", UserWarning)
        env = TransformedEnv(GymWrapper(vec), ActionMask())
    env.set_seed(seed)
    torch.manual_seed(seed)
    return env, env.rollout(steps, break_when_any_done=False)


def test_torchrl_rolls_out_legal_reproducible_games_on_the_vector_env() -> None:
    env, played = rollout(3, 300)
    assert tuple(env.batch_size) == (4,)
    assert played.shape == (4, 300)
    nxt = played["next"]
    mask = played["action_mask"].numpy().astype(bool)
    actions = played["action"].numpy()  # one-hot
    assert (actions.sum(-1) == 1).all()
    assert mask[actions.astype(bool)].all()  # every action legal: ActionMask read the masks
    assert "illegal_action" not in nxt.keys()  # noqa: SIM118 (a TensorDict)
    done = nxt["done"].squeeze(-1).numpy()
    assert done.sum() >= 4  # whole games played and dealt again in the same step
    ends = nxt["reward"].squeeze(-1).numpy()[done]
    assert np.isfinite(ends).all()
    _, again = rollout(3, 300)  # the same seeds: the same games, action for action
    assert torch.equal(played["action"], again["action"])
    assert torch.equal(played["next", "observation"], again["next", "observation"])
    assert torch.equal(played["next", "reward"], again["next", "reward"])
    env.close()
