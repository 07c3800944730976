"""The pieces of agents/compiled_table.py the vector env's differential test does not isolate:
``random``'s Mersenne Twister (CPython's ``random.Random``, draw for draw) and the action
bit scan above bit 56 (calls, DECLARE, STAY_SILENT)."""

from __future__ import annotations

import random
from typing import Any

import numba
import numpy as np

from craits.agents.compiled_cards import lowest_bit
from craits.agents.compiled_table import MT_WIDTH, mt_below, mt_state, random_action
from craits_env.actions import NUM_ACTIONS


@numba.njit
def _draws(mt: Any, ns: Any, out: Any) -> None:
    for i in range(ns.shape[0]):
        out[i] = mt_below(mt, ns[i])


@numba.njit
def _random_actions(mts: Any, row: int, seat: int, legal: Any, out: Any) -> None:
    for i in range(legal.shape[0]):
        out[i] = random_action(mts[row, seat], legal[i])


@numba.njit
def _lowest(x: int) -> int:
    return lowest_bit(x)


def test_the_twister_draws_as_random_randrange() -> None:
    rng = np.random.default_rng(5)
    for seed in (0, 1, 2**32 + 5, 2**64 - 1, 2**200 + 3):
        ns = rng.integers(1, 2**20, 3000)  # past 624 draws: the state is regenerated
        r = random.Random(seed)
        want = [r.randrange(int(n)) for n in ns]
        mt = mt_state(seed)
        assert mt.shape == (MT_WIDTH,)
        out = np.zeros(ns.size, np.int64)
        _draws(mt, ns, out)
        assert out.tolist() == want
        assert mt.tolist() == list(r.getstate()[1])  # the state left as Python leaves it


def test_random_actions_are_random_agents_choices() -> None:
    rng = np.random.default_rng(6)
    masks = [rng.random(NUM_ACTIONS) < rng.uniform(0.02, 0.6) for _ in range(2000)]
    masks = [m if m.any() else np.eye(NUM_ACTIONS, dtype=bool)[58] for m in masks]
    legal = np.array([sum(1 << int(a) for a in np.flatnonzero(m)) for m in masks], np.int64)
    mts = np.zeros((2, 3, MT_WIDTH), np.uint32)
    mts[1, 2] = mt_state(77)
    out = np.zeros(legal.size, np.int64)
    _random_actions(mts, 1, 2, legal, out)
    r = random.Random(77)  # RandomAgent(77).act: legal[randrange(len(legal))]
    assert out.tolist() == [int(np.flatnonzero(m)[r.randrange(int(m.sum()))]) for m in masks]
    assert not mts[0].any() and not mts[1, :2].any()  # only that seat's generator moved


def test_lowest_bit_of_every_action() -> None:
    for a in range(NUM_ACTIONS):
        assert _lowest(1 << a) == a
        assert _lowest((1 << a) | (1 << 58)) == a
