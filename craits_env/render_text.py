"""Text rendering of a game table (``render_mode="ansi"``): what a player at the table sees.

Only the acting player's hand is shown; everything else is public (R11).
"""

from __future__ import annotations

from .actions import PHASE_NAMES, Phase, action_str
from .cards import SUIT_SYMBOLS, pretty
from .engine import Game


def render_table(game: Game, names: list[str] | None = None) -> str:
    """A compact table: the acting player's hand, the top card, the active suit, the count,
    the direction, each player's card count and score, and whose turn it is. After the
    game's end: its last hand (``hand 15/15``), "game over" and the winners."""
    n = game.num_players
    names = names or [f"player_{s}" for s in range(n)]
    hands = len(game.rules.hand_sizes)
    # After the last hand the engine's hand index is one past it and the deal has moved on.
    shown = min(game.hand_index + 1, hands)
    where = "game over" if game.is_over else f"dealer {names[game.dealer]}"
    lines = [
        f"hand {shown}/{hands} ({game.hand_size} card{'s' if game.hand_size != 1 else ''})"
        f"  {where}  stock {game.stock_size}",
        f"top {pretty(game.top)}  suit {SUIT_SYMBOLS[game.active_suit]}"
        + (f"  count {game.count}" if game.count else "")
        + ("  direction → left" if game.direction == 1 else "  direction ← right"),
    ]
    width = max(len(x) for x in names)
    for s in range(n):
        marker = "▶" if s == game.current_player and not game.is_over else " "
        extra = []
        if s in game.went_out:
            extra.append("out")
        if game.one_card_penalty_pending[s]:
            extra.append("owes one-card penalty")
        lines.append(
            f"{marker} {names[s]:<{width}}  {len(game.hands[s]):>2} cards  "
            f"score {game.scores[s]:>5}" + (f"  ({', '.join(extra)})" if extra else "")
        )
    if game.is_over:
        winners = ", ".join(names[s] for s in game.winners())
        lines.append(f"game over — winner(s): {winners}")
        return "\n".join(lines)
    p = game.current_player
    hand = " ".join(pretty(c) for c in game.hands[p]) or "(no cards)"
    lines.append(f"{names[p]} to {PHASE_NAMES[game.phase].replace('_', ' ')}: {hand}")
    if game.phase != Phase.PLAY or len(game.legal_actions()) <= 12:
        lines.append("legal: " + ", ".join(action_str(a) for a in game.legal_actions()))
    return "\n".join(lines)
