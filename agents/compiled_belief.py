"""The belief features (:mod:`craits_env.belief`) of rows of a VectorGame, compiled.

:func:`craits_env.belief.encode_belief` reads a :class:`~craits_env.public_tracker.PublicTracker`
that followed a Python game. The expert's memory (:mod:`craits.agents.compiled_expert`: told
every step of a row, settled after it) holds the same public inferences — per seat, the draw
counter when it showed no card of a suit, no 8 or 9, no ace or two — and the cards each seat
played this hand, per suit: :func:`write_beliefs` turns them into the same float32 vector, so
a network trained on the belief observation (``champion``) plays on the batched engine.
"""

from __future__ import annotations

from typing import Any

from craits_env.belief import PER_OPPONENT, PLAYED_SCALE
from craits_env.cards import NUM_SUITS
from craits_env.vector.jit import entry, inner
from craits_env.vector.layout import P_PLAYERS, S_DRAWN

from .compiled_expert import M_NO_COUNT, M_NO_WILD, M_PLAYED, M_VOID, UNKNOWN, settle


@inner
def known(st: Any, mem: Any, b: int, slot: int, seat: int, out: Any, i: int, j: int) -> None:
    """``belief._known``: 1 and 1 / (1 + cards drawn since) where the memory knows."""
    base = mem[b, slot]
    if base != UNKNOWN:
        out[i] = 1.0
        out[j] = 1.0 / (1.0 + (st[b, S_DRAWN + seat] - base))


@entry
def write_beliefs(st: Any, p: Any, mem: Any, rows: Any, seats: Any, out: Any) -> int:
    """``out[i]`` := ``encode_belief`` of row ``rows[i]`` seen by ``seats[i]``, each row's
    memory settled first; -1, or the first row the memory lost track of."""
    n = p[P_PLAYERS]
    for i in range(rows.shape[0]):
        b, seat = rows[i], seats[i]
        if not settle(st, p, mem, b):
            return b
        row = out[i]
        row[:] = 0.0
        for k in range(n - 1):
            opp = (seat + k + 1) % n
            at = k * PER_OPPONENT
            for suit in range(NUM_SUITS):
                known(st, mem, b, M_VOID + 4 * opp + suit, opp, row, at + suit, at + 4 + suit)
            known(st, mem, b, M_NO_WILD + opp, opp, row, at + 8, at + 9)
            known(st, mem, b, M_NO_COUNT + opp, opp, row, at + 10, at + 11)
            for suit in range(NUM_SUITS):
                row[at + 12 + suit] = mem[b, M_PLAYED + 4 * opp + suit] / PLAYED_SCALE
    return -1
