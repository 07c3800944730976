"""``craits_v0.parallel_env()``: Craits as a PettingZoo ``ParallelEnv``, one decision a step.

```python
from craits_env import craits_v0

env = craits_v0.parallel_env(num_players=4)
obs, infos = env.reset(seed=0)
acting = next(a for a in env.agents if infos[a]["env_defined_actions"] is None)
```

Craits is turn-based: the parallel view steps the AEC game (``craits_v0.env()``, its
classic wrappers included) one decision at a time and says who decides. docs/environments.md
("The parallel view") says what a learner collecting transitions from it (CleanRL,
SuperSuit, AgileRL's multi-agent algorithms) must do with the waiting seats.

- **Agents**: ``player_0 … player_{n-1}``, all present every step until the game ends.
- **Observation**, per agent: the ``craits_v0`` observation vector of that seat and one
  last element, ``to_act`` (index :data:`TO_ACT`): 1.0 for the seat that decides now, else
  0.0 (``Box(float32)``: no mask inside, so ``Box``-only wrappers take it).
- **``infos[agent]``**: for the seat to act ``{"action_mask": its legal actions,
  "env_defined_actions": None}``; for every other seat ``{"action_mask": one-hot of
  WAIT_ACTION, "env_defined_actions": WAIT_ACTION}`` (one allowed action, so masked
  sampling is defined; the view ignores it). Masks are lists of 59 ints (AgileRL's IPPO
  checks ``None in masks``, which fails on numpy arrays).
- **``step(actions)``** applies the acting seat's action; the other seats' entries are
  ignored (they may be missing). An illegal action follows ``craits_v0.env()``'s classic
  convention: the game ends, −1 to the offender. A missing action for the seat to act is a
  ``ValueError``.
- **Rewards**: every seat's ``craits_v0`` reward of that step (``reward=``), so a hand's
  rewards reach all seats — the waiting ones too — at the step it ends.
- **Episode**: one game; every seat terminates together (``max_steps=N`` truncates). The
  last ``infos`` also hold the AEC game's last info: ``winners``, ``scores``, ``place``.

``decisions`` counts the actions applied, ``illegal_actions`` those outside the acting
seat's mask (each also ends its game), over the environment's life: a driver's mask check.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv

from .actions import DRAW, NUM_ACTIONS

WAIT_ACTION = DRAW  # the env-defined action of a seat that does not decide (ignored)
TO_ACT = -1  # index of the to_act element in each observation
_WAIT_MASK = np.zeros(NUM_ACTIONS, dtype=np.int8)
_WAIT_MASK[WAIT_ACTION] = 1


class CraitsParallelEnv(ParallelEnv):
    """The parallel view (see the module docstring) of the AEC environment ``aec``
    (``craits_v0.env(...)``, kept as ``env.aec``); ``craits_v0.parallel_env(**kwargs)``
    builds both."""

    metadata = {  # noqa: RUF012 (PettingZoo's convention; render_modes: the AEC env's)
        "name": "craits_parallel_v0",
        "is_parallelizable": True,
        "render_fps": 1,
    }

    def __init__(self, aec: AECEnv) -> None:
        self.aec = aec
        self.metadata = {**self.metadata, "render_modes": aec.metadata["render_modes"]}
        self.render_mode = aec.render_mode
        self.possible_agents = list(aec.possible_agents)
        self.agents: list[str] = []
        self.decisions = 0
        self.illegal_actions = 0
        inner = aec.observation_space(self.possible_agents[0])["observation"]
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
                **self.aec.infos.get(a, {}),  # the game's result, once it is over
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
