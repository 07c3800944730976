"""Action ids (``Discrete(59)``) and decision phases, as in docs/interface.md."""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum

from .cards import CARD_STRS, NUM_CARDS, SUIT_CHARS, parse_card

DRAW = NUM_CARDS  # 52: draw one card (R3.3) or take the count (R5.3)
CALL_BASE = DRAW + 1  # 53–56: call suit c, d, h, s (R4, 8 and 9)
DECLARE = CALL_BASE + 4  # 57: declare "one card" (R7.1)
STAY_SILENT = DECLARE + 1  # 58
NUM_ACTIONS = STAY_SILENT + 1  # 59
MAX_ACTION_ID_DIGITS = 9
"""An action id typed as text is at most this many ASCII digits (``int`` of a longer one
would be absurd: the ids end at 58)."""


class Phase(IntEnum):
    """What the current player decides (``snapshot()["phase"]`` is the lower-case name)."""

    PLAY = 0  # a normal turn, a 6's extra play, a king's sequence
    COUNT = 1  # play an ace or a two, or take the count (R5)
    CALL_SUIT = 2  # after an 8 or a 9 (R4)
    DECLARE = 3  # declare "one card" or stay silent (R7)
    GAME_OVER = 4


PHASE_NAMES: tuple[str, ...] = tuple(p.name.lower() for p in Phase)

# The phases as plain ints, for hot paths (IntEnum comparisons are slower). ``PHASE_DECLARE``
# is the phase; ``DECLARE`` is the action.
PHASE_PLAY = int(Phase.PLAY)
PHASE_COUNT = int(Phase.COUNT)
PHASE_CALL_SUIT = int(Phase.CALL_SUIT)
PHASE_DECLARE = int(Phase.DECLARE)
PHASE_GAME_OVER = int(Phase.GAME_OVER)

NO_PLAYER = -1
"""``Game.current_player`` once the game is over (``snapshot()["current_player"]`` is ``None``)."""


def forced_action(legal: Sequence[int]) -> int | None:
    """The only action of a decision without a choice (it is still asked, R3.6), else ``None``.

    ``legal`` is the decision's legal action ids; ``None`` also when there are none.
    """
    return legal[0] if len(legal) == 1 else None


def action_str(action: int) -> str:
    """A readable name: ``"play 7c"``, ``"draw"``, ``"call h"``, ``"declare"``, ``"stay silent"``"""
    if 0 <= action < NUM_CARDS:
        return "play " + CARD_STRS[action]
    if action == DRAW:
        return "draw"
    if CALL_BASE <= action < DECLARE:
        return "call " + SUIT_CHARS[action - CALL_BASE]
    if action == DECLARE:
        return "declare"
    if action == STAY_SILENT:
        return "stay silent"
    return f"unknown action {action}"


def parse_action(text: str | int) -> int:
    """An action id from an id, a card (``"7c"``), ``"draw"``, ``"call h"``/``"h"``,
    ``"declare"`` or ``"silent"``; ``ValueError`` otherwise."""
    if isinstance(text, int) and not isinstance(text, bool):
        if 0 <= text < NUM_ACTIONS:
            return text
        raise ValueError(f"invalid action id {text}: expected 0 to {NUM_ACTIONS - 1}")
    s = str(text).strip().lower()
    words = {"draw": DRAW, "declare": DECLARE, "silent": STAY_SILENT, "stay silent": STAY_SILENT}
    if s in words:
        return words[s]
    if s.startswith("call "):
        s = s[5:].strip()
    if len(s) == 1 and s in SUIT_CHARS:
        return CALL_BASE + SUIT_CHARS.index(s)
    if s.isdigit():  # true for "²" and "٣" too: only ASCII digits are an id (int("٣") == 3)
        if not s.isascii():
            raise ValueError(
                f"invalid action {text!r:.60}: an action id is written in "
                f"digits 0-9, 0 to {NUM_ACTIONS - 1}"
            )
        if len(s) > MAX_ACTION_ID_DIGITS:
            raise ValueError(
                f"invalid action id of {len(s)} digits: expected 0 to {NUM_ACTIONS - 1}"
            )
        return parse_action(int(s))
    try:
        return parse_card(s)
    except ValueError:
        raise ValueError(
            f"invalid action {text!r}: expected a card such as '7c', 'draw', a suit "
            f"({', '.join(SUIT_CHARS)}), 'declare', 'silent' or an id 0-{NUM_ACTIONS - 1}"
        ) from None
