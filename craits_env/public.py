"""What a seat may know, for bots: a public-state view of a live game (R11).

:class:`PublicGame` drives a :class:`~craits_env.engine.Game` and keeps the
public facts a careful player remembers (who could not follow which suit: its
:class:`~craits_env.public_tracker.PublicTracker`);
:class:`SeatView` is one seat's window on it: the seat's own hand, the legal
actions and everything public — never another hand or the stock's order.

A ``SeatView`` is also a read-only mapping with the environment's observation
keys (``view["observation"]``, ``view["action_mask"]``, encoded lazily), so an
agent written against the observation dict works on it unchanged.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from .cards import NUM_CARDS
from .engine import Game
from .events import Event
from .observation import ObservationEncoder, legal_mask

# PublicStep, public_step and PublicTracker are also importable from here.
from .public_tracker import PublicStep as PublicStep
from .public_tracker import PublicTracker as PublicTracker
from .public_tracker import public_step as public_step

_OBS_KEYS = ("observation", "action_mask")


class PublicGame:
    """A game driven through :class:`PublicTracker`, with a :class:`SeatView` per seat."""

    def __init__(self, game: Game, encoder: ObservationEncoder | None = None) -> None:
        self.game = game
        self.tracker = PublicTracker(game)
        self._encoder = encoder
        self.views = [SeatView(self, s) for s in range(game.num_players)]

    @property
    def encoder(self) -> ObservationEncoder:
        if self._encoder is None:
            self._encoder = ObservationEncoder(self.game.num_players, self.game.rules)
        return self._encoder

    def apply(self, action: int) -> list[Event]:
        """Apply ``action`` to the game, let the tracker observe it; the events."""
        game = self.game
        seat = game.current_player
        phase, suit, base = game.phase, game.active_suit, game.drawn[seat]
        # The batched engine's view of one game would rebuild a Game per decision to say it.
        step = public_step(game, action) if type(game) is Game else None
        events: list[Event] | None = game.apply(action)
        if events is None:  # the batched engine's view of one game tells no events
            self.tracker.observe_action(seat, phase, suit, base, action, step)
            return []
        self.tracker.observe(events, step)
        return events

    def view(self, seat: int) -> SeatView:
        return self.views[seat]


class SeatView(Mapping[str, np.ndarray]):
    """One seat's view: its own hand and the public state (see the module docstring).

    Attribute values are read from the live game when accessed; they are valid
    for the current decision.
    """

    __slots__ = ("_game", "_obs", "_obs_key", "_public", "seat")

    def __init__(self, public: PublicGame, seat: int) -> None:
        self._public = public
        self._game = public.game
        self.seat = seat
        self._obs: dict[str, np.ndarray] | None = None
        self._obs_key: tuple[int, int, int] = (-1, -1, -1)

    # -- the observation mapping (lazy) --------------------------------------

    def __getitem__(self, key: str) -> np.ndarray:
        if key not in _OBS_KEYS:
            raise KeyError(key)
        g = self._game
        stamp = (g.hand_index, g.hand_decisions, id(g.discard))
        if self._obs is None or self._obs_key != stamp:
            self._obs = {
                "observation": self._public.encoder.encode(g, self.seat),
                "action_mask": legal_mask(self.legal_actions),
            }
            self._obs_key = stamp
        return self._obs[key]

    def __iter__(self) -> Iterator[str]:
        return iter(_OBS_KEYS)

    def __len__(self) -> int:
        return len(_OBS_KEYS)

    # -- own information ------------------------------------------------------

    @property
    def hand(self) -> list[int]:
        """Own cards (indices, ascending; a copy)."""
        return list(self._game.hands[self.seat])

    @property
    def legal_actions(self) -> tuple[int, ...]:
        """Own legal actions (empty unless it is this seat's decision)."""
        g = self._game
        return g.legal_actions() if g.current_player == self.seat else ()

    # -- public state ---------------------------------------------------------

    @property
    def num_players(self) -> int:
        return self._game.num_players

    @property
    def rules(self) -> Any:
        return self._game.rules

    @property
    def phase(self) -> int:
        return self._game.phase

    @property
    def current_player(self) -> int:
        """The seat to act; ``NO_PLAYER`` once the game is over."""
        return self._game.current_player

    @property
    def top(self) -> int:
        return self._game.discard[-1]

    @property
    def active_suit(self) -> int:
        return self._game.active_suit

    @property
    def count(self) -> int:
        return self._game.count

    @property
    def direction(self) -> int:
        return self._game.direction

    @property
    def dealer(self) -> int:
        return self._game.dealer

    @property
    def extra_play(self) -> bool:
        return self._game.extra_play

    @property
    def king_cards_left(self) -> int:
        return self._game.king_left

    @property
    def jack_run(self) -> int:
        return self._game.jack_run

    @property
    def hand_sizes(self) -> list[int]:
        return [len(h) for h in self._game.hands]

    @property
    def scores(self) -> list[int]:
        return list(self._game.scores)

    @property
    def shuffle_pressures(self) -> list[int]:
        return list(self._game.shuffle_pressures)

    @property
    def one_card_penalty_pending(self) -> list[bool]:
        """Per seat: owes the one-card penalty (R7.1), paid at its next turn."""
        return list(self._game.one_card_penalty_pending)

    @property
    def penalty_pending(self) -> list[bool]:
        """Deprecated name of :attr:`one_card_penalty_pending` (removed in the next release)."""
        warnings.warn(
            "SeatView.penalty_pending is now one_card_penalty_pending",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.one_card_penalty_pending

    @property
    def went_out(self) -> list[int]:
        return list(self._game.went_out)

    @property
    def discard(self) -> list[int]:
        """The discard pile, bottom first: every card played since the last reshuffle."""
        return list(self._game.discard)

    @property
    def stock_size(self) -> int:
        return self._game.stock_size

    @property
    def hand_index(self) -> int:
        return self._game.hand_index

    @property
    def hand_size(self) -> int:
        """Cards dealt to each player this hand."""
        return self._game.hand_size

    @property
    def hands_in_game(self) -> int:
        return len(self._game.rules.hand_sizes)

    @property
    def tracker(self) -> PublicTracker:
        """Public inferences (who could not follow which suit)."""
        return self._public.tracker

    def unseen_cards(self) -> list[int]:
        """Cards this seat cannot see: the deck minus its own hand and the discard pile
        (they are in the other hands or the stock), ascending with repeats for two decks."""
        g = self._game
        counts = [0] * NUM_CARDS
        for c in g.deck:
            counts[c] += 1
        for c in g.hands[self.seat]:
            counts[c] -= 1
        for c in g.discard:
            counts[c] -= 1
        return [c for c in range(NUM_CARDS) for _ in range(counts[c])]

    def determinize(self, hands: dict[int, list[int]], stock: list[int], rng: Any) -> Game:
        """A copy of the game in which the other seats hold ``hands`` and the stock is
        ``stock`` (next card first): a sample of what this seat cannot see, for search.

        Raises ``ValueError`` unless the sizes match and the cards are exactly the
        unseen ones.
        """
        return self._game.determinized(self.seat, hands, stock, rng, self.unseen_cards())
