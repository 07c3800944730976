"""What the table has shown of each seat in the current hand: :class:`PublicTracker` (R11).

Every decision is public; the tracker keeps what a careful player remembers of them — who
could not follow which suit, who called which suit, the cards each seat played, the hand's
decisions in order (:class:`PublicStep`) — and its state round-trips as JSON.
:class:`craits_env.public.PublicGame` drives a game through it and gives each seat its view.
"""

from __future__ import annotations

import copy
from typing import Any, NamedTuple

from .actions import CALL_BASE, DECLARE, DRAW, PHASE_CALL_SUIT, PHASE_COUNT, PHASE_PLAY
from .cards import CARD_STRS, NUM_CARDS, parse_cards
from .engine import Game
from .events import Called, Drew, Event, HandScored, Played, Reshuffled

_STATE_KEYS = ("hand_index", "void_base", "no_wild_base", "no_count_base", "played", "called")
_OPTIONAL_KEYS = ("called",)  # states written before the tracker kept the suit calls


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _rows(value: object, key: str, n: int) -> list[Any]:
    if not isinstance(value, list) or len(value) != n:
        raise ValueError(f"tracker state[{key!r}]: got {_short(value)}, allowed a list of {n}")
    return value


def _bases(value: object, name: str, length: int) -> list[int | None]:
    """Draw counters: ``None`` (nothing known) or an int >= 0, ``length`` of them."""
    if not isinstance(value, list) or len(value) != length:
        raise ValueError(f"{name}: got {_short(value)}, allowed a list of {length}")
    bases: list[int | None] = []
    for v in value:
        if not (v is None or (type(v) is int and v >= 0)):
            raise ValueError(f"{name}: got {_short(value)}, allowed None or ints >= 0")
        bases.append(v)
    return bases


def _call(value: object, name: str) -> tuple[int, int] | None:
    """A suit call: ``None`` or ``[suit 0–3, draw counter >= 0]``."""
    if value is None:
        return None
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(type(v) is int for v in value)
        and 0 <= value[0] < 4
        and value[1] >= 0
    ):
        return (value[0], value[1])
    raise ValueError(f"{name}: got {_short(value)}, allowed None or [suit 0 to 3, int >= 0]")


class PublicStep(NamedTuple):
    """One decision of the hand as every seat saw it (R11: all of it public): who decided,
    in which phase, what it chose, and the table just before it — what an opponent model
    needs to ask what that seat would have done (:mod:`craits.agents.belief`)."""

    seat: int
    phase: int
    action: int
    top: int
    active_suit: int
    count_value: int  # the count (R5), 0 when it is off
    direction: int
    hand_sizes: tuple[int, ...]
    drawn: tuple[int, ...]  # per seat, cards drawn this hand before the decision
    discard: tuple[int, ...]  # the discard pile, bottom first
    extra_play: bool
    king_left: int
    jack_run: int


def public_step(game: Game, action: int) -> PublicStep:
    """The :class:`PublicStep` of ``action``, the current player's decision in ``game`` (taken
    before it is applied)."""
    return PublicStep(
        game.current_player,
        game.phase,
        action,
        game.discard[-1],
        game.active_suit,
        game.count,
        game.direction,
        tuple(len(h) for h in game.hands),
        tuple(game.drawn),
        tuple(game.discard),
        game.extra_play,
        game.king_left,
        game.jack_run,
    )


class PublicTracker:
    """Public inferences over one game, updated from each decision's events (:meth:`observe`).

    A player who draws instead of playing (R3.3, without ``voluntary_draw``)
    shows it holds no card of the active suit and no 8 or 9; one who takes the
    count shows it holds no ace or two (R5.3). :meth:`void_draws` and friends
    say how many unknown cards the player has drawn since (0: it still holds
    none), or ``None`` when nothing is known. :meth:`last_call` is the suit a
    player last called with an 8 or a 9 (R4) and the cards it drew since — a
    player usually calls a suit it holds. :attr:`steps` is the hand's decisions so far, in
    order (:class:`PublicStep`), when every one was observed with its step (``None`` once one
    came without: a restored tracker, one fed events alone). Everything resets at each new
    hand.
    """

    def __init__(self, game: Game) -> None:
        self.num_players = game.num_players
        self._game = game
        self._hand_index = -1
        self._void_base: list[list[int | None]] = []
        self._no_wild_base: list[int | None] = []
        self._no_count_base: list[int | None] = []
        self._called: list[tuple[int, int] | None] = []  # per seat: (suit, draws then)
        self.played: list[list[int]] = []
        self.steps: list[PublicStep] | None = []
        self._new_hand()

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickle; a tracker pickled before it kept the suit calls knows none."""
        self.__dict__.update(state)
        if "_called" not in state:
            self._called = [None] * self.num_players
        if "steps" not in state:
            self.steps = None

    def bind(self, game: Game) -> None:
        """Follow ``game`` from now on (a copy of the game this tracker followed, in the same
        position: its inferences stay)."""
        self._game = game

    def copy_for(self, game: Game) -> PublicTracker:
        """An independent copy of this tracker that follows ``game`` (a game in the same public
        position, e.g. a determinized copy of the one followed)."""
        other = copy.copy(self)
        other._game = game
        other._void_base = [b[:] for b in self._void_base]
        other._no_wild_base = self._no_wild_base[:]
        other._no_count_base = self._no_count_base[:]
        other._called = self._called[:]
        other.played = [p[:] for p in self.played]
        other.steps = None if self.steps is None else self.steps[:]
        return other

    def _new_hand(self) -> None:
        n = self.num_players
        self._hand_index = self._game.hand_index
        self._void_base = [[None] * 4 for _ in range(n)]
        self._no_wild_base = [None] * n
        self._no_count_base = [None] * n
        self._called = [None] * n
        self.played = [[] for _ in range(n)]
        self.steps = []

    def _record(self, step: PublicStep | None) -> None:
        """Keep ``step`` in :attr:`steps`; without one the hand's history is incomplete."""
        steps = self.steps
        if step is None:
            self.steps = None
        elif steps is not None:
            steps.append(step)

    def observe(self, events: list[Event], step: PublicStep | None = None) -> None:
        """Take what one decision showed publicly: the ``events`` the game's ``apply``
        returned (only the public facts of them are read) and its :class:`PublicStep`."""
        if any(isinstance(e, HandScored) for e in events):
            self._new_hand()  # everything inferred was about the hand that ended
            return
        self._record(step)
        # The decision's own event comes first, after the reshuffle a draw may need.
        first = next((e for e in events if not isinstance(e, Reshuffled)), None)
        game = self._game
        if isinstance(first, Played):
            self.played[first.seat].append(first.card)
            return
        if isinstance(first, Drew):
            reason = first.reason
            if reason not in ("draw", "count") or game.rules.voluntary_draw:
                return
        elif not isinstance(first, Called):
            return
        p = first.seat
        # Draws from the decision on are unknown cards: the counter as it was before it.
        base = game.drawn[p] - sum(e.number for e in events if isinstance(e, Drew) and e.seat == p)
        if isinstance(first, Called):
            self._learn(p, "called", first.suit, base)
        else:  # a draw leaves the active suit as it was
            self._learn(p, first.reason, game.active_suit, base)

    def observe_action(
        self,
        seat: int,
        phase: int,
        suit: int,
        base: int,
        action: int,
        step: PublicStep | None = None,
    ) -> None:
        """Take what one decision showed publicly, for a game whose ``apply`` tells no events
        (the batched engine's view of one game, :mod:`craits_env.vector`): ``seat``'s
        ``action`` in ``phase``, with the active ``suit`` and its draw counter before it."""
        game = self._game
        if game.hand_index != self._hand_index:
            self._new_hand()
            return
        self._record(step)
        if action < NUM_CARDS:
            self.played[seat].append(action)
        elif action == DRAW and phase in (PHASE_PLAY, PHASE_COUNT):
            if not game.rules.voluntary_draw:
                self._learn(seat, "draw" if phase == PHASE_PLAY else "count", suit, base)
        elif phase == PHASE_CALL_SUIT and CALL_BASE <= action < DECLARE:
            self._learn(seat, "called", action - CALL_BASE, base)

    def _learn(self, seat: int, what: str, suit: int, base: int) -> None:
        """``seat`` showed ``what``: it called ``suit`` (R4), or drew for want of a card of
        ``suit``, an 8 or a 9 (``draw``, R3.1), or of an ace or a two (``count``, R5.3)."""
        if what == "called":
            self._called[seat] = (suit, base)
        elif what == "draw":
            self._void_base[seat][suit] = base
            self._no_wild_base[seat] = base
        else:
            self._no_count_base[seat] = base

    def state(self) -> dict[str, Any]:
        """What the tracker has inferred in this hand, as a JSON-serialisable dict."""
        return {
            "hand_index": self._hand_index,
            "void_base": [list(bases) for bases in self._void_base],
            "no_wild_base": list(self._no_wild_base),
            "no_count_base": list(self._no_count_base),
            "played": [[CARD_STRS[c] for c in cards] for cards in self.played],
            "called": [None if c is None else list(c) for c in self._called],
        }

    def restore(self, state: Any) -> None:
        """Take back the inferences of :meth:`state` (of this game's tracker, or a copy's).

        ``ValueError`` naming the key if ``state`` does not fit this game; nothing changes then.
        A state without ``called`` (written before the tracker kept suit calls) knows none.
        """
        n = self.num_players
        required = set(_STATE_KEYS) - set(_OPTIONAL_KEYS)
        if not isinstance(state, dict) or not required <= set(state) <= set(_STATE_KEYS):
            raise ValueError(f"tracker state: got {_short(state)}, allowed a dict of {_STATE_KEYS}")
        if state["hand_index"] != self._game.hand_index:
            raise ValueError(
                f"tracker state['hand_index']: got {_short(state['hand_index'])}, "
                f"allowed the game's hand index {self._game.hand_index}"
            )
        void = [
            _bases(b, f"tracker state['void_base'][{s}]", 4)
            for s, b in enumerate(_rows(state["void_base"], "void_base", n))
        ]
        no_wild = _bases(state["no_wild_base"], "tracker state['no_wild_base']", n)
        no_count = _bases(state["no_count_base"], "tracker state['no_count_base']", n)
        played = []
        for s, cards in enumerate(_rows(state["played"], "played", n)):
            try:
                played.append(parse_cards(cards))
            except ValueError as e:
                raise ValueError(f"tracker state['played'][{s}]: {e}") from None
        calls = _rows(state.get("called", [None] * n), "called", n)
        called = [_call(c, f"tracker state['called'][{s}]") for s, c in enumerate(calls)]
        self._hand_index = self._game.hand_index
        self._void_base, self._no_wild_base, self._no_count_base = void, no_wild, no_count
        self.played = played
        self._called = called
        self.steps = None  # the decisions themselves are not in a state

    def void_draws(self, seat: int, suit: int) -> int | None:
        """Cards ``seat`` drew since it showed no card of ``suit``; ``None`` if unknown."""
        base = self._void_base[seat][suit]
        return None if base is None else self._game.drawn[seat] - base

    def no_wild_draws(self, seat: int) -> int | None:
        """Cards ``seat`` drew since it showed no 8 or 9; ``None`` if unknown."""
        base = self._no_wild_base[seat]
        return None if base is None else self._game.drawn[seat] - base

    def last_call(self, seat: int) -> tuple[int, int] | None:
        """The suit ``seat`` last called this hand (0–3: c, d, h, s; R4) and the cards it
        drew since; ``None`` if it has called none."""
        called = self._called[seat]
        return None if called is None else (called[0], self._game.drawn[seat] - called[1])

    def no_count_draws(self, seat: int) -> int | None:
        """Cards ``seat`` drew since it showed no ace or two in the count; ``None`` if unknown."""
        base = self._no_count_base[seat]
        return None if base is None else self._game.drawn[seat] - base
