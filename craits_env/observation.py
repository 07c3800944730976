"""The observation of one seat: one flat float32 vector filled through named slices.

:class:`ObservationEncoder` owns the layout. It encodes only what the seat may
know (R11): its own hand, the public table, and public facts about the other
players — never an opponent's card or the order of the stock. Opponents come in
relative seat order: block ``k`` (0-based) describes the seat ``k + 1`` places
to the left (seat ``(me + k + 1) mod n``). ``n`` is the number of players.

Scores are scaled by ``sign(x) * ln(1 + |x| / 100)`` computed exactly on
Python integers and clipped to ±``SCORE_CLIP``, so the unbounded shuffle-pressure
costs (R10.1) can neither overflow float32 nor dominate the vector.

The slice table (a test checks it against the code; docs/environments.md repeats it):

| slice | size | content |
|---|---|---|
| `hand` | 52 | copies of each card (index R1.3) in your hand: 0, 1 or 2 |
| `top_card` | 52 | one-hot: the top card of the discard pile |
| `active_suit` | 4 | one-hot: the active suit c, d, h, s (R3.2) |
| `phase` | 4 | one-hot: play, count, call_suit, declare |
| `extra_play` | 1 | 1 if this play continues your turn (a 6, a king's sequence, a starter) |
| `king_cards_left` | 1 | cards still owed in a king's sequence (R9.3), / 3 |
| `count` | 1 | the count (R5), 0 when off, / 10 |
| `jack_run` | 1 | jacks played in a row, the last one on top of the discard pile (R9.1), / 4 |
| `direction` | 1 | direction of play: +1 left, -1 right |
| `own_status` | 5 | you: hand size / 10, shuffle pressures / 10, one-card penalty due, went out, score (scaled) |
| `opponents` | 5 × (n−1) | per opponent, relative seat order: hand size / 10, shuffle pressures / 10, one-card penalty due, went out, score minus yours (scaled) |
| `seen` | 52 | copies of each card in the discard pile: played since the last reshuffle (public memory) |
| `stock_size` | 1 | cards in the stock / cards in the deck |
| `hand_progress` | 3 | hand index / hands in the game, hands left / hands in the game, cards dealt this hand / 8 |
| `dealer` | n | one-hot: the dealer's seat relative to you (0 = you, 1 = your left, …) |
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .actions import NUM_ACTIONS, PHASE_GAME_OVER
from .deck import deck_cards
from .engine import Game
from .rules import Rules

SCORE_CLIP = 50.0
OWN_FEATURES = 5
OPPONENT_FEATURES = 5
_DECISION_PHASES = PHASE_GAME_OVER  # play, count, call_suit, declare: the phases before it
_MASK_CACHE = 4096  # masks of recently seen legal sets
_MASKS: dict[tuple[int, ...], np.ndarray] = {}


def scale_score(x: int) -> float:
    """``sign(x) * ln(1 + |x|/100)``, exact for integers of any size, clipped to ±SCORE_CLIP."""
    if x == 0:
        return 0.0
    v = math.log(abs(x) + 100) - math.log(100)  # math.log takes big ints exactly
    return math.copysign(min(v, SCORE_CLIP), x)


@dataclass(frozen=True)
class Field:
    """One named slice of the observation."""

    name: str
    size_text: str  # as in the docstring table
    low: float
    high: float
    content: str

    def size(self, num_players: int) -> int:
        if self.size_text == "n":
            return num_players
        if "(n−1)" in self.size_text:
            return int(self.size_text.split("×")[0]) * (num_players - 1)
        return int(self.size_text)


FIELDS: tuple[Field, ...] = (
    Field("hand", "52", 0, 2, "copies of each card (index R1.3) in your hand: 0, 1 or 2"),
    Field("top_card", "52", 0, 1, "one-hot: the top card of the discard pile"),
    Field("active_suit", "4", 0, 1, "one-hot: the active suit c, d, h, s (R3.2)"),
    Field("phase", "4", 0, 1, "one-hot: play, count, call_suit, declare"),
    Field(
        "extra_play", "1", 0, 1,
        "1 if this play continues your turn (a 6, a king's sequence, a starter)",
    ),
    Field("king_cards_left", "1", 0, 1, "cards still owed in a king's sequence (R9.3), / 3"),
    Field("count", "1", 0, 10, "the count (R5), 0 when off, / 10"),
    Field("jack_run", "1", 0, 2, "jacks played in a row, the last one on top of the discard pile (R9.1), / 4"),
    Field("direction", "1", -1, 1, "direction of play: +1 left, -1 right"),
    Field(
        "own_status", "5", -SCORE_CLIP, SCORE_CLIP,
        "you: hand size / 10, shuffle pressures / 10, one-card penalty due, went out, "
        "score (scaled)",
    ),
    Field(
        "opponents", "5 × (n−1)", -SCORE_CLIP, SCORE_CLIP,
        "per opponent, relative seat order: hand size / 10, shuffle pressures / 10, "
        "one-card penalty due, went out, score minus yours (scaled)",
    ),
    Field(
        "seen", "52", 0, 2,
        "copies of each card in the discard pile: played since the last reshuffle "
        "(public memory)",
    ),
    Field("stock_size", "1", 0, 1, "cards in the stock / cards in the deck"),
    Field(
        "hand_progress", "3", 0, 8,
        "hand index / hands in the game, hands left / hands in the game, "
        "cards dealt this hand / 8",
    ),
    Field(
        "dealer", "n", 0, 1,
        "one-hot: the dealer's seat relative to you (0 = you, 1 = your left, …)",
    ),
)  # fmt: skip


def slice_table() -> str:
    """The Markdown slice table of the module docstring and docs/environments.md."""
    rows = ["| slice | size | content |", "|---|---|---|"]
    rows += [f"| `{f.name}` | {f.size_text} | {f.content} |" for f in FIELDS]
    return "\n".join(rows)


class ObservationEncoder:
    """Encodes a :class:`Game` from one seat's point of view (see the module docstring)."""

    def __init__(self, num_players: int, rules: Rules) -> None:
        self.num_players = num_players
        self.rules = rules
        self.slices: dict[str, slice] = {}
        start = 0
        low, high = [], []
        for f in FIELDS:
            size = f.size(num_players)
            self.slices[f.name] = slice(start, start + size)
            low += [f.low] * size
            high += [f.high] * size
            start += size
        self.size = start
        self.low = np.array(low, np.float32)
        self.high = np.array(high, np.float32)
        self._deck_size = len(deck_cards(rules.decks_for(num_players), rules.remove_kings_queens))
        self._offsets = {name: s.start for name, s in self.slices.items()}
        sl = self.slices
        self._block_a = slice(sl["extra_play"].start, sl["opponents"].stop)
        self._block_b = slice(sl["stock_size"].start, sl["hand_progress"].stop)
        self._score_cache: dict[tuple[tuple[int, ...], int], list[float]] = {}
        # The scalar fields must be contiguous for the two slice writes of encode().
        names = [f.name for f in FIELDS]
        assert names[names.index("extra_play") : names.index("opponents") + 1] == [
            "extra_play",
            "king_cards_left",
            "count",
            "jack_run",
            "direction",
            "own_status",
            "opponents",
        ]
        assert names[names.index("stock_size") : names.index("hand_progress") + 1] == [
            "stock_size",
            "hand_progress",
        ]

    def encode(self, game: Game, seat: int) -> np.ndarray:
        """The observation vector of ``seat`` (float32, length ``self.size``).

        Counts and one-hots are gathered as indices and counted by one
        ``np.bincount``; the scalar fields, which are contiguous in the layout,
        are written by two slice assignments.
        """
        o = self._offsets
        n = self.num_players
        h0, s0 = o["hand"], o["seen"]
        discard = game.discard
        phase = game.phase
        hits = [h0 + c for c in game.hands[seat]]
        hits += [s0 + c for c in discard]
        hits.append(o["top_card"] + discard[-1])
        hits.append(o["active_suit"] + game.active_suit)
        hits.append(o["dealer"] + (game.dealer - seat) % n)
        if phase < _DECISION_PHASES:
            hits.append(o["phase"] + phase)
        out = np.bincount(hits, minlength=self.size).astype(np.float32)
        hands = game.hands
        pressures = game.shuffle_pressures
        pending = game.one_card_penalty_pending
        went_out = game.went_out
        scaled = self._scaled_scores(game.scores, seat)
        block = [
            float(game.extra_play),
            game.king_left / 3,
            game.count / 10,
            game.jack_run / 4,
            float(game.direction),
        ]
        for i in range(n):
            s = (seat + i) % n
            block += (
                len(hands[s]) / 10,
                min(pressures[s], 50) / 10,
                float(pending[s]),
                float(s in went_out),
                scaled[i],
            )
        out[self._block_a] = block
        total = len(self.rules.hand_sizes)
        out[self._block_b] = (
            game.stock_size / self._deck_size,
            game.hand_index / total,
            (total - game.hand_index) / total,
            game.hand_size / 8,
        )
        return out

    def _scaled_scores(self, scores: list[int], seat: int) -> list[float]:
        """Own score, then each opponent's minus own, scaled; cached while scores are unchanged."""
        key = (tuple(scores), seat)
        cached = self._score_cache.get(key)
        if cached is None:
            n = self.num_players
            mine = scores[seat]
            cached = [scale_score(mine)]
            cached += [scale_score(scores[(seat + i) % n] - mine) for i in range(1, n)]
            if len(self._score_cache) > 4 * n:
                self._score_cache.clear()
            self._score_cache[key] = cached
        return cached


def legal_mask(legal: tuple[int, ...], out: np.ndarray | None = None) -> np.ndarray:
    """The action mask of ``legal``: 1 for each legal action id, 0 elsewhere (int8, 59).

    Returns a new array, or fills ``out`` (any array of 59: a row of a preallocated
    batch, ``bool`` or ``int8``) and returns it. The masks of recently seen legal sets
    are kept, so a mask costs one copy. A seat not to act gets ``legal_mask(())``: all zeros.
    """
    template = _MASKS.get(legal)
    if template is None:
        if len(_MASKS) >= _MASK_CACHE:
            _MASKS.clear()
        template = np.zeros(NUM_ACTIONS, np.int8)
        if legal:
            template[list(legal)] = 1
        template.flags.writeable = False
        _MASKS[legal] = template
    if out is None:
        return template.copy()
    out[...] = template
    return out
