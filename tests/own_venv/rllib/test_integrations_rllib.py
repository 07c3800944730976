"""RLlib (ray[rllib], new API stack) trains on ``craits_v0`` through
``craits_env.integrations.rllib`` and nothing else: the example runs a few hundred env steps
against the installed library on a local Ray, every sampled action is checked against the
mask it answered (and the check is shown to count an illegal one), and the cause of the
"IndexError: list index out of range" the unadapted environment gave is pinned down.

Runs in ``.venv-rllib`` by ``make test-rllib`` (see tests/own_venv/conftest.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import ray
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

from craits import localray
from craits.agents.arena import play_game
from craits_env import Game, Rules, craits_v0
from craits_env.integrations import rllib as craits_rllib
from tests.experiments.test_integrations import load_example

SHORT = {"num_players": 4, "rules": Rules(hand_sizes=(1,))}


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    """One local Ray for the module: two CPUs, no dashboard, no address (nothing remote)."""
    localray.init(num_cpus=2, log_to_driver=False)
    yield
    ray.shutdown()


def small_config(**kwargs: object) -> Any:
    config = craits_rllib.ppo_config(rules=SHORT["rules"], seed=0, **kwargs)  # type: ignore[arg-type]
    return config.training(train_batch_size_per_learner=200, minibatch_size=64, num_epochs=1)


@pytest.fixture(scope="module")
def local_algo(local_ray: None) -> Iterator[Any]:
    """An untrained PPO whose env runner is local (``env_runners=0``)."""
    algo = small_config(env_runners=0).build_algo()
    yield algo
    algo.stop()


def test_rllib_ppo_example_trains_and_evaluates(tmp_path: Path) -> None:
    example = load_example("rllib_ppo")
    assert (
        example.main(
            [
                "--steps",
                "400",
                "--batch",
                "200",
                "--minibatch",
                "64",
                "--epochs",
                "1",
                "--eval-episodes",
                "3",
                "--env-runners",
                "1",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    result = json.loads((tmp_path / "results.json").read_text())
    assert result["steps"] >= 400 and result["iterations"] >= 2
    assert result["illegal_actions_in_training"] == 0
    assert 0 < result["checked_actions_in_training"] <= result["steps"]
    assert result["before"]["illegal_actions"] == result["after"]["illegal_actions"] == 0
    assert result["after"]["episodes"] == 3 and 0 <= result["after"]["win_rate"] <= 1
    assert set(result["versions"]) >= {"ray", "torch", "gymnasium", "pettingzoo"}
    assert (tmp_path / "learner.pt").is_file()
    text = (tmp_path / "results.md").read_text()
    assert "PettingZooEnv" in text and result["command"] in text


def test_observations_carry_rllibs_masking_keys_and_only_the_acting_seat_observes() -> None:
    env = craits_rllib.env_creator({"num_players": 3, "rules": Rules(hand_sizes=(2, 1)).to_dict()})
    reference = craits_v0.env(num_players=3, rules=Rules(hand_sizes=(2, 1)))
    obs, _ = env.reset(seed=5)
    reference.reset(seed=5)
    rng = np.random.default_rng(0)
    steps = 0
    while True:
        (agent,) = obs  # one observer: the seat to act, as craits_v0 says
        assert agent == reference.agent_selection
        expected = reference.observe(agent)
        assert set(obs[agent]) == {"observations", "action_mask"}
        assert obs[agent]["action_mask"].dtype == np.float32
        assert np.array_equal(obs[agent]["action_mask"], expected["action_mask"])
        assert np.array_equal(obs[agent]["observations"], expected["observation"])
        assert env.observation_space[agent].contains(obs[agent])
        action = int(rng.choice(np.flatnonzero(obs[agent]["action_mask"])))
        reference.step(action)
        obs, rewards, terminated, truncated, _ = env.step({agent: action})
        steps += 1
        if terminated["__all__"]:
            break
    assert set(obs) == set(rewards) == {"player_0", "player_1", "player_2"}  # last looks
    assert all(not o["action_mask"].any() for o in obs.values())
    assert not truncated["__all__"] and steps > 3


def test_the_index_error_came_from_rllibs_env_check_stepping_an_unmasked_action() -> None:
    """RLlib's checker steps ``action_space.sample()``: the raw env refuses it (in a remote
    env runner that kills the runner, and the driver's ``get_spaces()[0]`` raises
    IndexError); through ``craits_v0.env()`` it ends the game (PettingZoo's convention)."""
    raw = PettingZooEnv(craits_v0.raw_env(**SHORT))
    for agent in raw.possible_agents:
        raw.get_action_space(agent).seed(0)  # the checker's draw, made repeatable
    with pytest.raises(ValueError, match="gymnasium-style API") as info:
        check_multiagent_environments(raw)
    assert "illegal action" in str(info.value.__cause__)
    adapted = craits_rllib.env_creator(SHORT)
    for agent in adapted.possible_agents:
        adapted.get_action_space(agent).seed(0)
    check_multiagent_environments(adapted)  # passes


def test_a_remote_env_runner_builds_with_rllibs_env_check_on() -> None:
    config = small_config(env_runners=1).environment(disable_env_checking=False)
    algo = config.build_algo()  # the unadapted env: IndexError here
    try:
        runners = algo.train()["env_runners"]
        assert runners["num_env_steps_sampled_lifetime"] >= 200
        assert runners[craits_rllib.ILLEGAL_METRIC] == 0 < runners[craits_rllib.CHECKED_METRIC]
    finally:
        algo.stop()


def test_the_illegal_action_check_counts_actions_drawn_without_the_mask(local_algo: Any) -> None:
    runner = local_algo.env_runner_group.local_env_runner
    masked = runner.sample(num_timesteps=300, random_actions=False)
    assert sum(craits_rllib.illegal_actions(e)[0] for e in masked) == 0
    unmasked = runner.sample(num_timesteps=300, random_actions=True)  # action_space.sample()
    bad, checked = map(sum, zip(*(craits_rllib.illegal_actions(e) for e in unmasked), strict=True))
    assert 0 < bad <= checked
    assert runner.get_metrics()[craits_rllib.ILLEGAL_METRIC] == bad  # what the callback logged


def test_policy_mapping_sends_learning_seats_to_the_learner_and_trains_only_it() -> None:
    config = craits_rllib.ppo_config(num_players=4, learning_seats=(1, 3), env_runners=0)
    mapping = config.policy_mapping_fn
    assert [mapping(f"player_{s}", None) for s in range(4)] == [
        "random",
        "learner",
        "random",
        "learner",
    ]
    assert set(config.policies) == {"learner", "random"}
    assert config.policies_to_train == ["learner"]


def test_masked_random_module_plays_legal_actions_reproducibly() -> None:
    env = craits_rllib.env_creator(SHORT)
    space = env.observation_space["player_0"]
    cls = craits_rllib.MaskedRandomRLModule
    masks = np.zeros((50, 59), dtype=np.float32)
    rng = np.random.default_rng(1)
    for row in masks:
        row[rng.choice(59, size=int(rng.integers(1, 6)), replace=False)] = 1
    batch = {
        "obs": {
            "observations": np.zeros((50, space["observations"].shape[0]), dtype=np.float32),
            "action_mask": masks,
        }
    }

    def actions(seed: int) -> np.ndarray:
        module = cls(
            observation_space=space,
            action_space=env.action_space["player_0"],
            model_config={"seed": seed},
        )
        return module.forward_inference({"obs": dict(batch["obs"])})["actions"]

    first = actions(3)
    assert all(masks[i, a] == 1 for i, a in enumerate(first))
    assert np.array_equal(first, actions(3)) and not np.array_equal(first, actions(4))


def test_rllib_agent_plays_whole_games_with_legal_actions_only(local_algo: Any) -> None:
    agent = craits_rllib.RLlibAgent(local_algo.get_module("learner"))
    for seed in range(3):
        game = Game(4, SHORT["rules"], seed=seed)
        assert play_game(game, [agent] * 4) > 0 and game.is_over  # IllegalAction otherwise


def test_bad_arguments_are_one_line_errors() -> None:
    with pytest.raises(ValueError, match=r"learning_seats: got \[4\], allowed distinct seats"):
        craits_rllib.ppo_config(num_players=4, learning_seats=(4,))
    with pytest.raises(ValueError, match="env_runners: got -1"):
        craits_rllib.ppo_config(env_runners=-1)
    with pytest.raises(ValueError, match=r"env_config: unknown key\(s\) \['players'\]"):
        craits_rllib.env_creator({"players": 4})
