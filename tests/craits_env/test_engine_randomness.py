"""The engine's public hooks for chance (OpenSpiel's chance nodes) and for analyses: a game
without a generator raises NeedsRandomness naming what it needs; schedule_deal gives that
order; forget_randomness drops the generator and what was scheduled ahead; restack reorders
the stock; a tracker's copy follows its own game."""

from __future__ import annotations

import pytest

from craits_env import Game, Rules
from craits_env.deck import deck_cards
from craits_env.events import Dealt
from craits_env.game_state import NeedsRandomness
from craits_env.public import PublicTracker


def test_without_a_generator_the_next_deal_is_asked_for_and_played_as_scheduled() -> None:
    game = Game(3, Rules(hand_sizes=(3, 2)), seed=1)
    game.forget_randomness()
    need = None
    while need is None:
        before = game.clone()
        action = game.legal_actions()[0]
        try:
            game.apply(action)
        except NeedsRandomness as e:
            need = e
    assert (need.kind, need.hand_index, need.index) == ("deal", 1, 0)
    assert str(need) == (
        "the deal of hand 1 needs a random generator: give seed or rng, or the deck orders"
    )
    order = bytes(reversed(deck_cards(1, False)))
    before.schedule_deal(1, order)
    (dealt,) = [e for e in before.apply(action) if isinstance(e, Dealt)]
    assert dealt.order == order and before.hand_index == 1
    with pytest.raises(ValueError, match="schedule_deal: got hand -1, allowed"):
        before.schedule_deal(-1, order)


def test_restack_reorders_the_stock_and_refuses_other_cards_unchanged() -> None:
    game = Game(4, seed=3)
    stock = game.stock
    game.restack(stock[::-1])
    assert game.stock == stock[::-1]
    with pytest.raises(ValueError, match="restack"):
        game.restack(stock[1:])
    with pytest.raises(ValueError, match="restack: got"):
        game.restack(["Ah"])  # type: ignore[list-item]
    assert game.stock == stock[::-1]


def test_a_trackers_copy_follows_its_own_game_and_leaves_the_original_alone() -> None:
    game = Game(3, seed=5)
    tracker = PublicTracker(game)
    for _ in range(40):
        tracker.observe(game.apply(game.legal_actions()[-1]))
    before = tracker.state()
    other = game.clone()
    mine = tracker.copy_for(other)
    assert mine.state() == before
    for _ in range(40):
        mine.observe(other.apply(other.legal_actions()[0]))
    assert tracker.state() == before and mine.state() != before
