"""Craits: a rules engine and RL environments for the shedding card game Craits.

Public API (see docs/interface.md): :class:`Rules`, :func:`score_hand`,
:class:`Game` (the rules engine), card and action helpers.
"""

from .actions import (
    CALL_BASE,
    DECLARE,
    DRAW,
    NO_PLAYER,
    NUM_ACTIONS,
    STAY_SILENT,
    Phase,
    action_str,
    parse_action,
)
from .cards import NUM_CARDS, Rank, Suit, card_str, parse_card, parse_cards, pretty
from .engine import Game
from .rules import Rules
from .scoring import CARD_POINTS, pressure_cost, score_hand

__version__ = "0.4.0"

GYM_ENV_ID = "craits/Craits-v0"


def _register_gym() -> None:
    import gymnasium

    if GYM_ENV_ID not in gymnasium.registry:
        # A string entry point: the Gym view (opponents are agents) lives in the agents layer,
        # which this package does not import.
        gymnasium.register(
            GYM_ENV_ID,
            entry_point="craits.agents.gym_env:CraitsGymEnv",
            vector_entry_point="craits.agents.gym_vector_env:CraitsVectorEnv",  # make_vec
        )


_register_gym()

__all__ = [
    "CALL_BASE",
    "CARD_POINTS",
    "DECLARE",
    "DRAW",
    "GYM_ENV_ID",
    "NO_PLAYER",
    "NUM_ACTIONS",
    "NUM_CARDS",
    "STAY_SILENT",
    "Game",
    "Phase",
    "Rank",
    "Rules",
    "Suit",
    "__version__",
    "action_str",
    "card_str",
    "parse_action",
    "parse_card",
    "parse_cards",
    "pressure_cost",
    "pretty",
    "score_hand",
]
