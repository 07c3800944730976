"""The PIMC bot's samples of the hidden cards, compiled: :func:`sample_hidden` draw for draw.

:func:`craits.agents.hidden_cards.sample_hidden` deals the cards a seat cannot see to the
opponents and the stock, drawing from a ``numpy.random.Generator``; :func:`deal_samples`
makes many of its samples in one numba call, consuming the same generator exactly as that
many calls would, and so giving the same hands and stock, card for card and in the same
order: numpy's PCG64, ``Generator.shuffle`` and ``Generator.integers`` are the compiled
engine's (:mod:`craits_env.vector.rng`), and the deal follows ``sample_hidden`` /
``_deal_constrained`` statement for statement from the plan that
:func:`~craits.agents.hidden_cards.plan_samples` computes once per decision.

``tests/agents/test_pimc_vector.py`` holds it to ``sample_hidden`` over thousands of random plans,
and the generator states after them to Python's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from craits_env import NUM_CARDS
from craits_env.vector.jit import entry, inner
from craits_env.vector.rng import export_state, generator_row, random_below, shuffle_in_place

from .hidden_cards import NO_LEVEL, NUM_CATEGORIES, plan_samples

_GEN = 0  # the generator's row in its one-row array


@inner
def _is_open(left: Any, s: int, level: int, num_bounds: Any) -> bool:
    """``min(left[s][level:], default=1)`` is nonzero: seat ``s`` may take the card."""
    for t in range(level, num_bounds[s]):  # noqa: SIM110 (a plain loop compiles leaner)
        if left[s, t] == 0:
            return False
    return True


@inner
def _deal_constrained(
    gen: Any,
    constrained: Any,
    sizes: Any,
    offsets: Any,
    levels: Any,
    bounds: Any,
    num_bounds: Any,
    stock_size: int,
    out: Any,
    k: int,
    filled: Any,
    stock: Any,
    order: Any,
    left: Any,
    free: Any,
    opened: Any,
) -> int:
    """``hidden_cards._deal_constrained`` into ``out[k]`` (each seat's cards from
    ``offsets[s]``, ``filled[s]`` of them) and ``stock[0]``; the stock's length, or -1 if
    stuck."""
    m = sizes.shape[0]
    for i in range(constrained.shape[0]):
        order[0, i] = constrained[i]
    shuffle_in_place(gen, _GEN, order, 0, 0, constrained.shape[0])
    for s in range(m):
        free[s] = sizes[s]
        filled[s] = 0
        for t in range(num_bounds[s]):
            left[s, t] = bounds[s, t]
    stock_free = stock_size
    stock_len = 0
    for i in range(constrained.shape[0]):
        c = order[0, i]
        total = stock_free
        for s in range(m):
            opened[s] = free[s] > 0 and _is_open(left, s, levels[s, c], num_bounds)
            if opened[s]:
                total += free[s]
        if total == 0:
            return -1
        r = random_below(gen, _GEN, total)
        if r < stock_free:
            stock[0, stock_len] = c
            stock_len += 1
            stock_free -= 1
            continue
        r -= stock_free
        seat = 0
        for s in range(m):
            if opened[s]:
                seat = s
                if r < free[s]:
                    break
                r -= free[s]
        out[k, offsets[seat] + filled[seat]] = c
        filled[seat] += 1
        free[seat] -= 1
        for t in range(levels[seat, c], num_bounds[seat]):
            left[seat, t] -= 1
    return stock_len


@entry
def deal_samples(
    gen: Any,
    unseen: Any,
    constrained: Any,
    free_cards: Any,
    sizes: Any,
    levels: Any,
    bounds: Any,
    num_bounds: Any,
    attempts: int,
    out: Any,
) -> None:
    """``out[k]`` := ``sample_hidden``'s ``k``-th sample from the generator in row 0 of
    ``gen`` (advanced; :func:`~craits_env.vector.rng.generator_row`): the hands of the seats
    of ``sizes`` (in order, each in the order dealt), then the stock (next card first).
    ``levels[s, c]``: the first bound level of seat ``s`` that card ``c`` counts in
    (``num_bounds[s]`` or more: none); ``bounds[s, :num_bounds[s]]`` the bounds."""
    m = sizes.shape[0]
    offsets = np.zeros(m, np.int64)
    for s in range(1, m):
        offsets[s] = offsets[s - 1] + sizes[s - 1]
    stock_at = offsets[m - 1] + sizes[m - 1] if m > 0 else 0
    stock_size = out.shape[1] - stock_at
    filled = np.zeros(m, np.int64)
    stock = np.zeros((1, out.shape[1]), np.int64)
    order = np.zeros((1, max(constrained.shape[0], 1)), np.int64)
    left = np.zeros(bounds.shape, np.int64)
    free = np.zeros(m, np.int64)
    opened = np.zeros(m, np.bool_)
    pool = np.zeros((1, out.shape[1]), np.int64)
    for k in range(out.shape[0]):
        stock_len = -1
        tries = attempts if constrained.shape[0] > 0 else 0
        for _ in range(tries):
            stock_len = _deal_constrained(
                gen,
                constrained,
                sizes,
                offsets,
                levels,
                bounds,
                num_bounds,
                stock_size,
                out,
                k,
                filled,
                stock,
                order,
                left,
                free,
                opened,
            )
            if stock_len >= 0:
                break
        if stock_len >= 0:
            cards = free_cards
        else:  # no bounded card, or the bounds could not be met: a plain shuffle
            cards = unseen
            stock_len = 0
            for s in range(m):
                filled[s] = 0
        length = cards.shape[0]
        for i in range(length):
            pool[0, i] = cards[i]
        shuffle_in_place(gen, _GEN, pool, 0, 0, length)
        j = 0
        for s in range(m):
            for i in range(filled[s], sizes[s]):
                out[k, offsets[s] + i] = pool[0, j]
                j += 1
        for i in range(j, length):
            stock[0, stock_len] = pool[0, i]
            stock_len += 1
        shuffle_in_place(gen, _GEN, stock, 0, 0, stock_len)
        for i in range(stock_len):
            out[k, stock_at + i] = stock[0, i]


def compiled_samples(
    count: int,
    unseen: Sequence[int],
    sizes: dict[int, int],
    caps: dict[int, list[int]],
    rng: np.random.Generator,
    attempts: int = 4,
) -> np.ndarray:
    """``count`` calls of ``sample_hidden(unseen, sizes, caps, rng, attempts)`` in one
    compiled call, ``rng`` advanced as they advance it: row ``k`` holds sample ``k``'s hands
    of the seats of ``sizes`` in order, then its stock (next card first). ``ValueError``
    for a generator other than numpy's PCG64 (``default_rng``)."""
    seats, _, chains, constrained, free_cards = plan_samples(unseen, sizes, caps)
    levels = np.full((len(seats), NUM_CARDS), NO_LEVEL, np.int64)
    bounds = np.zeros((len(seats), NUM_CATEGORIES), np.int64)
    num_bounds = np.zeros(len(seats), np.int64)
    for i, s in enumerate(seats):
        chain = chains.get(s)
        if chain is not None:
            levels[i] = [chain.level(c) for c in range(NUM_CARDS)]
            bounds[i, : len(chain.left)] = chain.left
            num_bounds[i] = len(chain.left)
    out = np.zeros((count, len(unseen)), np.int64)
    gen = generator_row(rng.bit_generator.state)
    deal_samples(
        gen,
        np.array(unseen, np.int64),
        np.array(constrained, np.int64),
        np.array(free_cards, np.int64),
        np.array([sizes[s] for s in seats], np.int64),
        levels,
        bounds,
        num_bounds,
        attempts,
        out,
    )
    rng.bit_generator.state = export_state(gen, _GEN)
    return out
