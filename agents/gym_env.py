"""The single-agent Gymnasium view: one learner seat against opponent agents.

``gymnasium.make("craits/Craits-v0", num_players=4, opponents=["random", …],
seat=None, rules=None, **options)`` after ``import craits_env``. The other seats
are played by ``opponents`` (one per other seat, in seat order skipping the
learner; a single spec is repeated): agent specs (``"random"``, ``"expert"``,
``"ppo:PATH"`` …, see :mod:`agents.specs`), agents, or callables ``observation ->
action``; each is checked for the table when the environment is made. Opponents receive the
seat's :class:`~craits_env.public.SeatView`, a mapping with the observation
keys that also exposes the public state. ``seat=None`` draws
the learner's seat at each reset from the seed.

Observation and action spaces are the AEC environment's; the reward is the
learner's reward in the AEC environment's reward mode, summed over the
opponents' moves until the learner acts again. An illegal action
(``illegal_action="terminate"``, the default, as PettingZoo's classic
convention) ends the episode with reward -1 and ``info["illegal_action"]``;
``illegal_action="raise"`` raises ``ValueError`` and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np

from craits_env.craits_v0 import raw_env
from craits_env.rules import Rules
from craits_env.seeding import draw_seed

from .arena import Table
from .specs import make_agent

ILLEGAL_ACTION_MODES = ("terminate", "raise")


class CraitsGymEnv(gymnasium.Env):
    """One learner seat of ``craits_v0`` against fixed opponents (see the module docstring)."""

    metadata = {"render_modes": ["human", "ansi"], "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        num_players: int = 4,
        opponents: Sequence[str | Callable[[Mapping[str, np.ndarray]], int]] | str = "random",
        seat: int | None = None,
        rules: Rules | None = None,
        render_mode: str | None = None,
        illegal_action: str = "terminate",
        **options: Any,
    ) -> None:
        self.aec = raw_env(num_players, rules, render_mode, track_public=True, **options)
        n = self.aec.num_players
        if isinstance(opponents, str) or callable(opponents):
            opponents = [opponents] * (n - 1)
        if len(opponents) != n - 1:
            raise ValueError(f"opponents: got {len(opponents)}, need {n - 1} for {n} players")
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int)
                                 or not 0 <= seat < n):  # fmt: skip
            raise ValueError(f"seat: got {seat!r}, allowed None or a seat from 0 to {n - 1}")
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(
                f"illegal_action: got {illegal_action!r}, allowed 'terminate', 'raise'"
            )
        self.opponents = [make_agent(o, num_players=n, rules=self.aec.rules) for o in opponents]
        self.fixed_seat = seat
        self.seat = 0 if seat is None else seat
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self.observation_space = self.aec.observation_space("player_0")
        self.action_space = self.aec.action_space("player_0")
        self._seated: list[Any] = []

    @property
    def learner(self) -> str:
        return f"player_{self.seat}"

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        rng = self.np_random
        n = self.aec.num_players
        game_seed = draw_seed(rng)
        self.seat = int(rng.integers(n)) if self.fixed_seat is None else self.fixed_seat
        others = iter(self.opponents)
        self._seated = [None if s == self.seat else next(others) for s in range(n)]
        for agent in self.opponents:
            agent.reset(draw_seed(rng))
        self.aec.reset(seed=game_seed, options=options)
        reward = self._play_opponents()
        return self._observe(), {"seat": self.seat, "reward_before_first_move": reward}

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        aec = self.aec
        learner = self.learner
        game = aec.game
        if game is None:
            raise ValueError("step() before reset()")
        if aec.terminations[learner] or aec.truncations[learner]:
            raise ValueError("step() after the episode ended: call reset()")
        if int(action) not in game.legal_actions():
            if self.illegal_action == "raise":
                game.apply(int(action))  # raises ValueError naming the legal actions
            obs = self._observe()
            obs["action_mask"][:] = 0
            return obs, -1.0, True, False, {"seat": self.seat, "illegal_action": True}
        aec.step(int(action))
        reward = aec.rewards[learner] + self._play_opponents()
        terminated = aec.terminations[learner]
        truncated = aec.truncations[learner] and not terminated
        return self._observe(), float(reward), terminated, truncated, {"seat": self.seat}

    def _play_opponents(self) -> float:
        """Let the opponents act (the arena) until the learner's turn or the end; the
        learner's reward over their moves."""
        aec = self.aec
        learner = self.learner
        reward = 0.0

        def to_act() -> int | None:
            if aec.terminations[learner] or aec.truncations[learner]:
                return None
            return int(aec.agent_selection.rsplit("_", 1)[1])

        def apply(action: int) -> None:
            nonlocal reward
            aec.step(action)
            reward += aec.rewards[learner]

        Table(self._seated, to_act, lambda s: aec.seat_view(f"player_{s}"), apply).run()
        return reward

    def _observe(self) -> dict[str, np.ndarray]:
        obs = self.aec.observe(self.learner)
        return {"observation": obs["observation"].copy(), "action_mask": obs["action_mask"].copy()}

    def snapshot(self) -> dict[str, Any]:
        return self.aec.snapshot()

    def render(self) -> str | None:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()
