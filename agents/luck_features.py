"""The luck value model's inputs: what a full state of a hand looks like to the model, in numpy.

:mod:`craits.agents.luck` evaluates its value model on thousands of states a game (every
chance event and every card it could have revealed), so the features are built for a whole
batch of states at once. A state (one row) is every seat's hand as card counts ``(n, 52)``,
the unrevealed cards (the stock, ``(52,)``) and the scalars of :class:`Context`. The value
model sees it from each seat in turn (a *view*): that seat's hand, the next and the previous
seat's in the direction of play and the mean of the others', then the table's scalars, so
one set of weights serves every seat and every number of players.

A seat's hand (:func:`seat_features`): its size, its points if the hand ended now (R8.2–R8.4,
:func:`hand_points`, exact for every scoring option), its count of each rank, its suits (how
many, the longest), how many of its cards are playable on the top card now (R3.1; in the
count, R5.2, aces and twos), whether it owes the one-card penalty (R7.1) and the cards still
to be dealt to it (R2.3). The table (:func:`views`): the stage (dealing, starter turned,
play), players, hand size, the stock's size and what is left in it (mean points, share of
wilds, of aces and twos), the count (R5), the top card's rank, the jack run (R9.1), how far
the seat is from the player to act and from the dealer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from craits_env.cards import NUM_CARDS, NUM_RANKS, RANK_OF, SUIT_OF, Rank
from craits_env.rules import Rules
from craits_env.scoring import CARD_POINTS, LONELY_THREE_POINTS, ONLY_THREES_POINTS

STAGE_DEAL, STAGE_STARTER, STAGE_PLAY, STAGE_END = 0, 1, 2, 3
"""A chance event's stage: a card dealt (R2.3), the starter turned (R2.3, its function still
to come, R2.5), a card drawn in play, a card drawn by a decision that ends the hand (valued
exactly: the hand is scored right after)."""

_RANK = np.array(RANK_OF, dtype=np.int64)
_SUIT = np.array(SUIT_OF, dtype=np.int64)
RANK_OF_CARD = np.eye(NUM_RANKS, dtype=np.float32)[_RANK]  # (52, 13)
SUIT_OF_CARD = np.eye(4, dtype=np.float32)[_SUIT]  # (52, 4)
POINTS = np.array(CARD_POINTS, dtype=np.float32)
WILD = np.isin(_RANK, (Rank.EIGHT, Rank.NINE)).astype(np.float32)
COUNTABLE = np.isin(_RANK, (Rank.ACE, Rank.TWO)).astype(np.float32)
CARD_POINTS_52 = POINTS[_RANK]

SEAT_FEATURES = 21
TABLE_FEATURES = 29
STOCK_FEATURES = 6
"""Where, in the table's features, the stock's mean points, wilds and aces-and-twos start."""
INPUTS = 4 * SEAT_FEATURES + TABLE_FEATURES
"""The value model's input length: own, next, previous and the others' mean hand, the table."""


@dataclass
class Context:
    """The scalars of a batch of states, one entry per row (numpy arrays)."""

    stage: np.ndarray
    """STAGE_* of each row"""
    dealer: np.ndarray
    direction: np.ndarray
    """+1 or -1: the direction of play (of the deal while dealing)"""
    current: np.ndarray
    """the seat to act next (play stage; the dealer otherwise)"""
    count: np.ndarray
    """the count (R5), 0 when it is off"""
    top: np.ndarray
    """the top card of the discard pile (-1 while dealing)"""
    active_suit: np.ndarray
    """the active suit (R3.2), -1 while dealing"""
    jack_run: np.ndarray
    hand_size: np.ndarray
    pending: np.ndarray
    """(rows, n): the seats that owe the one-card penalty (R7.1)"""


def hand_points(ranks: np.ndarray, rules: Rules) -> np.ndarray:
    """Points of hands given as rank counts ``(m, 13)`` if the hand ended now (R8.2–R8.4):
    :func:`craits_env.scoring.score_ranks`, vectorized."""
    ranks = np.asarray(ranks, dtype=np.float32)
    threes = ranks[:, Rank.THREE]
    size = ranks.sum(axis=1)
    others = size - threes
    total = ranks @ POINTS - threes * POINTS[Rank.THREE]
    order = [
        int(r)
        for r in np.argsort(-POINTS, kind="stable")
        if r != Rank.THREE
        and (r != Rank.EIGHT or rules.threes_cancel_eights)
        and (r != Rank.ACE or not rules.punitive_threes)
    ]
    before = np.zeros_like(threes)
    cancelled = np.zeros_like(threes)
    for r in order:
        k = np.clip(threes - before, 0, ranks[:, r])
        total -= k * POINTS[r]
        cancelled += k
        before += ranks[:, r]
    if rules.punitive_threes:
        total += cancelled * rules.three_points + (threes - cancelled) * LONELY_THREE_POINTS
    else:
        total += threes * rules.three_points
    total = np.where((threes > 0) & (others == 0), ONLY_THREES_POINTS * threes, total)
    return np.where(size == 0, 0.0, total).astype(np.float32)


def playable_mask(ctx: Context) -> np.ndarray:
    """``(rows, 52)``: the cards playable on each row's top card now (R3.1; in the count, R5.2);
    none while dealing."""
    rows = len(ctx.stage)
    top = np.maximum(ctx.top, 0)
    suit = np.where(ctx.active_suit >= 0, ctx.active_suit, _SUIT[top])
    normal = (
        (_SUIT[None, :] == suit[:, None]) | (_RANK[None, :] == _RANK[top][:, None]) | (WILD > 0)
    ).astype(np.float32)
    counting = np.broadcast_to(COUNTABLE, (rows, NUM_CARDS))
    mask = np.where((ctx.count > 0)[:, None], counting, normal)
    return np.where((ctx.top >= 0)[:, None], mask, 0.0).astype(np.float32)


def seat_features(
    hands: np.ndarray, ctx: Context, rules: Rules, mask: np.ndarray | None = None
) -> np.ndarray:
    """``(rows, n, SEAT_FEATURES)`` from hands as card counts ``(rows, n, 52)`` (``mask``:
    :func:`playable_mask` of ``ctx``, if known)."""
    rows, n, _ = hands.shape
    flat = hands.reshape(rows * n, NUM_CARDS).astype(np.float32)
    ranks = flat @ RANK_OF_CARD
    suits = flat @ SUIT_OF_CARD
    size = flat.sum(axis=1)
    points = hand_points(ranks, rules)
    if mask is None:
        mask = playable_mask(ctx)
    playable = np.einsum("rnc,rc->rn", hands.astype(np.float32), mask)
    to_deal = np.where(
        (ctx.stage == STAGE_DEAL)[:, None], ctx.hand_size[:, None] - size.reshape(rows, n), 0.0
    )
    out = np.empty((rows, n, SEAT_FEATURES), dtype=np.float32)
    o = out.reshape(rows * n, SEAT_FEATURES)
    o[:, 0] = size / 8
    o[:, 1] = points / 100
    o[:, 2 : 2 + NUM_RANKS] = ranks / 2
    o[:, 15] = (suits > 0).sum(axis=1) / 4
    o[:, 16] = suits.max(axis=1) / 8
    o[:, 17] = size == 1
    o[:, 18] = size == 0
    out[:, :, 19] = playable / 8
    out[:, :, 20] = ctx.pending + to_deal / 8  # either is 0: dealing has no penalty pending
    return out


def views(seats: np.ndarray, unrevealed: np.ndarray, ctx: Context, num_players: int) -> np.ndarray:
    """``(rows, n, INPUTS)``: each row seen from each seat (see the module docstring);
    ``seats`` from :func:`seat_features`, ``unrevealed`` the stock's card counts
    ``(rows, 52)`` after the event."""
    rows, n = seats.shape[0], num_players
    me = np.arange(n)[None, :]
    d = ctx.direction[:, None]
    nxt = (me + d) % n
    prv = (me - d) % n
    own = seats
    after = np.take_along_axis(seats, nxt[:, :, None], axis=1)
    before = np.take_along_axis(seats, prv[:, :, None], axis=1)
    total = seats.sum(axis=1, keepdims=True)
    rest = total - own - after - (before if n > 2 else 0)
    others = rest / max(n - 3, 1)
    table = np.zeros((rows, n, TABLE_FEATURES), dtype=np.float32)
    stage = ctx.stage
    for k in range(3):
        table[:, :, k] = (stage == k)[:, None]
    stock = unrevealed.sum(axis=1).astype(np.float32)
    left = np.maximum(stock, 1)
    table[:, :, 3] = n / 10
    table[:, :, 4] = (ctx.hand_size / 8)[:, None]
    table[:, :, 5] = (stock / 52)[:, None]
    table[:, :, 6] = ((unrevealed @ CARD_POINTS_52) / left / 50)[:, None]
    table[:, :, 7] = ((unrevealed @ WILD) / left)[:, None]
    table[:, :, 8] = ((unrevealed @ COUNTABLE) / left)[:, None]
    table[:, :, 9] = (ctx.count / 10)[:, None]
    table[:, :, 10] = (ctx.jack_run / 4)[:, None]
    turn = ((ctx.current[:, None] - me) * d) % n
    table[:, :, 11] = turn / n
    table[:, :, 12] = turn == 0
    table[:, :, 13] = (((me - ctx.dealer[:, None]) * d) % n) / n
    table[:, :, 14] = n == 2
    top_rank = np.where(ctx.top >= 0, _RANK[np.maximum(ctx.top, 0)], -1)
    for r in range(NUM_RANKS):
        table[:, :, 15 + r] = (top_rank == r)[:, None]
    table[:, :, 28] = (ctx.count > 0)[:, None]
    return np.concatenate([own, after, before, others, table], axis=2)
