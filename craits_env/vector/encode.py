"""The observation of :class:`~craits_env.observation.ObservationEncoder`, compiled, per game.

:func:`field_offsets` reads the slice table from the encoder itself (one owner of the
layout); :func:`observe` fills row ``b`` of a preallocated float32 array with the same
numbers, computed in float64 and rounded to float32 as numpy does when the encoder assigns
its Python floats.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..actions import PHASE_GAME_OVER
from ..cards import NUM_CARDS
from ..observation import OWN_FEATURES, ObservationEncoder
from ..rules import Rules
from .jit import entry, inner, unowned
from .layout import (
    HELD1,
    HELD2,
    I_ACTIVE_SUIT,
    I_COUNT,
    I_CURRENT,
    I_DEALER,
    I_DIRECTION,
    I_DIRTY,
    I_EXTRA_PLAY,
    I_HAND_INDEX,
    I_JACK_RUN,
    I_KING_LEFT,
    I_PHASE,
    I_STOCK_LEN,
    I_TOP,
    P_DECK_SIZE,
    P_HANDS,
    P_PLAYERS,
    S_HAND_LEN,
    S_OUT,
    S_PENDING,
    S_POINTS,
    S_PRESSURES,
    SEEN1,
    SEEN2,
)
from .scores import scale_diff

# The fields of observation.FIELDS whose start the kernel needs, in this order.
FIELD_ORDER = (
    "hand", "top_card", "active_suit", "phase", "extra_play", "king_cards_left", "count",
    "jack_run", "direction", "own_status", "seen", "stock_size", "hand_progress", "dealer",
)  # fmt: skip
(
    O_HAND,
    O_TOP,
    O_SUIT,
    O_PHASE,
    O_EXTRA,
    O_KING,
    O_COUNT,
    O_JACK,
    O_DIRECTION,
    O_SEATS,
    O_SEEN,
    O_STOCK,
    O_PROGRESS,
    O_DEALER,
) = range(len(FIELD_ORDER))
PRESSURE_CAP = 50  # the encoder's min(pressures, 50)


def field_offsets(encoder: ObservationEncoder) -> np.ndarray:
    """The start of each field of :data:`FIELD_ORDER` in ``encoder``'s layout (int64).

    The seats' blocks (own status, then each opponent) must be contiguous, as the encoder
    fills them in one loop."""
    sl = encoder.slices
    if set(sl) != {*FIELD_ORDER, "opponents"}:  # the kernel writes every entry of these
        raise ValueError(f"observation layout: the kernel knows {FIELD_ORDER}, not {list(sl)}")
    if sl["opponents"].start != sl["own_status"].stop or OWN_FEATURES != 5:
        raise ValueError("observation layout: own_status must directly precede opponents")
    return np.array([sl[name].start for name in FIELD_ORDER], np.int64)


def encoder_for(num_players: int, rules: Rules) -> ObservationEncoder:
    return ObservationEncoder(num_players, rules)


@inner
def _refresh_scores(st: Any, scaled: Any, n: int, b: int, me: int) -> None:
    """Row ``me`` of the scaled-score cache: own score, then each opponent's minus own."""
    a = st[b, S_POINTS + me]
    k = st[b, S_PRESSURES + me]
    scaled[b, me, 0] = scale_diff(a, k, np.int64(0))  # a + 5 * (2**k - 1)
    for i in range(1, n):
        q = (me + i) % n
        scaled[b, me, i] = scale_diff(st[b, S_POINTS + q] - a, st[b, S_PRESSURES + q], k)


@inner
def write_observation(
    st: Any, p: Any, sizes: Any, o: Any, scaled: Any, b: int, me: int, out: Any
) -> None:
    """``out[b]`` := ``ObservationEncoder.encode(game b, seat me)``."""
    n = p[P_PLAYERS]
    # The offsets as locals: the stores below cannot change them (faster loops).
    hand, top, suit, phase_at, seen = o[O_HAND], o[O_TOP], o[O_SUIT], o[O_PHASE], o[O_SEEN]
    dealer, seats, stock, progress = o[O_DEALER], o[O_SEATS], o[O_STOCK], o[O_PROGRESS]
    for k in range(NUM_CARDS):  # the one-hot fields; every other entry is written below
        out[b, top + k] = 0.0
    for k in range(4):
        out[b, suit + k] = 0.0
        out[b, phase_at + k] = 0.0
    for k in range(n):
        out[b, dealer + k] = 0.0
    one, two = st[b, HELD1 + me], st[b, HELD2 + me]
    seen1, seen2 = st[b, SEEN1], st[b, SEEN2]
    row_hand = out[b, hand : hand + NUM_CARDS]  # views: unsigned-free indexing, vector loops
    row_seen = out[b, seen : seen + NUM_CARDS]
    for c in range(NUM_CARDS):
        row_hand[c] = ((one >> c) & 1) + ((two >> c) & 1)
        row_seen[c] = ((seen1 >> c) & 1) + ((seen2 >> c) & 1)
    out[b, top + st[b, I_TOP]] = 1.0
    out[b, suit + st[b, I_ACTIVE_SUIT]] = 1.0
    out[b, dealer + (st[b, I_DEALER] - me + n) % n] = 1.0
    phase = st[b, I_PHASE]
    if phase < PHASE_GAME_OVER:
        out[b, phase_at + phase] = 1.0
    out[b, o[O_EXTRA]] = st[b, I_EXTRA_PLAY]
    out[b, o[O_KING]] = st[b, I_KING_LEFT] / 3
    out[b, o[O_COUNT]] = st[b, I_COUNT] / 10
    out[b, o[O_JACK]] = st[b, I_JACK_RUN] / 4
    out[b, o[O_DIRECTION]] = st[b, I_DIRECTION]
    bit = 1 << me
    if st[b, I_DIRTY] & bit:
        _refresh_scores(st, scaled, n, b, me)
        st[b, I_DIRTY] &= ~bit
    q = me
    for i in range(n):
        at = seats + 5 * i
        out[b, at] = st[b, S_HAND_LEN + q] / 10
        out[b, at + 1] = min(st[b, S_PRESSURES + q], PRESSURE_CAP) / 10
        out[b, at + 2] = st[b, S_PENDING + q]
        out[b, at + 3] = st[b, S_OUT + q]
        out[b, at + 4] = scaled[b, me, i]
        q = q + 1 if q + 1 < n else 0
    out[b, stock] = st[b, I_STOCK_LEN] / p[P_DECK_SIZE]
    hands = p[P_HANDS]
    h = st[b, I_HAND_INDEX]
    out[b, progress] = h / hands
    out[b, progress + 1] = (hands - h) / hands
    out[b, progress + 2] = sizes[min(h, hands - 1)] / 8


@entry
def observe(st: Any, p: Any, sizes: Any, o: Any, scaled: Any, seats: Any, out: Any) -> None:
    """``out[b]`` := the observation of seat ``seats[b]`` of game b; a negative seat means the
    acting seat (seat 0 once the game is over)."""
    st, p, sizes, o, scaled = unowned(st), unowned(p), unowned(sizes), unowned(o), unowned(scaled)
    out = unowned(out)
    for b in range(out.shape[0]):
        me = seats[b]
        if me < 0:
            me = max(st[b, I_CURRENT], 0)
        write_observation(st, p, sizes, o, scaled, b, me, out)
