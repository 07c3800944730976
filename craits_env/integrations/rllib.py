"""RLlib (``ray[rllib]`` 2.x, new API stack) on ``craits_v0``: multi-agent PPO with masking.

```python
from craits_env import Rules
from craits_env.integrations.rllib import ppo_config

algo = ppo_config(num_players=4, rules=Rules.short_game()).build_algo()
for _ in range(10):
    print(algo.train()["env_runners"]["module_episode_returns_mean"]["learner"])
```

Every piece is RLlib's own documented one; this module only wires them:

- **Environment** (:func:`env_creator`, registered as ``"craits_v0"``): RLlib's
  ``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv`` over ``craits_v0.env(...)``
  (PettingZoo's classic wrappers), its observations renamed by :class:`RLlibObservations`
  to ``{"observations": float32 vector, "action_mask": float32 (59,)}`` — the keys and the
  ``Box(0.0, 1.0)`` mask that RLlib's ``ActionMaskingTorchRLModule``
  (``ray.rllib.examples.rl_modules.classes.action_masking_rlm``) reads. Only the seat to
  act gets an observation at each step (its reward accumulated since it last acted);
  when the game ends every seat gets its last one.
- **Modules**: ``"learner"``, the ``ActionMaskingTorchRLModule`` (PPO's default network
  on the observation vector, logits of illegal actions pushed to −∞), shared by the
  learning seats and the only module trained; ``"random"``,
  :class:`MaskedRandomRLModule` (uniform among the legal actions, never trained), for
  the other seats.
- **Mapping** (:func:`policy_mapping`): seats in ``learning_seats`` → ``"learner"``,
  the others → ``"random"``; all seats learning is self-play with one shared policy.
- **Checks**: :class:`IllegalActionCounter` (a callback; :func:`ppo_config` adds it)
  re-reads every sampled episode chunk as RLlib recorded it and logs
  ``craits/illegal_actions`` (actions outside the recorded mask) and
  ``craits/checked_actions`` (lifetime sums in the ``env_runners`` results).
- **Playing a trained module**: :class:`RLlibAgent` turns an ``RLModule`` into a Craits
  agent (``act(observation) -> action``: the most probable legal action), for
  ``agents.play_game``, tournaments, evaluations.

**Why not ``PettingZooEnv(craits_v0.raw_env())``** ("RLlib's driver shows only
IndexError: list index out of range"): when an env runner starts, RLlib's
``check_multiagent_environments`` resets the environment and steps it with
``action_space.sample()``, an action drawn without the mask. ``raw_env`` refuses an
illegal action with a ``ValueError``, so the remote env runner dies in its
constructor, and the driver's ``EnvRunnerGroup.get_spaces()`` takes ``[0]`` of the empty
list of runner answers: ``IndexError``. With a local runner (``num_env_runners=0``) the
same thing shows as "does not abide to the new gymnasium-style API". Through
``craits_v0.env()`` (what :func:`env_creator` wraps) an illegal action follows
PettingZoo's classic convention instead — the game ends, −1 to the offender — so the
checker passes; :func:`ppo_config` still turns that check off
(``disable_env_checking=True``), because its one unmasked action would print
PettingZoo's "Illegal move made" warning at every start, and the environment is checked
by the tests instead.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import BaseWrapper

from .. import craits_v0
from ..actions import NUM_ACTIONS
from ..extras import require
from ..rewards import check_reward_mode
from ..rules import Rules, check_num_players

ENV_NAME = "craits_v0"  # the name register_env gives env_creator
OBS_KEY = "observations"  # ActionMaskingTorchRLModule's key for the observation vector
MASK_KEY = "action_mask"  # … and for the mask (float32, 1 = legal)
LEARNER = "learner"  # the trained module's id
RANDOM = "random"  # the fixed opponents' module id
ILLEGAL_METRIC = "craits/illegal_actions"
CHECKED_METRIC = "craits/checked_actions"
# env_config keys env_creator passes on to craits_v0.env (the others are refused).
ENV_CONFIG_KEYS = ("num_players", "rules", "reward", "auto_forced", "max_steps")
DEFAULT_HIDDEN = (256, 256)
# Names built on first use (they subclass RLlib classes; this module imports without ray).
_LAZY = ("MaskedRandomRLModule", "IllegalActionCounter")


def _require() -> None:
    require("rllib", "craits_env.integrations.rllib")


class RLlibObservations(BaseWrapper):
    """An AEC ``craits_v0`` whose observations carry RLlib's masking keys.

    ``observe(agent)`` is ``{"observations": the float32 vector, "action_mask": the
    mask as float32}``; the observation space says the same. Everything else (steps,
    rewards, illegal actions) is the wrapped environment's.
    """

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        inner = env.observation_space(env.possible_agents[0])
        self._space = spaces.Dict(
            {
                OBS_KEY: inner["observation"],
                MASK_KEY: spaces.Box(0.0, 1.0, (NUM_ACTIONS,), dtype=np.float32),
            }
        )

    def observation_space(self, agent: str) -> spaces.Space:
        return self._space

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.env.observe(agent)
        return {OBS_KEY: obs["observation"], MASK_KEY: obs["action_mask"].astype(np.float32)}


def env_kwargs(config: Mapping[str, Any]) -> dict[str, Any]:
    """``craits_v0.env`` keyword arguments from an RLlib ``env_config`` (``rules`` may be a
    :class:`Rules` or its ``to_dict()``); an unknown key is a one-line ``ValueError``."""
    unknown = sorted(set(config) - set(ENV_CONFIG_KEYS))
    if unknown:
        raise ValueError(f"env_config: unknown key(s) {unknown}; allowed {list(ENV_CONFIG_KEYS)}")
    kwargs = dict(config)
    rules = kwargs.get("rules")
    if isinstance(rules, Mapping):
        kwargs["rules"] = Rules.from_dict(dict(rules))
    return kwargs


def env_creator(config: Mapping[str, Any] | None = None) -> Any:
    """RLlib's ``PettingZooEnv`` over ``RLlibObservations(craits_v0.env(**config))``."""
    _require()
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(RLlibObservations(craits_v0.env(**env_kwargs(config or {}))))


def register(name: str = ENV_NAME) -> str:
    """Register :func:`env_creator` with Ray Tune's registry under ``name``; returns it."""
    _require()
    from ray.tune.registry import register_env

    register_env(name, env_creator)
    return name


def policy_mapping(agent_id: str, episode: object = None, *, learning_seats: Sequence[int]) -> str:
    """``"learner"`` for a seat in ``learning_seats`` (``player_3`` is seat 3), else
    ``"random"``; bind ``learning_seats`` with ``functools.partial``.

    >>> [policy_mapping(f"player_{s}", learning_seats=(0, 2)) for s in range(4)]
    ['learner', 'random', 'learner', 'random']
    """
    seat = int(agent_id.rsplit("_", 1)[1])
    return LEARNER if seat in learning_seats else RANDOM


def check_learning_seats(learning_seats: Sequence[int], num_players: int) -> tuple[int, ...]:
    """The learning seats as a sorted tuple; a one-line ``ValueError`` unless they are
    distinct seats of the table."""
    seats = tuple(learning_seats)
    if (
        not seats
        or len(set(seats)) != len(seats)
        or not all(isinstance(s, int) and 0 <= s < num_players for s in seats)
    ):
        raise ValueError(
            f"learning_seats: got {list(seats)}, allowed distinct seats in 0..{num_players - 1}"
            " (at least one)"
        )
    return tuple(sorted(seats))


def ppo_config(
    num_players: int = 4,
    rules: Rules | None = None,
    *,
    learning_seats: Sequence[int] = (0,),
    reward: str = "relative",
    env_runners: int = 1,
    hidden: Sequence[int] = DEFAULT_HIDDEN,
    seed: int | None = None,
) -> Any:
    """A ready ``PPOConfig`` (RLlib's new API stack): the environment, the two modules,
    the mapping and the illegal-action check of the module docstring.

    Change anything further with PPOConfig's own methods
    (``ppo_config(...).training(lr=1e-4)``); ``.build_algo()`` builds the algorithm
    (starting a local Ray unless one is running).
    """
    n = check_num_players(num_players)
    seats = check_learning_seats(learning_seats, n)
    if isinstance(env_runners, bool) or not isinstance(env_runners, int) or env_runners < 0:
        raise ValueError(f"env_runners: got {env_runners!r}, allowed an int >= 0")
    layers = list(hidden)
    if not layers or not all(isinstance(h, int) and h > 0 for h in layers):
        raise ValueError(f"hidden: got {layers!r}, allowed a non-empty list of ints > 0")
    rules = Rules() if rules is None else rules
    if not isinstance(rules, Rules):
        raise ValueError(f"rules: got {type(rules).__name__}, expected craits_env.Rules")
    check_reward_mode(reward)
    _require()
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )

    env_config = {"num_players": n, "rules": rules.to_dict(), "reward": reward}
    modules = {
        LEARNER: RLModuleSpec(
            module_class=ActionMaskingTorchRLModule,
            model_config={
                "fcnet_hiddens": layers,
                "fcnet_activation": "tanh",
                "vf_share_layers": False,
            },
        ),
        RANDOM: RLModuleSpec(
            module_class=_lazy_class("MaskedRandomRLModule"), model_config={"seed": seed}
        ),
    }
    config = (
        PPOConfig()
        .environment(register(), env_config=env_config, disable_env_checking=True)
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=1)
        .multi_agent(
            policies={LEARNER, RANDOM},
            policy_mapping_fn=functools.partial(policy_mapping, learning_seats=seats),
            policies_to_train=[LEARNER],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=modules))
        .callbacks(_lazy_class("IllegalActionCounter"))
    )
    if seed is not None:
        config = config.debugging(seed=seed)
    return config


def illegal_actions(episode: Any, agent_ids: Sequence[str] | None = None) -> tuple[int, int]:
    """``(illegal, checked)``: of the actions recorded in an RLlib ``MultiAgentEpisode``
    (for ``agent_ids``, default every agent), how many were outside the mask of the
    observation they answered, and how many were checked."""
    illegal = checked = 0
    for aid, sa_episode in episode.agent_episodes.items():
        if agent_ids is not None and aid not in agent_ids:
            continue
        actions = np.asarray(sa_episode.get_actions(), dtype=np.int64).reshape(-1)
        if actions.size == 0:
            continue
        observations = sa_episode.get_observations(slice(0, actions.size))
        masks = np.asarray(
            observations[MASK_KEY]
            if isinstance(observations, Mapping)
            else [o[MASK_KEY] for o in observations]
        )
        chosen = masks.reshape(actions.size, -1)[np.arange(actions.size), actions]
        illegal += int((chosen <= 0).sum())
        checked += int(actions.size)
    return illegal, checked


class RLlibAgent:
    """A Craits agent playing a trained RLlib module: the most probable action under the
    module's (masked) logits for a ``craits_v0`` observation (``"observation"``,
    ``"action_mask"``) — deterministic. The mask is the module's to apply: an action it
    lets through illegally is returned as it is, and drivers refuse it."""

    name = "rllib"

    def __init__(self, module: Any, name: str = "rllib") -> None:
        _require()
        self.module = module
        self.name = name

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reset: the module's play is deterministic."""

    def act(self, observation: Mapping[str, np.ndarray]) -> int:
        import torch
        from ray.rllib.core.columns import Columns

        obs = torch.as_tensor(np.asarray(observation["observation"], dtype=np.float32))[None]
        mask = torch.as_tensor(np.asarray(observation["action_mask"], dtype=np.float32))[None]
        with torch.no_grad():
            out = self.module.forward_inference({Columns.OBS: {OBS_KEY: obs, MASK_KEY: mask}})
        return int(torch.argmax(out[Columns.ACTION_DIST_INPUTS][0]))


@functools.cache
def _lazy_class(name: str) -> type:
    """Build (once) the classes that subclass RLlib's: see :data:`_LAZY`."""
    _require()
    from ray.rllib.callbacks.callbacks import RLlibCallback
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModule

    class MaskedRandomRLModule(RLModule):
        """Plays uniformly among the legal actions (``model_config={"seed": s}`` seeds
        it); never trained (keep it out of ``policies_to_train``)."""

        def setup(self) -> None:
            super().setup()
            config = self.model_config if isinstance(self.model_config, dict) else {}
            self._rng = np.random.default_rng(config.get("seed"))

        def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            masks = np.asarray(batch[Columns.OBS][MASK_KEY]).reshape(-1, NUM_ACTIONS)
            actions = [int(self._rng.choice(np.flatnonzero(m > 0))) for m in masks]
            return {Columns.ACTIONS: np.asarray(actions, dtype=np.int64)}

        def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            raise NotImplementedError(f"the {RANDOM!r} module is never trained")

    class IllegalActionCounter(RLlibCallback):
        """Logs ``craits/illegal_actions`` and ``craits/checked_actions`` (lifetime sums)
        over the episode chunks each ``sample()`` returns — exactly what the learner
        trains on, as RLlib recorded it (:func:`illegal_actions`)."""

        def on_sample_end(
            self, *, samples: Any = None, metrics_logger: Any = None, **kwargs: Any
        ) -> None:
            illegal = checked = 0
            for chunk in samples or []:
                bad, seen = illegal_actions(chunk)
                illegal, checked = illegal + bad, checked + seen
            if metrics_logger is not None:
                metrics_logger.log_value(ILLEGAL_METRIC, illegal, reduce="lifetime_sum")
                metrics_logger.log_value(CHECKED_METRIC, checked, reduce="lifetime_sum")

    built: dict[str, type] = {
        "MaskedRandomRLModule": MaskedRandomRLModule,
        "IllegalActionCounter": IllegalActionCounter,
    }
    for cls in built.values():  # importable by name, so pickling sends a reference
        cls.__module__ = __name__
        cls.__qualname__ = cls.__name__
    return built[name]


def __getattr__(name: str) -> Callable[..., Any] | type:
    if name in _LAZY:
        return _lazy_class(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
