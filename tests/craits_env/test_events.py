"""The events ``Game.apply`` returns: they tell the whole game (craits_env/events.py).

Random games across every rules option are rebuilt from their event stream alone —
hands, discard pile, stock, scores, shuffle pressures, who went out, the direction, the
deck orders — and compared with the engine after every decision; scripted games with
stacked decks assert the exact events; a seat's public events never show a card it may
not see; every kind goes through JSON and back.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

import pytest

from craits_env import Game, Rules
from craits_env.actions import DECLARE, STAY_SILENT, parse_action
from craits_env.cards import parse_card
from craits_env.events import (
    DRAW_REASONS,
    HAND_END_REASONS,
    KINDS,
    SKIP_REASONS,
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
from craits_env.testing.scenario import stacked_game


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


@pytest.mark.slow
def test_random_games_replay_from_their_events_alone() -> None:
    """Thousands of small random games, every rules option: the events rebuild the game."""
    r = random.Random(27)
    kinds: set[str] = set()
    reasons: set[str] = set()
    for i in range(1200):
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
            reasons.update(getattr(e, "reason", "draw") for e in events)
            rebuilt.take(events)
            rebuilt.check(g)
            steps += 1
        deals, reshuffles = g.deck_orders()
        assert [[parse_card(x) for x in d] for d in deals] == rebuilt.deals
        assert [[[parse_card(x) for x in o] for o in h] for h in reshuffles] == rebuilt.reshuffles
    assert kinds == set(KINDS)
    assert reasons | {"no_cards"} == {*DRAW_REASONS, *SKIP_REASONS, *HAND_END_REASONS}


@pytest.mark.slow
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


# ----------------------------------------------------------------------------- scripted games


def test_a_five_as_the_last_card_draws_goes_out_and_scores() -> None:
    """R4: every other player draws one, in turn order from the next; R6.1: then the
    player goes out; the hand's end holds every hand and its points (R8.3: 3s cancels A)."""
    g = stacked_game([["Qh"], ["5c"], ["3s"]], starter="Kc", stock=["Ah", "2h"])
    (deal,) = g.start_events
    assert isinstance(deal, Dealt) and deal.order is not None
    assert deal._replace(order=None) == Dealt(
        0, 0, 1, 1, (cs("Qh"), cs("5c"), cs("3s")), c("Kc"), None
    )
    assert g.apply(c("5c")) == [
        Played(1, c("5c")),
        Drew(2, 1, cs("Ah"), "five"),
        Drew(0, 1, cs("2h"), "five"),
        WentOut(1),
        HandScored(
            0,
            "went_out",
            (cs("2h", "Qh"), (), cs("Ah", "3s")),
            (1,),
            (30, 0, 3),
            (30, 0, 3),
            (0, 0, 0),
        ),
        GameOver((1,), (30, 0, 3)),
    ]


def test_a_skip_a_reverse_and_a_silence_paid_at_the_next_turn() -> None:
    """R4 (4 skips, T reverses), R7.1 (silence: the next turn is two cards instead)."""
    g = stacked_game(
        [["4c", "Tc", "Kd"], ["5d", "6h", "Jh"], ["8s", "Ts", "3d"]],
        starter="9c",
        stock=["Ah", "2h", "4h"],
        dealer=2,
    )
    assert [e.kind for e in g.start_events] == ["deal"]  # the starter 9 waits for its call
    assert g.apply(parse_action("call c")) == [Called(2, 0)]
    assert g.apply(c("4c")) == [Played(0, c("4c")), Skipped(1, "four")]
    assert g.apply(c("8s")) == [Played(2, c("8s"))]
    assert g.apply(parse_action("call c")) == [Called(2, 0)]
    assert g.apply(c("Tc")) == [Played(0, c("Tc"))]  # one card left: the declaration first
    assert g.apply(STAY_SILENT) == [Declared(0, False), Reversed(0, -1)]
    assert g.apply(c("Ts")) == [Played(2, c("Ts"))]
    assert g.apply(DECLARE) == [
        Declared(2, True),
        Reversed(2, 1),
        Drew(0, 2, cs("Ah", "2h"), "one_card_penalty"),
        Skipped(0, "one_card_penalty"),
    ]
    assert g.current_player == 1


def test_jacks_in_a_row_and_the_queen_of_spades_draw_and_forfeit() -> None:
    """R9.1: 2 × the jacks in a row; R9.2: five cards; R9.4: the turn is forfeited."""
    g = stacked_game(
        [["Jh", "Qs", "4d"], ["Jc", "5d", "6d"], ["Ts", "Td", "8h"]],
        starter="3c",
        face_cards=True,
        stock=["Ac", "2c", "3d", "4c", "5c", "6c", "7c", "8c", "9c", "Tc"],
    )
    assert g.apply(c("Jc")) == [
        Played(1, c("Jc")),
        Drew(2, 2, cs("Ac", "2c"), "jack"),
        Skipped(2, "jack"),
    ]
    assert g.apply(c("Jh")) == [
        Played(0, c("Jh")),
        Drew(1, 4, cs("3d", "4c", "5c", "6c"), "jack"),
        Skipped(1, "jack"),
    ]
    assert g.apply(c("8h")) == [Played(2, c("8h"))]
    assert g.apply(parse_action("call s")) == [Called(2, 3)]
    assert g.apply(c("Qs")) == [Played(0, c("Qs"))]
    assert g.apply(DECLARE) == [
        Declared(0, True),
        Drew(1, 5, cs("7c", "8c", "9c", "Tc", "Qc"), "queen_of_spades"),
        Skipped(1, "queen_of_spades"),
    ]


def test_everyone_out_in_the_count_ends_the_hand_at_once() -> None:
    """R6.2: the 2 that starts the count is the last card of one, an ace the other's."""
    g = stacked_game([["Ad"], ["2c"]], starter="3c")
    assert g.apply(c("2c")) == [Played(1, c("2c")), WentOut(1)]
    assert g.apply(c("Ad")) == [
        Played(0, c("Ad")),
        WentOut(0),
        HandScored(0, "no_cards", ((), ()), (1, 0), (0, 0), (0, 0), (0, 0)),
        GameOver((0, 1), (0, 0)),
    ]


def test_a_draw_across_a_reshuffle_is_two_draws_around_it() -> None:
    """R10.1: the stock runs out in the middle of a draw: the cards drawn so far, the
    reshuffle (the drawing player pays), the rest; as a random game finds it."""
    r = random.Random(8)
    for seed in range(400):
        g = Game(5, Rules(remove_kings_queens=True, hand_sizes=(8,)), seed=seed)
        while not g.is_over:
            legal = g.legal_actions()
            events = g.apply(legal[r.randrange(len(legal))])
            kinds = [e.kind for e in events]
            if "reshuffle" in kinds and kinds.index("reshuffle") > 0:
                k = kinds.index("reshuffle")
                before, shuffle, after = events[k - 1], events[k], events[k + 1]
                if isinstance(before, Drew) and isinstance(after, Drew):
                    assert isinstance(shuffle, Reshuffled) and shuffle.cards
                    assert before.seat == shuffle.seat == after.seat
                    assert before.reason == after.reason
                    assert shuffle.order is not None and after.cards is not None
                    assert after.cards == shuffle.order[: after.number]
                    assert shuffle.cost == 5 * 2 ** (shuffle.pressure - 1)
                    return
    raise AssertionError("no draw across a reshuffle found")


# The hash of 300 random games' snapshots, taken before the engine told events (commit
# 7ebf4dc): telling them changed nothing of any game.
GOLDEN = "984245de3eaf45b595237e0547a092b05ec1d99ffe75dccfce63a530aabab6ff"


@pytest.mark.slow
def test_the_engine_plays_the_games_it_played_before_events() -> None:
    digest = hashlib.sha256()
    r = random.Random(20261203)
    for i in range(300):
        n, rules = random_config(r)
        g = Game(n, rules, seed=i, record=True)
        steps = 0
        while not g.is_over and steps < 400:
            legal = g.legal_actions()
            g.apply(legal[r.randrange(len(legal))])
            steps += 1
            if steps % 7 == 0:
                digest.update(json.dumps(g.snapshot(resume=True), sort_keys=True).encode())
        digest.update(json.dumps(g.snapshot(resume=True), sort_keys=True).encode())
    assert digest.hexdigest() == GOLDEN


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
        return e.order is not None or any(h is not None for s, h in enumerate(e.hands) if s != seat)
    return False


@pytest.mark.slow
def test_a_seats_public_events_hide_what_it_may_not_see() -> None:
    r = random.Random(11)
    for i in range(150):
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
            if isinstance(shown, Drew) and isinstance(e, Drew):
                assert shown.number == e.number
            if isinstance(shown, Dealt) and isinstance(e, Dealt):
                assert shown.hands[seat] == e.hands[seat]
