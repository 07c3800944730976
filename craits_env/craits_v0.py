"""Craits as a PettingZoo AEC environment: ``craits_v0``.

```python
from craits_env import craits_v0

env = craits_v0.env(num_players=4, render_mode="ansi")
env.reset(seed=42)
for agent in env.agent_iter():
    obs, reward, termination, truncation, info = env.last()
    mask = obs["action_mask"]
    action = None if termination or truncation else env.action_space(agent).sample(mask)
    env.step(action)
```

| | |
|---|---|
| Agents | `player_0 … player_{n-1}`, n = 2–10 (seat = the number in the name) |
| Actions | `Discrete(59)`: 0–51 play that card, 52 draw / take the count, 53–56 call c d h s, 57 declare "one card", 58 stay silent |
| Observation | `Dict(observation=Box(float32, (size,)), action_mask=Box(int8, (59,)))` |
| Episode | one game: the whole schedule of hands (15 by default) |
| Import | `from craits_env import craits_v0` |
| Parallel | `craits_v0.parallel_env(...)`: one decision a step, the waiting seats' masks in `infos` (:mod:`craits_env.parallel_view`) |

**Observation.** One flat float32 vector from
:class:`craits_env.observation.ObservationEncoder`; its slice table is in that
module's docstring and on the Environments page, docs/environments.md (a test
keeps both equal to the code). It holds only what the agent may know (R11).
``action_mask`` is exactly the engine's legal set for the agent to act, all
zeros for every other agent.

**Rewards** (``reward=``, defined in :mod:`craits_env.rewards`), given when a
hand ends (or the game, for ``"win"``) and accumulated by PettingZoo's ``last()``
until the agent acts:

- ``"relative"`` (default): (mean of the opponents' hand points − own hand
  points) / 100 — zero-sum;
- ``"bounded"``: ``tanh`` of that difference of points / 200 — the same sign and order as
  ``"relative"``, always in (−1, 1), so one catastrophic hand cannot dominate a batch;
- ``"score"``: −own hand points / 100;
- ``"win"``: at the game's end the winners (lowest total, ties share) get
  +1/|winners| each and the others −1/|others| each; zero-sum, all 0 if everyone ties.

Hand points include shuffle-pressure penalties (R8.5).

**Infos.** ``{}`` while the game runs; when it ends, every agent's ``info`` (``env.last()``
after the game's last step) holds ``winners`` (the seats with the lowest total), ``scores``
(every seat's total) and ``place`` (the agent's rank by total, 1 = best, ties share the
better place) — the same keys as the Gymnasium view's last ``info``.

**Options.** ``rules=Rules(...)`` (every option of docs/rules.md); ``backend="vector"`` runs
the game on the compiled batched engine (:class:`craits_env.vector.VectorGame`, one game;
identical observations, masks, rewards, snapshots and renders; needs no other change);
``track_public=True``
keeps the public history bots use (``env.unwrapped.seat_view(agent)``); ``auto_forced=True``
applies decisions with a single legal action automatically (they are still
counted by the engine, R3.6); ``max_steps=N`` truncates the episode after N
``step`` calls. ``reset(seed, options)`` takes ``options={"deck": [...],
"dealer": seat}`` (docs/interface.md); another key is a ``ValueError``, except
``"options"``, which PettingZoo's API tests pass and which is ignored. ``env.unwrapped.snapshot()`` returns the
whole state (god's view); ``env.unwrapped.game`` is the engine.

**Saving and branching.** ``env.unwrapped.state()`` is everything the environment holds
(the game's snapshot, its generator, the agents' rewards, terminations, truncations and
infos, the step counters, the options, the public tracker), JSON-serialisable;
``restore(state)`` continues from it in an environment made with the same arguments;
``clone()`` is an independent copy that continues identically, and ``copy.deepcopy``
of the raw environment is ``clone()`` (pickling still rebuilds an un-reset environment).

**Illegal actions.** ``raw_env.step`` raises ``ValueError`` naming the action
and the legal ones, and changes nothing; ``env()`` applies PettingZoo's classic
convention (``TerminateIllegalWrapper``: the game ends, the offender gets −1).

**Seeding.** ``reset(seed=s)`` makes the game's generator ``default_rng(s)``;
a later ``reset()`` without a seed continues that generator, so a sequence of
episodes is reproducible from the first seed.

Version history: v0 — first release.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from .actions import NUM_ACTIONS
from .engine import Game
from .env_state import EnvState
from .observation import ObservationEncoder, legal_mask
from .parallel_view import CraitsParallelEnv
from .public import PublicGame, SeatView
from .render_text import render_table

# REWARD_MODES, RewardMode, hand_rewards and win_rewards are also importable from here.
from .rewards import REWARD_MODES as REWARD_MODES
from .rewards import RewardMode as RewardMode
from .rewards import check_reward_mode, game_rewards, hand_rewards
from .rewards import win_rewards as win_rewards
from .rules import Rules, check_num_players
from .wrappers import wrap_classic

if TYPE_CHECKING:
    from .vector.single import SingleGame

RENDER_MODES = ["human", "ansi", "rgb_array"]
RESET_OPTIONS = ("deck", "dealer")  # reset(options=...)'s keys
# PettingZoo's api_test and parallel_api_test check reset's signature with
# options={"options": 1}: that key is ignored; any other unknown key is a ValueError.
PETTINGZOO_PROBE = "options"


def game_over_infos(
    agents: list[str], winners: list[int], scores: list[int]
) -> dict[str, dict[str, Any]]:
    """Every agent's last ``info``: ``winners`` (seats), ``scores`` (per seat) and its ``place``
    (1 = the lowest total; ties share the better place), as the Gym view's last info."""
    return {
        a: {
            "winners": list(winners),
            "scores": list(scores),
            "place": 1 + sum(s < scores[i] for s in scores),
        }
        for i, a in enumerate(agents)
    }


BACKENDS = ("python", "vector")  # the engine.py Game, or craits_env.vector (compiled)


class ActionSpace(spaces.Discrete):
    """``Discrete(59)`` whose ``contains`` answers a plain ``int`` without numpy (every step)."""

    def __init__(self, n: int = NUM_ACTIONS, seed: int | None = None) -> None:
        super().__init__(n, seed=seed)
        self._size = int(n)

    def contains(self, x: Any) -> bool:
        if type(x) is int:
            return 0 <= x < self._size
        return super().contains(x)

    def use_generator(self, rng: np.random.Generator) -> None:
        """Sample from ``rng`` from now on (``raw_env.restore``)."""
        self._np_random = rng


def env(**kwargs: Any) -> AECEnv:
    """The AEC environment with PettingZoo's standard wrappers for classic games."""
    return wrap_classic(raw_env(**kwargs), illegal_reward=-1)


def parallel_env(**kwargs: Any) -> CraitsParallelEnv:
    """``env(**kwargs)`` as a PettingZoo ``ParallelEnv``, one decision a step: who decides,
    what the waiting seats see (:mod:`craits_env.parallel_view`; docs/environments.md)."""
    return CraitsParallelEnv(env(**kwargs))


class raw_env(EnvState, AECEnv, EzPickle):
    """The unwrapped AEC environment (see the module docstring); its saving and branching:
    :class:`~craits_env.env_state.EnvState`."""

    metadata = {  # noqa: RUF012 (PettingZoo's convention)
        "render_modes": RENDER_MODES,
        "name": "craits_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        num_players: int = 4,
        rules: Rules | None = None,
        render_mode: str | None = None,
        *,
        reward: str = "relative",
        auto_forced: bool = False,
        max_steps: int | None = None,
        track_public: bool = False,
        backend: str = "python",
    ) -> None:
        EzPickle.__init__(
            self,
            num_players,
            rules,
            render_mode,
            reward=reward,
            auto_forced=auto_forced,
            max_steps=max_steps,
            track_public=track_public,
            backend=backend,
        )
        super().__init__()
        n = check_num_players(num_players)
        rules = Rules() if rules is None else rules
        if not isinstance(rules, Rules):
            raise ValueError(f"rules: got {type(rules).__name__}, expected craits_env.Rules")
        if render_mode is not None and render_mode not in RENDER_MODES:
            allowed = ", ".join(map(repr, [None, *RENDER_MODES]))
            raise ValueError(f"render_mode: got {render_mode!r}, allowed {allowed}")
        check_reward_mode(reward)
        if not isinstance(auto_forced, bool):
            raise ValueError(f"auto_forced: got {auto_forced!r}, allowed True or False")
        if max_steps is not None and (
            isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1
        ):
            raise ValueError(f"max_steps: got {max_steps!r}, allowed None or an int >= 1")
        if backend not in BACKENDS:
            raise ValueError(f"backend: got {backend!r}, allowed {', '.join(map(repr, BACKENDS))}")
        # Fails now, not at reset, if the configuration cannot be dealt (R1.5).
        Game(n, rules, seed=0)
        self.backend = backend
        self._single: SingleGame | None = None
        if backend == "vector":  # refuses here what VectorGame cannot run
            from .vector.single import SingleGame

            self._single = SingleGame(n, rules, reward)
        self.num_players = n
        self.rules = rules
        self.render_mode = render_mode
        self.reward_mode = reward
        self.auto_forced = auto_forced
        self.max_steps = max_steps
        self.encoder = ObservationEncoder(n, rules)
        self.possible_agents = [f"player_{s}" for s in range(n)]
        self.agents: list[str] = []
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(self.encoder.low, self.encoder.high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces: dict[str, ActionSpace] = {
            a: ActionSpace(NUM_ACTIONS) for a in self.possible_agents
        }
        self._seat_of = {a: s for s, a in enumerate(self.possible_agents)}
        self.track_public = bool(track_public)
        # On the vector backend, a SingleGame: it answers Game's API (craits_env.vector.single).
        self.game: Game | None = None
        self.public: PublicGame | None = None
        self._rng: np.random.Generator | None = None
        self._obs_cache: dict[str, dict[str, np.ndarray]] = {}

    # ----------------------------------------------------------------- spaces

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ----------------------------------------------------------------- episode

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        options = dict(options or {})
        unknown = sorted(map(str, set(options) - {*RESET_OPTIONS, PETTINGZOO_PROBE}))
        if unknown:
            allowed = ", ".join(map(repr, RESET_OPTIONS))
            raise ValueError(f"reset options: unknown key(s) {unknown}; allowed {allowed}")
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        elif self._rng is None:
            self._rng = np.random.default_rng()
        else:
            self._sync_generator()
        if self._single is not None:
            self._single.new_game(self._rng, options.get("dealer"), options.get("deck"))
            game = cast(Game, self._single)
        else:
            game = Game(
                self.num_players,
                self.rules,
                rng=self._rng,
                dealer=options.get("dealer"),
                deck_top=options.get("deck"),
            )
        self.game = game
        self.public = PublicGame(game, self.encoder) if self.track_public else None
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._hands_rewarded = 0
        self._steps = 0
        self._obs_cache = {}
        if self.auto_forced:
            self._apply_forced()
        self._after_engine_moves()

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        assert game is not None
        if action is None:
            raise ValueError(f"action None for {agent}, who is still playing")
        self._apply(action)  # ValueError naming the legal actions; nothing changed
        self._cumulative_rewards[agent] = 0.0
        self._steps += 1
        if self.auto_forced:
            self._apply_forced()
        self._after_engine_moves()
        if self.render_mode == "human":
            self.render()

    def _apply_forced(self) -> None:
        game = self.game
        assert game is not None
        while (action := game.forced_action()) is not None:
            self._apply(action)

    def _apply(self, action: int) -> None:
        if self.public is not None:
            self.public.apply(action)
        else:
            self.game.apply(action)  # type: ignore[union-attr]

    def _after_engine_moves(self) -> None:
        """Rewards of finished hands, termination, truncation, the next agent."""
        game = self.game
        assert game is not None
        self._obs_cache = {}
        rewards = dict.fromkeys(self.agents, 0.0)
        finished = game.hand_points
        if len(finished) > self._hands_rewarded and self.reward_mode != "win":
            for points in finished[self._hands_rewarded :]:
                for a, r in zip(
                    self.possible_agents, hand_rewards(points, self.reward_mode), strict=True
                ):
                    rewards[a] += r
        self._hands_rewarded = len(finished)
        if game.is_over:
            for a, r in zip(
                self.possible_agents, game_rewards(game, self.reward_mode), strict=True
            ):
                rewards[a] += r  # the "win" rewards; zeros in the other modes
            self.terminations = dict.fromkeys(self.agents, True)
            self.infos = game_over_infos(self.possible_agents, game.winners(), list(game.scores))
        elif self.max_steps is not None and self._steps >= self.max_steps:
            self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = rewards
        if not game.is_over:
            self.agent_selection = self.possible_agents[game.current_player]
        elif not hasattr(self, "agent_selection") or self.agent_selection not in self.agents:
            self.agent_selection = self.agents[0]
        self._accumulate_rewards()

    # ----------------------------------------------------------------- views

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32 vector, "action_mask": int8 (59,)}`` for ``agent``.

        The arrays are shared by repeated calls within one step: copy before mutating.
        """
        cached = self._obs_cache.get(agent)
        if cached is not None:
            return cached
        game = self.game
        if game is None:
            raise ValueError("observe() before reset()")
        seat = self._seat_of[agent]
        legal = game.legal_actions() if game.current_player == seat else ()
        if self._single is not None:  # the compiled encoder: the same vector
            observation = self._single.observation(seat)
        else:
            observation = self.encoder.encode(game, seat)
        obs = {"observation": observation, "action_mask": legal_mask(legal)}
        self._obs_cache[agent] = obs
        return obs

    def seat_view(self, agent: str) -> SeatView:
        """``agent``'s public-state view for bots (needs ``track_public=True``)."""
        if self.public is None:
            raise ValueError("seat_view() needs raw_env(track_public=True) and a reset()")
        return self.public.view(self._seat_of[agent])

    def snapshot(self) -> dict[str, Any]:
        """The whole state (all hands: god's view) as a JSON-serialisable dict (docs/interface.md)."""
        if self.game is None:
            raise ValueError("snapshot() before reset()")
        return self.game.snapshot()

    def render(self) -> Any:
        """The table as text (``"ansi"``; printed for ``"human"``) or as a ``uint8`` picture
        ``(H, W, 3)`` from the acting seat (``"rgb_array"``, :mod:`craits_env.render_rgb`)."""
        if self.render_mode is None:
            return None
        if self.game is None:
            raise ValueError("render() before reset()")
        if self.render_mode == "rgb_array":
            from .render_rgb import table_picture

            game = self._table_game()
            seat = game.current_player if not game.is_over else 0
            return table_picture(game, seat, list(self.possible_agents))
        text = render_table(self._table_game(), self.possible_agents)
        if self.render_mode == "ansi":
            return text
        print(text, end="\n\n")
        return None

    def _table_game(self) -> Game:
        """The game as an engine ``Game`` (on the vector backend, its exact mirror)."""
        assert self.game is not None
        return self._single.mirror() if self._single is not None else self.game

    def close(self) -> None:
        pass
