"""The state of B games of one table as the compiled rules read it: :class:`VectorState`.

A :class:`~craits_env.vector.VectorGame` holds one (its ``state``); code that runs the
compiled rules on rows of its own — :mod:`craits.agents.search_rollouts` — reads the arrays
from here and passes them to the kernels (``st, cd, params, sizes, deck``, in that order).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..deck import deck_cards
from ..rules import Rules
from . import layout

LoadedHands = tuple[int, int, list[tuple[int, ...]]]
"""A row loaded from a Python game: ``(episode, its hand index, its finished hands' points)``."""


@dataclass(eq=False)
class VectorState:
    """The arrays of B games (``layout`` describes them) and the table they play.

    ``st`` (int64) and ``cd`` (uint8): one row per game; ``params``: the rules as the
    kernels read them (:func:`~craits_env.vector.layout.rule_params`); ``sizes``: the hand
    sizes (int64); ``deck``: the deck in deck order (uint8). ``loaded``: the rows that
    continue a Python game (:func:`craits_env.vector.convert.load_game`), whose earlier
    hands' points come from that game.
    """

    num_players: int
    rules: Rules
    st: np.ndarray
    cd: np.ndarray
    params: np.ndarray
    sizes: np.ndarray
    deck: np.ndarray
    rules_dict: dict[str, Any] = field(default_factory=dict)  # snapshot()["rules"]
    loaded: dict[int, LoadedHands] = field(default_factory=dict)

    @classmethod
    def allocate(
        cls, num_envs: int, num_players: int, rules: Rules, reward: str, auto_reset: bool
    ) -> VectorState:
        """Zeroed rows for ``num_envs`` games (arguments checked by the caller)."""
        st, cd = layout.allocate(num_envs, num_players, rules)
        return cls(
            num_players=num_players,
            rules=rules,
            st=st,
            cd=cd,
            params=layout.rule_params(num_players, rules, reward, auto_reset),
            sizes=np.array(rules.hand_sizes, np.int64),
            deck=np.array(
                deck_cards(rules.decks_for(num_players), rules.remove_kings_queens), np.uint8
            ),
            rules_dict=rules.to_dict(),
        )

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(st, cd, params, sizes, deck)``: the first arguments of the kernels that play."""
        return self.st, self.cd, self.params, self.sizes, self.deck

    @property
    def num_envs(self) -> int:
        return int(self.st.shape[0])
