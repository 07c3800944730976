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
    env = gymnasium.make(
        GYM_ENV_ID, num_players=3, opponents=["random", "random"], seat=1, rules=Rules.short_game()
    )
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

    env = gymnasium.make(
        GYM_ENV_ID, num_players=2, opponents=[opponent], seat=0, rules=Rules(hand_sizes=(4,))
    )
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


@pytest.mark.slow
@pytest.mark.parametrize(
    "vector_cls", [gymnasium.vector.SyncVectorEnv, gymnasium.vector.AsyncVectorEnv]
)
def test_vector_envs(vector_cls: type) -> None:
    fns = [
        lambda: gymnasium.make(GYM_ENV_ID, num_players=3, rules=Rules(hand_sizes=(3, 2)))
        for _ in range(2)
    ]
    venv = vector_cls(fns)
    try:
        obs, _ = venv.reset(seed=7)
        assert obs["observation"].shape[0] == 2 and obs["action_mask"].shape == (2, 59)
        r = random.Random(0)
        episodes = 0
        for _ in range(400):
            actions = [
                int(r.choice(np.flatnonzero(m))) if m.any() else 0 for m in obs["action_mask"]
            ]
            obs, _rewards, terminated, truncated, _ = venv.step(np.array(actions))
            episodes += int(terminated.sum() + truncated.sum())
        assert episodes >= 2
    finally:
        venv.close()


@pytest.mark.slow
def test_bot_opponents_by_spec() -> None:
    env = gymnasium.make(
        GYM_ENV_ID,
        num_players=4,
        opponents=["greedy", "expert", "pimc:4"],
        seat=0,
        rules=Rules(hand_sizes=(4, 2)),
    )
    _, steps, _ = play(env, 11)
    assert env.unwrapped.aec.game.is_over and steps >= 1


# ----------------------------------------------------------------------------- zero glue


SHORT = Rules(hand_sizes=(3, 2, 1))


def test_action_masks_through_the_wrappers_is_the_pending_decision() -> None:
    env = gymnasium.make(GYM_ENV_ID, num_players=3, opponents="greedy", rules=SHORT)
    obs, info = env.reset(seed=4)
    for getter in (env.unwrapped.action_masks, env.get_wrapper_attr("action_masks")):
        mask = getter()
        assert mask.dtype == bool and mask.shape == (59,)
        np.testing.assert_array_equal(mask, obs["action_mask"].astype(bool))
        np.testing.assert_array_equal(mask, info["action_mask"].astype(bool))
    game = env.unwrapped.aec.game
    assert sorted(np.flatnonzero(mask)) == sorted(game.legal_actions())
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(first_legal(obs))
        done = terminated or truncated
        assert (env.unwrapped.action_masks() == obs["action_mask"].astype(bool)).all()
    assert not env.unwrapped.action_masks().any()  # no decision pending at the end


def test_the_last_info_carries_the_results() -> None:
    env = gymnasium.make(GYM_ENV_ID, num_players=4, opponents="random", rules=SHORT, seat=2)
    obs, info = env.reset(seed=1)
    assert "winners" not in info and info["seat"] == 2
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(first_legal(obs))
        done = terminated or truncated
        if not done:
            assert "winners" not in info
    game = env.unwrapped.aec.game
    assert info["winners"] == game.winners() and info["scores"] == list(game.scores)
    assert info["seat"] == 2 and info["hand_points"] == [h[2] for h in game.hand_points]
    assert len(info["hand_points"]) == 3
    assert info["place"] == 1 + sum(s < game.scores[2] for s in game.scores)
    assert (info["place"] == 1) == (2 in info["winners"])


def test_flat_observations_are_a_box_with_the_mask_beside() -> None:
    env = gymnasium.make(GYM_ENV_ID, num_players=3, opponents="random", flat_obs=True)
    assert isinstance(env.observation_space, gymnasium.spaces.Box)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped, skip_render_check=True)
    dict_env = gymnasium.make(GYM_ENV_ID, num_players=3, opponents="random")
    obs, info = env.reset(seed=7)
    dobs, _ = dict_env.reset(seed=7)
    np.testing.assert_array_equal(obs, dobs["observation"])  # the same vector
    np.testing.assert_array_equal(info["action_mask"], dobs["action_mask"])
    assert env.observation_space.contains(obs)
    with pytest.raises(ValueError, match="flat_obs: got 'yes'"):
        gymnasium.make(GYM_ENV_ID, flat_obs="yes")


@pytest.mark.slow
def test_bounded_rewards_stay_in_the_open_unit_interval_and_keep_the_order() -> None:
    from craits_env.rewards import hand_rewards

    points = [0, 35, 1200, 8]
    bounded, relative = hand_rewards(points, "bounded"), hand_rewards(points, "relative")
    assert all(-1 < r < 1 for r in bounded)
    assert np.argsort(bounded).tolist() == np.argsort(relative).tolist()
    assert np.sign(bounded).tolist() == np.sign(relative).tolist()
    env = gymnasium.make(GYM_ENV_ID, num_players=4, opponents="random", reward="bounded")
    for seed in range(5):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(first_legal(obs))
            done = terminated or truncated
            assert -3 < reward < 3  # a few hands may end between two of the learner's moves


def test_sb3_make_vec_env_works_unchanged() -> None:
    from stable_baselines3.common.env_util import make_vec_env  # the integrations extra

    vec = make_vec_env(GYM_ENV_ID, n_envs=2, seed=0, env_kwargs={"num_players": 2, "rules": SHORT})
    obs = vec.reset()
    assert obs["observation"].shape[0] == 2
    masks = np.stack(vec.env_method("action_masks"))
    assert masks.shape == (2, 59) and masks.any(1).all()
    vec.close()


def test_rgb_array_is_the_table_from_the_learners_seat() -> None:
    from craits_env.render_rgb import picture_shape, table_picture

    env = gymnasium.make(
        GYM_ENV_ID, num_players=4, opponents="random", seat=1, render_mode="rgb_array"
    )
    obs, _ = env.reset(seed=3)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.shape == picture_shape(4)
    np.testing.assert_array_equal(frame, table_picture(env.unwrapped.aec.game, 1))
    obs, *_ = env.step(first_legal(obs))
    assert env.render().shape == picture_shape(4)
    with (
        pytest.warns(UserWarning, match="render_mode='png' that is not in the possible"),
        pytest.raises(ValueError, match="render_mode: got 'png'"),
    ):  # gymnasium.make warns first, then the environment refuses in one line
        gymnasium.make(GYM_ENV_ID, render_mode="png")


@pytest.mark.slow
def test_reset_never_returns_a_game_that_ended_before_the_learner_decided() -> None:
    """With one-card hands a third of 4-player deals end before the learner's turn: reset
    deals the next game from the same generator (reproducibly) and counts the skipped."""
    env = gymnasium.make(GYM_ENV_ID, num_players=4, rules=Rules(hand_sizes=(1,)))
    skipped = []
    for seed in range(300):
        obs, info = env.reset(seed=seed)
        assert env.unwrapped.action_masks().any() and obs["action_mask"].any()
        skipped.append(info["skipped_games"])
    assert sum(s > 0 for s in skipped) > 50  # the case is common, not hypothetical
    again = [env.reset(seed=seed)[1]["skipped_games"] for seed in range(300)]
    assert again == skipped
    reward = env.step(int(np.flatnonzero(obs["action_mask"])[0]))[1]
    assert isinstance(reward, float)


def test_a_reward_paid_before_the_first_decision_is_in_resets_info_and_none_is_lost() -> None:
    """Hands of one card, then two: where the opponents end the first hand before the
    learner's turn, its reward is ``reset``'s ``info["reward_before_first_move"]``; that plus
    the episode's rewards is the learner's ``"score"`` reward of every hand (−points / 100)."""
    env = gymnasium.make(
        GYM_ENV_ID, num_players=4, opponents="greedy", reward="score",
        rules=Rules(hand_sizes=(1, 2)),
    )  # fmt: skip
    before = []
    for seed in range(40):
        obs, info = env.reset(seed=seed)
        total, done = info["reward_before_first_move"], False
        if total:
            before.append(seed)
        r = random.Random(seed)
        while not done:
            legal = np.flatnonzero(obs["action_mask"])
            obs, reward, terminated, truncated, _ = env.step(int(legal[r.randrange(legal.size)]))
            total, done = total + reward, terminated or truncated
        game, seat = env.unwrapped.aec.game, env.unwrapped.seat
        assert game.is_over
        assert total == pytest.approx(-sum(p[seat] for p in game.hand_points) / 100)
    assert len(before) >= 3  # the case is met, not hypothetical
