"""Replay from recorded deck orders, determinism by seed, and clone() semantics."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from craits_env import Game, Rules

from .test_invariants import random_config


def play_random(g: Game, r: random.Random, max_steps: int | None = None) -> list[int]:
    actions = []
    while not g.is_over and (max_steps is None or len(actions) < max_steps):
        legal = g.legal_actions()
        a = legal[r.randrange(len(legal))]
        g.apply(a)
        actions.append(a)
    return actions


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(4))
def test_replay_from_deck_orders_reaches_identical_snapshot(chunk: int) -> None:
    """A game rebuilt from its recorded deals, reshuffles and actions, with no generator."""
    r = random.Random(chunk)
    for i in range(60):
        n, rules = random_config(r)
        g = Game(n, rules, seed=i + 1000 * chunk, record=True)
        actions = play_random(g, r)
        deals, reshuffles = g.deck_orders()
        assert len(deals) == len(rules.hand_sizes)
        replay = Game(n, rules, dealer=g.first_dealer, deals=deals, reshuffles=reshuffles)
        for a in actions:
            replay.apply(a)
        assert replay.snapshot() == g.snapshot()


@pytest.mark.slow
def test_replay_of_a_partial_game_matches_at_every_step() -> None:
    r = random.Random(5)
    g = Game(4, Rules(voluntary_draw=True), seed=3, record=True)
    actions = play_random(g, r, max_steps=3000)
    deals, reshuffles = g.deck_orders()
    assert any(reshuffles), "the scenario should include a reshuffle"
    replay = Game(
        4, Rules(voluntary_draw=True), dealer=g.first_dealer, deals=deals, reshuffles=reshuffles
    )
    ref = Game(4, Rules(voluntary_draw=True), seed=3)
    for a in actions:
        replay.apply(a)
        ref.apply(a)
        assert replay.snapshot() == ref.snapshot()


def test_scripted_game_without_generator_says_what_is_missing() -> None:
    g = Game(2, Rules(hand_sizes=(8, 8)), seed=0, record=True)
    play_random(g, random.Random(0))
    deals, _ = g.deck_orders()
    with pytest.raises(ValueError, match="dealer"):
        Game(2, Rules(hand_sizes=(8, 8)), deals=deals[:1])
    short = Game(2, Rules(hand_sizes=(8, 8)), dealer=0, deals=deals[:1])
    with pytest.raises(ValueError, match="random generator"):
        play_random(short, random.Random(0))


def test_bad_deal_orders_are_rejected() -> None:
    g = Game(2, Rules(hand_sizes=(3,)), seed=0, record=True)
    deal = g.deck_orders()[0][0]
    with pytest.raises(ValueError, match=r"deals\[0\].*missing"):
        Game(2, Rules(hand_sizes=(3,)), dealer=0, deals=[deal[:-1]])
    with pytest.raises(ValueError, match="extra As"):
        Game(2, Rules(hand_sizes=(3,)), dealer=0, deals=[["As", *deal[:-1]]])
    with pytest.raises(ValueError, match="invalid card"):
        Game(2, Rules(hand_sizes=(3,)), dealer=0, deals=[["Xx", *deal[1:]]])


def test_deck_orders_needs_record() -> None:
    with pytest.raises(ValueError, match="record=True"):
        Game(2, seed=0).deck_orders()


def test_same_seed_same_game_different_seed_different_deal() -> None:
    for n in (2, 4, 7):
        a, b, c = Game(n, seed=42), Game(n, seed=42), Game(n, seed=43)
        assert a.snapshot() == b.snapshot()
        assert a.snapshot()["deal"] != c.snapshot()["deal"]
        ra, rb = random.Random(1), random.Random(1)
        assert play_random(a, ra) == play_random(b, rb)
        assert a.snapshot() == b.snapshot()


def test_rng_argument_equals_seed() -> None:
    a = Game(3, seed=9)
    b = Game(3, rng=np.random.default_rng(9))
    assert a.snapshot() == b.snapshot()
    with pytest.raises(ValueError, match="seed or rng"):
        Game(3, seed=1, rng=np.random.default_rng(1))


def test_deck_top_places_cards_on_top_of_the_first_deal() -> None:
    g = Game(2, Rules(hand_sizes=(3,)), seed=0, dealer=1, deck_top=["As", "Kd", "7c"])
    s = g.snapshot()
    assert s["deal"][:3] == ["As", "Kd", "7c"]
    assert "As" in s["hands"][0] and "7c" in s["hands"][0] and "Kd" in s["hands"][1]
    same = Game(2, Rules(hand_sizes=(3,)), seed=0, dealer=1, deck_top=["As", "Kd", "7c"])
    assert same.snapshot() == s
    with pytest.raises(ValueError, match="As is listed 2 times"):
        Game(2, seed=0, deck_top=["As", "As"])
    Game(6, seed=0, deck_top=["As", "As"])  # two decks above 5 players


@pytest.mark.slow
def test_clone_is_independent_and_continues_identically() -> None:
    r = random.Random(11)
    for i in range(40):
        n, rules = random_config(r)
        g = Game(n, rules, seed=i)
        play_random(g, r, max_steps=r.randint(0, 200))
        c = g.clone()
        assert c.snapshot() == g.snapshot()
        seed = r.randrange(10**6)
        a1 = play_random(g, random.Random(seed))
        a2 = play_random(c, random.Random(seed))
        assert a1 == a2  # same generator state: same reshuffles and later deals
        assert c.snapshot() == g.snapshot()


def test_clone_does_not_share_mutable_state() -> None:
    g = Game(4, seed=1)
    before = json.dumps(g.snapshot())
    c = g.clone()
    play_random(c, random.Random(0), max_steps=500)
    assert json.dumps(g.snapshot()) == before


def test_clone_with_own_generator() -> None:
    g = Game(4, seed=1)
    c1 = g.clone(rng=np.random.default_rng(5))
    c2 = g.clone(rng=np.random.default_rng(5))
    play_random(c1, random.Random(0))
    play_random(c2, random.Random(0))
    assert c1.snapshot() == c2.snapshot()


def test_snapshot_is_json_serialisable_and_has_interface_keys() -> None:
    keys = {
        "num_players",
        "hand_index",
        "dealer",
        "current_player",
        "phase",
        "direction",
        "top",
        "active_suit",
        "count",
        "hands",
        "stock",
        "discard",
        "scores",
        "shuffle_pressures",
        "hand_points",
        "went_out",
        "deal",
        "reshuffles",
    }
    g = Game(4, seed=0)
    play_random(g, random.Random(0))
    s = g.snapshot()
    assert keys <= s.keys()
    assert s["phase"] == "game_over" and s["current_player"] is None
    assert json.loads(json.dumps(s)) == s


def _unscheduled_by_snapshot(g: Game) -> Game:
    snap = g.snapshot(resume=True)
    snap["resume"] = {**snap["resume"], "scheduled_deals": [], "scheduled_reshuffles": []}
    return Game.from_snapshot(snap)


def _to_next_hand(fast: Game, slow: Game, kept: Game, r: random.Random) -> int | None:
    """The same random actions in the three games until the next hand is dealt: how many, or
    None where the game ended or ``kept``'s scripted reshuffle did not fit (other actions
    than the script's)."""
    start = fast.hand_index
    for k in range(1000):
        if fast.is_over:
            return None
        if fast.hand_index > start:
            return k
        legal = fast.legal_actions()
        a = legal[r.randrange(len(legal))]
        fast.apply(a)
        slow.apply(a)
        try:
            kept.apply(a)
        except ValueError:
            return None
    return None


def test_a_clone_without_the_schedule_is_the_snapshot_without_it() -> None:
    """``clone(scheduled=False)`` (what rollouts play: craits.agents.luck_rollouts) equals the
    snapshot whose scheduled deals and reshuffles are emptied, at every kind of position, and
    plays on from the generator alike: not the scripted game's later deals."""
    r = random.Random(7)
    checked = differ = 0
    for i in range(12):
        n, rules = random_config(r)
        source = Game(n, rules, seed=500 + i, record=True)
        actions = play_random(source, random.Random(i))
        deals, reshuffles = source.deck_orders()
        g = Game(n, rules, seed=900 + i, dealer=source.first_dealer, deals=deals,
                 reshuffles=reshuffles)  # fmt: skip
        for k, a in enumerate(actions):
            if k % 17 == 0:
                fast, slow = g.clone(scheduled=False), _unscheduled_by_snapshot(g)
                assert fast.snapshot(resume=True) == slow.snapshot(resume=True)
                kept = g.clone()  # the schedule kept: the source's later deals
                steps = _to_next_hand(fast, slow, kept, random.Random(r.randrange(10**6)))
                assert fast.snapshot(resume=True) == slow.snapshot(resume=True)
                if steps is not None:  # the next hand dealt from the generator, not the script
                    differ += fast.snapshot()["hands"] != kept.snapshot()["hands"]
                    checked += 1
            g.apply(a)
        assert g.snapshot() == source.snapshot()  # the original kept its schedule
    assert checked > 20 and differ == checked, (checked, differ)
