"""One game of a VectorState as the Python engine's snapshot, and a Python Game into a row.

:func:`snapshot` writes exactly the dict of :meth:`Game.snapshot
<craits_env.Game.snapshot>` (docs/interface.md; ``Game.from_snapshot`` reads it back);
:func:`load_game` copies a :class:`~craits_env.Game` into a row, checking what the exact
int64 representation needs (``layout``): scores and the current hand's penalties must be
what play produces, the game must have its deal, and its generator (if any) be a PCG64.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..actions import (
    NO_PLAYER,
    NUM_ACTIONS,
    PHASE_CALL_SUIT,
    PHASE_DECLARE,
    PHASE_GAME_OVER,
    PHASE_NAMES,
)
from ..cards import CARD_STRS, NUM_CARDS, SUIT_CHARS
from ..engine import Game
from ..game_state import CTX_NORMAL, PENDING_ROLES
from ..scoring import PRESSURE_BASE, pressure_costs
from . import kernel
from . import layout as L
from .rng import export_state, load_state
from .state import VectorState

_EXACT = 1 << 53  # card points must stay below this (layout)
_BITS = np.arange(NUM_CARDS, dtype=np.int64)
_CARD_INDEX = {name: c for c, name in enumerate(CARD_STRS)}


def _strs(cards: Any) -> list[str]:
    if isinstance(cards, np.ndarray):
        cards = cards.tolist()
    return [CARD_STRS[c] for c in cards]


def copies(masks1: np.ndarray, masks2: np.ndarray) -> np.ndarray:
    """Copies of each card (``(k, 52)``) from the one-copy and two-copy bit masks (``(k,)``)."""
    return ((masks1[:, None] >> _BITS) & 1) + ((masks2[:, None] >> _BITS) & 1)


def _hands(counts: np.ndarray) -> list[list[str]]:
    """Every seat's cards from the copy counts ``(n, 52)``: ascending by index, with repeats."""
    seats, cards = np.nonzero(counts)
    repeat = counts[seats, cards]
    if repeat.max(initial=0) > 1:
        seats, cards = np.repeat(seats, repeat), np.repeat(cards, repeat)
    hands: list[list[str]] = [[] for _ in range(counts.shape[0])]
    for q, c in zip(seats.tolist(), cards.tolist(), strict=True):
        hands[q].append(CARD_STRS[c])
    return hands


def _seat_field(row: list[int], field: int, n: int) -> list[int]:
    return row[field : field + n]


def scores(state: VectorState, b: int) -> list[int]:
    row = state.st[b, : L.POINTS].tolist()
    n = state.num_players
    return [
        a + pressure_costs(0, k)
        for a, k in zip(
            _seat_field(row, L.S_POINTS, n), _seat_field(row, L.S_PRESSURES, n), strict=True
        )
    ]


def hand_points(state: VectorState, b: int) -> list[tuple[int, ...]]:
    """Finished hands' points; those before a :func:`load_game` come from the loaded game."""
    st = state.st
    n = state.num_players
    h = int(st[b, L.I_HAND_INDEX])
    first, past = 0, []
    loaded = state.loaded.get(b)
    if loaded is not None and loaded[0] == int(st[b, L.I_EPISODE]):
        first, past = loaded[1], list(loaded[2])
    rows = st[b, L.POINTS + 3 * n * first : L.POINTS + 3 * n * h].reshape(-1, n, 3).tolist()
    return past + [tuple(cards + pressure_costs(k0, k1) for cards, k0, k1 in hand) for hand in rows]


def reshuffles(state: VectorState, b: int) -> list[list[str]]:
    """This hand's reshuffle orders, each next-card-first (``snapshot()["reshuffles"]``)."""
    st = state.st
    if st[b, L.I_FIX] == L.ERROR_RLOG_FULL:
        raise RuntimeError(f"game {b}: the reshuffle log outgrew its bound")
    log = state.cd[b, L.RLOG : L.RLOG + int(st[b, L.I_RLOG_LEN])].tolist()
    orders, pos = [], 0
    for _ in range(int(st[b, L.I_NUM_RESHUFFLES])):
        k = log[pos]
        orders.append(_strs(log[pos + 1 : pos + 1 + k]))
        pos += 1 + k
    return orders


def legal_actions(state: VectorState, b: int) -> list[int]:
    """Game ``b``'s legal action ids, ascending (``Game.legal_actions``)."""
    row = np.zeros(NUM_ACTIONS, np.int8)
    kernel.mask_row(state.st, state.params, b, row)
    return np.flatnonzero(row).tolist()


def snapshot(state: VectorState, b: int, legal: list[int] | None = None) -> dict[str, Any]:
    """``Game.snapshot()`` of game ``b`` (god's view); ``legal``: its legal actions, if known."""
    st, cd = state.st, state.cd
    n = state.num_players
    rules = state.rules
    row = st[b, : L.POINTS].tolist()
    phase = row[L.I_PHASE]
    over = phase == PHASE_GAME_OVER
    h = row[L.I_HAND_INDEX]
    total = scores(state, b)
    best = min(total)
    pending = phase in (PHASE_CALL_SUIT, PHASE_DECLARE)
    declarers = row[L.DECLARERS : L.DECLARERS + row[L.I_NUM_DECLARERS]]
    cards = cd[b, : L.RLOG]
    return {
        "num_players": n,
        "hand_index": h,
        "dealer": row[L.I_DEALER],
        "current_player": None if over else row[L.I_CURRENT],
        "phase": PHASE_NAMES[phase],
        "direction": row[L.I_DIRECTION],
        "top": CARD_STRS[row[L.I_TOP]],
        "active_suit": SUIT_CHARS[row[L.I_ACTIVE_SUIT]],
        "count": row[L.I_COUNT],
        "hands": _hands(copies(st[b, L.HELD1 : L.HELD1 + n], st[b, L.HELD2 : L.HELD2 + n])),
        "stock": _strs(cards[L.STOCK : L.STOCK + row[L.I_STOCK_LEN]][::-1]),
        "discard": _strs(cards[L.DISCARD : L.DISCARD + row[L.I_DISCARD_LEN]]),
        "scores": total,
        "shuffle_pressures": _seat_field(row, L.S_PRESSURES, n),
        "hand_points": [list(points) for points in hand_points(state, b)],
        "went_out": row[L.S_OUT_ORDER : L.S_OUT_ORDER + row[L.I_NUM_OUT]],
        "deal": _strs(cards[L.DEAL : L.DEAL + len(state.deck)]),
        "reshuffles": reshuffles(state, b),
        "hand_size": rules.hand_sizes[min(h, len(rules.hand_sizes) - 1)],
        "first_dealer": row[L.I_FIRST_DEALER],
        "legal_actions": legal_actions(state, b) if legal is None else legal,
        "extra_play": row[L.I_EXTRA_PLAY] != 0,
        "king_cards_left": row[L.I_KING_LEFT],
        "jack_run": row[L.I_JACK_RUN],
        "one_card_penalty_pending": [v != 0 for v in _seat_field(row, L.S_PENDING, n)],
        "hand_decisions": row[L.I_HAND_DECISIONS],
        "drawn": _seat_field(row, L.S_DRAWN, n),
        "winners": [q for q in range(n) if total[q] == best] if over else None,
        "rules": state.rules_dict | {"hand_sizes": list(rules.hand_sizes)},
        "deal_declarations_left": declarers[::-1],
        "pending_role": PENDING_ROLES[row[L.I_PEND_CTX]] if pending else None,
    }


def _fail(what: str, why: str) -> None:
    raise ValueError(f"load_game: {what}: {why}")


def _pressures_at_deal(penalty: int, k: int, q: int) -> int:
    """The pressures seat ``q`` had when the hand was dealt, from this hand's penalties."""
    if penalty % PRESSURE_BASE == 0:
        rest = (1 << k) - penalty // PRESSURE_BASE  # 2**k0
        if rest >= 1 and rest & (rest - 1) == 0:
            return rest.bit_length() - 1
    _fail(
        f"seat {q}", f"this hand's penalties {penalty} are not {PRESSURE_BASE} * (2**{k} - 2**k0)"
    )
    return 0  # unreachable


def load_game(
    state: VectorState,
    b: int,
    g: Game,
    generator_state: Mapping[str, Any] | None,
    *,
    determinized: bool = False,
) -> None:
    """Row ``b`` := a copy of ``g`` (every field the kernels read); ``ValueError`` before any
    change if ``g`` does not fit. Its generator: ``generator_state``, else ``g``'s own, else
    (a game rebuilt from a snapshot without ``"resume"``) row ``b``'s goes on.
    ``determinized=True`` also takes a copy whose deal is unknown (:meth:`Game.determinized
    <craits_env.Game.determinized>`, for search rollouts: ``craits.agents.search_rollouts``);
    the row's deal is then zeros, not a real deck order."""
    n = state.num_players
    if not isinstance(g, Game):
        _fail("game", f"got {type(g).__name__}, allowed a craits_env.Game")
    if g.num_players != n or g.rules != state.rules:
        _fail("game", "its players or rules differ from this table's")
    h = g.hand_index
    snap = g.snapshot(resume=True)  # what the Python game says of itself: public
    resume = snap["resume"]
    deal = [_CARD_INDEX[c] for c in snap["deal"]]
    if not (determinized and not deal) and len(deal) != len(state.deck):
        _fail("game", "its deal is unknown (a determinized copy)")
    if resume["scheduled_deals"] or resume["scheduled_reshuffles"]:
        _fail("game", "it has scripted deck orders (deals=, reshuffles=) still to use")
    if generator_state is None:  # the game's own generator, else the row's goes on
        generator_state = resume["generator"] or export_state(state.st, b)
    points, k0 = [], []
    for q in range(n):
        k = g.shuffle_pressures[q]
        a = g.scores[q] - pressure_costs(0, k)
        if abs(a) >= _EXACT:
            why = f"{g.scores[q]} is not card points plus {PRESSURE_BASE} * (2**{k} - 1)"
            _fail(f"scores[{q}]", why)
        points.append(a)
        # This hand's penalties: the score beyond the finished hands' points.
        penalties = g.scores[q] - sum(hand[q] for hand in g.hand_points)
        k0.append(_pressures_at_deal(penalties, k, q))
    log: list[int] = []
    for order in snap["reshuffles"]:
        log += [len(order), *(_CARD_INDEX[c] for c in order)]
    if len(log) > state.cd.shape[1] - L.RLOG:
        _fail("game", "its reshuffles of this hand exceed the reshuffle log")
    declarers = snap["deal_declarations_left"][::-1]  # a stack, the next to declare last
    role = snap["pending_role"]
    row = np.zeros(state.st.shape[1], np.int64)
    load_state(row[None], 0, generator_state)  # checks the kind of generator first
    scalars = {
        L.I_HAND_INDEX: h,
        L.I_DEALER: g.dealer,
        L.I_FIRST_DEALER: g.first_dealer,
        L.I_DIRECTION: g.direction,
        L.I_CURRENT: -1 if g.current_player == NO_PLAYER else g.current_player,
        L.I_PHASE: g.phase,
        L.I_ACTIVE_SUIT: g.active_suit,
        L.I_COUNT: g.count,
        L.I_JACK_RUN: g.jack_run,
        L.I_KING_LEFT: g.king_left,
        L.I_EXTRA_PLAY: int(g.extra_play),
        L.I_HAND_DECISIONS: g.hand_decisions,
        # The card waiting for its suit call or declaration is the top (read only then).
        L.I_PEND_CARD: g.discard[-1],
        L.I_PEND_CTX: CTX_NORMAL if role is None else PENDING_ROLES.index(role),
        L.I_TOP: g.discard[-1],
        L.I_NUM_OUT: len(g.went_out),
        L.I_STOCK_LEN: g.stock_size,
        L.I_DISCARD_LEN: len(g.discard),
        L.I_NUM_DECLARERS: len(declarers),
        L.I_NUM_RESHUFFLES: len(snap["reshuffles"]),
        L.I_RLOG_LEN: len(log),
        L.I_DIRTY: -1,
        L.I_STEP_HAND: h,
        L.I_EPISODE: int(state.st[b, L.I_EPISODE]) + 1,
    }
    for key, value in scalars.items():
        row[key] = value
    fields = {
        L.S_POINTS: points,
        L.S_PRESSURES: g.shuffle_pressures,
        L.S_PRESSURES_AT_DEAL: k0,
        L.S_DRAWN: g.drawn,
        L.S_PENDING: [int(v) for v in g.one_card_penalty_pending],
        L.S_HAND_LEN: [len(hand) for hand in g.hands],
        L.S_OUT: [int(q in g.went_out) for q in range(n)],
        L.HELD1: [sum(1 << c for c in set(hand)) for hand in g.hands],
        L.HELD2: [sum(1 << c for c in set(hand) if hand.count(c) > 1) for hand in g.hands],
    }
    for start, values in fields.items():
        row[start : start + n] = values
    row[L.S_OUT_ORDER : L.S_OUT_ORDER + len(g.went_out)] = g.went_out
    row[L.SEEN1] = sum(1 << c for c in set(g.discard))
    row[L.SEEN2] = sum(1 << c for c in set(g.discard) if g.discard.count(c) > 1)
    row[L.DECLARERS : L.DECLARERS + len(declarers)] = declarers
    cards = np.zeros(state.cd.shape[1], np.uint8)
    cards[L.STOCK : L.STOCK + g.stock_size] = g.stock[::-1]  # next card last
    cards[L.DISCARD : L.DISCARD + len(g.discard)] = g.discard
    cards[L.DEAL : L.DEAL + len(deal)] = deal
    cards[L.RLOG : L.RLOG + len(log)] = log
    state.st[b] = row
    state.cd[b] = cards
    state.loaded[b] = (int(row[L.I_EPISODE]), h, list(g.hand_points))
