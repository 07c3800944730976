"""The compiled rules one row at a time: the public API for code that runs them on rows of its own.

A search (:mod:`craits.agents.search_rollouts`) keeps a few games in a
:class:`~craits_env.vector.state.VectorState` (``VectorGame(...).state``), writes a
position into a row, then plays it in its own numba loop. What it may use:

Compiled (call them from numba code only; ``st, cd, p, sizes, deck`` are
``state.arrays()``, ``b`` a row):

- :func:`apply` ``(st, cd, p, sizes, deck, b, action)``: ``Game.apply`` of a legal action
  and every automatic event after it (the next hand dealt when it ends one);
- :func:`allowed_cards` ``(st, b)``: the current player's playable cards as a 52-bit mask
  (R3.1, R5.2); :func:`legal_bits` ``(st, p, b)``: every legal action as a 59-bit set;
- :func:`score_hand` ``(st, p, b, seat)``: the points of the cards a seat holds (R8.2-R8.4);
- :func:`finished_hand_points` ``(st, n, b, hand, seat)``: a finished hand's points,
  penalties included (``Game.hand_points``), exact where :func:`exact_hand_points` says so.

From Python:

- :func:`load_game` ``(state, b, game, generator_state, determinized=False)``: row ``b`` :=
  a copy of a :class:`~craits_env.Game`; :func:`legal_actions` ``(state, b)``;
- :func:`load_state` / :func:`export_state` ``(st, b, ...)``: a row's numpy PCG64 state.

The layout constants (``I_*``, ``S_*``, ``HELD1`` …) are :mod:`craits_env.vector.layout`'s.
"""

from __future__ import annotations

from .convert import legal_actions, load_game
from .decisions import allowed_cards, apply, legal_bits
from .hand_scoring import score_hand
from .rng import export_state, load_state
from .state import VectorState
from .step_rewards import EXACT_PRESSURES, exact_hand_points, finished_hand_points

__all__ = [
    "EXACT_PRESSURES",
    "VectorState",
    "allowed_cards",
    "apply",
    "exact_hand_points",
    "export_state",
    "finished_hand_points",
    "legal_actions",
    "legal_bits",
    "load_game",
    "load_state",
    "score_hand",
]
