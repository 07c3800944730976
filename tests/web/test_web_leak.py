"""The browser only ever receives its own seat's view (R11): many whole games are played
through the HTTP API, several player counts and rule options, and every response is
checked against the engine's hidden state at that moment — no card of another seat's hand
and no card of the stock appears in any JSON value, unless it is public (played this hand,
or the starter) — and, once each game is over, every told line against the exact public
history of its hand, replayed from the record."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from craits_env.cards import CARD_STRS, NUM_CARDS, RANK_CHARS, SUIT_SYMBOLS, parse_card
from craits_env.engine import Game
from craits_env.events import Dealt, Drew, Event, HandScored, Played, public_events
from craits_env.records import replay

from ..webclient import client, new_game, play_out

# A card as the narrator writes it ("T♠", "7♣"), and as the API writes it ("Ts", "7c").
TOLD_CARD = re.compile(f"[{RANK_CHARS}][{SUIT_SYMBOLS}]")
API_CARD = re.compile(r"\b[A2-9TJQK][cdhs]\b")
MIN_RESPONSES = 10  # per game: the 14 games make well over a thousand responses
HIDDEN_KEYS = {"hands", "stock", "deal", "deals", "reshuffles", "rng", "rng_state", "deck"}
# The game's id is secrets.token_urlsafe, drawn before the deal: its characters may spell
# "-7s" by chance (they did in CI), so it is checked for its form instead of searched.
OPAQUE_ID = re.compile(r"[A-Za-z0-9_-]{16}")
GAMES = [
    # (opponents, seat, seed, rules)
    (["random"], 0, 1, {"hand_sizes": [8, 7, 6, 5, 4, 3, 2, 1]}),
    (["greedy", "random"], 2, 2, {"face_cards": True, "hand_sizes": [6, 5, 4, 3]}),
    (["expert", "expert", "tactician"], 1, 3, {"voluntary_draw": True, "hand_sizes": [5, 4, 3]}),
    (["random", "greedy", "expert", "random"], 3, 4,
     {"seven_hits": "next_but_one", "one_card": "auto", "idiot_penalty": "draw_one",
      "hand_sizes": [4, 3, 2, 1]}),
    (["greedy", "greedy", "random"], 0, 5,
     {"one_card_on_deal": True, "count_out_can_return": True, "hand_sizes": [1, 2, 1, 2, 1, 2]}),
    (["random"], 1, 6, {"remove_kings_queens": True, "going_out_bonus": True,
                        "punitive_threes": True, "threes_cancel_eights": True,
                        "hand_sizes": [7, 3, 1]}),
    (["random"] * 6, 4, 7, {"hand_sizes": [3, 2, 1]}),  # two decks
]  # fmt: skip


def told_cards(text: str) -> set[int]:
    return {parse_card(t[0] + "cdhs"[SUIT_SYMBOLS.index(t[1])]) for t in TOLD_CARD.findall(text)}


def walk(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every (path, value) of a JSON document, keys included as values of their own."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*path, "<key>"), k
            yield from walk(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from walk(v, (*path, i))


class LeakCheck:
    """Checks each response of one game against the engine's state behind it."""

    def __init__(self, session: Any, seed_chosen: bool) -> None:
        self.session = session
        self.seed_chosen = seed_chosen
        self.responses = 0
        self.events: list[dict[str, Any]] = []

    def __call__(self, view: dict[str, Any]) -> None:
        self.responses += 1
        s = self.session
        game: Game = s.game
        seat = s.seat
        own = Counter(game.hands[seat])
        hidden = Counter(c for q, h in enumerate(game.hands) if q != seat for c in h)
        hidden += Counter(game.stock)
        snapshot = game.snapshot()
        n, size = game.num_players, game.hand_size
        starter = parse_card(snapshot["deal"][n * size]) if not game.is_over else None
        played = {c for cards in s.public.tracker.played for c in cards}
        public = played | set(game.discard) | ({starter} if starter is not None else set())

        assert view["hand"] == [CARD_STRS[c] for c in game.hands[seat]]
        assert view["hand_sizes"] == [len(h) for h in game.hands]
        assert view["top"] == CARD_STRS[game.discard[-1]]
        for a in view["legal"]:
            assert a["action"] >= NUM_CARDS or own[a["action"]] > 0, a
        if not (game.is_over or self.seed_chosen):
            assert view["seed"] is None
        for path, value in walk(view):
            if path and path[-1] == "<key>":
                assert value not in HIDDEN_KEYS, path
                continue
            if path[:1] == ("events",):
                continue
            if path == ("game_id",):
                assert OPAQUE_ID.fullmatch(value), value
                continue
            if isinstance(value, list) and path != ("hand",) and value:
                assert not all(isinstance(v, str) and v in CARD_STRS for v in value), path
            if isinstance(value, str):
                for token in API_CARD.findall(value):
                    card = parse_card(token)
                    assert own[card] > 0 or card == game.discard[-1], (path, value)
        for e in view["events"]:
            self.events.append(e)
            if e["hand"] == game.hand_index and e["kind"] != "scoring":
                # (two decks: a card of the seat's own hand may have its twin hidden)
                leaked = {c for c in told_cards(e["text"]) if hidden[c] and not own[c]} - public
                assert not leaked, (e, [CARD_STRS[c] for c in leaked])

    def check_history(self, record: dict[str, Any]) -> None:
        """Every line told during hand h names only cards public in h or the seat's own:
        the starter, the cards played in h, the seat's own cards (dealt or drawn) in h —
        as the seat's public events of the replayed game give them, which themselves
        name no other card (craits_env.events.public_event)."""
        seat = self.session.seat
        allowed: dict[int, set[int]] = {}
        hand = [-1]

        def take(events: Sequence[Event]) -> None:
            for e in public_events(events, seat):
                if isinstance(e, Dealt):
                    hand[0] = e.hand_index
                    allowed[hand[0]] = {e.starter, *(e.hands[seat] or ())}
                elif isinstance(e, Played):
                    allowed[hand[0]].add(e.card)
                elif isinstance(e, Drew) and e.cards is not None:
                    allowed[hand[0]].update(e.cards)
                if not isinstance(e, HandScored):  # the hands are laid down for scoring
                    named = {parse_card(t) for t in API_CARD.findall(json.dumps(e.to_dict()))}
                    assert named <= allowed[hand[0]], (e, [CARD_STRS[c] for c in named])

        replay(
            record,
            on_start=lambda game, events: take(events),
            on_decision=lambda game, player, action, events: take(events),
        )
        for e in self.events:
            if e["kind"] != "scoring":
                extra = told_cards(e["text"]) - allowed[e["hand"]]
                assert not extra, (e, [CARD_STRS[c] for c in extra])


@pytest.mark.slow
@pytest.mark.parametrize(("opponents", "seat", "seed", "rules"), GAMES)
def test_no_response_shows_another_seats_cards_or_the_stock(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    opponents: list[str],
    seat: int,
    seed: int,
    rules: dict[str, Any],
) -> None:
    # the seed the server draws when none is given: fixed here, so the test is reproducible
    monkeypatch.setattr("craits.web.sessions.fresh_seed", lambda: 2**127 + 1000 + seed)
    c = client(tmp_path)
    for chosen in (True, False):
        body = {"opponents": opponents, "seat": seat, "rules": rules}
        game_id, token = new_game(c, **body, **({"seed": seed} if chosen else {}))
        session = c.app.state.store.held(game_id)
        check = LeakCheck(session, chosen)
        final = play_out(c, game_id, token, random.Random(seed), check)
        assert final["game_over"] and check.responses >= MIN_RESPONSES
        assert len(check.events) == final["event_count"]
        check.check_history(session.recorder.record())


def test_the_check_catches_a_leak(tmp_path: Path) -> None:
    """The checker itself can fail: a card of another hand in any value, or lines told from
    above (naming the cards every seat draws)."""
    c = client(tmp_path)
    game_id, token = new_game(c, opponents=["random", "random"], seed=1, rules={"hand_sizes": [5]})
    session = c.app.state.store.held(game_id)
    view = c.get(f"/api/games/{game_id}", params={"token": token, "since": 0}).json()
    other = CARD_STRS[session.game.hands[(session.seat + 1) % 3][0]]
    LeakCheck(session, True)(view)
    for leaky in (
        {**view, "note": f"watch out for {other}"},
        {**view, "extra": [other]},
        {**view, "hands": []},
    ):
        with pytest.raises(AssertionError):
            LeakCheck(session, True)(leaky)
    session.narrator.viewer = None  # from above: every drawn card is named
    with pytest.raises(AssertionError):
        play_out(c, game_id, token, random.Random(1), LeakCheck(session, True))
