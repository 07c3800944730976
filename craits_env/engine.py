"""The Craits rules engine: a pure state machine (docs/rules.md R1–R12).

:class:`Game` holds the whole state of one game: the deal, the discard pile,
the stock, every hand, scores and the decision that is pending. A client asks
for :meth:`Game.legal_actions` and calls :meth:`Game.apply`; everything that
is not a decision (R3.6: imposed draws, penalties, reshuffles, scoring, the
next deal) happens inside ``apply`` before it returns. There are no spaces,
tensors or rewards here: the environment in :mod:`craits_env.craits_v0`
adapts this class.

All randomness comes from one explicit ``numpy.random.Generator`` (first
dealer, deals, reshuffles). A game can instead be built from explicit deck
orders (``deals`` and ``reshuffles``, the same as ``snapshot()["deal"]`` and
``snapshot()["reshuffles"]``) and replays without any generator.
"""

from __future__ import annotations

import operator
import warnings
from bisect import insort
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

import numpy as np

from .actions import (
    CALL_BASE,
    DECLARE,
    DRAW,
    NO_PLAYER,
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
    CARD_STRS,
    NUM_CARDS,
    NUM_RANKS,
    QUEEN_OF_SPADES,
    RANK_OF,
    SUIT_CHARS,
    SUIT_OF,
    Rank,
    check_permutation,
    parse_card,
)
from .deck import as_order, deck_cards, draw_first_dealer, remove_cards, shuffled
from .events import (
    Called,
    Dealt,
    Declared,
    Drew,
    Event,
    GameOver,
    HandScored,
    Played,
    Reshuffled,
    Reversed,
    Skipped,
    WentOut,
)
from .rules import Rules, check_num_players
from .scoring import GOING_OUT_BONUS, PRESSURE_BASE, score_ranks

# Plain ints on the hot path (IntEnum comparisons are slower).
_A, _TWO, _FOUR, _FIVE, _SIX, _SEVEN, _EIGHT, _NINE, _TEN, _JACK, _KING = (
    int(r)
    for r in (
        Rank.ACE, Rank.TWO, Rank.FOUR, Rank.FIVE, Rank.SIX, Rank.SEVEN,
        Rank.EIGHT, Rank.NINE, Rank.TEN, Rank.JACK, Rank.KING,
    )
)  # fmt: skip

# How the card waiting to be resolved (after its suit call and declaration) acts.
_CTX_NORMAL = 0  # its function applies (R4)
_CTX_STARTER = 1  # the starter: function in the dealer's name, no declaration (R2.5)
_CTX_COUNT = 2  # an ace or two played in the count (R5.4)
_CTX_FREE = 3  # first or second card of a king's sequence: no function (R9.3)

# _PLAYABLE[active_suit * 13 + top_rank][card]: R3.1 outside the count.
_PLAYABLE: tuple[bytes, ...] = tuple(
    bytes(
        SUIT_OF[c] == suit or RANK_OF[c] == top or RANK_OF[c] in (_EIGHT, _NINE)
        for c in range(NUM_CARDS)
    )
    for suit in range(4)
    for top in range(NUM_RANKS)
)
_COUNTABLE = bytes(RANK_OF[c] in (_A, _TWO) for c in range(NUM_CARDS))  # R5.2
_ALL_CALLS = tuple(range(CALL_BASE, CALL_BASE + 4))
_NINE_CALLS = tuple(  # R4: a 9 keeps its suit or takes the other of the same colour
    tuple(sorted((CALL_BASE + s, CALL_BASE + 3 - s))) for s in range(4)
)
_DECLARE_ACTIONS = (DECLARE, STAY_SILENT)


# How the top card acts once its suit is called and its declaration made (by _CTX_* value);
# snapshot()["pending_role"] in the call_suit and declare phases.
_PENDING_ROLES = ("function", "starter", "count", "king_sequence")


def _strs(cards: Iterable[int]) -> list[str]:
    """Card indices as card strings."""
    return [CARD_STRS[c] for c in cards]


class _HandOver(Exception):
    """Raised inside ``apply`` when the hand has been scored; caught there."""


_RENAMED_SLOTS = {"idiot_pending": "one_card_penalty_pending"}  # pickles of earlier versions


def _check_dealable(n: int, rules: Rules) -> int:
    """The number of decks of ``n`` players under ``rules``, if every hand can be dealt (R1.5)."""
    decks = rules.decks_for(n)
    size = len(deck_cards(decks, rules.remove_kings_queens))
    need = n * max(rules.hand_sizes) + 1
    if need > size:
        raise ValueError(
            f"cannot deal: {n} players x {max(rules.hand_sizes)} cards + 1 starter = {need}"
            f" > {size} cards in {decks} deck(s)"
            + (" without kings and queens" if rules.remove_kings_queens else "")
            + "; use fewer players, smaller hand_sizes or num_decks=2"
        )
    return decks


class Game:
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
    )  # fmt: skip
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
        decks = _check_dealable(n, rules)
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
            dealer = draw_first_dealer(self._need_rng("the first dealer"), n, deck)
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
        if phase == PHASE_PLAY:
            hand = self.hands[p]
            table = _PLAYABLE[self.active_suit * NUM_RANKS + RANK_OF[self.discard[-1]]]
            acts = [c for c in hand if table[c]]
        elif phase == PHASE_COUNT:
            hand = self.hands[p]
            acts = [c for c in hand if _COUNTABLE[c]]
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
                    self._begin_turn(self._next(p))
                else:
                    self._play(p, action)
            elif phase == PHASE_COUNT:
                if action == DRAW:
                    self._take_count(p)
                else:
                    self._play_in_count(p, action)
            elif phase == PHASE_CALL_SUIT:
                self.active_suit = suit = action - CALL_BASE  # R3.2
                events.append(Called(p, suit))
                self._after_call(p)
            else:
                self._declared(p, action == DECLARE)
        except _HandOver:
            self._advance()
            return events
        self.hand_decisions += 1
        if self.hand_decisions >= self.rules.hand_decision_limit:  # R12
            try:
                self._end_hand("decision_limit")
            except _HandOver:
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

    # ------------------------------------------------------------------ decisions

    def _play(self, p: int, card: int) -> None:
        """Play ``card`` outside the count (R3.4)."""
        self.hands[p].remove(card)
        self.discard.append(card)
        self._events.append(Played(p, card))
        self.active_suit = SUIT_OF[card]
        rank = RANK_OF[card]
        self.jack_run = self.jack_run + 1 if rank == _JACK else 0  # R9.1
        if self.king_left > 1:  # R9.3: the first two cards of a king's sequence
            self.king_left -= 1
            self._pend_ctx = _CTX_FREE
        else:
            self.king_left = 0
            self._pend_ctx = _CTX_NORMAL
        self._pend_card = card
        if rank in (_EIGHT, _NINE):  # R3.4: the suit call comes first
            self.phase = PHASE_CALL_SUIT
        else:
            self._after_call(p)

    def _play_in_count(self, p: int, card: int) -> None:
        """Play an ace (+1) or a two (+2) in the count (R5.2, R5.4)."""
        self.hands[p].remove(card)
        self.discard.append(card)
        self._events.append(Played(p, card))
        self.active_suit = SUIT_OF[card]
        self.jack_run = 0
        self.count += 1 if RANK_OF[card] == _A else 2
        self._pend_card = card
        self._pend_ctx = _CTX_COUNT
        self._after_call(p)

    def _after_call(self, p: int) -> None:
        """After the suit call (if any): the one-card declaration (R7.1), then the function."""
        if len(self.hands[p]) == 1 and self._pend_ctx != _CTX_STARTER:
            mode = self.rules.one_card
            if mode == "declare":
                self.phase = PHASE_DECLARE
                return
        self._resolve(p)

    def _declared(self, p: int, declared: bool) -> None:
        self._events.append(Declared(p, declared))
        if not declared:  # R7.1 "idiot!"
            if self.rules.idiot_penalty == "forfeit":
                self.one_card_penalty_pending[p] = True
            else:
                self._draw(p, 1, "silence")  # R7.2 draw_one: at once, before the function
        if self._deal_declarers:  # R7.3: declarations right after the deal
            self._deal_declarers.pop()
            if self._deal_declarers:
                self.current_player = self._deal_declarers[-1]
                return
            self._apply_starter()
            return
        self._resolve(p)

    def _take_count(self, p: int) -> None:
        """R5.3: draw as many cards as the count; the count ends."""
        self._draw(p, self.count, "count")  # a went-out taker is back in the hand (R6.2 option)
        self.count = 0
        if self.went_out:  # R6.2: the hand ends when the count ends
            self._end_hand("count_ended")
        self._begin_turn(self._next(p))

    # ------------------------------------------------------------------ resolution

    def _resolve(self, p: int) -> None:
        """Apply the pending card's function (R4, R5, R9), then going out (R6.1), then the turn."""
        ctx = self._pend_ctx
        if ctx == _CTX_COUNT:
            self._continue_count(p)
            return
        if ctx == _CTX_FREE:  # R9.3: the sequence goes on
            self._same_turn(p)
            return
        card = self._pend_card
        rank = RANK_OF[card]
        rules = self.rules
        if rank == _TWO:  # R5.1
            self.count = 2
            self._continue_count(p)
            return
        if rank == _SIX:  # R4 6, R4.1: another play, even with no card left (R6.1)
            self._same_turn(p)
            return
        if rank == _KING and rules.face_cards:  # R9.3
            self.king_left = 3
            self._same_turn(p)
            return
        if rank == _TEN:  # R3.5: reverse first
            self.direction = -self.direction
            self._events.append(Reversed(p, self.direction))
        nxt = self._next(p)
        if rank == _FOUR:  # R4, R4.2
            self._events.append(Skipped(nxt, "four"))
            nxt = self._next(nxt)
        elif rank == _FIVE:  # every other player, in turn order from the next one
            q = nxt
            for _ in range(self.num_players - 1):
                self._draw(q, 1, "five")
                q = self._next(q)
        elif rank == _SEVEN:  # R4.3: next_but_one hits the next player at two or three players
            far = rules.seven_hits == "next_but_one" and self.num_players > 3
            self._draw(self._next(nxt) if far else nxt, 1, "seven")
        elif rules.face_cards:
            if rank == _JACK:  # R9.1, R9.4
                self._draw(nxt, 2 * self.jack_run, "jack")
                self._events.append(Skipped(nxt, "jack"))
                nxt = self._next(nxt)
            elif card == QUEEN_OF_SPADES:  # R9.2
                self._draw(nxt, 5, "queen_of_spades")
                self._events.append(Skipped(nxt, "queen_of_spades"))
                nxt = self._next(nxt)
        if not self.hands[p]:  # R6.1: fully resolved and no card left
            self.went_out.append(p)
            self._events.append(WentOut(p))
            self._end_hand("went_out")
        self._begin_turn(nxt)

    def _continue_count(self, p: int) -> None:
        """After a card of the count: going out in the count (R6.2), then the next player."""
        hands = self.hands
        returning = self.rules.count_out_can_return
        if not hands[p]:
            self.went_out.append(p)
            self._events.append(WentOut(p))
            if not any(hands):  # R6.2: nobody holds a card, with or without the option
                self._end_hand("no_cards")
        q = self._next(p)
        if not returning:
            while not hands[q]:  # those who went out are passed over
                q = self._next(q)
        self._begin_turn(q)

    def _same_turn(self, p: int) -> None:
        """Another play in the same turn (a 6, a king's sequence): not a new turn (R7.1)."""
        self.current_player = p
        self.phase = PHASE_PLAY
        self.extra_play = True

    def _begin_turn(self, q: int) -> None:
        """Player ``q`` starts a new turn; a pending one-card penalty is paid instead (R7.1)."""
        pending = self.one_card_penalty_pending
        while pending[q]:
            pending[q] = False
            self._draw(q, 2, "one_card_penalty")
            self._events.append(Skipped(q, "one_card_penalty"))
            q = self._next(q)
            if self.count and not self.rules.count_out_can_return:
                while not self.hands[q]:
                    q = self._next(q)
        self.current_player = q
        self.phase = PHASE_COUNT if self.count else PHASE_PLAY
        self.extra_play = False

    def _next(self, p: int) -> int:
        return (p + self.direction) % self.num_players

    # ------------------------------------------------------------------ cards

    def _draw(self, p: int, k: int, reason: str) -> None:
        """``p`` draws ``k`` cards one at a time, reshuffling when the stock is empty (R10);
        one ``draw`` event per run of cards that no reshuffle interrupts."""
        hand = self.hands[p]
        stock = self._stock
        went_out = self.went_out
        # R6.2 count_out_can_return: a went-out player who draws (the count, a one-card
        # penalty, R7.1) holds cards again and leaves went_out with the first card.
        back = bool(went_out) and p in went_out
        if k == 1 and stock and not back:  # the usual draw, made short
            card = stock.pop()
            insort(hand, card)
            self.drawn[p] += 1
            self._events.append(Drew(p, 1, (card,), reason))
            return
        got: list[int] = []
        for _ in range(k):
            if not stock:
                if got:
                    self._events.append(Drew(p, len(got), tuple(got), reason))
                    got = []
                self._reshuffle(p)
            card = stock.pop()
            insort(hand, card)
            got.append(card)
            if back:
                went_out.remove(p)
                back = False
        self.drawn[p] += k
        if got:
            self._events.append(Drew(p, len(got), tuple(got), reason))

    def _reshuffle(self, p: int) -> None:
        """R10.1 / R10.2: the drawing player takes a shuffle pressure."""
        k = self.shuffle_pressures[p] = self.shuffle_pressures[p] + 1
        cost = PRESSURE_BASE << (k - 1)
        self.scores[p] += cost
        self._hand_penalties[p] += cost
        discard = self.discard
        if len(discard) <= 1:  # R10.2
            self._events.append(Reshuffled(p, k, cost, (), ()))
            self._end_hand("stock_exhausted")
        cards = discard[:-1]
        del discard[:-1]
        h, i = self.hand_index, len(self._reshuffles)
        if h < len(self._script_reshuffles) and i < len(self._script_reshuffles[h]):
            order = self._script_reshuffles[h][i]
            check_permutation(order, sorted(cards), f"reshuffles[{h}][{i}]")
        else:
            rng = self._need_rng(f"reshuffle {i} of hand {h}")
            order = shuffled(cards, rng)
        self._reshuffles.append(order)
        self._events.append(Reshuffled(p, k, cost, tuple(sorted(order)), tuple(order)))
        stock = self._stock  # refilled in place: _draw holds a reference
        stock[:] = order
        stock.reverse()
        # R9.1: the jack run is counted as played; a reshuffle does not break it.

    # ------------------------------------------------------------------ hands

    def _advance(self) -> None:
        """Deal hands until one needs a decision, or end the game."""
        sizes = self.rules.hand_sizes
        while self.hand_index < len(sizes):
            try:
                self._start_hand()
                return
            except _HandOver:
                continue
        self.phase = PHASE_GAME_OVER
        self.current_player = NO_PLAYER
        self._legal = ()
        self._events.append(GameOver(tuple(self.winners()), tuple(self.scores)))

    def _start_hand(self) -> None:
        """R2.3 the deal, R7.3 declarations on the deal, R2.5 the starter."""
        n, h, d, direction = self.num_players, self.hand_size, self.dealer, self.direction
        deck = self.deck
        idx = self.hand_index
        if idx < len(self._script_deals):
            order = self._script_deals[idx]
        else:
            rng = self._need_rng(f"the deal of hand {idx}")
            if idx == 0 and self._deck_top is not None:
                top = self._deck_top
                rest = remove_cards(deck, top)
                order = bytes(top) + shuffled(rest, rng)
            else:
                order = shuffled(deck, rng)
        self._deal = order
        self._reshuffles = []
        if self._deal_log is not None:
            self._deal_log.append(order)
            self._reshuffle_log.append(self._reshuffles)  # type: ignore[union-attr]
        hands: list[list[int]] = [[] for _ in range(n)]
        for i in range(n * h):
            hands[(d + direction * (1 + i % n)) % n].append(order[i])
        for hand in hands:
            hand.sort()
        self.hands = hands
        starter = order[n * h]
        self.discard = [starter]
        self._stock = list(order[: n * h : -1])
        self.active_suit = SUIT_OF[starter]
        self.count = 0
        self.jack_run = 1 if RANK_OF[starter] == _JACK else 0
        self.king_left = 0
        self.extra_play = False
        self.went_out = []
        self.one_card_penalty_pending = [False] * n
        self._hand_penalties = [0] * n
        self.drawn = [0] * n
        self.hand_decisions = 0
        self._pend_card = starter
        self._pend_ctx = _CTX_STARTER
        self._legal = None
        self._events.append(
            Dealt(idx, d, direction, h, tuple(map(tuple, hands)), starter, bytes(order))
        )
        rules = self.rules
        if h == 1 and rules.one_card_on_deal and rules.one_card == "declare":  # R7.3
            # A stack: the last seat to declare (the dealer) at the bottom.
            self._deal_declarers = [(d + direction * k) % n for k in range(n, 0, -1)]
            self.current_player = self._deal_declarers[-1]
            self.phase = PHASE_DECLARE
            return
        self._deal_declarers = []
        self._apply_starter()

    def _apply_starter(self) -> None:
        """R2.5: the starter counts as played by the dealer."""
        d = self.dealer
        self.current_player = d
        self._pend_card = starter = self.discard[-1]
        self._pend_ctx = _CTX_STARTER
        if RANK_OF[starter] in (_EIGHT, _NINE):
            self.phase = PHASE_CALL_SUIT
            self.extra_play = True
            return
        self._resolve(d)

    def _end_hand(self, reason: str) -> NoReturn:
        """Score the hand (R8), move the deal (R2.4), and raise :class:`_HandOver`;
        ``reason``: why it ends (a ``hand_end`` event's reason)."""
        rules = self.rules
        out_points = GOING_OUT_BONUS if rules.going_out_bonus else 0
        went_out = self.went_out
        points = []
        for s, hand in enumerate(self.hands):
            if s in went_out:
                card_points = out_points
            else:
                card_points = score_ranks([RANK_OF[c] for c in hand], rules)
            self.scores[s] += card_points
            points.append(card_points + self._hand_penalties[s])
        self.hand_points.append(tuple(points))
        self._events.append(HandScored(
            self.hand_index, reason, tuple(map(tuple, self.hands)), tuple(went_out),
            tuple(points), tuple(self.scores), tuple(self.shuffle_pressures),
        ))  # fmt: skip
        self.hand_index += 1
        if rules.dealer_follows_direction and self.direction == -1:
            self.dealer = (self.dealer - 1) % self.num_players
        else:
            self.dealer = (self.dealer + 1) % self.num_players
            self.direction = 1
        self.phase = PHASE_GAME_OVER
        self._legal = ()
        raise _HandOver

    # ------------------------------------------------------------------ randomness

    def _need_rng(self, what: str) -> np.random.Generator:
        rng = self._rng
        if rng is None:
            state = self._rng_state
            if state is None:
                raise ValueError(
                    f"{what} needs a random generator: give seed or rng, or the deck orders"
                )
            bit_generator_cls, bit_state = state
            bit_generator = bit_generator_cls(0)
            bit_generator.state = bit_state
            rng = self._rng = np.random.Generator(bit_generator)
            self._rng_state = None
        return rng

    # ------------------------------------------------------------------ cloning

    @property
    def idiot_pending(self) -> list[bool]:
        """Deprecated name of ``one_card_penalty_pending`` (removed in the next release)."""
        warnings.warn("Game.idiot_pending is now one_card_penalty_pending", DeprecationWarning,
                      stacklevel=2)  # fmt: skip
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

    def clone(self, rng: np.random.Generator | None = None) -> Game:
        """An independent copy of the whole state.

        With ``rng=None`` the copy continues with an exact copy of this game's
        generator state (copied lazily, only if the copy ever shuffles), so the
        copy and the original play out identically under the same actions.
        Pass ``rng`` to give the copy its own generator instead (search bots).
        """
        g = Game.__new__(Game)
        g.rules = self.rules
        g.num_players = self.num_players
        g.hand_index = self.hand_index
        g.dealer = self.dealer
        g.first_dealer = self.first_dealer
        g.direction = self.direction
        g.current_player = self.current_player
        g.phase = self.phase
        g.hands = [h[:] for h in self.hands]
        g.discard = self.discard[:]
        g.active_suit = self.active_suit
        g.count = self.count
        g.jack_run = self.jack_run
        g.king_left = self.king_left
        g.extra_play = self.extra_play
        g.one_card_penalty_pending = self.one_card_penalty_pending[:]
        g.scores = self.scores[:]
        g.shuffle_pressures = self.shuffle_pressures[:]
        g.hand_points = self.hand_points[:]
        g.went_out = self.went_out[:]
        g.hand_decisions = self.hand_decisions
        g.drawn = self.drawn[:]
        g._stock = self._stock[:]
        g._hand_penalties = self._hand_penalties[:]
        g._pend_card = self._pend_card
        g._pend_ctx = self._pend_ctx
        g._deal_declarers = self._deal_declarers[:]
        g._legal = self._legal
        g._deal = self._deal
        g._reshuffles = self._reshuffles[:]
        if self._deal_log is None:
            g._deal_log = g._reshuffle_log = None
        else:
            g._deal_log = self._deal_log[:]
            g._reshuffle_log = [*self._reshuffle_log[:-1], g._reshuffles]  # type: ignore[index]
        g._deck_key = self._deck_key
        g._script_deals = self._script_deals
        g._script_reshuffles = self._script_reshuffles
        g._deck_top = self._deck_top
        g._events = []
        g.start_events = self.start_events
        if rng is not None:
            g._rng, g._rng_state = rng, None
        elif self._rng is not None:
            bit_generator = self._rng.bit_generator
            g._rng, g._rng_state = None, (type(bit_generator), bit_generator.state)
        else:
            g._rng, g._rng_state = None, self._rng_state
        return g

    def determinized(
        self,
        seat: int,
        hands: dict[int, list[int]],
        stock: list[int],
        rng: np.random.Generator | None = None,
        unseen: list[int] | None = None,
    ) -> Game:
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

    # ------------------------------------------------------------------ inspection

    def snapshot(self, *, resume: bool = False) -> dict[str, Any]:
        """The whole state (every hand: god's view), JSON-serialisable (docs/interface.md).

        :meth:`from_snapshot` rebuilds the game from it. ``resume=True`` adds the key
        ``"resume"``: what the game's future needs beyond the table — the generator's
        state, the deck orders given (``deals``, ``reshuffles``) but not used yet and,
        with ``record=True``, the earlier hands' deck orders — so that the rebuilt game
        continues bit-identically with no seed. It is left out by default because a
        seeded game and its replay from deck orders have equal snapshots.
        """
        over = self.phase == PHASE_GAME_OVER
        phase = self.phase
        pending = phase in (PHASE_CALL_SUIT, PHASE_DECLARE)
        snap = {
            "num_players": self.num_players,
            "hand_index": self.hand_index,
            "dealer": self.dealer,
            "current_player": None if over else self.current_player,
            "phase": PHASE_NAMES[self.phase],
            "direction": self.direction,
            "top": CARD_STRS[self.discard[-1]],
            "active_suit": SUIT_CHARS[self.active_suit],
            "count": self.count,
            "hands": [_strs(h) for h in self.hands],
            "stock": _strs(reversed(self._stock)),
            "discard": _strs(self.discard),
            "scores": list(self.scores),
            "shuffle_pressures": list(self.shuffle_pressures),
            "hand_points": [list(p) for p in self.hand_points],
            "went_out": list(self.went_out),
            "deal": _strs(self._deal),
            "reshuffles": [_strs(r) for r in self._reshuffles],
            # Beyond docs/interface.md's minimum:
            "hand_size": self.hand_size,
            "first_dealer": self.first_dealer,
            "legal_actions": list(self.legal_actions()),
            "extra_play": self.extra_play,
            "king_cards_left": self.king_left,
            "jack_run": self.jack_run,
            "one_card_penalty_pending": list(self.one_card_penalty_pending),
            "hand_decisions": self.hand_decisions,
            "drawn": list(self.drawn),
            "winners": self.winners() if over else None,
            "rules": self.rules.to_dict(),
            "deal_declarations_left": self._deal_declarers[::-1],
            "pending_role": _PENDING_ROLES[self._pend_ctx] if pending else None,
        }
        if resume:
            snap["resume"] = self._resume_snapshot()
        return snap

    def _resume_snapshot(self) -> dict[str, Any]:
        """``snapshot(resume=True)["resume"]``: the generator and the deck orders still to come."""
        h, last = self.hand_index, len(self.rules.hand_sizes)
        reshuffles: list[list[bytes]] = []
        if h < min(last, len(self._script_reshuffles)):
            reshuffles = [self._script_reshuffles[h][len(self._reshuffles) :]]
            reshuffles += self._script_reshuffles[h + 1 : last]
            while reshuffles and not reshuffles[-1]:
                reshuffles.pop()
        generator: dict[str, Any] | None = None
        if self._rng is not None:
            from .snapshots import generator_state  # the reader imports Game: imported here

            generator = generator_state(self._rng)
        elif self._rng_state is not None:  # a clone that has not shuffled yet
            from .snapshots import plain_state

            generator = plain_state(self._rng_state[1])
        recorded = None
        if self._deal_log is not None and self._reshuffle_log is not None:
            recorded = {  # the last entries are this hand's "deal" and "reshuffles"
                "deals": [_strs(d) for d in self._deal_log[:-1]],
                "reshuffles": [[_strs(o) for o in hand] for hand in self._reshuffle_log[:-1]],
            }
        return {
            "generator": generator,
            "scheduled_deals": [_strs(d) for d in self._script_deals[h + 1 : last]],
            "scheduled_reshuffles": [[_strs(o) for o in hand] for hand in reshuffles],
            "recorded": recorded,
        }

    @classmethod
    def from_snapshot(
        cls,
        snapshot: dict[str, Any],
        *,
        seed: int | None = None,
        rng: np.random.Generator | None = None,
    ) -> Game:
        """The game that :meth:`snapshot` described, continuing identically under the same actions.

        Randomness (reshuffles, later deals) continues from ``seed`` or ``rng`` if one is
        given; otherwise from the generator state of ``snapshot(resume=True)``, which
        makes the rebuilt game continue bit-identically; otherwise the game has no
        generator and raises ``ValueError`` when it needs a random choice (as a game made
        from ``deals`` does). A snapshot with ``"resume"`` also brings the deck orders
        scheduled but not used yet and, for ``record=True``, :meth:`deck_orders`.

        An invalid snapshot (a missing or unknown key, a wrong type, cards that are not
        the deck, values that contradict each other) raises ``ValueError`` naming the key.
        """
        if seed is not None and rng is not None:
            raise ValueError("give seed or rng, not both")
        if rng is not None and not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng: got {type(rng).__name__}, expected numpy.random.Generator")
        from .snapshots import game_from_snapshot  # the reader imports Game: imported here

        g = game_from_snapshot(snapshot)
        if rng is None and seed is not None:
            rng = np.random.default_rng(seed)
        if rng is not None:
            g._rng = rng
        return g

    def deck_orders(self) -> tuple[list[list[str]], list[list[list[str]]]]:
        """Every hand's deal so far and its reshuffles; ``Game(deals=…, reshuffles=…)`` replays.

        Needs a game made with ``record=True``.
        """
        if self._deal_log is None or self._reshuffle_log is None:
            raise ValueError("deck_orders() needs a game made with record=True")
        deals = [[CARD_STRS[c] for c in d] for d in self._deal_log]
        reshuffles = [[[CARD_STRS[c] for c in r] for r in hand] for hand in self._reshuffle_log]
        return deals, reshuffles

    def __repr__(self) -> str:
        player = None if self.phase == PHASE_GAME_OVER else self.current_player
        return (
            f"Game(num_players={self.num_players}, hand {self.hand_index}, "
            f"phase={PHASE_NAMES[self.phase]}, current_player={player})"
        )
