"""The perfect critic (critic = perfect): the opponents' hands and the stock's order for the
value function only (craits_env.oracle.encode_perfect). Its runs (a start equal to the shared
critic, the same parameters for the same seed, an exact resume) are in test_oracle.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from craits.training.learner import Learner
from craits_env import Game, Rules
from craits_env.cards import NUM_CARDS, parse_cards
from craits_env.oracle import (
    STOCK_FEATURES,
    STOCK_POSITIONS,
    encode_oracle,
    encode_perfect,
    encode_stock,
    oracle_size,
    perfect_size,
)

from .test_training import tiny

torch.set_num_threads(1)
QUIET = {"progress": False, "echo": lambda s: None}


def _deck() -> list[int]:
    """A full deck in a fixed, unsorted order (every card once)."""
    return [int(c) for c in np.random.default_rng(11).permutation(NUM_CARDS)]


def test_the_stock_block_is_the_next_cards_in_order_then_the_rest_counted() -> None:
    order = _deck()
    game = Game(4, Rules(hand_sizes=(8,)), dealer=0, deals=[bytes(order)])
    # 32 cards dealt, the 33rd turned up (R2.3): the stock is the deck's rest, in its order.
    stock = order[33:]
    assert game.stock == stock and len(stock) == 19
    vec = encode_stock(game)
    assert vec.shape == (STOCK_FEATURES,) == ((STOCK_POSITIONS + 1) * NUM_CARDS,)
    positions = vec[: STOCK_POSITIONS * NUM_CARDS].reshape(STOCK_POSITIONS, NUM_CARDS)
    assert [int(np.flatnonzero(row)[0]) for row in positions] == stock[:STOCK_POSITIONS]
    assert (positions.sum(axis=1) == 1).all()
    rest = vec[STOCK_POSITIONS * NUM_CARDS :]
    assert rest.sum() == 19 - STOCK_POSITIONS
    assert all(rest[c] == 1 for c in stock[STOCK_POSITIONS:])
    assert not rest[stock[:STOCK_POSITIONS]].any()


def test_a_short_stock_leaves_the_later_positions_empty_and_the_rest_counts_copies() -> None:
    game = Game(4, Rules(hand_sizes=(8,)), seed=0)
    game._stock = list(reversed(parse_cards(["7C", "AS"])))  # next: 7C, then AS
    vec = encode_stock(game).reshape(STOCK_POSITIONS + 1, NUM_CARDS)
    seven, ace = parse_cards(["7C", "AS"])
    assert vec[0, seven] == 1 and vec[1, ace] == 1
    assert vec.sum() == 2 and not vec[2:].any()
    first = ["3C", "4C", "5C", "6C", "8C", "9C", "TC", "JC"]
    game._stock = list(reversed(parse_cards([*first, "KD", "KD"])))  # two decks' copies
    vec = encode_stock(game, np.full(STOCK_FEATURES, 9.0, np.float32))  # stale: overwritten
    positions = vec[: STOCK_POSITIONS * NUM_CARDS].reshape(STOCK_POSITIONS, NUM_CARDS)
    assert [int(np.flatnonzero(row)[0]) for row in positions] == parse_cards(first)
    rest = vec[STOCK_POSITIONS * NUM_CARDS :]
    assert rest[parse_cards(["KD"])[0]] == 2 and rest.sum() == 2


def test_the_perfect_vector_is_the_hands_then_the_stock_in_random_games() -> None:
    rng = np.random.default_rng(0)
    out = np.full(perfect_size(3), 7.0, np.float32)
    hands = oracle_size(3)
    decisions = 0
    for g in range(30):
        rules = Rules(hand_sizes=(8, 4, 2), num_decks=2 if g % 2 else 1)
        game = Game(3, rules, seed=g)
        while not game.is_over:
            p = game.current_player
            encode_perfect(game, p, out)
            assert np.array_equal(out[:hands], encode_oracle(game, p))
            stock = game.stock
            assert np.array_equal(out[hands:], encode_stock(game))
            assert out[hands:].sum() == len(stock)
            # Every card of the decks is in a hand, the discard pile or the stock.
            seen = np.bincount(game.hands[p] + list(game.discard), minlength=NUM_CARDS)
            total = seen + out[:hands].reshape(2, NUM_CARDS).sum(axis=0)
            total += out[hands:].reshape(STOCK_POSITIONS + 1, NUM_CARDS).sum(axis=0)
            assert (total == rules.decks_for(3)).all()
            decisions += 1
            game.apply(int(rng.choice(game.legal_actions())))
    assert decisions > 1000


def test_config_refuses_the_perfect_critic_on_the_vector_backend() -> None:
    assert tiny(critic="perfect").critic == "perfect"
    with pytest.raises(ValueError, match="config critic: backend vector trains only the shared"):
        tiny(critic="perfect", backend="vector", opponents={"self": 1.0})


def test_the_batch_gives_the_critic_the_hands_and_the_stock_and_the_hands_head_the_hands() -> None:
    config = tiny(critic="perfect", num_players=3, hands_coef=0.5)
    learner = Learner(config, torch.device("cpu"), "batch")
    net = learner.net
    assert net.critic_extra == perfect_size(3) and net.hands_out == oracle_size(3)
    batch, _ = learner.collect()
    n = len(batch)
    assert batch.critic_obs.shape == (n, perfect_size(3))
    hands = batch.critic_obs[:, : oracle_size(3)].reshape(n, 2, NUM_CARDS)
    stock = batch.critic_obs[:, oracle_size(3) :]
    encoder = learner.rollouts.rollout.slots[0].encoder  # type: ignore[attr-defined]
    # The stock block holds as many cards as the observation's stock size says.
    deck = NUM_CARDS * config.rules.decks_for(3)
    stock_size = batch.obs[:, encoder.slices["stock_size"]][:, 0]
    np.testing.assert_allclose(stock.sum(axis=1) / deck, stock_size, atol=1e-5)
    positions = stock[:, : STOCK_POSITIONS * NUM_CARDS].reshape(n, STOCK_POSITIONS, NUM_CARDS)
    assert set(np.unique(positions.sum(axis=2))) <= {0.0, 1.0}
    assert hands.sum() > 0 and stock.sum() > 0
    metrics = learner.learn(batch)  # the hands head learns from the hands block only
    assert np.isfinite(metrics["hands_loss"]) and metrics["hands_loss"] > 0
    learner.close()
