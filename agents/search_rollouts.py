"""Compiled greedy rollouts of determinized positions: the inner loop of the PIMC search bot.

:class:`craits.agents.pimc.PIMCAgent` values each legal action of a searched decision on
samples of the hidden cards: per sample (a determinized copy of the game), per action, it
applies the action to a copy and plays the rest of the hand out with
:func:`~craits.agents.pimc.greedy_rollout_action` for every seat, then scores it with
:func:`~craits.agents.pimc.rollout_value`. :class:`Rollouts` does the same on the compiled
rules — :func:`craits_env.vector.rows.apply`, the Python engine statement for statement:

- :func:`greedy_action` is ``greedy_rollout_action`` in numba — the same choices and the
  same tie-breaks (the lowest action id among equals) — and :func:`rollout_points` is
  ``rollout_value``'s number; ``tests/agents/test_pimc_vector.py`` holds both to the Python
  functions over thousands of positions of random-option games.
- The generator is one numpy ``PCG64`` carried from rollout to rollout in the Python
  order (sample after sample, action after action within a sample), as ``PIMCAgent``'s
  Python rollouts share one ``numpy.random.Generator``: the reshuffles (R10.1) and the
  next hand's deal (R2.3, when a rollout ends the hand) draw exactly what Python draws, and
  the state after the last rollout goes back to the caller.

A decision loads its root position once (:meth:`Rollouts.load`), then one compiled call
(:meth:`Rollouts.values`) plays every sample's every action: each sample only replaces the
opponents' hands and the stock of the root, as ``Game.determinized`` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from craits_env import Game, Rules
from craits_env.actions import CALL_BASE, DECLARE, DRAW, PHASE_CALL_SUIT, PHASE_DECLARE
from craits_env.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS, RANK_OF, Rank
from craits_env.vector import VectorGame, rows
from craits_env.vector.jit import entry, inner, unowned
from craits_env.vector.layout import (
    DEAL,
    HELD1,
    HELD2,
    I_CURRENT,
    I_HAND_INDEX,
    I_PEND_CARD,
    I_PHASE,
    I_STOCK_LEN,
    P_PLAYERS,
    RNG,
    RNG_WORDS,
    S_HAND_LEN,
    SCRATCH,
    STOCK,
)

from .rollout_policy import MAX_ROLLOUT_DECISIONS, ROLLOUT_VALUE

MAX_DECISIONS = MAX_ROLLOUT_DECISIONS
"""A rollout stops after this many policy decisions."""

_CARD_ROW_USED = DEAL  # cd: the stock and the discard pile come before the deal
ROOT, WORK = 0, 1  # the rows: the sample being played (the root, patched), the rollout
_NO_SEAT = -1  # owners[i]: the card is in the stock

_IS_WILD = [RANK_OF[c] in (Rank.EIGHT, Rank.NINE) for c in range(NUM_CARDS)]
# greedy_rollout_action's preference (ROLLOUT_VALUE), as a numba constant.
_ROLLOUT_VALUE = np.array(ROLLOUT_VALUE, np.int64)
# The cards from the most preferred down, the lowest id first among equals: the first one
# playable is the card greedy_rollout_action's loop keeps (a strict ``>`` over ascending ids).
_PREFERENCE = np.array(sorted(range(NUM_CARDS), key=lambda c: (-_ROLLOUT_VALUE[c], c)), np.int64)
# Per suit, the cards of that suit that are not 8s or 9s (the suit call counts these).
_PLAIN_OF_SUIT = np.array(
    [
        sum(1 << c for c in range(s * NUM_RANKS, (s + 1) * NUM_RANKS) if not _IS_WILD[c])
        for s in range(NUM_SUITS)
    ],
    np.int64,
)
_NINE = int(Rank.NINE)


@inner
def _bits(x: int) -> int:
    k = 0
    while x:
        x &= x - 1
        k += 1
    return k


@inner
def greedy_action(st: Any, p: Any, b: int) -> int:
    """``craits.agents.pimc.greedy_rollout_action`` of game ``b`` (not over): DECLARE when asked
    (R7.1); the suit call with the most non-wild copies in hand (R3.2; a 9's two suits, R4);
    else the most preferred playable card (the count's aces and twos, R5.2), DRAW if none."""
    phase = st[b, I_PHASE]
    if phase == PHASE_DECLARE:
        return DECLARE
    q = st[b, I_CURRENT]
    if phase == PHASE_CALL_SUIT:
        card = st[b, I_PEND_CARD]
        own = card // NUM_RANKS
        nine = card % NUM_RANKS == _NINE
        best, most = -1, -1
        for suit in range(NUM_SUITS):
            if nine and suit != own and suit != 3 - own:
                continue
            plain = _PLAIN_OF_SUIT[suit]
            k = _bits(st[b, HELD1 + q] & plain) + _bits(st[b, HELD2 + q] & plain)
            if k > most:
                best, most = suit, k
        return CALL_BASE + best
    allowed = rows.allowed_cards(st, b)
    if allowed == 0:
        return DRAW
    for i in range(NUM_CARDS):
        c = _PREFERENCE[i]
        if (allowed >> c) & 1:
            return c
    return DRAW  # unreachable: some card is allowed


@inner
def rollout_points(st: Any, p: Any, b: int, seat: int, hand: int, others: float) -> float:
    """``craits.agents.pimc.rollout_value``'s number for game ``b``: the opponents' mean points for
    hand ``hand`` (weighted by ``others``) minus ``seat``'s — the hand's recorded points,
    penalties included, if it ended, else the cards held now (R8.2–R8.4). NaN when a
    finished hand's points need more than 53 bits (over ``EXACT_PRESSURES`` pressures)."""
    n = p[P_PLAYERS]
    total = 0
    own = 0
    ended = st[b, I_HAND_INDEX] != hand
    for q in range(n):
        if ended:
            if not rows.exact_hand_points(st, n, b, hand, q):
                return np.nan
            points = rows.finished_hand_points(st, n, b, hand, q)
        else:
            points = rows.score_hand(st, p, b, q)
        total += points
        if q == seat:
            own = points
    return others * np.float64(total - own) / np.float64(n - 1) - np.float64(own)


@inner
def _patch_root(st: Any, cd: Any, owners: Any, cards: Any, k: int) -> None:
    """The root row holds sample ``k``: the owners' hands and the stock (next card first)."""
    for i in range(owners.shape[0]):
        q = owners[i]
        if q != _NO_SEAT:
            st[ROOT, HELD1 + q] = 0
            st[ROOT, HELD2 + q] = 0
            st[ROOT, S_HAND_LEN + q] = 0
    stock = st[ROOT, I_STOCK_LEN]
    j = 0
    for i in range(owners.shape[0]):
        c = cards[k, i]
        q = owners[i]
        if q == _NO_SEAT:  # the stock's next card is the row's last
            cd[ROOT, STOCK + stock - 1 - j] = c
            j += 1
            continue
        bit = 1 << c
        if st[ROOT, HELD1 + q] & bit:
            st[ROOT, HELD2 + q] |= bit
        else:
            st[ROOT, HELD1 + q] |= bit
        st[ROOT, S_HAND_LEN + q] += 1


@inner
def _copy_root(st: Any, cd: Any) -> None:
    """The work row := the root, but for its generator (carried from rollout to rollout).
    Only what play reads: the scalars up to the scratch space, the stock and the discard
    pile (a rollout writes the points of its hand and its reshuffles before reading them)."""
    for i in range(RNG):
        st[WORK, i] = st[ROOT, i]
    for i in range(RNG + RNG_WORDS, SCRATCH):
        st[WORK, i] = st[ROOT, i]
    for i in range(_CARD_ROW_USED):
        cd[WORK, i] = cd[ROOT, i]


@entry
def play_rollouts(
    st: Any,
    cd: Any,
    p: Any,
    sizes: Any,
    deck: Any,
    owners: Any,
    cards: Any,
    actions: Any,
    seat: int,
    hand: int,
    others: float,
    max_decisions: int,
    values: Any,
) -> bool:
    """``values[k, i]`` := the rollout value of ``actions[i]`` on sample ``k`` (``cards[k]``
    dealt to ``owners``), every rollout drawing from the work row's generator in turn;
    ``False`` (values incomplete) as soon as one is not exact in float64."""
    st, cd, p, sizes, deck = unowned(st), unowned(cd), unowned(p), unowned(sizes), unowned(deck)
    for k in range(cards.shape[0]):
        _patch_root(st, cd, owners, cards, k)
        for i in range(actions.shape[0]):
            _copy_root(st, cd)
            rows.apply(st, cd, p, sizes, deck, WORK, actions[i])
            steps = 0
            while st[WORK, I_HAND_INDEX] == hand and steps < max_decisions:
                rows.apply(st, cd, p, sizes, deck, WORK, greedy_action(st, p, WORK))
                steps += 1
            value = rollout_points(st, p, WORK, seat, hand, others)
            if np.isnan(value):
                return False
            values[k, i] = value
    return True


@entry
def policy_action(st: Any, p: Any, b: int) -> int:
    """:func:`greedy_action` of row ``b``, for Python callers (tests)."""
    return greedy_action(st, p, b)


@entry
def points_of(st: Any, p: Any, b: int, seat: int, hand: int, others: float) -> float:
    """:func:`rollout_points` of row ``b``, for Python callers (tests)."""
    return rollout_points(st, p, b, seat, hand, others)


class Rollouts:
    """Compiled greedy rollouts for one table (number of players and rules).

    :meth:`load` takes a decision's root (a ``Game.determinized`` copy, or any game of this
    table); :meth:`values` plays out every action of every sample in one compiled call.
    ``ValueError`` for rules that :class:`~craits_env.vector.VectorGame` cannot represent.
    """

    def __init__(self, num_players: int, rules: Rules) -> None:
        self.num_players = num_players
        self.rules = rules
        self._state = VectorGame(2, num_players, rules, seed=0, auto_reset=False).state
        self._hand = -1
        self._legal: frozenset[int] = frozenset()

    def load(self, root: Game) -> None:
        """The decision's position (its hidden cards are replaced by each sample)."""
        # The root's generator is never drawn from (the work row's is): any state will do.
        state = self._state
        rows.load_game(state, ROOT, root, rows.export_state(state.st, WORK), determinized=True)
        self._hand = root.hand_index
        self._legal = frozenset(rows.legal_actions(state, ROOT))

    def values(
        self,
        cards: np.ndarray,
        owners: np.ndarray,
        actions: Sequence[int],
        seat: int,
        generator_state: Mapping[str, Any],
        others: float = 1.0,
        max_decisions: int = MAX_DECISIONS,
    ) -> tuple[np.ndarray | None, dict[str, Any]]:
        """Per sample ``k`` (``cards[k, i]`` held by seat ``owners[i]``, or the stock's
        ``i``-th card, next first, where ``owners[i] == -1``) and per action ``a`` of
        ``actions`` (legal at the root): ``seat``'s rollout value of ``a`` (float64,
        ``(samples, actions)``), and the generator's state after the last rollout — the
        generator starts from ``generator_state`` (numpy ``PCG64``). ``(None,
        generator_state)`` if some rollout's points exceed float64's exact integers."""
        if self._hand < 0:
            raise ValueError("Rollouts.values: load a root position first")
        cards = np.ascontiguousarray(cards, np.int64)
        owners = np.ascontiguousarray(owners, np.int64)
        acts = np.ascontiguousarray(actions, np.int64)
        if cards.ndim != 2 or owners.shape != (cards.shape[1],):
            raise ValueError(
                f"cards: got shape {cards.shape} for {owners.shape[0]} owners, allowed "
                "(samples, owners)"
            )
        bad = [int(a) for a in acts if int(a) not in self._legal]
        if bad:
            raise ValueError(f"actions: {bad} not legal at the root; legal: {sorted(self._legal)}")
        n = self.num_players
        if not 0 <= seat < n:
            raise ValueError(f"seat: got {seat!r}, allowed 0 to {n - 1}")
        if owners.size and (owners.min() < _NO_SEAT or owners.max() >= n):
            raise ValueError(f"owners: allowed seats 0 to {n - 1}, or -1 for the stock")
        if cards.size and (cards.min() < 0 or cards.max() >= NUM_CARDS):
            raise ValueError(f"cards: allowed card indices 0 to {NUM_CARDS - 1}")
        st = self._state.st
        held = np.bincount(owners[owners != _NO_SEAT], minlength=n)
        sizes = st[ROOT, S_HAND_LEN : S_HAND_LEN + n]
        if int(np.sum(owners == _NO_SEAT)) != st[ROOT, I_STOCK_LEN] or np.any(
            (held != 0) & (held != sizes)
        ):
            raise ValueError("owners: the sample's hand sizes or stock size differ from the root's")
        rows.load_state(st, WORK, generator_state)
        out = np.empty((cards.shape[0], acts.shape[0]), np.float64)
        exact = play_rollouts(
            *self._state.arrays(),
            owners,
            cards,
            acts,
            seat,
            self._hand,
            float(others),
            max_decisions,
            out,
        )
        if not exact:
            return None, dict(generator_state)
        return out, rows.export_state(st, WORK)
