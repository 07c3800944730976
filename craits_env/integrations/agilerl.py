"""A PettingZoo ``ParallelEnv`` view of ``craits_v0`` for AgileRL's multi-agent algorithms.

```python
from agilerl.algorithms import IPPO
from craits_env.integrations.agilerl import parallel_env

env = parallel_env(num_players=4)
obs, infos = env.reset(seed=0)
ippo = IPPO([env.observation_space(a) for a in env.possible_agents],
            [env.action_space(a) for a in env.possible_agents], agent_ids=env.possible_agents)
actions, *_ = ippo.get_action(obs, infos=infos)   # masks and env-defined actions from infos
obs, rewards, terminations, truncations, infos = env.step(actions)
```

AgileRL's multi-agent algorithms (IPPO, MADDPG, MATD3) take a PettingZoo *parallel*
environment and read two keys of each agent's ``info`` (its documented "action masking"
and "agent masking"): ``"action_mask"`` (1 = legal) and ``"env_defined_actions"`` (an
action the environment fixes for an agent that does not decide now; ``None`` for one that
does). Craits is turn-based, so this view steps the AEC game one decision at a time and
says who decides:

- **Agents**: ``player_0 … player_{n-1}``, all present every step until the game ends.
- **Observation**, per agent: the ``craits_v0`` observation vector of that seat and one
  last element, ``to_act``: 1.0 for the seat that decides now, else 0.0 (``Box(float32)``;
  AgileRL wants no mask in the observation).
- **``infos[agent]``**: for the seat to act ``{"action_mask": its legal actions,
  "env_defined_actions": None}``; for every other seat ``{"action_mask": one-hot of
  WAIT_ACTION, "env_defined_actions": WAIT_ACTION}`` (one allowed action, so masked
  sampling is defined; the view ignores it). Masks are lists of 59 ints: IPPO's check that
  every agent has a mask (``None in masks``) fails on numpy arrays.
- **``step(actions)``** applies the acting seat's action; the other seats' entries are
  ignored. An illegal action follows ``craits_v0.env()``'s classic convention: the game
  ends, −1 to the offender.
- **Rewards**: every seat's ``craits_v0`` reward of that step (``reward=``), so a hand's
  rewards reach all seats at the step it ends.
- **Episode**: one game; every seat terminates together (``max_steps=N`` truncates).

Known limit: AgileRL's multi-agent learners store a transition for every agent at every
step, the waiting seats' too (their ``WAIT_ACTION``), and IPPO's update recomputes
log-probabilities without the masks; the ``to_act`` element lets a policy tell a waiting
state from a decision, but measured, IPPO self-play through this view acts legally and
does not learn (experiments/results/integrations/agilerl/ippo). AgileRL's single-agent PPO
needs no adapter: on the Gymnasium view ``craits/Craits-v0`` its ``collect_rollouts`` reads
``info["action_mask"]`` and its ``learn`` applies the stored masks
(experiments/integrations/agilerl_ppo.py). AgileRL's vectorised wrapper of a parallel
environment (``PzDummyVecEnv``) hands the first decision after an auto-reset the finished
game's infos, so step this view yourself (as agilerl_ippo.py does).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from .. import craits_v0
from ..actions import DRAW, NUM_ACTIONS

WAIT_ACTION = DRAW  # the env-defined action of a seat that does not decide (ignored)
TO_ACT = -1  # index of the to_act element in each observation
_WAIT_MASK = np.zeros(NUM_ACTIONS, dtype=np.int8)
_WAIT_MASK[WAIT_ACTION] = 1


class CraitsParallelEnv(ParallelEnv):
    """``craits_v0`` as a parallel environment (see the module docstring).

    Takes ``craits_v0.env``'s arguments (``num_players``, ``rules``, ``reward``,
    ``auto_forced``, ``max_steps``); ``env.aec`` is the AEC environment it steps
    (``craits_v0.env(...)``, PettingZoo's classic wrappers included). ``decisions`` counts
    the actions applied, ``illegal_actions`` those outside the acting seat's mask (each
    also ends its game), over the environment's life: a driver's mask check.
    """

    metadata = {  # noqa: RUF012 (PettingZoo's convention)
        "name": "craits_parallel_v0",
        "render_modes": craits_v0.RENDER_MODES,
        "is_parallelizable": True,
        "render_fps": 1,
    }

    def __init__(self, **kwargs: Any) -> None:
        self.aec = craits_v0.env(**kwargs)
        self.render_mode = self.aec.render_mode
        self.possible_agents = list(self.aec.possible_agents)
        self.agents: list[str] = []
        self.decisions = 0
        self.illegal_actions = 0
        inner = self.aec.observation_space(self.possible_agents[0])["observation"]
        self._space = spaces.Box(
            np.append(inner.low, 0.0).astype(np.float32),
            np.append(inner.high, 1.0).astype(np.float32),
            dtype=np.float32,
        )

    def observation_space(self, agent: str) -> spaces.Space:
        return self._space

    def action_space(self, agent: str) -> spaces.Space:
        return self.aec.action_space(agent)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict[str, Any]]]:
        self.aec.reset(seed=seed, options=options)
        self.agents = list(self.aec.agents)
        return self._observations(), self._infos()

    def step(
        self, actions: dict[str, Any]
    ) -> tuple[
        dict[str, np.ndarray],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        if not self.agents:
            raise ValueError("step() after the game ended: call reset()")
        acting = self.aec.agent_selection
        if acting not in actions:
            raise ValueError(
                f"actions: no action for {acting}, the seat to act; got {sorted(actions)}"
            )
        action = int(np.asarray(actions[acting]).reshape(-1)[0])
        self.decisions += 1
        mask = self.aec.observe(acting)["action_mask"]
        if not (0 <= action < NUM_ACTIONS and mask[action]):
            self.illegal_actions += 1
        self.aec.step(action)
        observations, infos = self._observations(), self._infos()
        rewards = {a: float(self.aec.rewards[a]) for a in self.agents}
        terminations = {a: bool(self.aec.terminations[a]) for a in self.agents}
        truncations = {a: bool(self.aec.truncations[a]) for a in self.agents}
        if all(terminations.values()) or all(truncations.values()):
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _deciding(self) -> str | None:
        game = self.aec.unwrapped.game
        ended = any(self.aec.terminations.values()) or any(self.aec.truncations.values())
        if game is None or game.is_over or ended:
            return None
        return self.aec.agent_selection

    def _observations(self) -> dict[str, np.ndarray]:
        deciding = self._deciding()
        out = {}
        for a in self.possible_agents:
            vector = np.empty(self._space.shape, dtype=np.float32)
            vector[:TO_ACT] = self.aec.observe(a)["observation"]
            vector[TO_ACT] = 1.0 if a == deciding else 0.0
            out[a] = vector
        return out

    def _infos(self) -> dict[str, dict[str, Any]]:
        deciding = self._deciding()
        infos: dict[str, dict[str, Any]] = {}
        for a in self.possible_agents:
            mask = self.aec.observe(a)["action_mask"] if a == deciding else _WAIT_MASK
            infos[a] = {
                "action_mask": mask.tolist(),  # a list (module docstring)
                "env_defined_actions": None if a == deciding else WAIT_ACTION,
            }
        return infos

    def render(self) -> Any:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()

    def state(self) -> np.ndarray:
        raise NotImplementedError("no global state: each seat sees only its own observation")


def parallel_env(**kwargs: Any) -> CraitsParallelEnv:
    """:class:`CraitsParallelEnv` with ``craits_v0.env``'s keyword arguments."""
    return CraitsParallelEnv(**kwargs)
