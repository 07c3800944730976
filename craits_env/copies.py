"""Copies of a game for search: :meth:`~GameCopies.clone` (the whole state, the
generator copied lazily) and :meth:`~GameCopies.determinized` (one sample of the hidden
cards); unpickling older games.
"""

from __future__ import annotations

import warnings
from typing import Any, Self

import numpy as np

from .actions import NO_PLAYER
from .game_state import GameState

_RENAMED_SLOTS = {"idiot_pending": "one_card_penalty_pending"}  # pickles of earlier versions


class GameCopies(GameState):
    """Cloning, determinizing and unpickling (see the module docstring)."""

    __slots__ = ()

    # ------------------------------------------------------------------ cloning

    @property
    def idiot_pending(self) -> list[bool]:
        """Deprecated name of ``one_card_penalty_pending`` (removed in the next release)."""
        warnings.warn(
            "Game.idiot_pending is now one_card_penalty_pending", DeprecationWarning, stacklevel=2
        )
        return self.one_card_penalty_pending

    def __setstate__(self, state: Any) -> None:
        """Unpickling (a training checkpoint's games in flight), older pickles included: the
        penalty flag's earlier name and a ``None`` current player at the end map to today's."""
        _, slots = state if isinstance(state, tuple) else (None, state)
        self._events, self.start_events = [], ()  # pickles made before events
        for name, value in (slots or {}).items():
            name = _RENAMED_SLOTS.get(name, name)
            if name == "current_player" and value is None:
                value = NO_PLAYER
            object.__setattr__(self, name, value)

    def clone(self, rng: np.random.Generator | None = None, scheduled: bool = True) -> Self:
        """An independent copy of the whole state.

        With ``rng=None`` the copy continues with an exact copy of this game's
        generator state (copied lazily, only if the copy ever shuffles), so the
        copy and the original play out identically under the same actions.
        Pass ``rng`` to give the copy its own generator instead (search bots).
        With ``scheduled=False`` the copy drops the deck orders scheduled after the
        current position (a duplicate deal's next hands and reshuffles: the generator
        makes them), as a snapshot with empty ``scheduled_deals`` and
        ``scheduled_reshuffles`` restores it, without the snapshot's cost.
        """
        g = type(self).__new__(type(self))
        g._copy_of(self, rng)
        if not scheduled:
            g._script_deals = [b""] * (g.hand_index + 1)  # the hands dealt so far
            g._script_reshuffles = []
        return g

    def _copy_of(self, other: GameState, rng: np.random.Generator | None) -> None:
        """Become a copy of ``other`` (:meth:`clone`)."""
        self.rules = other.rules
        self.num_players = other.num_players
        self.hand_index = other.hand_index
        self.dealer = other.dealer
        self.first_dealer = other.first_dealer
        self.direction = other.direction
        self.current_player = other.current_player
        self.phase = other.phase
        self.hands = [h[:] for h in other.hands]
        self.discard = other.discard[:]
        self.active_suit = other.active_suit
        self.count = other.count
        self.jack_run = other.jack_run
        self.king_left = other.king_left
        self.extra_play = other.extra_play
        self.one_card_penalty_pending = other.one_card_penalty_pending[:]
        self.scores = other.scores[:]
        self.shuffle_pressures = other.shuffle_pressures[:]
        self.hand_points = other.hand_points[:]
        self.went_out = other.went_out[:]
        self.hand_decisions = other.hand_decisions
        self.drawn = other.drawn[:]
        self._stock = other._stock[:]
        self._hand_penalties = other._hand_penalties[:]
        self._pend_card = other._pend_card
        self._pend_ctx = other._pend_ctx
        self._deal_declarers = other._deal_declarers[:]
        self._legal = other._legal
        self._deal = other._deal
        self._reshuffles = other._reshuffles[:]
        if other._deal_log is None:
            self._deal_log = self._reshuffle_log = None
        else:
            self._deal_log = other._deal_log[:]
            self._reshuffle_log = [*other._reshuffle_log[:-1], self._reshuffles]  # type: ignore[index]
        self._deck_key = other._deck_key
        self._script_deals = other._script_deals
        self._script_reshuffles = other._script_reshuffles
        self._deck_top = other._deck_top
        self._events = []
        self.start_events = other.start_events
        if rng is not None:
            self._rng, self._rng_state = rng, None
        elif other._rng is not None:
            bit_generator = other._rng.bit_generator
            self._rng, self._rng_state = None, (type(bit_generator), bit_generator.state)
        else:
            self._rng, self._rng_state = None, other._rng_state

    def determinized(
        self,
        seat: int,
        hands: dict[int, list[int]],
        stock: list[int],
        rng: np.random.Generator | None = None,
        unseen: list[int] | None = None,
    ) -> Self:
        """A copy in which every seat but ``seat`` holds ``hands[s]`` and the stock is
        ``stock`` (next card first): one sample of the hidden cards, for search bots.

        The copy forgets everything that could reveal the real hidden cards (the
        deal, the reshuffle orders, scripted future deals) and takes its future
        randomness from ``rng``. ``unseen`` (the cards ``seat`` cannot see, sorted)
        makes it check that the sample holds exactly those cards.
        """
        g = self.clone(rng=rng if rng is not None else np.random.default_rng())
        for s in range(self.num_players):
            if s == seat:
                continue
            cards = hands.get(s)
            if cards is None or len(cards) != len(self.hands[s]):
                raise ValueError(f"determinized: seat {s} holds {len(self.hands[s])} cards")
            g.hands[s] = sorted(cards)
        if len(stock) != len(self._stock):
            raise ValueError(f"determinized: the stock holds {len(self._stock)} cards")
        if unseen is not None:
            sample = sorted([c for s, h in hands.items() if s != seat for c in h] + list(stock))
            if sample != unseen:
                raise ValueError("determinized: the sample is not the unseen cards")
        g._stock = list(reversed(stock))
        g._legal = None
        g._deal = b""
        g._reshuffles = []
        g._deal_log = g._reshuffle_log = None
        g._script_deals = []
        g._script_reshuffles = []
        g._deck_top = None
        g.start_events = ()
        return g
