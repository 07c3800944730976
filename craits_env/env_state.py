"""Saving and branching a ``craits_v0`` environment: ``state()``, ``restore(state)``, ``clone()``.

:class:`EnvState` is the part of :class:`craits_env.craits_v0.raw_env` (its module docstring,
"Saving and branching", is the user's page) that turns everything the environment holds into
one JSON-serialisable dict and back: the game's snapshot, its generator, the public tracker,
PettingZoo's per-agent dicts, the step counters, the action spaces' generators and the
constructor's options. A state is checked whole before anything changes (a ``ValueError``
names the key).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Self, cast

import numpy as np

from .engine import Game
from .observation import ObservationEncoder
from .public import PublicGame
from .rules import Rules
from .snapshots import generator_from_state, generator_state

if TYPE_CHECKING:
    from .vector.single import SingleGame

# raw_env.state()'s keys.
_STATE_KEYS = (
    "options", "game", "rng", "public", "agents", "agent_selection", "skip_agent_selection",
    "rewards", "cumulative_rewards", "terminations", "truncations", "infos", "hands_rewarded",
    "steps", "action_space_rngs",
)  # fmt: skip


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _per_agent(value: object, key: str, agents: list[str], kind: type) -> dict[str, Any]:
    """``state()[key]``: one value of ``kind`` per live agent (a copy; a reward may be an int)."""
    if not isinstance(value, dict) or set(value) != set(agents):
        raise ValueError(f"state[{key!r}]: got {_short(value)}, allowed a dict keyed by the agents")
    out: dict[str, Any] = {}
    for a in agents:
        v = value[a]
        if kind is float:
            ok = isinstance(v, int | float) and not isinstance(v, bool)
        else:
            ok = isinstance(v, kind)
        if not ok:
            raise ValueError(f"state[{key!r}][{a!r}]: got {_short(v)}, allowed a {kind.__name__}")
        out[a] = copy.deepcopy(v) if kind is dict else v  # PettingZoo clears rewards to int 0
    return out


class EnvState:
    """``state``, ``restore`` and ``clone`` of :class:`~craits_env.craits_v0.raw_env`, which
    sets every attribute below (the environment; this class holds none of its own)."""

    num_players: int
    rules: Rules
    reward_mode: str
    auto_forced: bool
    max_steps: int | None
    track_public: bool
    encoder: ObservationEncoder
    possible_agents: list[str]
    agents: list[str]
    agent_selection: str
    rewards: dict[str, float]
    _cumulative_rewards: dict[str, float]
    terminations: dict[str, bool]
    truncations: dict[str, bool]
    infos: dict[str, dict[str, Any]]
    action_spaces: dict[str, Any]  # craits_v0.ActionSpace: use_generator
    game: Game | None
    public: PublicGame | None
    _single: SingleGame | None  # the vector backend's one game
    _rng: np.random.Generator | None
    _hands_rewarded: int
    _steps: int
    _skip_agent_selection: str | None
    _obs_cache: dict[str, dict[str, np.ndarray]]
    _ezpickle_args: tuple[Any, ...]
    _ezpickle_kwargs: dict[str, Any]

    def state(self) -> dict[str, Any]:
        """Everything this environment holds, JSON-serialisable; :meth:`restore` takes it back.

        Keys: ``options`` (the constructor's options), ``game`` (``Game.snapshot()``),
        ``rng`` (the generator of the game and of later resets), ``public`` (the tracker's
        inferences with ``track_public``, else ``None``), PettingZoo's ``agents``,
        ``agent_selection``, ``skip_agent_selection``, ``rewards``, ``cumulative_rewards``,
        ``terminations``, ``truncations``, ``infos``, the counters ``hands_rewarded`` and
        ``steps``, and ``action_space_rngs`` (what ``action_space(agent).sample`` draws from).
        """
        game = self.game
        if game is None or self._rng is None:
            raise ValueError("state() before reset()")
        self._sync_generator()
        return {
            "options": self._state_options(),
            "game": game.snapshot(),
            "rng": generator_state(self._rng),
            "public": None if self.public is None else self.public.tracker.state(),
            "agents": list(self.agents),
            "agent_selection": self.agent_selection,
            "skip_agent_selection": getattr(self, "_skip_agent_selection", None),
            "rewards": dict(self.rewards),
            "cumulative_rewards": dict(self._cumulative_rewards),
            "terminations": dict(self.terminations),
            "truncations": dict(self.truncations),
            "infos": copy.deepcopy(self.infos),
            "hands_rewarded": self._hands_rewarded,
            "steps": self._steps,
            "action_space_rngs": {
                a: generator_state(space.np_random) for a, space in self.action_spaces.items()
            },
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Continue from ``state`` (:meth:`state` of this environment or of one made with the
        same arguments), exactly as the environment it was taken from would.

        Everything is checked first: a ``ValueError`` names the key, and nothing changes.
        """
        if not isinstance(state, dict):
            raise ValueError(f"state: got {type(state).__name__}, expected a dict of state()")
        missing = [k for k in _STATE_KEYS if k not in state]
        if missing:
            raise ValueError(f"state[{missing[0]!r}]: missing (every key of state() is needed)")
        unknown = sorted(str(k) for k in set(state) - set(_STATE_KEYS))
        if unknown:
            raise ValueError(f"state: unknown key(s) {unknown}")
        mine = self._state_options()
        options = state["options"]
        if not isinstance(options, dict) or set(options) != set(mine):
            raise ValueError(
                f"state['options']: got {_short(options)}, allowed a dict of {list(mine)}"
            )
        for key, value in mine.items():
            if options[key] != value:
                raise ValueError(
                    f"state['options'][{key!r}]: got {_short(options[key])} but this environment "
                    f"has {_short(value)}; restore into one made with the same options"
                )
        rng = generator_from_state(state["rng"], "state['rng']")
        try:
            game = Game.from_snapshot(state["game"], rng=rng)
            if self._single is not None:  # a new one: this env's changes only once all is valid
                from .vector.single import SingleGame

                single = SingleGame(self.num_players, self.rules, self.reward_mode)
                single.load(game, rng)
                game = cast(Game, single)
        except ValueError as e:
            raise ValueError(f"state['game']: {e}") from None
        public = None
        if self.track_public:
            public = PublicGame(game, self.encoder)
            try:
                public.tracker.restore(state["public"])
            except ValueError as e:
                raise ValueError(f"state['public']: {e}") from None
        elif state["public"] is not None:
            raise ValueError(f"state['public']: got {_short(state['public'])}, allowed None")
        agents = state["agents"]
        if (
            not isinstance(agents, list)
            or len(set(agents)) != len(agents)
            or not set(agents) <= set(self.possible_agents)
        ):
            raise ValueError(f"state['agents']: got {_short(agents)}, allowed distinct agent names")
        per_agent = {
            key: _per_agent(state[key], key, agents, kind)
            for key, kind in (
                ("rewards", float),
                ("cumulative_rewards", float),
                ("terminations", bool),
                ("truncations", bool),
                ("infos", dict),
            )
        }
        for key, allowed in (("agent_selection", False), ("skip_agent_selection", True)):
            name = state[key]
            if name not in self.possible_agents and not (allowed and name is None):
                raise ValueError(f"state[{key!r}]: got {_short(name)}, allowed an agent name")
        counters = {}
        for key, top in (("hands_rewarded", len(game.hand_points)), ("steps", None)):
            value = state[key]
            if type(value) is not int or value < 0 or (top is not None and value > top):
                raise ValueError(f"state[{key!r}]: got {_short(value)}, allowed an int >= 0")
            counters[key] = value
        space_rngs = state["action_space_rngs"]
        if not isinstance(space_rngs, dict) or set(space_rngs) != set(self.possible_agents):
            raise ValueError(f"state['action_space_rngs']: got {_short(space_rngs)}")
        generators = {
            a: generator_from_state(space_rngs[a], f"state['action_space_rngs'][{a!r}]")
            for a in self.possible_agents
        }
        # Everything is valid: set it.
        self.game, self.public, self._rng = game, public, rng
        if self._single is not None:
            self._single = cast("SingleGame", game)  # the one restored above
        self.agents = list(agents)
        self.rewards = per_agent["rewards"]
        self._cumulative_rewards = per_agent["cumulative_rewards"]
        self.terminations = per_agent["terminations"]
        self.truncations = per_agent["truncations"]
        self.infos = per_agent["infos"]
        self.agent_selection = state["agent_selection"]
        self._skip_agent_selection = state["skip_agent_selection"]
        self._hands_rewarded, self._steps = counters["hands_rewarded"], counters["steps"]
        for a, generator in generators.items():
            self.action_spaces[a].use_generator(generator)
        self._obs_cache = {}

    def clone(self) -> Self:
        """An independent environment that continues identically under the same calls: one
        made with this environment's constructor arguments, restored to :meth:`state`."""
        args: tuple[Any, ...] = self._ezpickle_args
        kwargs: dict[str, Any] = self._ezpickle_kwargs
        other: Self = cast(Any, type(self))(*args, **kwargs)
        if self.game is not None:
            other.restore(self.state())
        return other

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        """``copy.deepcopy`` is :meth:`clone` (EzPickle alone would rebuild an un-reset env)."""
        return self.clone()

    def _state_options(self) -> dict[str, Any]:
        """The constructor's options a state must have been taken under."""
        return {
            "num_players": self.num_players,
            "rules": self.rules.to_dict(),
            "reward": self.reward_mode,
            "auto_forced": self.auto_forced,
            "max_steps": self.max_steps,
            "track_public": self.track_public,
        }

    def _sync_generator(self) -> None:
        """On the vector backend, bring ``self._rng`` to where the game's generator is (a
        python-backend game draws from ``self._rng`` itself)."""
        if self._single is not None and self.game is not None and self._rng is not None:
            self._single.sync_generator(self._rng)
