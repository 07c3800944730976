"""Rollout values of a table with a network at a seat: every rollout of an event a row of its
own, the networks' moves computed for all the rows that stopped at them in one pass.

:func:`craits.agents.luck_rollouts.event_values` plays an event's rollouts one after another
on one work row, every seat by a compiled player; a network (``champion``, ``ppo:PATH``) has
none, and played by ``expert`` its seat's rollouts are not what it would do. Here the same
rollouts, made the same way (:func:`alternatives`, :func:`rollouts`), are played side by side
(:func:`advance`): each row runs its compiled seats until its hand ends or a network has a
choice to make; the caller computes the networks' moves of the rows that stopped (one forward
pass a network, :func:`craits.agents.gym_vector_env.argmax_moves`: the move ``PPOAgent.act``
makes, the belief features from the row's own expert memory where the network reads them),
and the rows go on from those moves. :func:`collect` sums the rows' clipped points as
``event_values`` does: a table without a network gives its values exactly (a test checks it).

The rows of the batched game: ``BEFORE``, ``ACTUAL`` and the alternatives (as
``event_values``), then a row a rollout — the actual state's ``R``, then each alternative's
``S``, :data:`CHUNK` at a time — and a dice row each (a random seat's generator) after them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from craits_env import Rules
from craits_env.actions import NUM_ACTIONS, PHASE_GAME_OVER
from craits_env.belief import belief_size
from craits_env.vector import VectorGame, rows
from craits_env.vector.encode import encoder_for, field_offsets, write_observation
from craits_env.vector.jit import entry, inline, unowned
from craits_env.vector.layout import (
    DIRTY_ALL,
    I_CURRENT,
    I_DIRTY,
    I_HAND_INDEX,
    I_PHASE,
    P_PLAYERS,
)

from .compiled_belief import write_beliefs
from .compiled_cards import lowest_bit
from .compiled_expert import (
    COUNT_INTS,
    DECK_INTS,
    deck_counts,
    new_memory,
    settle,
    tell,
)
from .compiled_expert import TABLE_INTS as _TABLE_INTS
from .compiled_table import NETWORK
from .compiled_tactician import SCRATCH_FLOATS, SCRATCH_INTS, TABLE_FLOATS
from .compiled_values import weights
from .gym_vector_env import argmax_moves
from .heuristics import ExpertAgent, TacticianAgent
from .luck import LuckError
from .rollout_rows import (
    ACTUAL,
    FORGOT,
    NOT_EXACT,
    STUCK,
    bot_move,
    finished,
    make_alternatives,
    pairs_of,
    start_rollout,
)

DONE, NET = 1, 2
"""A rollout row's status after :func:`advance`: its hand over, or a network to move (the
caller passes the move as ``first``)."""


@entry
def alternatives(
    st: Any,
    cd: Any,
    p: Any,
    sizes: Any,
    deck: Any,
    mem: Any,
    actions: Any,
    hand0: int,
    alt_keys: Any,
    alt_seeds: Any,
    runs: Any,
    remember: bool,
    out: Any,
) -> int:
    """Rows ``2 .. K+1``: the alternatives (``actions[k]`` on ``BEFORE`` restacked by
    ``alt_keys[k]``, seeded ``alt_seeds[k]``); ``out[r - 1]`` := the points of hands
    ``hand0`` .. the row's own of each alternative ``r`` times its ``runs[r - 1]``
    (``ACTUAL``'s: 0), as :func:`~craits.agents.luck_rollouts.event_values`. 0, or
    ``NOT_EXACT`` / ``FORGOT`` (:mod:`craits.agents.rollout_rows`)."""
    st, cd, p, sizes, deck = unowned(st), unowned(cd), unowned(p), unowned(sizes), unowned(deck)
    n = p[P_PLAYERS]
    if not make_alternatives(st, cd, p, sizes, deck, mem, actions, alt_keys, alt_seeds, remember):
        return FORGOT
    for r in range(ACTUAL, alt_keys.shape[0] + 2):
        for q in range(n):
            out[r - 1, q] = 0.0
            if r > ACTUAL:
                done = finished(st, n, r, hand0, st[r, I_HAND_INDEX], q)
                if np.isnan(done):
                    return NOT_EXACT
                out[r - 1, q] = done * runs[r - 1]
    return 0


@inline
def _rollout(runs: Any, f: int) -> tuple[int, int]:
    """The row (``ACTUAL``, 2, …) and the rollout of the ``f``-th rollout of an event (the
    actual state's ``runs[0]``, then each alternative's in turn)."""
    r = 0
    while f >= runs[r]:
        f -= runs[r]
        r += 1
    return r + 1, f


@entry
def rollouts(
    st: Any,
    cd: Any,
    mem: Any,
    roll_keys: Any,
    roll_seeds: Any,
    runs: Any,
    couple: bool,
    remember: bool,
    lo: int,
    hi: int,
    start: int,
    dice_offset: int,
    hands: Any,
) -> None:
    """Rollouts ``lo .. hi-1`` of the event (:func:`_rollout`) in rows ``start`` on, each a
    copy of its row with the stock restacked by the rollout's keys (an alternative's own cards
    taking the actual's keys), its generator seeded, its dice row ``dice_offset`` rows on
    seeded, ``hands[t]`` its hand; as ``event_values`` makes its work row."""
    st, cd = unowned(st), unowned(cd)
    key = np.empty(roll_keys.shape[1], np.float64)
    have = np.zeros(roll_keys.shape[1], np.int64)
    pair_from = np.empty(cd.shape[1], np.int64)
    pair_to = np.empty(cd.shape[1], np.int64)
    last, pairs = -1, 0
    for f in range(lo, hi):
        r, j = _rollout(runs, f)
        if r != last:
            last, pairs = r, 0
            if couple and r > ACTUAL:
                pairs = pairs_of(st, cd, ACTUAL, r, have, pair_from, pair_to)
        t = start + f - lo
        start_rollout(st, cd, mem, r, t, t + dice_offset, key, roll_keys[j], roll_seeds[j], pairs,
                      pair_from, pair_to, remember)  # fmt: skip
        st[t, I_DIRTY] = DIRTY_ALL  # the observations' score cache is the row's own
        hands[t] = st[r, I_HAND_INDEX]


@entry
def advance(
    st: Any,
    cd: Any,
    p: Any,
    sizes: Any,
    deck: Any,
    table: Any,
    w_tactician: Any,
    w: Any,
    mem: Any,
    si: Any,
    sf: Any,
    which: Any,
    dice_offset: int,
    hands: Any,
    first: Any,
    steps: Any,
    status: Any,
    max_decisions: int,
) -> int:
    """Each row of ``which``: ``first[t]`` played if it is a move (a network's), then its
    seats as ``table`` says (``EXPERT``, ``TACTICIAN``, ``GREEDY``, ``RANDOM`` on its dice row
    ``t + dice_offset``) until its hand ``hands[t]`` ends (``status[t]`` := :data:`DONE`) or a
    seat of ``table`` from ``NETWORK`` on has a choice of moves (:data:`NET`; its memory
    settled; its only move is played without asking it). 0, or
    :data:`STUCK` / :data:`FORGOT`."""
    st, cd, p, sizes, deck = unowned(st), unowned(cd), unowned(p), unowned(sizes), unowned(deck)
    si, sf = unowned(si), unowned(sf)
    tb, ft, work = si[:_TABLE_INTS], sf[:TABLE_FLOATS], sf[TABLE_FLOATS:]
    dk = si[_TABLE_INTS : _TABLE_INTS + DECK_INTS]
    cnt = si[_TABLE_INTS + DECK_INTS : _TABLE_INTS + DECK_INTS + COUNT_INTS]
    deck_counts(deck, dk)
    for i in range(which.shape[0]):
        t = which[i]
        a = first[t]
        while True:
            if a < 0:
                if st[t, I_HAND_INDEX] != hands[t] or st[t, I_PHASE] == PHASE_GAME_OVER:
                    status[t] = DONE
                    break
                if steps[t] >= max_decisions:
                    return STUCK
                if not settle(st, p, mem, t):
                    return FORGOT
                who = table[st[t, I_CURRENT]]
                if who >= NETWORK:
                    legal = rows.legal_bits(st, p, t)
                    if legal & (legal - 1):
                        status[t] = NET
                        break
                    a = lowest_bit(legal)  # its only move: what the network plays, unasked
                else:
                    a = bot_move(st, p, who, w_tactician, w, mem, t, t + dice_offset, dk, tb, ft,
                                 cnt, work)  # fmt: skip
            if not tell(st, p, mem, t, a):
                return FORGOT
            rows.apply(st, cd, p, sizes, deck, t, a)
            steps[t] += 1
            a = -1
        first[t] = -1
    return 0


@entry
def inputs(
    st: Any, p: Any, sizes: Any, o: Any, scaled: Any, which: Any, obs: Any, mask: Any
) -> None:
    """``obs[t]`` := row ``t``'s observation by its acting seat (``craits_v0``'s), ``mask[i]``
    := the legal actions of row ``which[i]`` (0/1)."""
    st, p, sizes, o, scaled = unowned(st), unowned(p), unowned(sizes), unowned(o), unowned(scaled)
    for i in range(which.shape[0]):
        t = which[i]
        write_observation(st, p, sizes, o, scaled, t, st[t, I_CURRENT], obs)
        bits = rows.legal_bits(st, p, t)
        for a in range(NUM_ACTIONS):
            mask[i, a] = (bits >> a) & 1


@entry
def collect(
    st: Any, p: Any, runs: Any, lo: int, hi: int, start: int, hands: Any, clip: float, out: Any
) -> int:
    """``out[r - 1]`` += the clipped points of the hand of each of rollouts ``lo .. hi-1``
    (rows ``start`` on) of row ``r``, in order, as ``event_values`` sums them. 0, or
    :data:`NOT_EXACT`."""
    n = p[P_PLAYERS]
    for f in range(lo, hi):
        r, _ = _rollout(runs, f)
        t = start + f - lo
        for q in range(n):
            pts = finished(st, n, t, hands[t], st[t, I_HAND_INDEX], q)
            if np.isnan(pts):  # a spiral of pressures: positive, past any finite clip
                if np.isinf(clip):
                    return NOT_EXACT
                pts = clip
            out[r - 1, q] += min(max(pts, -clip), clip)
    return 0


CHUNK = 2048
"""Rollouts played side by side at most (an event's are played this many at a time): the
rows' memory stays some 70 MB whatever ``rollouts``; more rows a pass cost no fewer passes."""


class BatchedRollouts:
    """The rows and scratch of :func:`alternatives` / :func:`rollouts` / :func:`advance` /
    :func:`collect` for events of up to ``samples`` alternatives of ``rollouts`` +
    ``samples`` × ``sample_rollouts`` rollouts (:data:`CHUNK` at a time), and the networks
    (``(agent, reads_belief)``, ``table`` code ``NETWORK + k``)."""

    def __init__(
        self,
        num_players: int,
        rules: Rules,
        samples: int,
        rollouts: int,
        sample_rollouts: int,
        networks: list[tuple[Any, bool]],
    ) -> None:
        self.networks = networks
        self.chunk = min(rollouts + samples * sample_rollouts, CHUNK)
        self.start = samples + 2  # the first rollout row; its dice row is self.chunk on
        size = self.start + 2 * self.chunk
        self.game = VectorGame(size, num_players, rules, seed=0, auto_reset=False)
        self.mem = new_memory(size)
        encoder = encoder_for(num_players, rules)
        self._offsets = field_offsets(encoder)
        self._scaled = np.zeros((size, num_players, num_players), np.float64)
        self._obs = np.zeros((size, encoder.size), np.float32)
        self._mask = np.zeros((size, NUM_ACTIONS), np.int8)
        self._belief = belief_size(num_players)
        self._hands = np.zeros(size, np.int64)
        self._first = np.full(size, -1, np.int64)
        self._steps = np.zeros(size, np.int64)
        self._status = np.zeros(size, np.int64)
        self._w_tactician, self._w_expert = weights(TacticianAgent), weights(ExpertAgent)
        self._ints = np.zeros(SCRATCH_INTS, np.int64)
        self._floats = np.zeros(SCRATCH_FLOATS, np.float64)
        self._blas = ThreadpoolController()

    def run(
        self,
        actions: np.ndarray,
        hand0: int,
        keys: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
        sample_rollouts: int,
        table: np.ndarray,
        couple: bool,
        remember: bool,
        clip: float,
        max_decisions: int,
        out: np.ndarray,
    ) -> int:
        """``event_values``' ``out`` of the rows ``BEFORE`` and ``ACTUAL`` loaded in
        :attr:`game` (and :attr:`mem`), the networks of ``table`` moving as they play; 0 or
        ``event_values``' error code."""
        alt_keys, alt_seeds, roll_keys, roll_seeds = keys
        st, cd, p, sizes, deck = self.game.state.arrays()
        runs = np.array([len(roll_keys)] + [sample_rollouts] * len(alt_keys), np.int64)
        code = alternatives(
            st, cd, p, sizes, deck, self.mem, actions, hand0, alt_keys, alt_seeds, runs,
            remember, out,
        )  # fmt: skip
        if code:
            return int(code)
        with self._blas.limit(limits=1, user_api="blas"):  # many small passes: one thread
            for lo in range(0, int(runs.sum()), self.chunk):
                hi = min(lo + self.chunk, int(runs.sum()))
                rollouts(
                    st, cd, self.mem, roll_keys, roll_seeds, runs, couple, remember, lo, hi,
                    self.start, self.chunk, self._hands,
                )  # fmt: skip
                code = self._play(np.arange(self.start, self.start + hi - lo), table,
                                  max_decisions)  # fmt: skip
                if code:
                    return code
                code = collect(st, p, runs, lo, hi, self.start, self._hands, clip, out)
                if code:
                    return int(code)
        out[: len(runs)] /= runs[:, None]
        return 0

    def _play(self, which: np.ndarray, table: np.ndarray, max_decisions: int) -> int:
        """Rows ``which`` played to the end of their hands (:func:`advance`), the networks
        moving where they stop; 0 or :func:`advance`'s error code."""
        st, cd, p, sizes, deck = self.game.state.arrays()
        self._first[which] = -1
        self._steps[which] = 0
        while which.size:
            code = advance(
                st, cd, p, sizes, deck, table, self._w_tactician, self._w_expert, self.mem,
                self._ints, self._floats, which, self.chunk, self._hands, self._first,
                self._steps, self._status, max_decisions,
            )  # fmt: skip
            if code:
                return int(code)
            which = which[self._status[which] == NET]
            if which.size:
                self._moves(which, table)
        return 0

    def _moves(self, which: np.ndarray, table: np.ndarray) -> None:
        """``first[which]`` := the moves of the networks whose seats are to move there."""
        st, p = self.game.state.st, self.game.state.params
        seats = st[which, I_CURRENT]
        codes = table[seats]
        for k, (agent, belief) in enumerate(self.networks):
            mine = codes == NETWORK + k
            if not mine.any():
                continue
            rows_k = np.ascontiguousarray(which[mine])
            mask = self._mask[: rows_k.size]
            inputs(st, p, self.game.state.sizes, self._offsets, self._scaled, rows_k, self._obs,
                   mask)  # fmt: skip
            x = self._obs[rows_k]
            if belief:
                extra = np.zeros((rows_k.size, self._belief), np.float32)
                lost = write_beliefs(st, p, self.mem, rows_k, seats[mine], extra)
                if lost >= 0:
                    raise LuckError("a rollout's expert memory lost track of its row (a bug)")
                x = np.concatenate([x, extra], axis=1)
            self._first[rows_k] = argmax_moves(agent, x, mask)


def network_or_none(spec: str, num_players: int, rules: Rules) -> tuple[Any, bool] | None:
    """The frozen network of ``spec`` and whether it reads the belief features, or ``None``
    where ``spec`` is not a network (a search agent: its rollouts play ``expert``)."""
    from .checkpoint_agent import PPOAgent
    from .specs import resolve_agent

    agent, _ = resolve_agent(spec, num_players=num_players, rules=rules)
    return (agent, agent.reads_belief) if isinstance(agent, PPOAgent) else None
