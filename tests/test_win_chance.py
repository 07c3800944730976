"""The win-aware reward: craits_env.rewards.win_chances and training's win_chance_coef."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from craits.training.config import TrainConfig
from craits_env.rewards import HAND_SD_BASE, HAND_SD_PER_CARD, spread_left, win_chances
from craits_env.rules import STANDARD_HAND_SIZES
from tests.test_training import TINY, first_game, one_game


def test_win_chances_of_two_players_are_the_normal_closed_form() -> None:
    # Two seats: seat 0 wins when s0 + X0 < s1 + X1, X0 - X1 ~ N(0, 2 spread^2).
    for s0, s1, spread in [(0, 0, 50.0), (30, 0, 50.0), (0, 120, 80.0), (250, 10, 40.0)]:
        exact = 0.5 * math.erfc((s0 - s1) / (spread * math.sqrt(2)) / math.sqrt(2))
        got = win_chances([s0, s1], spread)
        assert got[0] == pytest.approx(exact, abs=1e-6)
        assert sum(got) == pytest.approx(1.0, abs=1e-12)


def test_win_chances_match_a_monte_carlo_of_four_seats() -> None:
    rng = np.random.default_rng(0)
    scores, spread = np.array([120, 40, 75, 60]), 90.0
    finals = scores + rng.normal(0, spread, size=(400_000, 4))
    mc = np.bincount(finals.argmin(axis=1), minlength=4) / len(finals)
    np.testing.assert_allclose(win_chances(list(scores), spread), mc, atol=0.003)


def test_win_chances_are_symmetric_ordered_and_exact_at_the_end() -> None:
    assert win_chances([7, 7, 7], 100.0) == pytest.approx([1 / 3] * 3)
    chances = win_chances([100, 0, 50, 50], 100.0)
    assert chances[2] == pytest.approx(chances[3])
    assert chances[1] > chances[2] > chances[0]
    assert win_chances([10, 10, 20, 30], 0.0) == [0.5, 0.5, 0.0, 0.0]  # R8.6: ties share
    assert win_chances([40, 10, 20], 0.0) == [0.0, 1.0, 0.0]


def test_spread_left_sums_the_variances_of_the_hands_left() -> None:
    sizes = STANDARD_HAND_SIZES
    assert spread_left(sizes, len(sizes)) == 0.0
    last = HAND_SD_BASE + HAND_SD_PER_CARD * sizes[-1]
    assert spread_left(sizes, len(sizes) - 1) == pytest.approx(last)
    whole = math.sqrt(sum((HAND_SD_BASE + HAND_SD_PER_CARD * s) ** 2 for s in sizes))
    assert spread_left(sizes, 0) == pytest.approx(whole)


def test_win_chance_coef_pays_each_hand_its_change_of_the_chance_to_win() -> None:
    # The same scripted game (one stream: the learner against greedy, per-hand horizon) with and
    # without the win-aware reward: the moves are the same, and each hand's last transition holds
    # coef x (chance after the hand - chance before it) more; over the game that sums to
    # coef x (the learner's share of the win - 1/3).
    coef = 3.0
    base = TrainConfig.from_dict({**TINY, "num_players": 3, "num_games": 1, "reward": "score",
                                  "rules": {"hand_sizes": [4, 1, 3, 2]},
                                  "opponents": {"greedy": 1.0}, "value_horizon": "hand",
                                  "gamma": 1.0})  # fmt: skip
    plain = one_game(base, 5)
    paid, game, learner = first_game(base.replace(win_chance_coef=coef), 5)
    assert game.is_over
    assert paid.stats.learner_hand_points == plain.stats.learner_hand_points
    sizes = base.rules.hand_sizes
    totals = np.cumsum([[0, 0, 0], *game.hand_points], axis=0)  # after 0, 1, ... hands
    chance = [win_chances(list(t), spread_left(sizes, k)) for k, t in enumerate(totals)]
    size = paid.buffer.size - paid.buffer.open
    extra = paid.buffer.rewards[:size] - plain.buffer.rewards[:size]
    ends = np.flatnonzero(paid.buffer.dones[:size])  # each hand's last transition
    assert len(ends) == len(sizes)
    for h, i in enumerate(ends):
        want = coef * (chance[h + 1][learner] - chance[h][learner])
        assert extra[i] == pytest.approx(want, abs=1e-9), h
    assert not np.any(np.delete(extra, ends))
    share = 1 / len(game.winners()) if learner in game.winners() else 0.0
    assert extra.sum() == pytest.approx(coef * (share - 1 / 3), abs=1e-9)


def test_win_chance_coef_is_checked() -> None:
    with pytest.raises(ValueError, match="win_chance_coef"):
        TrainConfig.from_dict({**TINY, "win_chance_coef": -1})
    with pytest.raises(ValueError, match="config win_chance_coef: needs a per-hand reward"):
        TrainConfig.from_dict({**TINY, "reward": "win", "win_chance_coef": 1.0})
    with pytest.raises(ValueError, match="config win_chance_coef: backend vector"):
        TrainConfig.from_dict({**TINY, "backend": "vector", "opponents": {"self": 1.0},
                               "win_chance_coef": 2.0})  # fmt: skip


def test_fit_script_reports_the_fit_and_the_calibration(tmp_path, capsys) -> None:
    from experiments.fit_win_chance import main

    games = Path(__file__).parents[1] / "experiments/results/champion/vs_expert/games.jsonl"
    lines = games.read_text().splitlines()
    sample = tmp_path / "games.jsonl"
    sample.write_text("\n".join(lines[:40]) + "\n")
    assert main([str(sample)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("40 games;") and "least squares:" in out
    assert out.count("log-loss") == 5
    short = json.loads(lines[0])
    short["hand_points"] = short["hand_points"][:8]
    sample.write_text(json.dumps(short) + "\n")
    with pytest.raises(SystemExit, match="a game of 8 hands, not 15"):
        main([str(sample)])
