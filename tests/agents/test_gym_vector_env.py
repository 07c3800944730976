"""The Gymnasium vector view on the batched engine (agents/gym_vector_env.py) against the
single Gym view: with the same seeds and learner actions, the same games decision by decision.

``gymnasium.make_vec(..., vectorization_mode="sync")`` is N single views in gymnasium's
``SyncVectorEnv`` (row ``b`` seeded ``seed + b``, next-step autoreset, infos batched by
``_add_info``): the vector env must return exactly what it returns — observations, rewards,
terminations, truncations and every info key with its dtype — step by step.
"""

from __future__ import annotations

import random
from typing import Any

import gymnasium
import numpy as np
import pytest

import craits_env  # noqa: F401  (registers craits/Craits-v0)
from craits.agents.gym_vector_env import VECTOR_OPPONENTS, CraitsVectorEnv
from craits_env import GYM_ENV_ID, Rules
from craits_env.actions import NUM_ACTIONS
from craits_env.testing.random_rules import random_config


def make_vec(num_envs: int, mode: str, **kwargs: Any) -> gymnasium.vector.VectorEnv:
    return gymnasium.make_vec(GYM_ENV_ID, num_envs=num_envs, vectorization_mode=mode, **kwargs)


SAME_STEP = gymnasium.vector.AutoresetMode.SAME_STEP


def same(a: Any, b: Any, where: str) -> None:
    if isinstance(a, dict):
        assert sorted(a) == sorted(b), where
        for key in a:
            same(a[key], b[key], f"{where}[{key!r}]")
        return
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
        return
    a, b = np.asarray(a), np.asarray(b)
    assert (a.dtype, a.shape) == (b.dtype, b.shape), where
    if a.dtype == object:  # lists (winners …), or final_obs: arrays, dicts, None
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if isinstance(x, dict | np.ndarray):
                same(x, y, f"{where}[{i}]")
            else:
                assert x == y, f"{where}[{i}]"
    else:
        assert np.array_equal(a, b), where


def lockstep(
    seed: int, num_envs: int, episodes: int, same_step: bool = False, **kwargs: Any
) -> tuple[int, int]:
    """Play the vector env and gymnasium's SyncVectorEnv of single views side by side with
    the same random learner actions until ``episodes`` episodes ended; (decisions, episodes)."""
    if same_step:
        vec = make_vec(num_envs, "vector_entry_point", autoreset_mode="SameStep", **kwargs)
        sync = make_vec(num_envs, "sync", vector_kwargs={"autoreset_mode": SAME_STEP}, **kwargs)
        assert vec.metadata["autoreset_mode"] == SAME_STEP
    else:
        vec = make_vec(num_envs, "vector_entry_point", **kwargs)
        sync = make_vec(num_envs, "sync", **kwargs)
    assert isinstance(vec, CraitsVectorEnv)
    same(vec.reset(seed=seed), sync.reset(seed=seed), "reset")
    r = random.Random(seed)
    decisions = ended = 0
    while ended < episodes:
        mask = vec.action_masks()
        assert np.array_equal(mask, np.asarray(sync.call("action_masks")))
        actions = np.zeros(num_envs, np.int64)  # rows that just ended: ignored (autoreset)
        for b in np.flatnonzero(mask.any(1)):
            legal = np.flatnonzero(mask[b])
            actions[b] = legal[r.randrange(legal.size)]
        got, expected = vec.step(actions), sync.step(actions)
        same(got, expected, f"decision {decisions}")
        decisions += int(mask.any(1).sum())
        ended += int((got[2] | got[3]).sum())
    vec.close()
    sync.close()
    return decisions, ended


def test_one_game_equals_the_single_view_fast() -> None:
    decisions, _ = lockstep(0, 1, 1, num_players=4, opponents="expert", rules=Rules.short_game())
    assert decisions > 20


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"num_players": 3, "opponents": ["greedy", "tactician"], "flat_obs": True},
                     marks=pytest.mark.slow),
        pytest.param({"num_players": 5, "opponents": "random", "reward": "win"},
                     marks=pytest.mark.slow),
        {"num_players": 2, "opponents": "expert", "reward": "bounded", "max_steps": 30},
        {"num_players": 4, "opponents": ["random", "expert", "greedy"], "seat": 2,
         "reward": "score", "auto_forced": True},
    ],
)  # fmt: skip
def test_rows_equal_single_views_seeded_seed_plus_row(kwargs: dict[str, Any]) -> None:
    decisions, ended = lockstep(7, 3, 4, rules=Rules.short_game(), **kwargs)
    assert ended >= 4 and decisions > 40


def test_same_step_autoreset_equals_sync_vector_env_in_that_mode() -> None:
    decisions, ended = lockstep(5, 3, 6, True, num_players=3, opponents=["expert", "random"],
                                rules=Rules.short_game(), max_steps=40)  # fmt: skip
    assert ended >= 6 and decisions > 60


@pytest.mark.parametrize("same_step", [False, True])
def test_an_illegal_action_ends_its_row_as_in_sync_vector_env(same_step: bool) -> None:
    kwargs: dict[str, Any] = {"num_players": 3, "opponents": "expert"}
    if same_step:
        vec = make_vec(3, "vector_entry_point", autoreset_mode="SameStep", **kwargs)
        sync = make_vec(3, "sync", vector_kwargs={"autoreset_mode": SAME_STEP}, **kwargs)
    else:
        vec, sync = make_vec(3, "vector_entry_point", **kwargs), make_vec(3, "sync", **kwargs)
    same(vec.reset(seed=2), sync.reset(seed=2), "reset")
    for step in range(3):
        mask = vec.action_masks()
        actions = np.array([int(np.flatnonzero(m)[0]) if m.any() else 0 for m in mask])
        if step == 0:
            actions[1] = int(np.flatnonzero(~mask[1])[0])  # illegal in row 1
        same(vec.step(actions), sync.step(actions), f"step {step}")


def test_make_vec_gives_the_batched_spaces_and_the_autoreset_mode() -> None:
    env = make_vec(5, "vector_entry_point", num_players=3, opponents="greedy", flat_obs=True)
    assert isinstance(env, gymnasium.vector.VectorEnv)
    assert env.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.NEXT_STEP
    single = gymnasium.make(GYM_ENV_ID, num_players=3, flat_obs=True)
    assert env.single_observation_space == single.observation_space
    assert env.single_action_space == single.action_space
    assert env.observation_space.shape == (5, *single.observation_space.shape)
    assert env.action_space == gymnasium.spaces.MultiDiscrete([59] * 5)
    obs, infos = env.reset(seed=3)
    assert obs.shape == (5, single.observation_space.shape[0]) and obs.dtype == np.float32
    assert infos["action_mask"].shape == (5, 59) and infos["action_mask"].dtype == np.int8
    assert np.array_equal(env.action_masks(), infos["action_mask"].astype(bool))
    assert env.action_masks().any(1).all()
    again, _ = env.reset(seed=3)
    assert np.array_equal(obs, again)
    assert not np.array_equal(obs, env.reset(seed=4)[0])


def test_the_step_after_the_end_starts_the_next_game() -> None:
    env = make_vec(2, "vector_entry_point", num_players=2, opponents="greedy",
                   rules=Rules(hand_sizes=(1,)))  # fmt: skip
    env.reset(seed=0)
    r = random.Random(0)
    for _ in range(200):
        mask = env.action_masks()
        actions = np.array([np.flatnonzero(m)[r.randrange(m.sum())] if m.any() else 0
                            for m in mask])  # fmt: skip
        _, reward, terminated, _, infos = env.step(actions)
        if terminated.any():
            b = int(np.flatnonzero(terminated)[0])
            assert infos["_winners"][b] and infos["_place"][b] and infos["_scores"][b]
            assert not env.action_masks()[b].any()  # no decision pending
            _, reward, terminated2, _, infos = env.step(actions)  # row b's action ignored
            assert reward[b] == 0.0 and not terminated2[b]
            assert infos["_skipped_games"][b] and infos["_reward_before_first_move"][b]
            assert env.action_masks()[b].any()
            return
    raise AssertionError("no game ended")


def test_illegal_action_terminates_the_row_or_raises() -> None:
    env = make_vec(2, "vector_entry_point", num_players=3, opponents="greedy")
    env.reset(seed=1)
    mask = env.action_masks()
    bad = int(np.flatnonzero(~mask[0])[0])
    good = int(np.flatnonzero(mask[1])[0])
    _, reward, terminated, _, infos = env.step(np.array([bad, good]))
    assert reward[0] == -1.0 and terminated[0] and infos["illegal_action"][0]
    assert not infos["_illegal_action"][1] and not env.action_masks()[0].any()
    strict = make_vec(1, "vector_entry_point", num_players=3, illegal_action="raise")
    strict.reset(seed=1)
    bad = int(np.flatnonzero(~strict.action_masks()[0])[0])
    with pytest.raises(ValueError, match=rf"row 0: action {bad} is not legal; legal: \["):
        strict.step(np.array([bad]))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"opponents": "pimc"}, r"got 'pimc', the vector env seats only \['random', 'greedy'"),
        ({"opponents": "ppo:x.pt"}, r"checkpoint x.pt: no such file"),
        ({"opponents": "champion", "num_players": 3}, r"champion was trained for 4 players"),
        ({"opponents": "champion-search"}, r"got 'champion-search', the vector env seats only"),
        ({"opponents": ["random"]}, r"opponents: got 1, need 3 for 4 players"),
        ({"seat": 4}, r"seat: got 4, allowed None or a seat from 0 to 3"),
        ({"reward": "wins"}, r"reward"),
        ({"render_mode": "human"}, r"render_mode: got 'human', allowed None"),
        ({"autoreset_mode": "Disabled"}, r"autoreset_mode: got 'Disabled', allowed"),
    ],
)
def test_refused_in_one_line(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CraitsVectorEnv(2, **kwargs)
    assert VECTOR_OPPONENTS == ("random", "greedy", "tactician", "expert", "champion", "ppo:PATH")


@pytest.mark.slow
def test_networks_play_their_single_view_moves(tmp_path: Any) -> None:
    """Frozen networks as opponents, one batched forward pass a round: ``champion`` (the
    belief features from the compiled memory), its checkpoint as ``ppo:PATH``, and a small
    standard-observation checkpoint, each move as the single view's PPOAgent plays it."""
    from tests.champion_checkpoint import champion_checkpoint
    from tests.training.test_vector_selfplay import write_checkpoint

    rules = Rules.short_game()
    small = write_checkpoint(tmp_path / "small.pt", 3, {}, seed=4)
    decisions, ended = lockstep(3, 3, 3, num_players=3, opponents=[small, "expert"], rules=rules)
    assert ended >= 3 and decisions > 40
    checkpoint = f"ppo:{champion_checkpoint()}"
    opponents = ["champion", checkpoint, "random"]
    decisions, ended = lockstep(5, 3, 3, num_players=4, opponents=opponents, rules=rules)
    assert ended >= 3 and decisions > 40


@pytest.mark.slow
def test_random_option_games_equal_the_single_view() -> None:
    """Many games of random options (2-10 players, one and two decks), every reward mode,
    the four opponents, fixed and drawn seats, one row and several."""
    r = random.Random(40)
    total = 0
    for i in range(100):
        n, rules = random_config(r)
        kwargs: dict[str, Any] = {
            "num_players": n,
            "rules": rules,
            "opponents": [r.choice(VECTOR_OPPONENTS[:4]) for _ in range(n - 1)],  # the bots
            "seat": r.choice([None, r.randrange(n)]),
            "reward": r.choice(["relative", "bounded", "score", "win"]),
            "flat_obs": r.random() < 0.5,
            "auto_forced": r.random() < 0.3,
        }
        if r.random() < 0.2:
            kwargs["max_steps"] = r.randint(5, 80)
        decisions, _ = lockstep(i, r.choice([1, 1, 3]), 3, r.random() < 0.3, **kwargs)
        total += decisions
    assert total > 10_000


def test_rewards_beyond_53_bits_are_left_to_python_and_still_paid(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A hand whose points need exact integers (a seat past EXACT_PRESSURES shuffle pressures,
    R10.1) stops the compiled loop (PAY) and is paid by Python on exact integers: each step
    that finished one hand pays the learner that hand's reward of its exact points."""
    from craits.agents import gym_vector_env
    from craits_env.rewards import hand_rewards
    from craits_env.vector.layout import S_PRESSURES, S_PRESSURES_AT_DEAL

    paid_by_python = []
    real_group_reward = gym_vector_env.CraitsVectorEnv._group_reward

    def spy(self, b, first_hand, over):  # type: ignore[no-untyped-def]
        paid_by_python.append(b)
        return real_group_reward(self, b, first_hand, over)

    rows, n = 8, 4
    env = make_vec(rows, "vector_entry_point", opponents="expert", rules=Rules.short_game())
    env.reset(seed=11)
    vg = env.unwrapped.game
    vg.state.st[:, S_PRESSURES : S_PRESSURES + n] = 50  # 5 * (2**50 - 1) points each (R10.1)
    vg.state.st[:, S_PRESSURES_AT_DEAL : S_PRESSURES_AT_DEAL + n] = 50
    monkeypatch.setattr(gym_vector_env.CraitsVectorEnv, "_group_reward", spy)
    r = random.Random(11)
    checked = 0
    for _ in range(100):
        mask = env.action_masks()
        actions = [np.flatnonzero(m)[r.randrange(m.sum())] if m.any() else 0 for m in mask]
        hands = vg.hands_finished()
        _, rewards, terminated, truncated, infos = env.step(np.array(actions))
        one = (vg.hands_finished() == hands + 1) & ~terminated & ~truncated
        for b in np.flatnonzero(one):
            exact = vg.hand_points(b)[-1]
            assert rewards[b] == hand_rewards(exact, "relative")[infos["seat"][b]]
            checked += 1
    assert checked >= 8 and len(paid_by_python) >= checked


def test_a_near_tie_of_the_batch_is_decided_by_the_one_input_pass() -> None:
    from craits.agents.gym_vector_env import argmax_moves

    class Net:  # the batch's float32 sums put action 3 ahead; the one-input pass, action 1
        def logits(self, x: np.ndarray) -> np.ndarray:
            out = np.zeros((*x.shape[:-1], NUM_ACTIONS), np.float32)
            out[..., 1], out[..., 3], out[..., 5] = 2.0, 2.0 - 1e-6, 9.0
            if x.ndim == 2:
                out[:, 3] = 2.0 + 1e-6
            return out

    mask = np.zeros((3, NUM_ACTIONS), np.int8)
    mask[0, [1, 3]] = 1  # a near tie: decided again, action 1
    mask[1, [1, 3, 5]] = 1  # 5 is far ahead: the batch's argmax stands
    mask[2, 3] = 1  # one legal action
    assert argmax_moves(Net(), np.zeros((3, 4), np.float32), mask).tolist() == [1, 5, 3]
