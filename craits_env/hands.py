"""The hands: the deal (R2.3), the starter (R2.5), scoring a hand (R8) and moving the deal
(R2.4), and the game's randomness.

:class:`HandCycle` is the part of :class:`~craits_env.engine.Game` that deals each hand
of the schedule until one needs a decision, scores it when it ends, and ends the game
after the last one. :func:`check_dealable` refuses a schedule whose largest hand cannot
be dealt (R1.5).
"""

from __future__ import annotations

from typing import NoReturn

import numpy as np

from .actions import NO_PLAYER, PHASE_CALL_SUIT, PHASE_DECLARE, PHASE_GAME_OVER
from .cards import RANK_OF, SUIT_OF, Rank
from .deck import deck_cards, remove_cards, shuffled
from .events import Dealt, GameOver, HandScored
from .game_state import CTX_STARTER, GameState, HandOver, NeedsRandomness
from .rules import Rules
from .scoring import GOING_OUT_BONUS, score_ranks

_EIGHT, _NINE, _JACK = int(Rank.EIGHT), int(Rank.NINE), int(Rank.JACK)


def check_dealable(n: int, rules: Rules) -> int:
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


class HandCycle(GameState):
    """Deal, score, deal again (see the module docstring)."""

    __slots__ = ()

    # ------------------------------------------------------------------ hands

    def _advance(self) -> None:
        """Deal hands until one needs a decision, or end the game."""
        sizes = self.rules.hand_sizes
        while self.hand_index < len(sizes):
            try:
                self._start_hand()
                return
            except HandOver:
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
            rng = self._need_rng("deal")
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
        # R2.3, one card at a time from the dealer's next seat on: the seat 1 + j places
        # after the dealer (in the direction of play) gets cards j, j + n, j + 2n ... of the order.
        dealt = n * h
        hands: list[list[int]] = [[] for _ in range(n)]
        for j in range(n):
            hands[(d + direction * (1 + j)) % n] = sorted(order[j:dealt:n])
        self.hands = hands
        starter = order[dealt]
        self.discard = [starter]
        self._stock = list(order[:dealt:-1])
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
        self._pend_ctx = CTX_STARTER
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
        self._pend_ctx = CTX_STARTER
        if RANK_OF[starter] in (_EIGHT, _NINE):
            self.phase = PHASE_CALL_SUIT
            self.extra_play = True
            return
        self._resolve(d)

    def _end_hand(self, reason: str) -> NoReturn:
        """Score the hand (R8), move the deal (R2.4), and raise :class:`HandOver`;
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
        self._events.append(
            HandScored(
                self.hand_index,
                reason,
                tuple(map(tuple, self.hands)),
                tuple(went_out),
                tuple(points),
                tuple(self.scores),
                tuple(self.shuffle_pressures),
            )
        )
        self.hand_index += 1
        if rules.dealer_follows_direction and self.direction == -1:
            self.dealer = (self.dealer - 1) % self.num_players
        else:
            self.dealer = (self.dealer + 1) % self.num_players
            self.direction = 1
        self.phase = PHASE_GAME_OVER
        self._legal = ()
        raise HandOver

    # ------------------------------------------------------------------ randomness

    def schedule_deal(self, hand_index: int, order: bytes | list[int]) -> None:
        """Deal hand ``hand_index`` (not dealt yet) from the deck order ``order`` (first dealt
        first) instead of drawing it from the generator."""
        if hand_index < 0:
            raise ValueError(f"schedule_deal: got hand {hand_index}, allowed a hand index >= 0")
        deals = self._script_deals[:hand_index]
        deals += [b""] * (hand_index - len(deals))
        self._script_deals = [*deals, bytes(order), *self._script_deals[hand_index + 1 :]]

    def schedule_reshuffle(self, hand_index: int, index: int, order: bytes | list[int]) -> None:
        """Refill the stock of reshuffle ``index`` of hand ``hand_index`` in the order ``order``
        (next card first) instead of drawing it from the generator."""
        if hand_index < 0 or index < 0:
            raise ValueError(
                f"schedule_reshuffle: got hand {hand_index}, reshuffle {index}, "
                "allowed indices >= 0"
            )
        rows = [list(r) for r in self._script_reshuffles]
        rows += [[] for _ in range(hand_index + 1 - len(rows))]
        row = rows[hand_index][:index]
        row += [b""] * (index - len(row))
        rows[hand_index] = [*row, bytes(order), *rows[hand_index][index + 1 :]]
        self._script_reshuffles = rows

    def forget_randomness(self) -> None:
        """Drop the generator and every order scheduled after the current position: each
        deal or reshuffle still to come then raises :class:`NeedsRandomness` until scheduled
        (OpenSpiel's chance nodes)."""
        self._rng = self._rng_state = None
        h = self.hand_index
        self._script_deals = self._script_deals[: h + 1] + [b""] * (h + 1 - len(self._script_deals))
        done = len(self._reshuffles)
        rows = [list(r) for r in self._script_reshuffles[:h]]
        rows += [[] for _ in range(h - len(rows))]
        self._script_reshuffles = [*rows, list(self._reshuffles[:done])]

    def _need_rng(self, kind: str, index: int = 0) -> np.random.Generator:
        rng = self._rng
        if rng is None:
            state = self._rng_state
            if state is None:
                h = 0 if kind == "first_dealer" else self.hand_index
                what = {
                    "deal": f"the deal of hand {h}",
                    "reshuffle": f"reshuffle {index} of hand {h}",
                    "first_dealer": "the first dealer",
                }[kind]
                raise NeedsRandomness(what, kind, h, index)
            bit_generator_cls, bit_state = state
            bit_generator = bit_generator_cls(0)
            bit_generator.state = bit_state
            rng = self._rng = np.random.Generator(bit_generator)
            self._rng_state = None
        return rng
