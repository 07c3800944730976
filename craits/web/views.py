"""The seat view: what ``GET /api/games/{id}`` sends, and only what the person may know.

Everything comes from the person's :class:`~craits_env.public.SeatView` (R11): the
seat's own hand and legal actions, and the public table — the top card, the active suit,
the count, the direction, each player's number of cards, score and penalties, whose turn
it is. No other hand, no card of the stock, no generator state: the seed the server drew
is shown only once the game is over or resigned (it determines every deal).

=========================  ==============================================================
key                        value
=========================  ==============================================================
``game_id``, ``seat``      the game and the person's seat
``decision``               decisions made in the game so far (everybody's): a move sent
                           with ``"decision": K`` is applied only if ``K`` is this number
``num_players``            2 to 10
``players``                per seat: ``seat``, ``name``, ``spec`` (``human`` for you),
                           ``cards``, ``score``, ``went_out``,
                           ``one_card_penalty_pending``, ``shuffle_pressures``
``hand``                   your cards as strings (``"7c"``), ascending
``top``, ``active_suit``   the top card (``"7c"``) and the active suit (``c d h s``)
``count``, ``direction``   the count (0 when off, R5) and +1 (left) or -1 (right)
``dealer``, ``stock_size`` the dealer's seat and the cards in the stock
``hand_index``             the hand being played (0-based); ``hands_in_game``,
                           ``hand_size`` (cards dealt each this hand)
``phase``                  ``play``, ``count``, ``call_suit``, ``declare``, ``game_over``
``current_player``         the seat to act, ``null`` once the game is over
``your_turn``              whether a move of yours is awaited
``extra_play``             this play continues the turn (a 6, a king's sequence)
``king_cards_left``        cards still owed in a king's sequence (R9.3)
``hand_sizes``, ``scores`` per seat: cards held, cumulative scores
``hand_points``            per finished hand, per seat, the points scored
``legal``                  your legal actions now: ``{"action": id, "label": text}``
``events``                 what happened since the last view, in plain words:
                           ``{"hand", "kind", "text"}``, ``kind`` ``move`` / ``scoring``
                           / ``deal``; ``events_from`` is the index of the first,
                           ``event_count`` the total (``?since=0`` gives them all)
``game_over``              whether the game has ended; ``winners`` (seats) then
``standings``              the standings in words, once the game is over or resigned
``resigned``, ``failed``   you resigned; why a bot stopped the game (or ``null``)
``rules``                  every rule option (``Rules.to_dict()``)
``seed``                   the seed, if you chose it or once the game is over or resigned (a
                           fresh seed has 128 bits: ``seed_text`` is the same as a decimal
                           string, for JavaScript, whose numbers hold 53 bits)
``saved``                  the saved record, once saved: ``{"file", "name"}``
=========================  ==============================================================
"""

from __future__ import annotations

import json
from typing import Any

from craits_env.actions import PHASE_NAMES, action_str
from craits_env.cards import CARD_STRS, SUIT_CHARS

from .sessions import GameSession


def seat_view(session: GameSession, since: int | None = None) -> dict[str, Any]:
    """The person's view of ``session`` (see the module docstring); it takes the events."""
    view, start = _view(session, since)
    view["events"] = [e.to_dict() for e in session.events[start:]]
    return view


def view_body(session: GameSession, since: int | None = None) -> bytes:
    """:func:`seat_view` as the JSON sent (``events`` last): each event is encoded once
    per game and kept (:meth:`GameSession.encoded_events`), so a long game's whole view
    (``?since=0``, 15,000 events) costs a join, not the encoding of every event again."""
    view, start = _view(session, since)
    head = json.dumps(view, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return head[:-1] + b',"events":[' + session.encoded_events(start) + b"]}"


def _view(session: GameSession, since: int | None) -> tuple[dict[str, Any], int]:
    """The view but its events, and the index of its first event (the events taken)."""
    view = session.public.view(session.seat)
    over = session.game.is_over
    n = view.num_players
    sizes = view.hand_sizes
    scores = view.scores
    went_out = view.went_out
    penalties = view.one_card_penalty_pending
    pressures = view.shuffle_pressures
    players = [
        {
            "seat": s,
            "name": "you" if s == session.seat else session.names[s],
            "spec": session.seats[s],
            "cards": sizes[s],
            "score": scores[s],
            "went_out": s in went_out,
            "one_card_penalty_pending": penalties[s],
            "shuffle_pressures": pressures[s],
        }
        for s in range(n)
    ]
    legal = () if session.closed else view.legal_actions
    start = session.take_events(since)
    current = None if over else view.current_player
    finished = over or session.resigned
    return {
        "game_id": session.game_id,
        "decision": session.decision,
        "seat": session.seat,
        "num_players": n,
        "players": players,
        "hand": [CARD_STRS[c] for c in view.hand],
        "top": CARD_STRS[view.top],
        "active_suit": SUIT_CHARS[view.active_suit],
        "count": view.count,
        "direction": view.direction,
        "dealer": view.dealer,
        "stock_size": view.stock_size,
        "hand_index": view.hand_index,
        "hands_in_game": view.hands_in_game,
        "hand_size": view.hand_size,
        "phase": PHASE_NAMES[view.phase],
        "current_player": current,
        "your_turn": bool(legal),
        "extra_play": view.extra_play,
        "king_cards_left": view.king_cards_left,
        "hand_sizes": sizes,
        "scores": scores,
        "hand_points": [list(p) for p in session.game.hand_points],
        "legal": [{"action": a, "label": action_str(a)} for a in legal],
        "events_from": start,
        "event_count": len(session.events),
        "game_over": over,
        "winners": session.game.winners() if over else None,
        "standings": session.narrator.standings(session.game, session.labels) if finished else None,
        "resigned": session.resigned,
        "failed": session.failed,
        "rules": view.rules.to_dict(),
        "seed": session.seed if finished or session.seed_chosen else None,
        "seed_text": str(session.seed) if finished or session.seed_chosen else None,
        "saved": session.saved,
    }, start
