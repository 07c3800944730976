"""The library-free parts of ``craits_env.integrations`` (no RLlib, no AgileRL needed): the
RLlib observation renaming and argument checks, the missing-extra message, and the
parallel view AgileRL reads (PettingZoo's own parallel API and seed tests, who decides,
masks and env-defined actions in ``infos``, rewards equal to the AEC game's). The parts
that need the libraries run in their own venvs: tests/own_venv/."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test

from craits_env import DRAW, Rules, craits_v0
from craits_env.extras import MissingExtra
from craits_env.integrations import agilerl as craits_agilerl
from craits_env.integrations import rllib as craits_rllib

SHORT = Rules(hand_sizes=(2, 1))


def test_rllib_observations_rename_the_keys_and_cast_the_mask() -> None:
    env = craits_rllib.RLlibObservations(craits_v0.env(num_players=3, rules=SHORT))
    reference = craits_v0.env(num_players=3, rules=SHORT)
    env.reset(seed=4)
    reference.reset(seed=4)
    space = env.observation_space("player_1")
    assert set(space.spaces) == {"observations", "action_mask"}
    assert space["action_mask"].dtype == np.float32
    for agent in env.possible_agents:
        obs, expected = env.observe(agent), reference.observe(agent)
        assert space.contains(obs)
        assert np.array_equal(obs["observations"], expected["observation"])
        assert np.array_equal(obs["action_mask"], expected["action_mask"].astype(np.float32))
    assert env.last()[0]["action_mask"].sum() == reference.last()[0]["action_mask"].sum() > 0


def test_rllib_env_config_and_ppo_config_refuse_bad_arguments_before_importing_ray() -> None:
    assert craits_rllib.env_kwargs({"num_players": 3, "rules": SHORT.to_dict()}) == {
        "num_players": 3,
        "rules": SHORT,
    }
    with pytest.raises(ValueError, match=r"env_config: unknown key\(s\) \['seed'\]; allowed"):
        craits_rllib.env_kwargs({"seed": 1})
    cases = [
        ({"learning_seats": ()}, r"learning_seats: got \[\], allowed distinct seats in 0\.\.3"),
        ({"learning_seats": (1, 1)}, r"learning_seats: got \[1, 1\]"),
        ({"learning_seats": (4,)}, r"learning_seats: got \[4\]"),
        ({"env_runners": True}, "env_runners: got True, allowed an int >= 0"),
        ({"hidden": []}, r"hidden: got \[\], allowed a non-empty list of ints > 0"),
        ({"rules": {"hand_sizes": [1]}}, "rules: got dict, expected craits_env.Rules"),
        ({"reward": "points"}, "reward"),
        ({"num_players": 1}, "num_players"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            craits_rllib.ppo_config(**kwargs)  # type: ignore[arg-type]


def test_rllib_adapter_without_rllib_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def without_rllib(name: str, *args: object) -> object:
        if name.startswith("ray.rllib"):
            raise ImportError(name)
        return real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib, "import_module", without_rllib)
    with pytest.raises(MissingExtra, match=r"needs ray\.rllib, .*pip install 'craits\[rllib\]'"):
        craits_rllib.env_creator({})
    with pytest.raises(MissingExtra, match=r"craits\[rllib\]"):
        craits_rllib.ppo_config()


def test_policy_mapping_reads_the_seat_from_the_agent_name() -> None:
    assert craits_rllib.policy_mapping("player_10", learning_seats=(10,)) == "learner"
    assert craits_rllib.policy_mapping("player_1", learning_seats=(10,)) == "random"


def test_parallel_view_passes_pettingzoos_parallel_api_and_seed_tests() -> None:
    """Without a warning: PettingZoo's API test resets with options={"options": 1}, which the
    environment ignores (another unknown key is a ValueError)."""
    assert craits_agilerl.parallel_env is craits_v0.parallel_env  # the AgileRL name still works
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parallel_api_test(craits_v0.parallel_env(num_players=3, rules=SHORT), num_cycles=300)
        parallel_seed_test(lambda: craits_v0.parallel_env(num_players=3, rules=SHORT))


def test_reset_ignores_pettingzoos_probe_key_and_refuses_other_unknown_keys() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(craits_v0.env(num_players=3, rules=SHORT), num_cycles=100)
    # Left: PettingZoo's own notes on Dict observations (its classic games' convention).
    assert not [w for w in caught if "option" in str(w.message)]
    aec = craits_v0.env(num_players=3)
    parallel = craits_v0.parallel_env(num_players=3)
    for env, game_of in (
        (aec, lambda: aec.unwrapped.game),
        (parallel, lambda: parallel.aec.unwrapped.game),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            env.reset(seed=0, options={"options": 1, "dealer": 2})
        assert game_of().dealer == 2
        with pytest.raises(
            ValueError, match=r"^reset options: unknown key\(s\) \['dealr'\]; allowed 'deck', "
        ):
            env.reset(seed=0, options={"dealr": 1})


def test_parallel_view_says_who_decides_and_replays_the_aec_game() -> None:
    env = craits_v0.parallel_env(num_players=4, rules=SHORT)
    reference = craits_v0.env(num_players=4, rules=SHORT)
    obs, infos = env.reset(seed=7)
    reference.reset(seed=7)
    rng = np.random.default_rng(0)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    while env.agents:
        acting = reference.agent_selection
        for agent in env.possible_agents:
            assert obs[agent].shape == env.observation_space(agent).shape
            assert np.array_equal(obs[agent][:-1], reference.observe(agent)["observation"])
            assert obs[agent][-1] == (1.0 if agent == acting else 0.0)  # to_act
            assert isinstance(infos[agent]["action_mask"], list)  # IPPO fails on arrays
            if agent == acting:
                assert infos[agent]["env_defined_actions"] is None
                assert np.array_equal(
                    infos[agent]["action_mask"], reference.observe(agent)["action_mask"]
                )
            else:
                assert infos[agent]["env_defined_actions"] == DRAW == craits_agilerl.WAIT_ACTION
                assert np.flatnonzero(infos[agent]["action_mask"]).tolist() == [DRAW]
        action = int(rng.choice(np.flatnonzero(infos[acting]["action_mask"])))
        others = {a: 3 for a in env.possible_agents if a != acting}  # ignored by the view
        obs, rewards, terminations, _, infos = env.step({acting: action, **others})
        reference.step(action)
        assert rewards == {a: reference.rewards[a] for a in env.possible_agents}
        for agent, r in rewards.items():
            totals[agent] += r
        if any(terminations.values()):
            assert all(terminations.values()) and env.agents == []
            assert all(info["env_defined_actions"] == DRAW for info in infos.values())
            for a in env.possible_agents:  # the AEC game's last info added: the result
                result = {k: infos[a][k] for k in ("winners", "scores", "place")}
                assert result == reference.infos[a]
            assert infos["player_0"]["scores"] == list(reference.unwrapped.game.scores)
    game = reference.unwrapped.game
    assert game.is_over and env.illegal_actions == 0 < env.decisions
    points = np.array([sum(h[s] for h in game.hand_points) for s in range(4)], dtype=float)
    expected = [(np.delete(points, s).mean() - points[s]) / 100 for s in range(4)]  # "relative"
    assert np.allclose([totals[f"player_{s}"] for s in range(4)], expected)


def test_parallel_view_refuses_a_missing_action_and_ends_on_an_illegal_one() -> None:
    env = craits_v0.parallel_env(num_players=2, rules=SHORT)
    _, infos = env.reset(seed=1)
    acting = next(a for a, i in infos.items() if i["env_defined_actions"] is None)
    other = next(a for a in env.possible_agents if a != acting)
    with pytest.raises(ValueError, match=f"actions: no action for {acting}, the seat to act"):
        env.step({other: 0})
    illegal = int(np.flatnonzero(np.asarray(infos[acting]["action_mask"]) == 0)[0])
    assert (env.decisions, env.illegal_actions) == (0, 0)
    _, rewards, terminations, _, _ = env.step({acting: illegal})
    assert all(terminations.values()) and rewards[acting] == -1 and env.agents == []
    assert (env.decisions, env.illegal_actions) == (1, 1)
    with pytest.raises(ValueError, match=r"step\(\) after the game ended: call reset\(\)"):
        env.step({acting: 0})
