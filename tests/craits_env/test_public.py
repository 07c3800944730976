"""The public-state view for bots: SeatView, PublicTracker, determinized copies."""

from __future__ import annotations

import random

import numpy as np
import pytest

from craits_env import DRAW, Game, Rules, card_str, craits_v0, parse_card
from craits_env.public import PublicGame
from craits_env.testing.scenario import stacked_game

from .test_env import hide


def test_seat_view_is_the_observation_mapping() -> None:
    e = craits_v0.raw_env(num_players=4, track_public=True)
    e.reset(seed=2)
    r = random.Random(0)
    for _ in range(200):
        agent = e.agent_selection
        view = e.seat_view(agent)
        obs = e.observe(agent)
        assert set(view) == {"observation", "action_mask"} and len(view) == 2
        assert np.array_equal(view["observation"], obs["observation"])
        assert np.array_equal(view["action_mask"], obs["action_mask"])
        assert list(view.legal_actions) == list(np.flatnonzero(obs["action_mask"]))
        e.step(int(r.choice(view.legal_actions)))
    with pytest.raises(ValueError, match="track_public"):
        craits_v0.raw_env(num_players=2).seat_view("player_0")


def test_seat_view_depends_only_on_what_the_seat_may_know() -> None:
    r = random.Random(1)
    rng = np.random.default_rng(1)
    g = Game(4, Rules(face_cards=True), seed=3)
    pub = PublicGame(g)
    public_attrs = [
        "hand",
        "legal_actions",
        "phase",
        "top",
        "active_suit",
        "count",
        "direction",
        "dealer",
        "hand_sizes",
        "scores",
        "shuffle_pressures",
        "one_card_penalty_pending",
        "went_out",
        "discard",
        "stock_size",
        "hand_index",
        "jack_run",
        "king_cards_left",
        "extra_play",
    ]
    for _ in range(300):
        seat = g.current_player
        other = PublicGame(hide(g, seat, rng))
        a, b = pub.view(seat), other.view(seat)
        for name in public_attrs:
            assert getattr(a, name) == getattr(b, name), name
        assert a.unseen_cards() == b.unseen_cards()
        pub.apply(r.choice(g.legal_actions()))


def test_tracker_records_suits_a_player_could_not_follow() -> None:
    # Player 1 holds no heart, no 8 or 9: it must draw (R3.3) on the starter 3h.
    g = stacked_game(
        [["Kh", "Qh", "4d"], ["2c", "Kc", "Ts"]], starter="3h", stock=["5s", "6d", "7c"], dealer=0
    )
    pub = PublicGame(g)
    assert g.current_player == 1 and g.legal_actions() == (DRAW,)
    pub.apply(DRAW)
    t = pub.tracker
    assert t.void_draws(1, 2) == 1  # hearts, one unknown card drawn since
    assert t.no_wild_draws(1) == 1
    assert t.void_draws(1, 0) is None and [t.void_draws(0, s) for s in range(4)] == [None] * 4
    assert t.no_count_draws(1) is None
    pub.apply(parse_card("Kh"))  # player 0
    assert t.played[0] == [parse_card("Kh")]


def test_unseen_cards_and_determinized_copy() -> None:
    g = Game(3, Rules(hand_sizes=(5,)), seed=4, record=True)
    pub = PublicGame(g)
    view = pub.view(g.current_player)
    seat = view.seat
    unseen = view.unseen_cards()
    assert len(unseen) == 52 - 5 - len(g.discard)
    assert not set(unseen) & (set(g.hands[seat]) | set(g.discard))
    rng = np.random.default_rng(0)
    perm = [unseen[i] for i in rng.permutation(len(unseen))]
    sizes = view.hand_sizes
    hands, k = {}, 0
    for s in range(3):
        if s != seat:
            hands[s] = perm[k : k + sizes[s]]
            k += sizes[s]
    d = view.determinize(hands, perm[k:], np.random.default_rng(1))
    snap = d.snapshot()
    assert snap["hands"][seat] == g.snapshot()["hands"][seat]
    for s, cards in hands.items():
        assert snap["hands"][s] == [card_str(c) for c in sorted(cards)]
    assert snap["stock"] == [card_str(c) for c in perm[k:]]
    assert snap["deal"] == [] and snap["reshuffles"] == []  # nothing reveals the real cards
    with pytest.raises(ValueError, match="holds"):
        view.determinize({s: h[:-1] for s, h in hands.items()}, perm[k:], None)
    bad = dict(hands)
    first = next(iter(bad))
    bad[first] = [g.hands[seat][0], *bad[first][1:]]
    with pytest.raises(ValueError, match="unseen"):
        view.determinize(bad, perm[k:], None)


def test_renamed_penalty_flags_keep_a_deprecated_alias() -> None:
    g = Game(3, seed=1)
    view = PublicGame(g).view(0)
    with pytest.warns(DeprecationWarning, match="one_card_penalty_pending"):
        assert g.idiot_pending == g.one_card_penalty_pending
    with pytest.warns(DeprecationWarning, match="one_card_penalty_pending"):
        assert view.penalty_pending == view.one_card_penalty_pending


@pytest.mark.slow
def test_the_tracker_learns_the_same_from_events_and_from_the_actions() -> None:
    """PublicTracker.observe (a decision's events) and observe_action (a game that tells no
    events: the batched engine's one-game view) infer the same, over random games."""
    from craits_env.public import PublicTracker
    from craits_env.testing.random_rules import random_config

    r = random.Random(4)
    for i in range(150):
        n, rules = random_config(r)
        game = Game(n, rules, seed=i)
        twin = game.clone()
        by_events, by_actions = PublicTracker(game), PublicTracker(twin)
        while not game.is_over:
            legal = game.legal_actions()
            action = legal[r.randrange(len(legal))]
            seat = twin.current_player
            phase, suit, base = twin.phase, twin.active_suit, twin.drawn[seat]
            by_events.observe(game.apply(action))
            twin.apply(action)
            by_actions.observe_action(seat, phase, suit, base, action)
            assert by_events.state() == by_actions.state()
