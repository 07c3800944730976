"""The state of one game of Craits, as :class:`~craits_env.engine.Game` holds it.

:class:`GameState` names every slot of the state and its type; the parts of the engine
are mixins over it, one idea each: the turn and its effects (:mod:`craits_env.turns`),
the hands' deal and scoring (:mod:`craits_env.hands`), copies for search
(:mod:`craits_env.copies`) and snapshots (:mod:`craits_env.snapshots`). ``Game``
(:mod:`craits_env.engine`) puts them together with the queries and ``apply``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from .events import Event
from .rules import Rules

# How the card waiting to be resolved (after its suit call and declaration) acts.
CTX_NORMAL = 0  # its function applies (R4)
CTX_STARTER = 1  # the starter: function in the dealer's name, no declaration (R2.5)
CTX_COUNT = 2  # an ace or two played in the count (R5.4)
CTX_FREE = 3  # first or second card of a king's sequence: no function (R9.3)

# How the top card acts once its suit is called and its declaration made (by CTX_* value);
# snapshot()["pending_role"] in the call_suit and declare phases.
PENDING_ROLES = ("function", "starter", "count", "king_sequence")


class HandOver(Exception):
    """Raised inside ``Game.apply`` when the hand has been scored; caught there."""


class NeedsRandomness(ValueError):
    """A game without a generator needs a deck order that was not given (R2.3 a deal, R10.1 a
    reshuffle, R2.1 the first dealer): ``kind`` is ``"deal"``, ``"reshuffle"`` or
    ``"first_dealer"``, ``hand_index`` the hand, ``index`` the reshuffle's number in the hand
    (0 for a deal). Give the order with ``Game.schedule_deal`` / ``Game.schedule_reshuffle``
    on a copy taken before the ``apply`` that raised (that game is left mid-decision)."""

    def __init__(self, what: str, kind: str, hand_index: int, index: int = 0) -> None:
        super().__init__(f"{what} needs a random generator: give seed or rng, or the deck orders")
        self.kind, self.hand_index, self.index = kind, hand_index, index


class GameState:
    """The slots of a game's state (see the module docstring); ``Game`` is the class to use."""

    __slots__ = (
        "_deal",
        "_deal_declarers",
        "_deal_log",
        "_deck_key",
        "_deck_top",
        "_events",
        "_hand_penalties",
        "_legal",
        "_pend_card",
        "_pend_ctx",
        "_reshuffle_log",
        "_reshuffles",
        "_rng",
        "_rng_state",
        "_script_deals",
        "_script_reshuffles",
        "_stock",
        "active_suit",
        "count",
        "current_player",
        "dealer",
        "direction",
        "discard",
        "drawn",
        "extra_play",
        "first_dealer",
        "hand_decisions",
        "hand_index",
        "hand_points",
        "hands",
        "jack_run",
        "king_left",
        "num_players",
        "one_card_penalty_pending",
        "phase",
        "rules",
        "scores",
        "shuffle_pressures",
        "start_events",
        "went_out",
    )
    rules: Rules
    num_players: int
    hand_index: int
    dealer: int
    first_dealer: int
    direction: int
    current_player: int  # NO_PLAYER when the game is over
    phase: int  # a Phase value
    hands: list[list[int]]
    discard: list[int]
    active_suit: int
    count: int
    jack_run: int
    king_left: int
    extra_play: bool
    one_card_penalty_pending: list[bool]  # per seat: owes the one-card penalty (R7.1)
    scores: list[int]
    shuffle_pressures: list[int]
    hand_points: list[tuple[int, ...]]
    went_out: list[int]
    hand_decisions: int
    drawn: list[int]  # per seat, cards drawn so far in this hand (public)
    _stock: list[int]
    _hand_penalties: list[int]
    _pend_card: int
    _pend_ctx: int
    _deal_declarers: list[int]
    _legal: tuple[int, ...] | None
    _deal: bytes
    _reshuffles: list[bytes]
    _deal_log: list[bytes] | None
    _reshuffle_log: list[list[bytes]] | None
    _deck_key: tuple[int, bool]
    _rng: np.random.Generator | None
    _rng_state: tuple[type[np.random.BitGenerator], Any] | None
    _script_deals: list[bytes]
    _script_reshuffles: list[list[bytes]]
    _deck_top: list[int] | None
    _events: list[Event]  # the events of the apply in progress
    start_events: tuple[Event, ...]  # what happened as the game was made: the first deal(s)

    if TYPE_CHECKING:  # what the mixins call on one another

        def _resolve(self, p: int) -> None: ...
        def _end_hand(self, reason: str) -> NoReturn: ...
        def _apply_starter(self) -> None: ...
        def _need_rng(self, kind: str, index: int = 0) -> np.random.Generator: ...
        def legal_actions(self) -> tuple[int, ...]: ...
        def winners(self) -> list[int]: ...

        @property
        def hand_size(self) -> int: ...
        @property
        def deck(self) -> list[int]: ...
