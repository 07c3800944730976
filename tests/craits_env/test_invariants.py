"""Invariants over thousands of random games (2–10 players, one and two decks, random options).

After every step: the cards are conserved (hands + stock + discard = the deck),
the legal set is non-empty until the game ends, the hand's decisions stay
under the limit; at every hand's end the scores equal the sum of hand points;
every game ends. On sampled steps: every legal action is accepted (on a clone)
and illegal ones are rejected with ``ValueError``, leaving the state unchanged.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from craits_env import NO_PLAYER, NUM_ACTIONS, Game, Phase, Rules
from craits_env.cards import make_deck
from craits_env.testing.random_rules import OPTION_CHOICES, SCHEDULE_OPTIONS, random_config


def test_the_random_option_space_covers_every_rule_option() -> None:
    """A new Rules option must be in craits_env.testing.random_rules, or no random test plays it."""
    names = {f.name for f in dataclasses.fields(Rules)}
    assert set(OPTION_CHOICES) | set(SCHEDULE_OPTIONS) == names
    for name, values in OPTION_CHOICES.items():
        Rules(**{name: values[0]})  # every listed value is accepted


def deck_of(g: Game) -> Counter[int]:
    return Counter(make_deck(g.rules.decks_for(g.num_players), g.rules.remove_kings_queens))


def cards_in_play(g: Game) -> Counter[int]:
    c: Counter[int] = Counter(g.discard)
    c.update(g.stock)
    for h in g.hands:
        c.update(h)
    return c


def play_checked(g: Game, r: random.Random, check_all_every: int = 0) -> int:
    """Play ``g`` to the end with random legal actions, checking invariants; returns decisions."""
    deck = deck_of(g)
    limit = g.rules.hand_decision_limit
    steps = 0
    hands_done = 0
    while not g.is_over:
        assert cards_in_play(g) == deck
        legal = g.legal_actions()
        assert legal, "empty legal set before the game ended"
        assert list(legal) == sorted(set(legal))
        assert g.hand_decisions < limit
        if check_all_every and steps % check_all_every == 0:
            check_every_action(g, r)
        g.apply(legal[r.randrange(len(legal))])
        steps += 1
        if len(g.hand_points) > hands_done:
            hands_done = len(g.hand_points)
            totals = [sum(p[s] for p in g.hand_points) for s in range(g.num_players)]
            if g.is_over:
                assert g.scores == totals
            else:  # only penalties of the new hand can have been added so far
                assert all(a >= b for a, b in zip(g.scores, totals, strict=False))
        assert steps < 200_000, "game does not end"
    assert len(g.hand_points) == len(g.rules.hand_sizes)
    assert g.legal_actions() == ()
    assert g.current_player == NO_PLAYER and g.phase == Phase.GAME_OVER
    return steps


def check_every_action(g: Game, r: random.Random) -> None:
    """Every legal action is accepted; a few illegal ones are rejected and change nothing."""
    legal = set(g.legal_actions())
    for a in legal:
        c = g.clone()
        c.apply(a)
    before = g.snapshot()
    illegal = [a for a in range(NUM_ACTIONS) if a not in legal]
    for a in [*r.sample(illegal, min(4, len(illegal))), -1, NUM_ACTIONS, "7c", 1.0, None, True]:
        if a is True and 1 in legal:
            continue
        with pytest.raises(ValueError):
            g.apply(a)  # type: ignore[arg-type]
    assert g.snapshot() == before


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(8))
def test_random_games_with_random_options(chunk: int) -> None:
    """~2,400 random games with random options and every invariant after every step."""
    r = random.Random(1000 + chunk)
    for i in range(300):
        n, rules = random_config(r)
        g = Game(n, rules, seed=chunk * 100_000 + i)
        play_checked(g, r, check_all_every=37 if i % 10 == 0 else 0)


@pytest.mark.slow
@pytest.mark.parametrize("num_players", range(2, 11))
def test_full_standard_games(num_players: int) -> None:
    """Full 15-hand games with the default rules, every player count."""
    r = random.Random(num_players)
    for i in range(12):
        play_checked(Game(num_players, seed=i), r, check_all_every=97 if i == 0 else 0)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), config_seed=st.integers(0, 2**32 - 1))
def test_hypothesis_random_configurations(seed: int, config_seed: int) -> None:
    r = random.Random(config_seed)
    n, rules = random_config(r)
    play_checked(Game(n, rules, seed=seed), r, check_all_every=23)


@pytest.mark.slow
def test_cumulative_scores_equal_sum_of_hand_points_in_long_games() -> None:
    """R8.6: scores are the sums of hand points (penalties included), exact integers."""
    r = random.Random(7)
    for i in range(30):
        g = Game(r.randint(2, 5), Rules(voluntary_draw=True), seed=i)
        play_checked(g, r)
        for s in range(g.num_players):
            assert g.scores[s] == sum(p[s] for p in g.hand_points)
            assert isinstance(g.scores[s], int)
