"""The proof of sameness: VectorGame and the Python engine, decision by decision.

Over random options (``craits_env.testing.random_rules``, as the invariant tests), 2–10 players, one
and two decks, every reward mode, and the same deal orders (each row's generator is the
Python game's), both engines give the same legal mask, observation and snapshot (every
key) at every decision, the same rewards and "game over" at every step, the same final
snapshot (scores, winners) — and the Python engine rebuilt from the vector's snapshot and
generator reproduces it (``craits_env.testing.vector_differential``). CI plays 2,000+ games, most
with short schedules; ``experiments/vector_differential.py --games 20000`` is the longer,
documented run (``experiments/results/vector/differential.md``).
"""

from __future__ import annotations

import pytest

from craits_env import Rules
from craits_env.testing import vector_differential as differential

CHUNKS = 8
CONFIGS_PER_CHUNK = 32  # x 8 games each: 256 games a chunk, 2,048 in all


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_random_games_match_the_python_engine(chunk: int) -> None:
    """~256 games a chunk (mostly one or two short hands), every check at every decision."""
    tally = differential.run_many(
        CONFIGS_PER_CHUNK, seed=9000 + chunk, games_per_config=8, short=0.9, draw_chance=0.1
    )
    assert tally.games >= CONFIGS_PER_CHUNK * 8
    assert tally.snapshots >= tally.decisions > 0
    assert set(tally.decks) == {1, 2}


@pytest.mark.slow
@pytest.mark.parametrize("num_players", [2, 4, 7, 10])
def test_full_standard_games_match_the_python_engine(num_players: int) -> None:
    """Whole 15-hand games of the standard rules and uniformly random players."""
    tally = differential.compare(num_players, Rules(), num_envs=2, games=2, seed=num_players)
    assert tally.games >= 2 and tally.decisions > 500


@pytest.mark.slow
def test_long_voluntary_draw_games_match_the_python_engine() -> None:
    """Uniformly random players who may always draw: long hands, many reshuffles, shuffle
    pressures past 2**63 — where the exact score representation matters."""
    rules = Rules(voluntary_draw=True, hand_sizes=(5, 3), face_cards=True)
    for reward in ("relative", "win"):
        tally = differential.compare(
            3, rules, num_envs=2, games=2, seed=5, reward=reward, snapshot_every=7
        )
        assert tally.games >= 2
