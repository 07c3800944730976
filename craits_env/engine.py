"""The Craits rules engine: a pure state machine (docs/rules.md R1–R12).

:class:`Game` holds the whole state of one game: the deal, the discard pile,
the stock, every hand, scores and the decision that is pending. A client asks
for :meth:`Game.legal_actions` and calls :meth:`Game.apply`; everything that
is not a decision (R3.6: imposed draws, penalties, reshuffles, scoring, the
next deal) happens inside ``apply`` before it returns. There are no spaces,
tensors or rewards here: the environment in :mod:`craits_env.craits_v0`
adapts this class.

``apply`` returns the events the decision caused (:mod:`craits_env.events`). The class is
put together from one module per idea: the state's slots (:mod:`craits_env.game_state`),
the turn and its effects (:mod:`craits_env.turns`), the hands' deal and scoring
(:mod:`craits_env.hands`), copies for search (:mod:`craits_env.copies`) and snapshots
(:mod:`craits_env.snapshots`); this module holds the queries and ``apply``.

All randomness comes from one explicit ``numpy.random.Generator`` (first
dealer, deals, reshuffles). A game can instead be built from explicit deck
orders (``deals`` and ``reshuffles``, the same as ``snapshot()["deal"]`` and
``snapshot()["reshuffles"]``) and replays without any generator.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence

import numpy as np

from .actions import (
    CALL_BASE,
    DECLARE,
    DRAW,
    PHASE_CALL_SUIT,
    PHASE_COUNT,
    PHASE_DECLARE,
    PHASE_GAME_OVER,
    PHASE_NAMES,
    PHASE_PLAY,
    STAY_SILENT,
    action_str,
    forced_action,
)
from .cards import (
    NUM_CARDS,
    NUM_RANKS,
    RANK_OF,
    SUIT_OF,
    Rank,
    check_permutation,
    parse_card,
)
from .copies import GameCopies
from .deck import as_order, deck_cards, draw_first_dealer, remove_cards
from .events import CALLED_EVENTS, Event
from .game_state import PENDING_ROLES, HandOver
from .hands import HandCycle, check_dealable
from .rules import Rules, check_num_players
from .snapshots import GameSnapshots
from .turns import TurnMachine

_A, _TWO, _EIGHT, _NINE = int(Rank.ACE), int(Rank.TWO), int(Rank.EIGHT), int(Rank.NINE)

# _PLAYABLE[active_suit * 13 + top_rank][card]: R3.1 outside the count. Tuples, not bytes:
# CPython indexes a tuple faster.
_PLAYABLE: tuple[tuple[bool, ...], ...] = tuple(
    tuple(
        SUIT_OF[c] == suit or RANK_OF[c] == top or RANK_OF[c] in (_EIGHT, _NINE)
        for c in range(NUM_CARDS)
    )
    for suit in range(4)
    for top in range(NUM_RANKS)
)
_COUNTABLE = tuple(RANK_OF[c] in (_A, _TWO) for c in range(NUM_CARDS))  # R5.2
_ALL_CALLS = tuple(range(CALL_BASE, CALL_BASE + 4))
_NINE_CALLS = tuple(  # R4: a 9 keeps its suit or takes the other of the same colour
    tuple(sorted((CALL_BASE + s, CALL_BASE + 3 - s))) for s in range(4)
)
_DECLARE_ACTIONS = (DECLARE, STAY_SILENT)

# The names of earlier releases, for the batched engine's converters (craits_env.vector).
_check_dealable = check_dealable
_PENDING_ROLES = PENDING_ROLES


class Game(TurnMachine, HandCycle, GameCopies, GameSnapshots):
    """One game of Craits: the schedule of hands, from the first deal to the final scores.

    Args:
        num_players: 2 to 10 (R1.5).
        rules: the options; ``None`` means ``Rules()``.
        seed: seeds a new ``numpy.random.default_rng``; or pass ``rng``.
        rng: the generator all randomness comes from (first dealer, deals, reshuffles).
        dealer: the first dealer's seat; ``None`` draws it by R2.1 from the generator.
        deck_top: cards placed, in order, on top of the first hand's shuffled deck
            (the first one is dealt first, R2.3).
        deals: explicit deck orders, one per hand from the first (as
            ``snapshot()["deal"]``); hands beyond them are shuffled by the generator.
        reshuffles: per hand, the explicit new stocks of its reshuffles, in order,
            each next-card-first (as ``snapshot()["reshuffles"]``).
        record: keep every hand's deal and reshuffles for :meth:`deck_orders`
            (the current hand's are always in :meth:`snapshot`).

    Without ``seed``, ``rng`` or ``deals`` the game draws fresh OS entropy. A
    game given ``deals`` and neither ``seed`` nor ``rng`` is fully scripted: it
    raises ``ValueError`` if it ever needs a random choice it was not given.

    The public attributes (``hands``, ``discard``, ``scores`` …) are read-only
    views of the state; use :meth:`apply` to change it and :meth:`clone` to
    branch it. ``current_player`` is always a seat number, :data:`NO_PLAYER`
    once the game is over (``snapshot()["current_player"]`` is then ``None``).
    """

    __slots__ = ()

    def __init__(
        self,
        num_players: int = 4,
        rules: Rules | None = None,
        *,
        seed: int | None = None,
        rng: np.random.Generator | None = None,
        dealer: int | None = None,
        deck_top: Sequence[str | int] | None = None,
        deals: Sequence[Iterable[str | int] | bytes] | None = None,
        reshuffles: Sequence[Sequence[Iterable[str | int] | bytes]] | None = None,
        record: bool = False,
    ) -> None:
        n = check_num_players(num_players)
        rules = Rules() if rules is None else rules
        if not isinstance(rules, Rules):
            raise ValueError(f"rules: got {type(rules).__name__}, expected craits_env.Rules")
        decks = check_dealable(n, rules)
        deck = deck_cards(decks, rules.remove_kings_queens)
        if seed is not None and rng is not None:
            raise ValueError("give seed or rng, not both")
        if rng is None and (seed is not None or deals is None):
            rng = np.random.default_rng(seed)
        if rng is not None and not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng: got {type(rng).__name__}, expected numpy.random.Generator")

        self.rules = rules
        self.num_players = n
        self._deck_key = (decks, rules.remove_kings_queens)
        self._rng = rng
        self._rng_state = None
        self._script_deals = [as_order(d, deck, f"deals[{i}]") for i, d in enumerate(deals or ())]
        self._script_reshuffles = [
            [bytes(parse_card(c) for c in o) for o in hand] for hand in reshuffles or ()
        ]
        if deck_top is not None:
            top = [parse_card(c) for c in deck_top]
            check_permutation(top + remove_cards(deck, top), deck, "deck")
            self._deck_top = top
        else:
            self._deck_top = None
        if dealer is None:
            dealer = draw_first_dealer(self._need_rng("first_dealer"), n, deck)
        elif isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < n:
            raise ValueError(f"dealer: got {dealer!r}, allowed a seat from 0 to {n - 1}")

        self.first_dealer = self.dealer = dealer
        self.direction = 1
        self.hand_index = 0
        self.scores = [0] * n
        self.shuffle_pressures = [0] * n
        self.hand_points = []
        self._deal_log = [] if record else None
        self._reshuffle_log = [] if record else None
        self._legal = None
        self._events = []
        self._advance()
        self.start_events = tuple(self._events)

    # ------------------------------------------------------------------ queries

    @property
    def is_over(self) -> bool:
        return self.phase == PHASE_GAME_OVER

    @property
    def deck(self) -> list[int]:
        """The cards of the deck in play, ascending, with repeats for two decks (do not mutate)."""
        return deck_cards(*self._deck_key)

    @property
    def top(self) -> int:
        """The top card of the discard pile."""
        return self.discard[-1]

    @property
    def stock(self) -> list[int]:
        """The stock, next card to be drawn first (a copy)."""
        return self._stock[::-1]

    def restack(self, order: Sequence[int]) -> None:
        """Put the stock in ``order`` (next card first), a permutation of its cards: for
        analyses of how much the stock's order decides (``ValueError`` if it is not)."""
        try:
            order = [operator.index(c) for c in order]
        except TypeError:
            raise ValueError(f"restack: got {order!r:.80}, allowed card indices") from None
        check_permutation(order, sorted(self._stock), "restack")
        self._stock[:] = order[::-1]

    @property
    def stock_size(self) -> int:
        return len(self._stock)

    @property
    def hand_size(self) -> int:
        """Cards dealt to each player in the current (or, at the end, the last) hand."""
        sizes = self.rules.hand_sizes
        return sizes[min(self.hand_index, len(sizes) - 1)]

    def legal_actions(self) -> tuple[int, ...]:
        """The legal action ids of the current player, ascending (empty when the game is over)."""
        legal = self._legal
        if legal is not None:
            return legal
        phase = self.phase
        p = self.current_player
        # Plain loops, not comprehensions: a comprehension is a function call (CPython 3.11).
        if phase == PHASE_PLAY:
            table = _PLAYABLE[self.active_suit * NUM_RANKS + RANK_OF[self.discard[-1]]]
        elif phase == PHASE_COUNT:
            table = _COUNTABLE
        elif phase == PHASE_CALL_SUIT:
            card = self._pend_card
            legal = _NINE_CALLS[SUIT_OF[card]] if RANK_OF[card] == _NINE else _ALL_CALLS
            self._legal = legal
            return legal
        elif phase == PHASE_DECLARE:
            self._legal = _DECLARE_ACTIONS
            return _DECLARE_ACTIONS
        else:
            self._legal = ()
            return ()
        acts: list[int] = []
        for c in self.hands[p]:
            if table[c]:
                acts.append(c)
        if len(acts) > 1 and self._deck_key[0] > 1:
            acts = sorted(set(acts))  # two copies share one action id
        if not acts or self.rules.voluntary_draw:  # R3.3, R5.3
            acts.append(DRAW)
        legal = self._legal = tuple(acts)
        return legal

    def forced_action(self) -> int | None:
        """The only legal action when the current decision has no choice, else ``None``
        (also once the game is over). Such a decision is still asked and counted (R3.6)."""
        return forced_action(self.legal_actions())

    def winners(self) -> list[int]:
        """Seats with the lowest total (R8.6); meaningful when the game is over."""
        best = min(self.scores)
        return [s for s, v in enumerate(self.scores) if v == best]

    # ------------------------------------------------------------------ apply

    def apply(self, action: int) -> list[Event]:
        """Apply the current player's decision ``action`` and every automatic event after it;
        the events it caused, in order (:mod:`craits_env.events`).

        Raises ``ValueError`` naming the action and the legal ones if it is not
        legal now; the state is then unchanged.
        """
        legal = self._legal
        if legal is None:
            legal = self.legal_actions()
        if action not in legal or type(action) is not int:
            self._reject(action, legal)
            action = operator.index(action)
        self._legal = None
        p = self.current_player
        phase = self.phase
        events: list[Event] = []
        self._events = events
        try:
            if phase == PHASE_PLAY:
                if action == DRAW:
                    self._draw(p, 1, "draw")  # R3.3; ends a 6's extra play or a king's sequence
                    self.king_left = 0
                    self._begin_turn((p + self.direction) % self.num_players)  # _next
                else:
                    self._play(p, action)
            elif phase == PHASE_COUNT:
                if action == DRAW:
                    self._take_count(p)
                else:
                    self._play_in_count(p, action)
            elif phase == PHASE_CALL_SUIT:
                self.active_suit = suit = action - CALL_BASE  # R3.2
                events.append(CALLED_EVENTS[p * 4 + suit])
                self._after_call(p)
            else:
                self._declared(p, action == DECLARE)
        except HandOver:
            self._advance()
            return events
        decisions = self.hand_decisions = self.hand_decisions + 1
        if decisions >= self.rules.hand_decision_limit:  # R12
            try:
                self._end_hand("decision_limit")
            except HandOver:
                self._advance()
        return events

    def _reject(self, action: object, legal: tuple[int, ...]) -> None:
        """Return if ``action`` is a legal id in another integer type (numpy); else raise."""
        try:
            value: int | None = None if isinstance(action, bool) else operator.index(action)  # type: ignore[arg-type]
        except TypeError:
            value = None
        if value is not None and value in legal:
            return
        if self.phase == PHASE_GAME_OVER:
            raise ValueError(f"illegal action {action!r}: the game is over")
        name = action_str(value) if value is not None else "not an integer action id"
        allowed = ", ".join(f"{a} ({action_str(a)})" for a in legal)
        raise ValueError(
            f"illegal action {action!r} ({name}) for player_{self.current_player} in phase "
            f"{PHASE_NAMES[self.phase]!r}; legal: {allowed}"
        )

    def __repr__(self) -> str:
        player = None if self.phase == PHASE_GAME_OVER else self.current_player
        return (
            f"Game(num_players={self.num_players}, hand {self.hand_index}, "
            f"phase={PHASE_NAMES[self.phase]}, current_player={player})"
        )
