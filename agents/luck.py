"""The luck-adjusted estimator: a game's score less what the cards did, in the manner of AIVAT.

A game of Craits is decided partly by play and partly by chance: every card dealt (R2.3), the
starter (R2.3, R2.5), every card drawn from the stock (R3.3, R4, R5.3, R7.1, R9) and every
reshuffle (R10.1). Given everything that has happened (every hand, the discard pile), the next
card out of the stock is uniform over the cards not yet revealed, so what a chance event did
can be measured: with a value function ``V`` of the full state, giving each seat's expected
points from here to the end of the hand, the event's **correction** is

    V(the state after the event) − mean over the cards it could have revealed of V(that state)

(each possible card weighted by its copies in the stock). Whatever ``V`` is, a correction has
mean zero given the history before its event, so a seat's **adjusted score** — its game score
(R8.6) less the sum of its corrections over the game — has the same expectation as the score,
and a smaller variance the better ``V`` predicts the points the cards bring (Burch et al.,
"AIVAT", AAAI 2018). A reshuffle only refills the stock (R10.1): its order is revealed card by
card, each draw corrected as any other.

``V`` (:class:`ValueModel`) is a small network trained offline on zoo games
(``experiments/luck_model.py``, its command and seeds in the file's ``meta``), frozen and
shipped as ``weights/luck_value.npz``: numpy only, its arrays' sha256 checked on load against
:data:`MODEL_SHA256`. Its inputs are :mod:`craits.agents.luck_features`'. Where a draw is made
by a decision that ends the hand (the count that ends it, R6.2; the cards a last 5 or 7 makes
the others draw, R6.1), ``V`` is exact: the hands are scored right after (R8.2–R8.4).

>>> from craits_env import Game, Rules
>>> from craits_env.records import GameRecorder
>>> game = Game(4, Rules(hand_sizes=(3, 2)), seed=7)
>>> recorder = GameRecorder(game, ["random"] * 4)
>>> while not game.is_over:
...     _ = recorder.apply(game.legal_actions()[0])
>>> luck = LuckEstimator().game(recorder.record())
>>> bool(abs(sum(luck.adjusted) - sum(game.scores) + luck.corrections.sum()) < 1e-6)
True
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from craits_env.cards import CARD_STRS, NUM_CARDS, RANK_OF, SUIT_OF, Rank
from craits_env.deck import deck_cards
from craits_env.engine import Game
from craits_env.events import Dealt, Drew, Event, HandScored, Played, Reshuffled
from craits_env.records import replay
from craits_env.rules import Rules

from .luck_features import (
    CARD_POINTS_52,
    COUNTABLE,
    INPUTS,
    RANK_OF_CARD,
    SEAT_FEATURES,
    STAGE_DEAL,
    STAGE_END,
    STAGE_PLAY,
    STAGE_STARTER,
    STOCK_FEATURES,
    WILD,
    Context,
    hand_points,
    playable_mask,
    seat_features,
    views,
)

FORMAT = "craits-luck-value"
VERSION = 1
MODEL_FILE = Path(__file__).resolve().parent / "weights" / "luck_value.npz"
MODEL_SHA256 = "a360e06f72b894483ecfd8349eb6e20a4aeccec1ecf700f6c084a7f88268364a"
"""The sha256 of the shipped value model's arrays (:func:`weights_hash`): a file whose
arrays hash otherwise is refused."""
SCALE = 100.0
"""The network predicts points / SCALE."""
_SUIT = np.array(SUIT_OF)
CHUNK = 4096  # candidate states evaluated per network call (bounds the memory)


def array_names(layers: int) -> tuple[str, ...]:
    """``w0, b0, …, lin``: a model's arrays, ``layers`` linear layers (the last one the head),
    then ``lin``, the linear term of the inputs added to the head's output."""
    return (*(f"{k}{i}" for i in range(layers) for k in "wb"), "lin")


def _layers(arrays: dict[str, Any]) -> int:
    return sum(1 for name in arrays if name.startswith("w"))


class LuckError(ValueError):
    """A value model that cannot be used, or a game that cannot be adjusted (one line)."""


# ----------------------------------------------------------------------------- the model


def weights_hash(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 over each array's name, dtype, shape and bytes, in :data:`ARRAYS` order."""
    h = hashlib.sha256()
    for name in array_names(_layers(arrays)):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}:{a.dtype.str}:{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def model_bytes(arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> bytes:
    """The ``.npz`` file of a value model (float32 arrays named :func:`array_names`, and
    ``meta`` with ``weights_sha256`` added): the same bytes for the same weights."""
    names = array_names(_layers(arrays))
    if sorted(names) != sorted(arrays):
        raise LuckError(f"value model: got arrays {sorted(arrays)}, expected {list(names)}")
    arrays = {k: np.ascontiguousarray(arrays[k], np.float32) for k in names}
    meta = {**meta, "format": FORMAT, "version": VERSION, "weights_sha256": weights_hash(arrays)}
    entries = [*arrays.items(), ("meta", np.array(json.dumps(meta, sort_keys=True)))]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for name, array in entries:
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, array, allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            z.writestr(info, buffer.getvalue())
    return out.getvalue()


@dataclass(frozen=True)
class ValueModel:
    """``V``: ReLU layers and a linear head over :data:`~craits.agents.luck_features.INPUTS`
    features plus a linear term of the features, predicting a seat's points to the end of the
    hand (÷ :data:`SCALE`)."""

    arrays: dict[str, np.ndarray]
    meta: dict[str, Any]

    @property
    def sha256(self) -> str:
        return str(self.meta["weights_sha256"])

    @property
    def layers(self) -> int:
        return _layers(self.arrays)

    def first(self, x: np.ndarray) -> np.ndarray:
        """The first layer's pre-activation for inputs ``(..., INPUTS)``."""
        return x @ self.arrays["w0"] + self.arrays["b0"]

    @property
    def lin(self) -> np.ndarray:
        """``(INPUTS,)``: the linear term (points / SCALE per unit of each input)."""
        return self.arrays["lin"]

    def rest(self, h: np.ndarray) -> np.ndarray:
        """Points to the end of the hand from the first layer's pre-activation ``(..., W)``,
        without the linear term."""
        a = self.arrays
        shape = h.shape[:-1]
        h = h.reshape(-1, h.shape[-1])
        for i in range(1, self.layers):
            h = np.maximum(h, 0)
            h = h @ a[f"w{i}"] + a[f"b{i}"]
        return (h[:, 0] * SCALE).reshape(shape)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Points to the end of the hand for inputs ``(..., INPUTS)``."""
        return self.rest(self.first(x)) + (x @ self.lin) * SCALE


def read_model(path: str | Path, expected: str | None = None) -> ValueModel:
    """The value model in ``path``; :class:`LuckError` (one line) for a missing, unreadable or
    altered file, or one whose arrays do not hash to ``expected`` (when given)."""
    where = f"luck value model {path}"
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {name: z[name] for name in z.files}
        meta = json.loads(str(arrays.pop("meta")))
    except FileNotFoundError:
        raise LuckError(f"{where}: no such file") from None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
        raise LuckError(f"{where}: not a readable model file ({type(e).__name__})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise LuckError(f"{where}: not a {FORMAT} file")
    if meta.get("version") != VERSION or meta.get("inputs") != INPUTS:
        raise LuckError(
            f"{where}: version {meta.get('version')!r} with {meta.get('inputs')!r} inputs; "
            f"this code reads version {VERSION} with {INPUTS}"
        )
    names = array_names(_layers(arrays))
    if sorted(arrays) != sorted(names) or len(names) < 5:
        raise LuckError(f"{where}: arrays {sorted(arrays)}, expected w0, b0, w1, b1, …")
    found = weights_hash(arrays)
    if found != meta.get("weights_sha256") or (expected is not None and found != expected):
        want = expected or meta.get("weights_sha256")
        raise LuckError(
            f"{where}: its arrays hash to {found[:16]}…, expected {str(want)[:16]}… "
            "(an altered or another model)"
        )
    arrays = {k: v.astype(np.float32) for k, v in arrays.items()}
    return ValueModel(arrays, meta)


@functools.cache
def default_model() -> ValueModel:
    """The shipped value model, checked against :data:`MODEL_SHA256` (read once)."""
    return read_model(MODEL_FILE, MODEL_SHA256)


# ----------------------------------------------------------------------------- chance events


@dataclass
class ChanceEvents:
    """Every chance event of one game, in order (arrays with one entry per event)."""

    num_players: int
    rules: Rules
    hand: np.ndarray
    stage: np.ndarray
    recipient: np.ndarray
    """the seat that got the card (-1: the starter)"""
    card: np.ndarray
    hands: np.ndarray
    """(events, n, 52) every seat's cards just before the event"""
    unrevealed: np.ndarray
    """(events, 52) the cards the event could reveal (the stock, with copies)"""
    context: Context
    """the scalars after the event (the starter's top card is the card it reveals)"""
    accrued: np.ndarray
    """(events, n) the shuffle pressures each seat has paid in the hand so far (R10.1)"""
    hand_points: np.ndarray
    """(hands, n) each finished hand's points (R8, penalties included)"""
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.card)

    def remaining(self) -> np.ndarray:
        """(events, n): the points each seat went on to score in the event's hand, less the
        pressures already paid in it (the value model's training target)."""
        finished = self.hand < len(self.hand_points)
        out = np.full((len(self), self.num_players), np.nan, dtype=np.float32)
        out[finished] = self.hand_points[self.hand[finished]] - self.accrued[finished]
        return out


class _Tracker:
    """Follows a replay's events and notes every chance event (see :func:`chance_events`)."""

    def __init__(self, num_players: int, rules: Rules) -> None:
        self.n = num_players
        self.rules = rules
        self.deck = np.bincount(
            deck_cards(rules.decks_for(num_players), rules.remove_kings_queens),
            minlength=NUM_CARDS,
        ).astype(np.int8)
        self.hands = np.zeros((num_players, NUM_CARDS), np.int8)
        self.unrevealed = self.deck.copy()
        self.accrued = np.zeros(num_players, np.int64)
        self.hand = -1
        self.rows: list[tuple[Any, ...]] = []
        self.points: list[tuple[int, ...]] = []

    def take(self, game: Game, events: Sequence[Event]) -> None:
        """Note the chance events of ``events``, which brought ``game`` where it stands."""
        # A draw made by a decision that ends its hand (a hand_end follows it before any deal)
        # is valued exactly; any other draw sees the table as the decision left it.
        ends = [False] * len(events)
        flag = False
        for k in range(len(events) - 1, -1, -1):
            ends[k] = flag
            if isinstance(events[k], HandScored):
                flag = True
            elif isinstance(events[k], Dealt):
                flag = False
        after = game_context(game)
        for k, e in enumerate(events):
            if isinstance(e, Dealt):
                self._deal(e)
            elif isinstance(e, Played):
                self.hands[e.seat, e.card] -= 1
            elif isinstance(e, Drew):
                exact = ends[k] or after is None
                ctx, pending = _ENDING if exact else after  # type: ignore[misc]
                for card in e.cards or ():
                    self._note(STAGE_END if exact else STAGE_PLAY, e.seat, card, ctx, pending)
            elif isinstance(e, Reshuffled):
                self.accrued[e.seat] += e.cost
                self.unrevealed[:] = np.bincount(list(e.cards), minlength=NUM_CARDS)
            elif isinstance(e, HandScored):
                self.points.append(tuple(e.points))
                for seat, cards in enumerate(e.hands):  # the tracking checked at every hand's end
                    if not np.array_equal(self.hands[seat], np.bincount(cards, minlength=52)):
                        raise LuckError(f"hand {self.hand + 1}: seat {seat}'s cards went astray")

    def _deal(self, e: Dealt) -> None:
        n = self.n
        self.hand = e.hand_index
        self.hands[:] = 0
        self.unrevealed[:] = self.deck
        self.accrued[:] = 0
        order = e.order
        if order is None:
            raise LuckError("a deal without its deck order (a seat's public view of a game)")
        dealt = n * e.hand_size
        base = (e.dealer, e.direction, e.hand_size, e.dealer, 0)
        quiet = (False,) * n
        for j in range(dealt):
            seat = (e.dealer + e.direction * (1 + j % n)) % n
            self._note(STAGE_DEAL, seat, order[j], (*base, -1, -1, 0), quiet)
        starter = order[dealt]
        ctx = (*base, starter, SUIT_OF[starter], int(RANK_OF[starter] == Rank.JACK))
        self._note(STAGE_STARTER, -1, starter, ctx, quiet)

    def _note(
        self, stage: int, seat: int, card: int, ctx: tuple[int, ...], pending: tuple[bool, ...]
    ) -> None:
        if self.unrevealed[card] <= 0:
            raise LuckError(
                f"hand {self.hand + 1}: card {CARD_STRS[card]} revealed with no copy left "
                "unrevealed (a game these events do not describe)"
            )
        self.rows.append(
            (
                self.hand,
                stage,
                seat,
                card,
                self.hands.copy(),
                self.unrevealed.copy(),
                ctx,
                pending if len(pending) == self.n else (False,) * self.n,
                self.accrued.copy(),
            )
        )
        self.unrevealed[card] -= 1
        if seat >= 0:
            self.hands[seat, card] += 1

    def result(self, scores: Sequence[int]) -> ChanceEvents:
        n = self.n
        rows = self.rows
        ctx = np.array([r[6] for r in rows], dtype=np.int64).reshape(len(rows), 8)
        return ChanceEvents(
            num_players=n,
            rules=self.rules,
            hand=np.array([r[0] for r in rows], dtype=np.int64),
            stage=np.array([r[1] for r in rows], dtype=np.int64),
            recipient=np.array([r[2] for r in rows], dtype=np.int64),
            card=np.array([r[3] for r in rows], dtype=np.int64),
            hands=np.array([r[4] for r in rows], dtype=np.int8).reshape(len(rows), n, NUM_CARDS),
            unrevealed=np.array([r[5] for r in rows], dtype=np.int8).reshape(len(rows), NUM_CARDS),
            context=Context(
                stage=np.array([r[1] for r in rows], dtype=np.int64),
                dealer=ctx[:, 0],
                direction=ctx[:, 1],
                hand_size=ctx[:, 2],
                current=ctx[:, 3],
                count=ctx[:, 4],
                top=ctx[:, 5],
                active_suit=ctx[:, 6],
                jack_run=ctx[:, 7],
                pending=np.array([r[7] for r in rows], dtype=np.float32).reshape(len(rows), n),
            ),
            accrued=np.array([r[8] for r in rows], dtype=np.float32).reshape(len(rows), n),
            hand_points=np.array(self.points, dtype=np.float32).reshape(len(self.points), n),
            scores=np.array(scores, dtype=np.float32),
        )


_ENDING: tuple[tuple[int, ...], tuple[bool, ...]] = ((0, 1, 0, 0, 0, -1, -1, 0), ())


def game_context(game: Game) -> tuple[tuple[int, ...], tuple[bool, ...]] | None:
    """The play-stage scalars of ``game`` as it stands (``None`` once it is over): the same
    whatever cards the draws of its last decision brought (no draw's card decides who acts
    next, R3.3, R5.3, R4, R7.1, R9)."""
    if game.is_over:
        return None
    ctx = (
        game.dealer,
        game.direction,
        game.hand_size,
        game.current_player,
        game.count,
        game.top,
        game.active_suit,
        game.jack_run,
    )
    return ctx, tuple(game.one_card_penalty_pending)


def chance_events(record: dict[str, Any]) -> ChanceEvents:
    """Every chance event of a game record (:mod:`craits_env.records`), replayed and checked
    (:class:`~craits_env.records.RecordError` for a record that does not replay)."""
    n = int(record["num_players"])
    tracker = _Tracker(n, Rules.from_dict(record["rules"]))
    game = replay(
        record,
        on_start=lambda g, events: tracker.take(g, events),
        on_decision=lambda g, _p, _a, events: tracker.take(g, events),
    )
    return tracker.result(game.scores)


# ----------------------------------------------------------------------------- the estimator


@dataclass(frozen=True)
class GameLuck:
    """What the cards did in one game, per seat (arrays of ``num_players``)."""

    scores: np.ndarray
    corrections: np.ndarray
    """the sum of each seat's corrections over the game's chance events"""
    events: int
    """chance events corrected"""

    @property
    def adjusted(self) -> np.ndarray:
        """Each seat's score less its corrections (the luck-adjusted score)."""
        return self.scores - self.corrections


def candidates(ev: ChanceEvents) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every card each event could have revealed: ``(event, card, weight)`` per candidate,
    the weight its copies in the stock over the stock's size (a uniform next card)."""
    event, card = np.nonzero(ev.unrevealed > 0)
    copies = ev.unrevealed[event, card].astype(np.float64)
    weight = copies / ev.unrevealed.sum(axis=1)[event]
    return event, card, weight


def states(
    ev: ChanceEvents, event: np.ndarray, card: np.ndarray
) -> tuple[np.ndarray, Context, np.ndarray]:
    """The states after event ``event[i]`` had revealed ``card[i]``: every seat's cards
    ``(k, n, 52)``, the scalars, the stock left ``(k, 52)``."""
    rows = len(event)
    hands = ev.hands[event].astype(np.float32)
    seat = ev.recipient[event]
    given = seat >= 0
    hands[np.nonzero(given)[0], seat[given], card[given]] += 1
    ctx = _select(ev.context, event)
    starter = ctx.stage == STAGE_STARTER  # the card revealed is the top card
    ctx.top = np.where(starter, card, ctx.top)
    ctx.active_suit = np.where(starter, _SUIT[card], ctx.active_suit)
    unrevealed = ev.unrevealed[event].astype(np.float32)
    unrevealed[np.arange(rows), card] -= 1
    return hands, ctx, unrevealed


def inputs(ev: ChanceEvents, event: np.ndarray, card: np.ndarray) -> np.ndarray:
    """``(k, n, INPUTS)``: the value model's inputs for the states of :func:`states`."""
    hands, ctx, unrevealed = states(ev, event, card)
    return views(seat_features(hands, ctx, ev.rules), unrevealed, ctx, ev.num_players)


def values(model: ValueModel, ev: ChanceEvents, event: np.ndarray, card: np.ndarray) -> np.ndarray:
    """``(len(event), n)``: every seat's value of the state after event ``event[i]`` had
    revealed ``card[i]`` (the value model, or the exact points of a hand that ends there)."""
    n, rules = ev.num_players, ev.rules
    out = np.empty((len(event), n), dtype=np.float64)
    for lo in range(0, len(event), CHUNK):
        e, c = event[lo : lo + CHUNK], card[lo : lo + CHUNK]
        hands, ctx, unrevealed = states(ev, e, c)
        exact = ctx.stage == STAGE_END
        v = np.empty((len(e), n), dtype=np.float64)
        if exact.any():
            ranks = hands[exact].reshape(-1, NUM_CARDS) @ RANK_OF_CARD
            v[exact] = hand_points(ranks, rules).reshape(-1, n)
        learnt = np.nonzero(~exact)[0]
        if len(learnt):
            sub = _select(ctx, learnt)
            x = views(seat_features(hands[learnt], sub, rules), unrevealed[learnt], sub, n)
            v[learnt] = model(x)
        out[lo : lo + len(e)] = v
    return out


def recipient_values(
    model: ValueModel, ev: ChanceEvents, event: np.ndarray, card: np.ndarray
) -> np.ndarray:
    """:func:`values` for events whose card goes to a seat's hand (a deal, a draw in play),
    faster: only the recipient's hand and the stock differ between the cards an event could
    reveal, so the first layer is computed once per event and view (at the card revealed)
    and moved by the recipient's and the stock's features for each other card."""
    n = ev.num_players
    if len(event) == 0:
        return np.empty((0, n))
    events, local = np.unique(event, return_inverse=True)
    actual = inputs(ev, events, ev.card[events])  # (E, n, INPUTS)
    base = model.first(actual)  # (E, n, W)
    seat = ev.recipient[event]
    rows = np.arange(len(event))
    hands = ev.hands[event, seat].astype(np.float32)[:, None, :]
    hands[rows, 0, card] += 1
    ctx = _select(ev.context, event)
    ctx.pending = ctx.pending[rows, seat][:, None]
    mask = playable_mask(_select(ev.context, events))[local]
    mine = seat_features(hands, ctx, ev.rules, mask)[:, 0]
    delta = mine - actual[local, seat, :SEAT_FEATURES]
    # the stock's features (mean points, wilds, aces and twos left) move with the card
    unrevealed = ev.unrevealed[event].astype(np.float32)
    left = np.maximum(unrevealed.sum(axis=1) - 1, 1)
    stock = np.stack([CARD_POINTS_52 / 50, WILD, COUNTABLE], axis=1)  # (52, 3)
    shift = (stock[ev.card[event]] - stock[card]) / left[:, None]
    d = ctx.direction[:, None]
    # where the recipient sits in each seat's view: own, next, previous, among the others
    me = np.arange(n)[None, :]
    r = seat[:, None]
    coef = np.zeros((len(event), n, 4), dtype=np.float32)
    coef[:, :, 0] = me == r
    coef[:, :, 1] = r == (me + d) % n
    coef[:, :, 2] = r == (me - d) % n
    if n > 3:
        coef[:, :, 3] = (1 - coef[:, :, 0] - coef[:, :, 1] - coef[:, :, 2]) / (n - 3)
    lo = 4 * SEAT_FEATURES + STOCK_FEATURES
    w0 = model.arrays["w0"]
    width = w0.shape[1]
    slots = w0[: 4 * SEAT_FEATURES].reshape(4, SEAT_FEATURES, width).transpose(1, 0, 2)
    moved = (delta @ slots.reshape(SEAT_FEATURES, 4 * width)).reshape(-1, 4, width)
    h = base[local] + np.matmul(coef, moved)
    h += (shift @ w0[lo : lo + 3])[:, None, :]
    lin = model.lin
    slot_lin = delta @ lin[: 4 * SEAT_FEATURES].reshape(4, SEAT_FEATURES).T  # (q, 4)
    linear = (actual @ lin)[local] + np.matmul(coef, slot_lin[:, :, None])[:, :, 0]
    linear += (shift @ lin[lo : lo + 3])[:, None]
    return (model.rest(h) + linear * SCALE).astype(np.float64)


def _select(ctx: Context, index: np.ndarray) -> Context:
    return Context(**{k: getattr(ctx, k)[index] for k in ctx.__dataclass_fields__})


class LuckEstimator:
    """Corrections and adjusted scores of recorded games (see the module docstring), with
    ``model`` (default: the shipped one, :func:`default_model`)."""

    def __init__(self, model: ValueModel | None = None) -> None:
        self.model = model or default_model()

    @property
    def model_id(self) -> str:
        """The value model's identity: the first 16 hex digits of its sha256."""
        return self.model.sha256[:16]

    def events(self, ev: ChanceEvents) -> np.ndarray:
        """``(events, n)``: each chance event's correction for each seat."""
        event, card, weight = candidates(ev)
        stage = ev.stage[event]
        fast = (stage == STAGE_DEAL) | (stage == STAGE_PLAY)
        v = np.empty((len(event), ev.num_players))
        v[fast] = recipient_values(self.model, ev, event[fast], card[fast])
        v[~fast] = values(self.model, ev, event[~fast], card[~fast])
        expected = np.zeros((len(ev), ev.num_players))
        np.add.at(expected, event, v * weight[:, None])
        actual = np.nonzero(card == ev.card[event])[0]
        realized = np.zeros_like(expected)
        realized[event[actual]] = v[actual]
        return realized - expected

    def game(self, record: dict[str, Any]) -> GameLuck:
        """The corrections of a finished game record (:mod:`craits_env.records`)."""
        if not record.get("finished"):
            raise LuckError("an unfinished game cannot be adjusted (its score is not final)")
        ev = chance_events(record)
        corrections = self.events(ev).sum(axis=0)
        return GameLuck(ev.scores.astype(np.float64), corrections, len(ev))

    def adjusted_scores(self, record: dict[str, Any]) -> list[float]:
        """Each seat's luck-adjusted score in a finished game record."""
        return [float(x) for x in self.game(record).adjusted]


def feature_corrections(basis: ValueModel, ev: ChanceEvents) -> tuple[np.ndarray, np.ndarray]:
    """For fitting a value model's output layer to the variance it removes
    (``experiments/luck_model.py fit``): per hand and seat, the corrections that each feature
    ``[relu(first layer of basis), inputs]`` would make as a value function, summed over the
    hand's chance events, ``(hands, n, K)``; and the exact corrections of the draws that end
    a hand ``(hands, n)``. A value model ``V = features · beta`` corrects a hand by
    ``corrections · beta`` plus the exact part."""
    event, card, weight = candidates(ev)
    n = ev.num_players
    dealt = int(ev.hand.max()) + 1 if len(ev) else 0
    width = basis.arrays["w0"].shape[1]
    out = np.zeros((dealt, n, width + INPUTS))
    exact = np.zeros((dealt, n))
    coefficient = (card == ev.card[event]).astype(np.float64) - weight  # realized − expected
    for lo in range(0, len(event), CHUNK):
        e, c, a = event[lo : lo + CHUNK], card[lo : lo + CHUNK], coefficient[lo : lo + CHUNK]
        hand = ev.hand[e]
        end = ev.stage[e] == STAGE_END
        if end.any():
            hands, _, _ = states(ev, e[end], c[end])
            v = hand_points(hands.reshape(-1, NUM_CARDS) @ RANK_OF_CARD, ev.rules).reshape(-1, n)
            np.add.at(exact, hand[end], a[end, None] * v)
        rest = np.nonzero(~end)[0]
        if len(rest):
            x = inputs(ev, e[rest], c[rest])
            phi = np.concatenate([np.maximum(basis.first(x), 0), x], axis=2)
            h = hand[rest]  # ascending: events come in order
            starts = np.r_[0, np.flatnonzero(np.diff(h)) + 1]
            out[h[starts]] += np.add.reduceat(a[rest, None, None] * phi, starts, axis=0)
    return out, exact
