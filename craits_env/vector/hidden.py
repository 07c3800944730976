"""The PIMC bot's samples of the hidden cards, compiled: ``craits.agents.pimc.sample_hidden`` draw
for draw on CPython's ``random.Random``.

``sample_hidden`` deals the cards a seat cannot see to the opponents and the stock with a
``random.Random`` (Mersenne Twister); :func:`deal_samples` makes many of its samples in one
call, consuming the same generator exactly as that many calls would, and so giving the
same hands and stock, card for card and in the same order:

- :func:`genrand` is CPython's ``genrand_uint32`` (MT19937: 624 words and a position, the
  state of ``random.getstate()[1]``), ``getrandbits(k)`` for ``k <= 32`` its top ``k``
  bits, :func:`randbelow` ``Random._randbelow_with_getrandbits`` (``randrange(n)``) and
  :func:`shuffle` ``Random.shuffle``;
- the deal follows ``sample_hidden`` / ``_deal_constrained`` statement for statement from
  the plan that ``craits.agents.pimc`` computes once per decision (which cards are bounded, each
  seat's nested bounds).

``tests/test_pimc_vector.py`` holds it to ``sample_hidden`` over thousands of random plans
and the generator states after them to Python's.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from .jit import entry, inner

MT_WORDS = 624  # MT19937's state: 624 words, then the position of the next one
_M = 397
_MATRIX_A = 0x9908B0DF
_UPPER = 0x80000000
_LOWER = 0x7FFFFFFF
_WORD = 0xFFFFFFFF
_TEMPER_B = 0x9D2C5680
_TEMPER_C = 0xEFC60000
_MT_VERSION = 3  # random.getstate()[0]


@inner
def _twist(mt: Any) -> None:
    """Refill the 624 words (CPython's ``genrand_uint32``, when the position reaches 624)."""
    for kk in range(MT_WORDS):
        y = (mt[kk] & _UPPER) | (mt[(kk + 1) % MT_WORDS] & _LOWER)
        value = mt[(kk + _M) % MT_WORDS] ^ (y >> 1)
        if y & 1:
            value ^= _MATRIX_A
        mt[kk] = value
    mt[MT_WORDS] = 0


@inner
def genrand(mt: Any) -> int:
    """CPython's ``genrand_uint32``: the next 32-bit output (``mt``: int64, 625 entries)."""
    if mt[MT_WORDS] >= MT_WORDS:
        _twist(mt)
    y = mt[mt[MT_WORDS]]
    mt[MT_WORDS] += 1
    y ^= y >> 11
    y ^= (y << 7) & _TEMPER_B
    y ^= (y << 15) & _TEMPER_C
    y ^= y >> 18
    return y & _WORD


@inner
def randbelow(mt: Any, n: int) -> int:
    """``Random._randbelow_with_getrandbits(n)`` (``randrange(n)``), ``1 <= n < 2**32``:
    ``k = n.bit_length()`` top bits of one output, again while they are ``>= n``."""
    k = 0
    while (n >> k) != 0:
        k += 1
    r = genrand(mt) >> (32 - k)
    while r >= n:
        r = genrand(mt) >> (32 - k)
    return r


@inner
def shuffle(mt: Any, x: Any, length: int) -> None:
    """``Random.shuffle(x[:length])`` in place."""
    for i in range(length - 1, 0, -1):
        j = randbelow(mt, i + 1)
        held = x[i]
        x[i] = x[j]
        x[j] = held


@inner
def _is_open(left: Any, s: int, level: int, num_bounds: Any) -> bool:
    """``min(left[s][level:], default=1)`` is nonzero: seat ``s`` may take the card."""
    for t in range(level, num_bounds[s]):  # noqa: SIM110 (a plain loop compiles leaner)
        if left[s, t] == 0:
            return False
    return True


@inner
def _deal_constrained(
    mt: Any, constrained: Any, sizes: Any, offsets: Any, levels: Any, bounds: Any,
    num_bounds: Any, stock_size: int, out: Any, k: int, filled: Any, stock: Any,
    order: Any, left: Any, free: Any, opened: Any,
) -> int:  # fmt: skip
    """``craits.agents.pimc._deal_constrained`` into ``out[k]`` (each seat's cards from
    ``offsets[s]``, ``filled[s]`` of them) and ``stock``; the stock's length, or -1 if stuck."""
    m = sizes.shape[0]
    for i in range(constrained.shape[0]):
        order[i] = constrained[i]
    shuffle(mt, order, constrained.shape[0])
    for s in range(m):
        free[s] = sizes[s]
        filled[s] = 0
        for t in range(num_bounds[s]):
            left[s, t] = bounds[s, t]
    stock_free = stock_size
    stock_len = 0
    for i in range(constrained.shape[0]):
        c = order[i]
        total = stock_free
        for s in range(m):
            opened[s] = free[s] > 0 and _is_open(left, s, levels[s, c], num_bounds)
            if opened[s]:
                total += free[s]
        if total == 0:
            return -1
        r = randbelow(mt, total)
        if r < stock_free:
            stock[stock_len] = c
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
    mt: Any, unseen: Any, constrained: Any, free_cards: Any, sizes: Any, levels: Any,
    bounds: Any, num_bounds: Any, attempts: int, out: Any,
) -> None:  # fmt: skip
    """``out[k]`` := ``sample_hidden``'s ``k``-th sample from generator ``mt`` (advanced):
    the hands of the seats of ``sizes`` (in order, each in the order dealt), then the stock
    (next card first). ``levels[s, c]``: the first bound level of seat ``s`` that card ``c``
    counts in (``num_bounds[s]`` or more: none); ``bounds[s, :num_bounds[s]]`` the bounds."""
    m = sizes.shape[0]
    offsets = np.zeros(m, np.int64)
    for s in range(1, m):
        offsets[s] = offsets[s - 1] + sizes[s - 1]
    stock_at = offsets[m - 1] + sizes[m - 1] if m > 0 else 0
    stock_size = out.shape[1] - stock_at
    filled = np.zeros(m, np.int64)
    stock = np.zeros(out.shape[1], np.int64)
    order = np.zeros(max(constrained.shape[0], 1), np.int64)
    left = np.zeros(bounds.shape, np.int64)
    free = np.zeros(m, np.int64)
    opened = np.zeros(m, np.bool_)
    pool = np.zeros(out.shape[1], np.int64)
    for k in range(out.shape[0]):
        stock_len = -1
        tries = attempts if constrained.shape[0] > 0 else 0
        for _ in range(tries):
            stock_len = _deal_constrained(mt, constrained, sizes, offsets, levels, bounds,
                                          num_bounds, stock_size, out, k, filled, stock, order,
                                          left, free, opened)  # fmt: skip
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
            pool[i] = cards[i]
        shuffle(mt, pool, length)
        j = 0
        for s in range(m):
            for i in range(filled[s], sizes[s]):
                out[k, offsets[s] + i] = pool[j]
                j += 1
        for i in range(j, length):
            stock[stock_len] = pool[i]
            stock_len += 1
        shuffle(mt, stock, stock_len)
        for i in range(stock_len):
            out[k, stock_at + i] = stock[i]


def export_mt(rng: random.Random) -> tuple[np.ndarray, Any]:
    """``rng``'s Mersenne Twister as the int64 array :func:`deal_samples` advances, and the
    rest of its state (the cached Gaussian) for :func:`import_mt`."""
    version, words, gauss = rng.getstate()
    if version != _MT_VERSION or len(words) != MT_WORDS + 1:
        raise ValueError(f"rng: got a version {version} state, allowed CPython's MT19937 (3)")
    return np.array(words, np.int64), gauss


def import_mt(rng: random.Random, mt: np.ndarray, gauss: Any) -> None:
    """Put the advanced state back into ``rng``."""
    rng.setstate((_MT_VERSION, tuple(mt.tolist()), gauss))
