"""AgileRL trains on Craits: its masked PPO on the Gymnasium view with no glue
(``info["action_mask"]``, stored by ``collect_rollouts`` and applied by ``learn``), and its
IPPO through ``craits_env.integrations.agilerl`` (the parallel view with the masks in
``infos``). Each example runs a few hundred steps against the installed library, its
policy changes and never plays an illegal action (and the checks count an illegal one);
IPPO reads the view's masks and env-defined actions as the view means them.

Runs in ``.venv-agilerl`` by ``make test-agilerl`` (see tests/own_venv/conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium
import numpy as np
import torch
from agilerl.algorithms import IPPO, PPO
from agilerl.rollouts import collect_rollouts

from craits_env import Rules
from craits_env.integrations.agilerl import WAIT_ACTION, parallel_env
from tests.experiments.test_integrations import load_example


def test_agilerl_ippo_example_trains_and_evaluates(tmp_path: Path) -> None:
    example = load_example("agilerl_ippo")
    assert (
        example.main(
            [
                "--steps",
                "400",
                "--learn-step",
                "200",
                "--batch-size",
                "64",
                "--epochs",
                "1",
                "--eval-episodes",
                "3",
                "--hidden",
                "32",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    result = json.loads((tmp_path / "results.json").read_text())
    assert result["steps"] == 400 and result["updates"] == 2
    assert result["decisions_in_training"] == 400 and result["illegal_actions_in_training"] == 0
    assert result["actor_parameter_change"] > 0
    assert result["before"]["illegal_actions"] == result["after"]["illegal_actions"] == 0
    assert result["after"]["episodes"] == 3 and 0 <= result["after"]["win_rate"] <= 1
    assert set(result["versions"]) >= {"agilerl", "torch", "pettingzoo"}
    assert (tmp_path / "ippo.pt").is_file()
    text = (tmp_path / "results.md").read_text()
    assert "masks in infos" in text and result["command"] in text


def test_ippo_takes_the_masked_action_of_the_seat_to_act_and_the_env_defined_ones() -> None:
    torch.manual_seed(0)
    env = parallel_env(num_players=3, rules=Rules(hand_sizes=(2, 1)))
    agents = env.possible_agents
    ippo = IPPO(
        [env.observation_space(a) for a in agents],
        [env.action_space(a) for a in agents],
        agent_ids=agents,
    )
    assert list(ippo.actors.keys()) == ["player"]  # one policy shared by the seats
    obs, infos = env.reset(seed=3)
    for _ in range(200):
        acting = next(a for a, i in infos.items() if i["env_defined_actions"] is None)
        actions, *_ = ippo.get_action({a: o[None] for a, o in obs.items()}, infos=infos)
        chosen = {a: int(np.asarray(v).reshape(-1)[0]) for a, v in actions.items()}
        assert infos[acting]["action_mask"][chosen[acting]] == 1
        assert all(chosen[a] == WAIT_ACTION for a in agents if a != acting)
        obs, _, _, _, infos = env.step(actions)
        if not env.agents:
            obs, infos = env.reset()
    assert env.illegal_actions == 0 and env.decisions == 200


def test_agilerl_masked_ppo_example_trains_and_evaluates(tmp_path: Path) -> None:
    example = load_example("agilerl_ppo")
    assert (
        example.main(
            [
                "--steps",
                "400",
                "--envs",
                "2",
                "--learn-step",
                "200",
                "--batch-size",
                "64",
                "--epochs",
                "1",
                "--eval-episodes",
                "3",
                "--hidden",
                "32",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    result = json.loads((tmp_path / "results.json").read_text())
    assert result["steps"] == 400 and result["updates"] == 2
    assert result["illegal_actions_in_training"] == 0 < result["checked_actions_in_training"]
    assert result["before"]["illegal_actions"] == result["after"]["illegal_actions"] == 0
    assert result["after"]["episodes"] == 3 and 0 <= result["after"]["win_rate"] <= 1
    assert set(result["versions"]) >= {"agilerl", "torch", "gymnasium"}
    assert (tmp_path / "ppo.pt").is_file()
    assert result["command"] in (tmp_path / "results.md").read_text()


def test_collect_rollouts_stores_the_info_masks_and_the_check_counts_illegal_actions() -> None:
    example = load_example("agilerl_ppo")
    args = example.make_parser().parse_args(["--envs", "2", "--out", "x"])  # hands 3 2 1
    env = example.make_vector_env(args)
    env.reset(seed=0)
    agent = PPO(env.single_observation_space, env.single_action_space, num_envs=2, learn_step=40)
    collect_rollouts(agent, env)
    masks = agent.rollout_buffer.buffer["action_masks"]  # what learn() applies
    actions = agent.rollout_buffer.buffer["actions"]
    assert masks.shape[-1] == 59 and bool(masks.any(-1).all())  # a pending decision each
    chosen = masks.reshape(-1, 59).gather(1, actions.reshape(-1, 1).long())
    assert bool(chosen.all())
    assert sum(e.illegal for e in env.envs) == 0 < sum(e.checked for e in env.envs)
    single = example.CheckedMasks(gymnasium.make("craits/Craits-v0", **example.env_kwargs(args)))
    _, info = single.reset(seed=0)
    assert info["action_mask"].any()  # the learner's decision is pending
    single.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))  # an illegal action
    assert (single.illegal, single.checked) == (1, 1)
