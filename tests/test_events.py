"""The events ``Game.apply`` returns: they tell the whole game (craits_env/events.py).

Random games across every rules option are rebuilt from their event stream alone —
hands, discard pile, stock, scores, shuffle pressures, who went out, the direction, the
deck orders — and compared with the engine after every decision; scripted games with
stacked decks assert the exact events; a seat's public events never show a card it may
not see; every kind goes through JSON and back.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from craits_env import Game
from craits_env.cards import parse_card
from craits_env.events import (
    KINDS,
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
    event_from_dict,
    public_event,
)
from craits_env.scoring import GOING_OUT_BONUS, score_ranks
from craits_env.testing.random_rules import random_config


def c(text: str) -> int:
    return parse_card(text)


def cs(*texts: str) -> tuple[int, ...]:
    return tuple(parse_card(t) for t in texts)


class Rebuilt:
    """The table rebuilt from events alone (what a listener can know)."""

    def __init__(self, game: Game) -> None:
        n = game.num_players
        self.rules = game.rules
        self.n = n
        self.hands: list[list[int]] = [[] for _ in range(n)]
        self.discard: list[int] = []
        self.stock: list[int] = []  # next card first
        self.scores = [0] * n
        self.pressures = [0] * n
        self.went_out: list[int] = []
        self.direction = 1
        self.deals: list[list[int]] = []
        self.reshuffles: list[list[list[int]]] = []
        self.hand_points: list[tuple[int, ...]] = []
        self.winners: tuple[int, ...] | None = None
        self.penalties = [0] * n

    def take(self, events: list[Event]) -> None:
        for e in events:
            json.dumps(e.to_dict())  # every event is JSON-serialisable
            getattr(self, "_" + e.kind)(e)

    def _deal(self, e: Dealt) -> None:
        assert e.order is not None
        n, h = self.n, e.hand_size
        self.deals.append(list(e.order))
        self.reshuffles.append([])
        hands: list[list[int]] = [[] for _ in range(n)]
        for i in range(n * h):  # R2.3: one at a time, from the dealer's next seat
            hands[(e.dealer + e.direction * (1 + i % n)) % n].append(e.order[i])
        assert [tuple(sorted(x)) for x in hands] == list(e.hands)
        self.hands = [sorted(x) for x in hands]
        self.discard = [e.order[n * h]]
        assert e.starter == self.discard[0]
        self.stock = list(e.order[n * h + 1 :])
        self.direction = e.direction
        self.went_out = []
        self.penalties = [0] * n

    def _play(self, e: Played) -> None:
        self.hands[e.seat].remove(e.card)
        self.discard.append(e.card)

    def _suit_call(self, e: Called) -> None:
        assert 0 <= e.suit < 4

    def _declaration(self, e: Declared) -> None:
        assert isinstance(e.declared, bool)

    def _draw(self, e: Drew) -> None:
        assert e.cards is not None and len(e.cards) == e.number > 0
        for card in e.cards:
            assert self.stock[0] == card
            del self.stock[0]
            self.hands[e.seat].append(card)
        self.hands[e.seat].sort()
        if e.seat in self.went_out:  # R6.2 count_out_can_return: back in the hand
            self.went_out.remove(e.seat)

    def _reshuffle(self, e: Reshuffled) -> None:
        assert not self.stock
        self.pressures[e.seat] += 1
        assert e.pressure == self.pressures[e.seat] and e.cost == 5 * 2 ** (e.pressure - 1)
        self.scores[e.seat] += e.cost
        self.penalties[e.seat] += e.cost
        assert e.order is not None and tuple(sorted(e.order)) == e.cards
        if e.cards:
            assert tuple(sorted(self.discard[:-1])) == e.cards
            del self.discard[:-1]
            self.stock = list(e.order)
            self.reshuffles[-1].append(list(e.order))
        else:
            assert len(self.discard) == 1  # R10.2: the hand ends next

    def _skip(self, e: Skipped) -> None:
        assert 0 <= e.seat < self.n

    def _reverse(self, e: Reversed) -> None:
        assert e.direction == -self.direction
        self.direction = e.direction

    def _went_out(self, e: WentOut) -> None:
        assert not self.hands[e.seat] and e.seat not in self.went_out
        self.went_out.append(e.seat)

    def _hand_end(self, e: HandScored) -> None:
        assert list(e.hands) == [tuple(h) for h in self.hands]
        assert list(e.went_out) == self.went_out
        points = []
        for s, hand in enumerate(self.hands):
            if s in self.went_out:
                card_points = GOING_OUT_BONUS if self.rules.going_out_bonus else 0
            else:
                card_points = score_ranks([x % 13 for x in hand], self.rules)
            self.scores[s] += card_points
            points.append(card_points + self.penalties[s])
        assert tuple(points) == e.points
        assert tuple(self.scores) == e.scores and tuple(self.pressures) == e.shuffle_pressures
        self.hand_points.append(e.points)

    def _game_over(self, e: GameOver) -> None:
        best = min(self.scores)
        assert e.winners == tuple(s for s in range(self.n) if self.scores[s] == best)
        assert e.scores == tuple(self.scores)
        self.winners = e.winners

    def check(self, g: Game) -> None:
        assert self.scores == g.scores
        assert self.pressures == g.shuffle_pressures
        assert self.hand_points == g.hand_points
        if g.is_over:
            assert self.winners == tuple(g.winners())
            return
        assert self.hands == g.hands
        assert self.discard == g.discard
        assert self.stock == g.stock
        assert self.went_out == g.went_out
        assert self.direction == g.direction


def test_random_games_replay_from_their_events_alone() -> None:
    """Thousands of small random games, every rules option: the events rebuild the game."""
    r = random.Random(27)
    kinds: set[str] = set()
    for i in range(2000):
        n, rules = random_config(r)
        g = Game(n, rules, seed=i, record=True)
        rebuilt = Rebuilt(g)
        rebuilt.take(list(g.start_events))
        kinds.update(e.kind for e in g.start_events)
        rebuilt.check(g)
        steps = 0
        while not g.is_over and steps < 150:
            legal = g.legal_actions()
            events = g.apply(legal[r.randrange(len(legal))])
            kinds.update(e.kind for e in events)
            rebuilt.take(events)
            rebuilt.check(g)
            steps += 1
        deals, reshuffles = g.deck_orders()
        assert [[parse_card(x) for x in d] for d in deals] == rebuilt.deals
        assert [[[parse_card(x) for x in o] for o in h] for h in reshuffles] == rebuilt.reshuffles
    assert kinds == set(KINDS)


def test_events_change_nothing_of_the_game() -> None:
    """The same seed and actions give the same game whether the events are read or not."""
    for seed in range(20):
        a, b = Game(3, seed=seed), Game(3, seed=seed)
        r = random.Random(seed)
        while not a.is_over:
            legal = a.legal_actions()
            action = legal[r.randrange(len(legal))]
            assert isinstance(a.apply(action), list)
            b.apply(action)
        assert a.snapshot(resume=True) == b.snapshot(resume=True)


def test_a_clone_and_a_snapshot_game_return_their_own_events() -> None:
    g = Game(4, seed=5)
    copy = g.clone()
    rebuilt = Game.from_snapshot(g.snapshot(resume=True))
    assert copy.start_events == g.start_events and rebuilt.start_events == ()
    action = g.legal_actions()[0]
    assert g.apply(action) == copy.apply(action) == rebuilt.apply(action)


def test_json_round_trip_of_every_kind() -> None:
    r = random.Random(3)
    seen: dict[str, Event] = {}
    for i in range(600):
        n, rules = random_config(r)
        g = Game(n, rules, seed=i)
        for e in g.start_events:
            seen.setdefault(e.kind, e)
        while not g.is_over:
            legal = g.legal_actions()
            for e in g.apply(legal[r.randrange(len(legal))]):
                seen.setdefault(e.kind, e)
                assert event_from_dict(json.loads(json.dumps(e.to_dict()))) == e
                for seat in (None, 0):
                    shown = public_event(e, seat)
                    assert event_from_dict(json.loads(json.dumps(shown.to_dict()))) == shown
        if len(seen) == len(KINDS):
            break
    assert set(seen) == set(KINDS)


@pytest.mark.parametrize(
    "data",
    [
        [],
        {"kind": "nothing"},
        {"kind": "play", "seat": 0},
        {"kind": "play", "seat": 0, "card": "Zz"},
        {"kind": "play", "seat": 0, "card": "7c", "extra": 1},
        {"kind": "draw", "seat": 0, "count": 1, "cards": ["7c"], "reason": "luck"},
    ],
)
def test_event_from_dict_refuses_what_no_event_wrote(data: Any) -> None:
    with pytest.raises(ValueError, match=r"event"):
        event_from_dict(data)


# ----------------------------------------------------------------------------- the public form


def _hidden_cards(e: Event, seat: int) -> bool:
    """Whether the public form of ``e`` for ``seat`` still holds a card it may not see."""
    if isinstance(e, Drew):
        return e.seat != seat and e.cards is not None
    if isinstance(e, Reshuffled):
        return e.order is not None
    if isinstance(e, Dealt):
        return e.order is not None or any(h is not None for s, h in enumerate(e.hands)
                                          if s != seat)  # fmt: skip
    return False


def test_a_seats_public_events_hide_what_it_may_not_see() -> None:
    r = random.Random(11)
    for i in range(300):
        n, rules = random_config(r)
        g = Game(n, rules, seed=i)
        seat = i % n
        stream = list(g.start_events)
        while not g.is_over:
            legal = g.legal_actions()
            stream += g.apply(legal[r.randrange(len(legal))])
        for e in stream:
            shown = public_event(e, seat)
            assert not _hidden_cards(shown, seat)
            assert shown.kind == e.kind
            if isinstance(e, Drew) and e.seat == seat:
                assert shown == e  # its own draws: every card
            if isinstance(e, HandScored | Played | GameOver):
                assert shown == e  # laid down for scoring (R8), played face up
            if isinstance(shown, Drew):
                assert shown.number == e.number  # type: ignore[union-attr]
            text = json.dumps(shown.to_dict())
            if isinstance(e, Dealt):
                own = json.dumps([CARD for CARD in shown.to_dict()["hands"][seat]])
                assert own in text
