"""The single-agent Gymnasium view craits/Craits-v0."""

from __future__ import annotations

import random
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import craits_env  # noqa: F401  (registers craits/Craits-v0)
from craits_env import GYM_ENV_ID, Rules


def first_legal(obs: dict[str, np.ndarray]) -> int:
    return int(np.flatnonzero(obs["action_mask"])[0])


@pytest.mark.parametrize("num_players", [2, 4])
def test_check_env(num_players: int) -> None:
    env = gymnasium.make(GYM_ENV_ID, num_players=num_players, opponents="random")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped, skip_render_check=True)


def play(env: gymnasium.Env, seed: int) -> tuple[float, int, list[int]]:
    obs, _ = env.reset(seed=seed)
    r = random.Random(seed)
    total, steps, actions = 0.0, 0, []
    while True:
        legal = np.flatnonzero(obs["action_mask"])
        assert legal.size > 0
        a = int(legal[r.randrange(legal.size)])
        actions.append(a)
        obs, reward, terminated, truncated, _info = env.step(a)
        total += reward
        steps += 1
        if terminated or truncated:
            assert not obs["action_mask"].any()
            return total, steps, actions


def test_full_episode_reward_equals_relative_hand_points() -> None:
    env = gymnasium.make(GYM_ENV_ID, num_players=3, opponents=["random", "random"], seat=1,
                         rules=Rules.short_game())  # fmt: skip
    total, steps, _ = play(env, 0)
    game = env.unwrapped.aec.game
    assert game.is_over and steps > 10
    expected = sum(((sum(p) - p[1]) / 2 - p[1]) / 100 for p in game.hand_points)
    assert total == pytest.approx(expected)


def test_same_seed_same_episode_and_seat_drawn_from_seed() -> None:
    make = lambda: gymnasium.make(GYM_ENV_ID, num_players=4, rules=Rules.short_game())  # noqa: E731
    assert play(make(), 3) == play(make(), 3)
    seats = set()
    env = make()
    for s in range(30):
        _, info = env.reset(seed=s)
        seats.add(info["seat"])
        assert env.unwrapped.seat == info["seat"]
    assert seats == {0, 1, 2, 3}


def test_callable_opponents_and_fixed_seat() -> None:
    calls = []

    def opponent(obs: dict[str, np.ndarray]) -> int:
        calls.append(1)
        return first_legal(obs)

    env = gymnasium.make(GYM_ENV_ID, num_players=2, opponents=[opponent], seat=0,
                         rules=Rules(hand_sizes=(4,)))  # fmt: skip
    _obs, info = env.reset(seed=1)
    assert info["seat"] == 0
    play(env, 1)
    assert calls


def test_illegal_action_modes() -> None:
    env = gymnasium.make(GYM_ENV_ID, num_players=3)
    obs, _ = env.reset(seed=0)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    _, reward, terminated, _truncated, info = env.step(illegal)
    assert reward == -1 and terminated and info["illegal_action"]
    strict = gymnasium.make(GYM_ENV_ID, num_players=3, illegal_action="raise")
    obs, _ = strict.reset(seed=0)
    before = strict.unwrapped.snapshot()
    with pytest.raises(ValueError, match="legal"):
        strict.step(illegal)
    assert strict.unwrapped.snapshot() == before


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"opponents": ["random"]}, "opponents"),
        ({"opponents": ["nobody", "random", "random"]}, "unknown agent spec"),
        ({"seat": 4}, "seat"),
        ({"illegal_action": "ignore"}, "illegal_action"),
    ],
)
def test_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gymnasium.make(GYM_ENV_ID, num_players=4, **kwargs)


@pytest.mark.parametrize("vector_cls", [gymnasium.vector.SyncVectorEnv,
                                        gymnasium.vector.AsyncVectorEnv])  # fmt: skip
def test_vector_envs(vector_cls: type) -> None:
    fns = [lambda: gymnasium.make(GYM_ENV_ID, num_players=3, rules=Rules(hand_sizes=(3, 2)))
           for _ in range(2)]  # fmt: skip
    venv = vector_cls(fns)
    try:
        obs, _ = venv.reset(seed=7)
        assert obs["observation"].shape[0] == 2 and obs["action_mask"].shape == (2, 59)
        r = random.Random(0)
        episodes = 0
        for _ in range(400):
            actions = [int(r.choice(np.flatnonzero(m))) if m.any() else 0
                       for m in obs["action_mask"]]  # fmt: skip
            obs, _rewards, terminated, truncated, _ = venv.step(np.array(actions))
            episodes += int(terminated.sum() + truncated.sum())
        assert episodes >= 2
    finally:
        venv.close()


def test_bot_opponents_by_spec() -> None:
    env = gymnasium.make(GYM_ENV_ID, num_players=4, opponents=["greedy", "expert", "pimc:4"],
                         seat=0, rules=Rules(hand_sizes=(4, 2)))  # fmt: skip
    _, steps, _ = play(env, 11)
    assert env.unwrapped.aec.game.is_over and steps >= 1
