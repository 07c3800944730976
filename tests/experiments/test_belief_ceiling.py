"""``experiments/belief_ceiling.py``: the oracle's worlds carry the chosen share of the truth,
stay consistent with the public history, and are scored as the diagnostics score a belief."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from craits.agents.heuristics import ExpertAgent
from craits_env import Game, Rules
from craits_env.public import PublicGame, SeatView
from experiments.belief_ceiling import (
    OracleSampler,
    TrueDeal,
    report,
    score,
    slot_locations,
)


def endgame_positions(count: int) -> list[tuple[Game, SeatView]]:
    """Seat 0's decisions with a choice near the end of hands of 4 x expert short games
    (each game paused there: the oracle reads the live deal)."""
    out = []
    for seed in itertools.count(100):
        game = Game(4, Rules(hand_sizes=(8, 5, 3)), seed=seed)
        public = PublicGame(game)
        agents = [ExpertAgent() for _ in range(4)]
        while not game.is_over:
            p = game.current_player
            view = public.view(p)
            if p == 0 and len(view.legal_actions) > 1 and min(view.hand_sizes) <= 3:
                out.append((game, view))
                break
            public.apply(agents[p].act(view))
        if len(out) == count:
            return out
    raise AssertionError("unreachable")


def worlds(view: SeatView, sampler: OracleSampler, n: int, seed: int) -> list[list[int]]:
    return sampler.sample(view, n, np.random.default_rng(seed)).rows.tolist()


@pytest.mark.slow
def test_shown_worlds_hold_the_true_hands_and_a_shuffled_stock() -> None:
    for game, view in endgame_positions(4):
        sampler = OracleSampler(TrueDeal(game), "shown")
        sizes = {s: k for s, k in enumerate(view.hand_sizes) if s != 0}
        held = sum(sizes.values())
        truth = [c for s in sizes for c in game.hands[s]]
        rows = worlds(view, sampler, 64, 1)
        assert all(row[:held] == truth for row in rows)
        assert all(sorted(row[held:]) == sorted(game.stock) for row in rows)
        if len(game.stock) > 2:
            assert len({tuple(row[held:]) for row in rows}) > 1  # its order stays unknown
        u, w = sampler.bits[-1]
        assert u < w <= 0


def test_more_beta_more_truth_and_every_world_consistent() -> None:
    gained = {0.0: [], 1.0: []}
    for game, view in endgame_positions(6):
        for beta in gained:
            sampler = OracleSampler(TrueDeal(game), beta)
            rows = worlds(view, sampler, 128, 7)
            sizes = {s: k for s, k in enumerate(view.hand_sizes) if s != 0}
            for row in rows:  # a world the public history allows: determinize checks it
                hands, at = {}, 0
                for s, k in sizes.items():
                    hands[s], at = row[at : at + k], at + k
                view.determinize(hands, row[at:], np.random.default_rng(0))
            u, w = sampler.bits[-1]
            gained[beta].append(w - u)
    assert abs(np.mean(gained[0.0])) < 0.1  # resampled uniform worlds: no information
    assert np.mean(gained[1.0]) > np.mean(gained[0.0]) + 0.3


def test_the_score_is_the_smoothed_log2_probability_of_the_true_places() -> None:
    sizes = {1: 2, 2: 1}
    unseen = [10, 11, 12, 13, 14]
    slot_loc = slot_locations(sizes, len(unseen))
    assert slot_loc.tolist() == [0, 0, 1, 2, 2]
    true_loc = np.full(52, -1)
    true_loc[unseen] = slot_loc
    share = np.array([2, 1, 2]) / 5
    truth = np.array([unseen])
    expected = np.mean([math.log2(0.98 + 0.02 * share[loc]) for loc in slot_loc])
    assert score(truth, slot_loc, true_loc, share, unseen) == pytest.approx(expected)
    swapped = np.array([[12, 11, 10, 13, 14]])  # 10 and 12 in each other's places
    wrong = math.log2(0.02 * share[0]) + math.log2(0.02 * share[1])
    right = sum(math.log2(0.98 + 0.02 * share[loc]) for loc in (0, 2, 2))
    assert score(swapped, slot_loc, true_loc, share, unseen) == pytest.approx((wrong + right) / 5)


def test_bad_beta_and_the_report_pairs_deals() -> None:
    with pytest.raises(ValueError, match=r"^beta: got -1\.0"):
        OracleSampler(TrueDeal(), -1.0)
    games = [
        {
            "variant": v,
            "deal": d,
            "seat": 0,
            "score": s,
            "win": w,
            "cpu_s": 1.0,
            "decisions": 2,
            "bits_uniform": -3.0,
            "bits_worlds": -3.0 + 2 * g,
        }
        for v, g, per in (
            ("uniform", 0.0, ((100, 0.0), (200, 1.0))),
            ("beta=1", 0.5, ((90, 1.0), (150, 1.0))),
        )
        for d, (s, w) in enumerate(per)
    ]
    text = report(games, ["uniform", "beta=1"], "t")
    row = text.splitlines()[-3]
    assert row.startswith("| `beta=1` | +0.500 (4 decisions) | 1.000 [")
    assert "| -30.0 [" in row and "| +0.500 [" in row
