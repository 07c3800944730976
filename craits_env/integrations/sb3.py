"""Stable-Baselines3 on the batched engine: :class:`CraitsVecEnv`, a ``VecEnv`` of N games.

```python
from sb3_contrib import MaskablePPO
from craits_env.integrations.sb3 import CraitsVecEnv

env = CraitsVecEnv(num_envs=16, opponents=["expert"] * 3, flat_obs=True)
model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=128, n_epochs=1, seed=0)
model.learn(512)  # no wrapper: MaskablePPO asks env.env_method("action_masks")
```

It is the Gymnasium vector view of ``craits/Craits-v0``
(``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``, the batched engine
with the compiled bots or frozen networks as opponents: ``craits.agents.gym_vector_env``) in
its same-step autoreset mode, as SB3 wants it: the keyword arguments are the single Gym view's
(``num_players``, ``opponents`` from ``random``, ``greedy``, ``tactician``, ``expert``,
``champion``, ``ppo:PATH``, ``seat``, ``rules``, ``reward``, ``flat_obs`` …;
``flat_obs=True`` for ``"MlpPolicy"``).
``step`` returns the next game's first observation for a row whose game ended, with
``infos[b]["terminal_observation"]``, ``"TimeLimit.truncated"`` and the single view's last
info (``winners``, ``scores``, ``place``, ``hand_points``, ``seat``); the other rows' infos
are empty. ``env_method("action_masks")`` gives each row's mask of its pending decision
(``np.stack`` of it: the bool ``(N, 59)`` masks); ``seed(s)`` seeds row ``b`` with ``s + b``
at the next ``reset``, as SB3's ``DummyVecEnv`` seeds its copies of the single view (and the
games are then those copies' games).

The vector view is reached through gymnasium's registry (a string entry point into the
agents layer, as ``craits/Craits-v0`` itself), so this module imports only gymnasium and
stable-baselines3 (extra ``integrations``; without it, importing this module is a one-line
:class:`~craits_env.extras.MissingExtra`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from ..extras import require

require("integrations", "craits_env.integrations.sb3", ("stable_baselines3",))

from stable_baselines3.common.vec_env import VecEnv  # noqa: E402
from stable_baselines3.common.vec_env.base_vec_env import (  # noqa: E402
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

from .. import GYM_ENV_ID  # noqa: E402

__all__ = ["CraitsVecEnv"]


class CraitsVecEnv(VecEnv):
    """N games of ``craits/Craits-v0`` on the batched engine as an SB3 ``VecEnv`` (see the
    module docstring); ``kwargs`` are the single Gym view's."""

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        if "autoreset_mode" in kwargs:
            raise ValueError("autoreset_mode: SB3 resets in the same step; leave it out")
        self.venv = gymnasium.make_vec(
            GYM_ENV_ID,
            num_envs=num_envs,
            vectorization_mode="vector_entry_point",
            autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP,
            **kwargs,
        )
        super().__init__(
            self.venv.num_envs, self.venv.single_observation_space, self.venv.single_action_space
        )
        self._actions: np.ndarray | None = None

    def reset(self) -> VecEnvObs:
        seeds = None if self._seeds[0] is None else [int(s) for s in self._seeds]  # type: ignore[arg-type]
        options = self._options[0] if self._options[0] else None
        if any(o != self._options[0] for o in self._options):
            raise ValueError("set_options: allowed the same options for every game")
        obs, infos = self.venv.reset(seed=seeds, options=options)  # type: ignore[arg-type]
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [
            {key: infos[key][b] for key in _keys(infos) if infos[f"_{key}"][b]}
            for b in range(self.num_envs)
        ]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64)

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise ValueError("step_wait() without step_async(actions)")
        obs, rewards, terminated, truncated, infos = self.venv.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        out: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final, last = infos["final_obs"], infos["final_info"]
            for b in np.flatnonzero(dones):
                info = {key: last[key][b] for key in _keys(last) if last[f"_{key}"][b]}
                info["terminal_observation"] = final[b]
                info["TimeLimit.truncated"] = bool(truncated[b] and not terminated[b])
                out[b] = info
        return obs, rewards.astype(np.float32), dones, out

    def close(self) -> None:
        self.venv.close()

    def action_masks(self) -> np.ndarray:
        """Every game's mask of its pending decision (bool ``(N, 59)``)."""
        return self.venv.action_masks()  # type: ignore[attr-defined]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The vector view's attribute, once per game asked (one engine holds them all)."""
        value = getattr(self.venv, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        if list(self._get_indices(indices)) != list(range(self.num_envs)):
            raise ValueError(
                f"set_attr: {attr_name!r} is shared by all games; allowed indices=None"
            )
        setattr(self.venv, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """``action_masks``: each game's mask; another method of the vector view is called
        once and its answer given to each game asked."""
        rows = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[b] for b in rows]
        value = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [value for _ in rows]

    def env_is_wrapped(
        self, wrapper_class: type[gymnasium.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        """No game is wrapped (they are rows of one engine)."""
        return [False for _ in self._get_indices(indices)]

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Row ``b`` gets ``seed + b`` at the next :meth:`reset` (SB3's convention)."""
        return super().seed(seed)


def _keys(infos: dict[str, Any]) -> list[str]:
    return [key for key in infos if not key.startswith("_") and f"_{key}" in infos]
