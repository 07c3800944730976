"""One game on a VectorGame, with the :class:`~craits_env.Game` API the environment uses.

``craits_v0.raw_env(backend="vector")`` plays its game through :class:`SingleGame`: the
state lives in row 0 of a ``VectorGame(1, ...)``, every decision is one compiled step, and
the observation is the compiled encoder's. What the environment and its tests read
natively — ``legal_actions``, ``apply``, ``current_player``, ``phase``, ``is_over``,
``hand_points``, ``scores``, ``winners``, ``snapshot`` … — comes from the arrays; any other
attribute of ``Game`` (``hands``, ``discard``, ``clone()`` …, for rendering, bots and
search) is read from :meth:`SingleGame.mirror`, an exact ``Game`` rebuilt from the
snapshot and the generator state, cached until the next change. Mutating the mirror does
not change the game.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..engine import Game
from ..rules import Rules
from . import layout
from .game import VectorGame


def _legal_index(action: object, legal: tuple[int, ...]) -> int | None:
    """``action`` as an int if it is a legal id in another integer type (numpy), else None."""
    if isinstance(action, bool):
        return None
    try:
        value = operator.index(action)  # type: ignore[arg-type]
    except TypeError:
        return None
    return value if value in legal else None


class SingleGame:
    """Row 0 of a ``VectorGame(1, ...)`` without auto-reset, read and driven like a Game."""

    def __init__(self, num_players: int, rules: Rules, reward: str = "relative") -> None:
        self.vector = VectorGame(1, num_players, rules, seed=0, reward=reward, auto_reset=False)
        self.num_players = num_players
        self.rules = rules
        self._version = 0
        self._legal: tuple[int, ...] | None = None
        self._points: list[tuple[int, ...]] | None = None
        self._mirror: Game | None = None
        self._row = self.vector.state.st[0]
        self._action = np.zeros(1, np.int64)
        self._seats = np.zeros(1, np.int64)
        self._obs = np.zeros((1, self.vector.obs_size), np.float32)

    # ------------------------------------------------------------------ new games

    def new_game(
        self,
        rng: np.random.Generator,
        dealer: int | None = None,
        deck_top: list[str | int] | None = None,
    ) -> None:
        """``Game(num_players, rules, rng=rng, dealer=dealer, deck_top=deck_top)``, drawing from
        a copy of ``rng``'s state (:meth:`sync_generator` writes it back)."""
        self.vector.reset(
            [0], dealer=dealer, deck_top=deck_top, generator_state=rng.bit_generator.state
        )
        self._changed()

    def load(self, game: Game, rng: np.random.Generator) -> None:
        """Continue from a copy of ``game``, drawing from a copy of ``rng``'s state."""
        self.vector.load_game(0, game, rng.bit_generator.state)
        self._changed()

    def sync_generator(self, rng: np.random.Generator) -> None:
        """Set ``rng`` to where this game's generator is now (as a Game shares its ``rng``)."""
        rng.bit_generator.state = self.vector.generator_state(0)

    def _changed(self) -> None:
        self._version += 1
        self._legal = self._points = self._mirror = None

    # ------------------------------------------------------------------ the Game API

    @property
    def current_player(self) -> int:
        return int(self._row[layout.I_CURRENT])

    @property
    def phase(self) -> int:
        return int(self._row[layout.I_PHASE])

    @property
    def is_over(self) -> bool:
        return bool(self.vector.is_over()[0])

    @property
    def hand_index(self) -> int:
        return int(self._row[layout.I_HAND_INDEX])

    @property
    def hand_decisions(self) -> int:
        return int(self._row[layout.I_HAND_DECISIONS])

    @property
    def active_suit(self) -> int:
        return int(self._row[layout.I_ACTIVE_SUIT])

    @property
    def drawn(self) -> list[int]:
        return self._row[layout.S_DRAWN : layout.S_DRAWN + self.num_players].tolist()

    @property
    def scores(self) -> list[int]:
        return self.vector.scores(0)

    @property
    def hand_points(self) -> list[tuple[int, ...]]:
        if self._points is None:
            self._points = self.vector.hand_points(0)
        return self._points

    def winners(self) -> list[int]:
        scores = self.scores
        best = min(scores)
        return [s for s, v in enumerate(scores) if v == best]

    def legal_actions(self) -> tuple[int, ...]:
        if self._legal is None:
            self._legal = self.vector.legal_actions(0)
        return self._legal

    def forced_action(self) -> int | None:
        legal = self.legal_actions()
        return legal[0] if len(legal) == 1 else None

    def apply(self, action: int) -> None:
        """``Game.apply``: ``ValueError`` with the engine's message for an illegal action."""
        legal = self.legal_actions()
        if type(action) is not int or action not in legal:
            value = _legal_index(action, legal)
            if value is None:  # the engine's own one-line error, on a copy
                self.mirror().clone().apply(action)
                raise AssertionError("Game.apply accepted an action outside legal_actions()")
            action = value
        self._action[0] = action
        self.vector.step(self._action)
        self._changed()

    def observation(self, seat: int) -> np.ndarray:
        """``ObservationEncoder.encode(game, seat)``, by the compiled encoder (a new array)."""
        self._seats[0] = seat
        self.vector.observe(self._obs, self._seats)
        return self._obs[0].copy()

    def snapshot(self, *, resume: bool = False) -> dict[str, Any]:
        if resume:
            return self.mirror().snapshot(resume=True)
        return self.vector.snapshot(0, legal=self.legal_actions())

    def mirror(self) -> Game:
        """An exact :class:`Game` of the current state, with a copy of the generator."""
        if self._mirror is None:
            generator = np.random.Generator(np.random.PCG64(0))
            generator.bit_generator.state = self.vector.generator_state(0)
            self._mirror = Game.from_snapshot(self.vector.snapshot(0), rng=generator)
        return self._mirror

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("vector", "_mirror"):
            raise AttributeError(name)
        return getattr(self.mirror(), name)

    def __repr__(self) -> str:
        return f"SingleGame({self.mirror()!r})"
