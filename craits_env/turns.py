"""The turn and its effects: a card played, its suit call and declaration, its function,
the count, going out, the next turn, draws and reshuffles (R3–R7, R9, R10).

:class:`TurnMachine` is the part of :class:`~craits_env.engine.Game` that moves play on
after a decision, until the next decision or the hand's end (R3.6), and tells each
step as an event (:mod:`craits_env.events`).
"""

from __future__ import annotations

from bisect import insort

from .actions import PHASE_CALL_SUIT, PHASE_COUNT, PHASE_DECLARE, PHASE_PLAY
from .cards import NUM_CARDS, QUEEN_OF_SPADES, RANK_OF, SUIT_OF, Rank, check_permutation
from .deck import shuffled
from .events import (
    DECLARED_EVENTS,
    DREW_ONE,
    PLAYED_EVENTS,
    REVERSED_EVENTS,
    SKIPPED_EVENTS,
    WENT_OUT_EVENTS,
    Drew,
    Reshuffled,
)
from .game_state import CTX_COUNT, CTX_FREE, CTX_NORMAL, CTX_STARTER, GameState
from .scoring import PRESSURE_BASE

# Plain ints on the hot path (IntEnum comparisons are slower).
_A, _TWO, _FOUR, _FIVE, _SIX, _SEVEN, _EIGHT, _NINE, _TEN, _JACK, _KING = (
    int(r)
    for r in (
        Rank.ACE, Rank.TWO, Rank.FOUR, Rank.FIVE, Rank.SIX, Rank.SEVEN,
        Rank.EIGHT, Rank.NINE, Rank.TEN, Rank.JACK, Rank.KING,
    )
)  # fmt: skip


class TurnMachine(GameState):
    """Play after a decision (see the module docstring)."""

    __slots__ = ()

    # ------------------------------------------------------------------ decisions

    def _play(self, p: int, card: int) -> None:
        """Play ``card`` outside the count (R3.4)."""
        hand = self.hands[p]
        hand.remove(card)
        self.discard.append(card)
        self._events.append(PLAYED_EVENTS[p * NUM_CARDS + card])
        self.active_suit = SUIT_OF[card]
        rank = RANK_OF[card]
        self.jack_run = self.jack_run + 1 if rank == _JACK else 0  # R9.1
        king_left = self.king_left
        if king_left > 1:  # R9.3: the first two cards of a king's sequence
            self.king_left = king_left - 1
            self._pend_ctx = CTX_FREE
        else:
            self.king_left = 0
            self._pend_ctx = CTX_NORMAL
        self._pend_card = card
        # R3.4: the suit call comes first (two int comparisons are faster than `in`).
        if rank == _EIGHT or rank == _NINE:  # noqa: SIM109
            self.phase = PHASE_CALL_SUIT
        elif len(hand) == 1 and self.rules.one_card == "declare":  # _after_call's R7.1, inline
            self.phase = PHASE_DECLARE
        else:
            self._resolve(p)

    def _play_in_count(self, p: int, card: int) -> None:
        """Play an ace (+1) or a two (+2) in the count (R5.2, R5.4)."""
        self.hands[p].remove(card)
        self.discard.append(card)
        self._events.append(PLAYED_EVENTS[p * NUM_CARDS + card])
        self.active_suit = SUIT_OF[card]
        self.jack_run = 0
        self.count += 1 if RANK_OF[card] == _A else 2
        self._pend_card = card
        self._pend_ctx = CTX_COUNT
        self._after_call(p)

    def _after_call(self, p: int) -> None:
        """After the suit call (if any): the one-card declaration (R7.1), then the function."""
        if len(self.hands[p]) == 1 and self._pend_ctx != CTX_STARTER:
            mode = self.rules.one_card
            if mode == "declare":
                self.phase = PHASE_DECLARE
                return
        self._resolve(p)

    def _declared(self, p: int, declared: bool) -> None:
        self._events.append(DECLARED_EVENTS[p * 2 + declared])
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
        if ctx == CTX_COUNT:
            self._continue_count(p)
            return
        if ctx == CTX_FREE:  # R9.3: the sequence goes on
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
            self._events.append(REVERSED_EVENTS[self.direction][p])
        nxt = (p + self.direction) % self.num_players  # _next
        if rank == _FOUR:  # R4, R4.2
            self._events.append(SKIPPED_EVENTS["four"][nxt])
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
                self._events.append(SKIPPED_EVENTS["jack"][nxt])
                nxt = self._next(nxt)
            elif card == QUEEN_OF_SPADES:  # R9.2
                self._draw(nxt, 5, "queen_of_spades")
                self._events.append(SKIPPED_EVENTS["queen_of_spades"][nxt])
                nxt = self._next(nxt)
        if not self.hands[p]:  # R6.1: fully resolved and no card left
            self.went_out.append(p)
            self._events.append(WENT_OUT_EVENTS[p])
            self._end_hand("went_out")
        self._begin_turn(nxt)

    def _continue_count(self, p: int) -> None:
        """After a card of the count: going out in the count (R6.2), then the next player."""
        hands = self.hands
        returning = self.rules.count_out_can_return
        if not hands[p]:
            self.went_out.append(p)
            self._events.append(WENT_OUT_EVENTS[p])
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
            self._events.append(SKIPPED_EVENTS["one_card_penalty"][q])
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
        back = p in went_out
        if k == 1 and stock and not back:  # the usual draw, made short
            card = stock.pop()
            insort(hand, card)
            self.drawn[p] += 1
            self._events.append(DREW_ONE[reason][p * NUM_CARDS + card])
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
            rng = self._need_rng("reshuffle", i)
            order = shuffled(cards, rng)
        self._reshuffles.append(order)
        self._events.append(Reshuffled(p, k, cost, tuple(sorted(order)), tuple(order)))
        stock = self._stock  # refilled in place: _draw holds a reference
        stock[:] = order
        stock.reverse()
        # R9.1: the jack run is counted as played; a reshuffle does not break it.
