"""The single-agent Gymnasium view: one learner seat against opponent agents.

``gymnasium.make("craits/Craits-v0", num_players=4, opponents=["random", …],
seat=None, rules=None, **options)`` after ``import craits_env``. The other seats
are played by ``opponents`` (one per other seat, in seat order skipping the
learner; a single spec is repeated): agent specs (``"random"``, ``"expert"``,
``"ppo:PATH"`` …, see :mod:`craits.agents.specs`), agents, or callables ``observation ->
action``; each is checked for the table when the environment is made. Opponents receive the
seat's :class:`~craits_env.public.SeatView`, a mapping with the observation
keys that also exposes the public state. ``seat=None`` draws
the learner's seat at each reset from the seed.

Observation and action spaces are the AEC environment's (``Dict(observation,
action_mask)``), or with ``flat_obs=True`` the observation vector alone as a ``Box``
(for libraries and wrappers that reject ``Dict`` spaces); either way the mask of the
learner's pending decision is ``env.action_masks()`` (bool, 59: the protocol of
sb3-contrib's ``MaskablePPO``; through gymnasium's wrappers
``env.unwrapped.action_masks()`` or ``env.get_wrapper_attr("action_masks")()``) and
``info["action_mask"]``. The reward is the learner's reward in the AEC environment's
reward mode (``reward=``: ``"relative"``, ``"bounded"``, ``"score"``, ``"win"``;
ranges in :mod:`craits_env.rewards`), summed over the opponents' moves until the
learner acts again. The ``info`` of the step that ends an episode also holds
``winners`` (seats), ``scores`` (per seat), ``seat`` (the learner's), ``place`` (the
learner's rank by score, 1 = best, ties share the better place) and ``hand_points``
(the learner's points in each hand). ``render_mode="rgb_array"`` returns a picture of
the table from the learner's seat (:func:`craits_env.render_rgb.table_picture`);
``"ansi"`` / ``"human"`` the text table.

``reset`` always returns a pending decision of the learner: a game that ends before the
learner's first decision (opponents going out of one-card hands first) is not an
episode, and the next game is dealt from the same generator (``info["skipped_games"]``
counts them). A reward paid before that decision (opponents ending one-card hands first) is
in ``reset``'s ``info["reward_before_first_move"]``, not in an episode's return: gymnasium's
``reset`` returns no reward.

An illegal action (``illegal_action="terminate"``, the default, as PettingZoo's
classic convention) ends the episode with reward -1 and ``info["illegal_action"]``;
``illegal_action="raise"`` raises ``ValueError`` and changes nothing.

**Vector environments.** Under gymnasium's default next-step autoreset, the
observation returned with ``terminated`` or ``truncated`` is the episode's last one:
its mask (and ``action_masks()``) is all zeros, as no decision is pending; the next
``step`` call's action is ignored and resets the episode. Sample actions only for the
sub-environments that did not just end — e.g. ``np.where(mask.any(1), sample(mask),
0)`` — or use ``action_masks()``, which sb3-contrib calls at each step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np

from craits_env.actions import NUM_ACTIONS
from craits_env.craits_v0 import raw_env
from craits_env.rules import Rules
from craits_env.seeding import draw_seed

from .arena import Table
from .specs import make_agent

ILLEGAL_ACTION_MODES = ("terminate", "raise")
MAX_SKIPPED_GAMES = 1000  # games in a row that end before the learner decides, redealt by reset


class CraitsGymEnv(gymnasium.Env):
    """One learner seat of ``craits_v0`` against fixed opponents (see the module docstring)."""

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        num_players: int = 4,
        opponents: Sequence[str | Callable[[Mapping[str, np.ndarray]], int]] | str = "random",
        seat: int | None = None,
        rules: Rules | None = None,
        render_mode: str | None = None,
        illegal_action: str = "terminate",
        flat_obs: bool = False,
        **options: Any,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            allowed = ", ".join(map(repr, [None, *self.metadata["render_modes"]]))
            raise ValueError(f"render_mode: got {render_mode!r}, allowed {allowed}")
        if not isinstance(flat_obs, bool):
            raise ValueError(f"flat_obs: got {flat_obs!r}, allowed True or False")
        text_mode = None if render_mode == "rgb_array" else render_mode
        self.aec = raw_env(num_players, rules, text_mode, track_public=True, **options)
        n = self.aec.num_players
        if isinstance(opponents, str) or callable(opponents):
            opponents = [opponents] * (n - 1)
        if len(opponents) != n - 1:
            raise ValueError(f"opponents: got {len(opponents)}, need {n - 1} for {n} players")
        if seat is not None and (
            isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n
        ):
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
        self.flat_obs = flat_obs
        space = self.aec.observation_space("player_0")
        assert isinstance(space, gymnasium.spaces.Dict)
        self.observation_space = space["observation"] if flat_obs else space
        self.action_space = self.aec.action_space("player_0")
        self._seated: list[Any] = []
        self._mask = np.zeros(NUM_ACTIONS, np.int8)  # the learner's pending decision

    @property
    def learner(self) -> str:
        return f"player_{self.seat}"

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        self._illegal = False
        rng = self.np_random
        n = self.aec.num_players
        skipped = 0
        while True:
            game_seed = draw_seed(rng)
            self.seat = int(rng.integers(n)) if self.fixed_seat is None else self.fixed_seat
            others = iter(self.opponents)
            self._seated = [None if s == self.seat else next(others) for s in range(n)]
            for agent in self.opponents:
                agent.reset(draw_seed(rng))
            self.aec.reset(seed=game_seed, options=options)
            reward = self._play_opponents()
            if not self._ended():  # a game the learner never decides in is not an episode
                break
            skipped += 1
            if skipped > MAX_SKIPPED_GAMES:
                raise ValueError(
                    f"reset: {skipped} games in a row ended before the learner's first "
                    "decision (a stacked deck, or only one-card hands?)"
                )
        obs = self._observe()
        info = {"seat": self.seat, "reward_before_first_move": reward, "skipped_games": skipped}
        return obs, self._info(info, False)

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
            self._illegal = True
            obs = self._observe()
            return obs, -1.0, True, False, self._info({"illegal_action": True}, True)
        aec.step(int(action))
        reward = aec.rewards[learner] + self._play_opponents()
        terminated = aec.terminations[learner]
        truncated = aec.truncations[learner] and not terminated
        obs = self._observe()
        return obs, float(reward), terminated, truncated, self._info({}, terminated or truncated)

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions now (bool, 59); all False once the episode ended."""
        return self._mask.astype(bool)

    def _ended(self) -> bool:
        aec, learner = self.aec, self.learner
        return bool(aec.terminations[learner] or aec.truncations[learner])

    def _info(self, info: dict[str, Any], ended: bool) -> dict[str, Any]:
        """``info`` with the seat and the mask, and at the end the game's results."""
        info = {"seat": self.seat, **info, "action_mask": self._mask.copy()}
        game = self.aec.game
        if ended and game is not None:
            scores = list(game.scores)
            mine = scores[self.seat]
            info.update(
                winners=game.winners(),
                scores=scores,
                place=1 + sum(s < mine for s in scores),
                hand_points=[int(points[self.seat]) for points in game.hand_points],
            )
        return info

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

    def _observe(self) -> Any:
        obs = self.aec.observe(self.learner)
        if self._ended() or getattr(self, "_illegal", False):
            self._mask[:] = 0  # no decision pending
        else:
            self._mask[:] = obs["action_mask"]
        if self.flat_obs:
            return obs["observation"].copy()
        return {"observation": obs["observation"].copy(), "action_mask": self._mask.copy()}

    def snapshot(self) -> dict[str, Any]:
        return self.aec.snapshot()

    def render(self) -> Any:
        """The text table (``"ansi"``; printed for ``"human"``) or, for ``"rgb_array"``, a
        ``uint8`` picture ``(H, W, 3)`` of the table from the learner's seat."""
        if self.render_mode == "rgb_array":
            from craits_env.render_rgb import table_picture

            if self.aec.game is None:
                raise ValueError("render() before reset()")
            return table_picture(self.aec.game, self.seat)
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()
