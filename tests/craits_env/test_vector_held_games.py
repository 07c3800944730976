"""VectorGame without auto-reset plays a fixed set of games to the end (finished games are
held: skipped by ``step``), and ``load_game`` takes a game rebuilt from a snapshot.

Each row is checked against the Python game of its generator with the differential helpers
(``craits_env.testing.vector_differential``), decision by decision.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from craits_env import Game, Rules
from craits_env.observation import ObservationEncoder
from craits_env.seeding import derive_seed
from craits_env.testing.vector_differential import check_position, check_step
from craits_env.vector import RandomPolicy, VectorGame

from .test_snapshots import assert_one_line_error

IGNORED = (-1, 0, 58, 99, -(2**40))  # what a held game's action may be: anything


@pytest.mark.slow
@pytest.mark.parametrize("reward", ["relative", "bounded", "score", "win"])
def test_a_fixed_set_of_games_is_played_to_the_end(reward: str) -> None:
    """B games of different lengths, stepped together until every one is over: the rows in
    play are the Python games of their generators (mask, observation, snapshot, rewards,
    done), a held row's action is ignored, its rewards are 0, ``done`` stays True, its
    observation (seat 0's) and all-zero mask stay; the final scores are the Python games'."""
    n, rules, num = 3, Rules(hand_sizes=(3, 1, 2)), 8
    vg = VectorGame(num, n, rules, seed=11, reward=reward, auto_reset=False)
    rngs = [np.random.default_rng(derive_seed(11, b)) for b in range(num)]
    games = [Game(n, rules, rng=rngs[b]) for b in range(num)]
    encoder = ObservationEncoder(n, rules)
    r = random.Random(5)
    obs, mask = vg.observe(), vg.legal_mask()
    ended = [0 if g.is_over else -1 for g in games]  # the step each game ended on
    step = 0
    while not vg.is_over().all():
        step += 1
        held = vg.is_over().copy()
        assert held.tolist() == [g.is_over for g in games]
        actions = np.empty(num, np.int64)
        before = [len(g.hand_points) for g in games]
        for b, g in enumerate(games):
            if held[b]:
                assert not mask[b].any() and vg.current_player()[b] == -1
                assert np.array_equal(obs[b], encoder.encode(g, 0))
                actions[b] = r.choice(IGNORED)
            else:
                check_position(vg, b, g, encoder, mask[b], obs[b], f"game {b}, step {step}")
                legal = g.legal_actions()
                actions[b] = legal[r.randrange(len(legal))]
        rewards, done = vg.step(actions, observe_into=obs, mask_into=mask)
        assert done.tolist() == vg.is_over().tolist()
        for b, g in enumerate(games):
            if held[b]:
                assert done[b] and rewards[b].tolist() == [0.0] * n
                continue
            g.apply(int(actions[b]))
            check_step(g, before[b], reward, rewards[b], bool(done[b]), f"game {b}, step {step}")
            if done[b]:
                ended[b] = step
        assert np.array_equal(obs, vg.observe()) and np.array_equal(mask, vg.legal_mask())
    assert len(set(ended)) >= 4, ended  # games of different lengths
    for b, g in enumerate(games):
        assert vg.scores(b) == g.scores and vg.snapshot(b) == g.snapshot()
    assert_one_line_error(vg.step, np.zeros(num, np.int64), "every game is over", "reset")
    vg.reset([3])  # one row again, from its generator; the others stay held
    assert vg.snapshot(3) == Game(n, rules, rng=rngs[3]).snapshot()
    assert vg.is_over().tolist() == [b != 3 for b in range(num)]


def test_with_held_games_an_illegal_action_in_play_still_changes_nothing() -> None:
    vg = VectorGame(3, 2, Rules(hand_sizes=(1,)), seed=4, auto_reset=False)
    policy = RandomPolicy(0)
    while not vg.is_over()[0]:
        vg.step(np.where(vg.is_over(), -1, policy.actions(vg.legal_mask())))
    assert not vg.is_over().all()  # row 0 held, another in play
    playing = int(np.flatnonzero(~vg.is_over())[0])
    before = [vg.snapshot(b) for b in range(3)]
    actions = np.zeros(3, np.int64)
    actions[playing] = int(np.flatnonzero(vg.legal_mask()[playing] == 0)[0])
    assert_one_line_error(vg.step, actions, f"actions[{playing}]", "illegal action", "legal:")
    assert [vg.snapshot(b) for b in range(3)] == before


@pytest.mark.slow
def test_a_game_rebuilt_from_a_snapshot_loads_into_a_row() -> None:
    """``load_game(i, Game.from_snapshot(vg.snapshot(j)))``: without ``"resume"`` the game
    has no generator and row i's goes on; with ``snapshot(j, resume=True)`` it carries row j's
    generator, so row i then plays exactly as row j (and as the rebuilt Python game)."""
    n = 4
    vg = VectorGame(3, n, seed=2, auto_reset=False)
    for _ in range(30):
        vg.step(RandomPolicy(1).actions(vg.legal_mask()))
    row1 = vg.generator_state(1)
    plain = Game.from_snapshot(vg.snapshot(0))
    vg.load_game(1, plain)
    assert vg.snapshot(1) == vg.snapshot(0) and vg.generator_state(1) == row1

    snap = vg.snapshot(0, resume=True)
    assert snap["resume"]["generator"] == vg.generator_state(0)
    python = Game.from_snapshot(snap)
    assert python.snapshot(resume=True)["resume"]["generator"] == vg.generator_state(0)
    vg.load_game(2, Game.from_snapshot(snap))
    assert vg.generator_state(2) == vg.generator_state(0)
    r = random.Random(0)
    hands = python.hand_index
    while not python.is_over:
        legal = python.legal_actions()
        action = legal[r.randrange(len(legal))]
        actions = np.array([action, vg.legal_actions(1)[0] if not vg.is_over()[1] else -1, action])
        vg.step(actions)
        python.apply(action)
        assert vg.snapshot(2) == vg.snapshot(0) == python.snapshot()
    assert python.hand_index > hands  # it went through deals drawn from the generator
    assert vg.generator_state(2) == vg.generator_state(0)

    other = np.random.default_rng(9).bit_generator.state
    vg.load_game(1, plain, other)  # an explicit generator_state still wins
    assert vg.generator_state(1) == other
    assert_one_line_error(lambda s: vg.load_game(1, plain, s), np.random.MT19937(0).state, "PCG64")
