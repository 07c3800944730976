"""Luck corrections from compiled rollout values: a value function close to the players' own.

:mod:`craits.agents.luck` corrects every chance event with a small learnt value model, which
removes little of a game's variance (its width ratios are about 1; ``docs/luck.md``). Here
``V`` is measured instead of learnt: the mean of ``rollouts`` plays of the rest of the hand
by four compiled ``expert`` (:mod:`craits.agents.compiled_expert`, its public memory started
afresh) from the full state, on the compiled rules (:mod:`craits_env.vector.rows`).

**The events.** Each decision whose events reveal cards — a draw from the stock (R3.3, R4,
R5.3, R6.1, R7.1, R9), a reshuffle (R10.1), the next hand's deal and starter (R2.3) when it
ends a hand — is one chance event. Its correction for each seat is

    V(the state after it) − Σ weight × V(a sample of the decision again)

where a sample applies the same decision to the state before it with the stock restacked
and the generator seeded at random: for a draw from a stock that is not empty, one sample per
distinct card of the stock with that card drawn first, weighted by its copies (stratified:
the first card's expectation is exact); otherwise ``alternatives`` samples of equal weight.
The correction's mean is zero whatever ``V`` is and however few samples are taken, so a
seat's adjusted score (its score less its corrections) is unbiased (Burch et al., "AIVAT",
AAAI 2018). ``V`` of a state counts each seat's points from the event's hand (R8, its
penalties included) to the end of the hand the state is in: a decision that ends a hand is
valued by that hand's exact points plus the next hand's rollouts.

**Common random numbers.** Every rollout ``j`` of an event restacks the unrevealed cards by
the same random key a card and seeds the shuffles alike; a sample's own cards (those the
actual state's stock lacks) take the keys of the actual state's cards that its stock lacks,
so the sample that drew the card actually drawn is valued exactly as the actual state, and
the others differ from it only by what they revealed. The differences, not the values, are
what the corrections need: this is what makes a few dozen rollouts enough.

Not corrected: the first hand's deal and the first dealer (they come before any decision;
there is no state "before" to sample from in a record). A game whose rollouts would need
hand points beyond 53 bits (more than ``EXACT_PRESSURES`` shuffle pressures in a hand) is
refused (:class:`~craits.agents.luck.LuckError`).

**Cost.** An event costs (its samples + 1) × ``rollouts`` plays of the rest of its hand:
about 21 s a standard game of four ``expert`` at ``rollouts=128`` (``docs/luck.md``), where
the shipped model's corrections take 0.1 s; ``craits tournament --luck rollouts:R[:K]``
(:class:`RolloutEstimator`).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from craits_env import Game, Rules
from craits_env.actions import PHASE_GAME_OVER
from craits_env.events import Dealt, Drew, Event, Reshuffled
from craits_env.records import replay
from craits_env.vector import VectorGame, rows
from craits_env.vector.jit import announce_first_use, entry, inner, unowned
from craits_env.vector.layout import (
    I_HAND_INDEX,
    I_PHASE,
    I_STOCK_LEN,
    P_PLAYERS,
    RNG,
    RNG_HAS_UINT32,
    RNG_INC_HI,
    RNG_INC_LO,
    RNG_STATE_HI,
    RNG_STATE_LO,
    STOCK,
)

from .compiled_expert import (
    COUNT_INTS,
    DECK_INTS,
    deck_counts,
    expert_action,
    forget_row,
    new_memory,
    settle,
    tell,
)
from .compiled_expert import TABLE_INTS as _TABLE_INTS
from .compiled_tactician import SCRATCH_FLOATS, SCRATCH_INTS, TABLE_FLOATS
from .compiled_values import weights
from .heuristics import ExpertAgent
from .luck import GameLuck, LuckError

BEFORE, ACTUAL = 0, 1  # rows: the state before the event, the state after it; then the
# alternatives (2 .. K+1), then the rollout's work row (K+2)
MAX_DECISIONS = 5_000
"""A rollout stops after this many decisions (the rules' own limit, R12, comes first)."""
INCREMENT = 0x5851F42D4C957F2D
"""The generators' PCG64 increment (odd) in every rollout and sample, whatever the game's."""
NOT_EXACT = 1  # error codes of event_values
STUCK = 2


@inner
def _copy_row(st: Any, cd: Any, mem: Any, src: int, dst: int) -> None:
    for i in range(st.shape[1]):
        st[dst, i] = st[src, i]
    for i in range(cd.shape[1]):
        cd[dst, i] = cd[src, i]
    for i in range(mem.shape[1]):
        mem[dst, i] = mem[src, i]


@inner
def _restack(st: Any, cd: Any, b: int, key: Any, seed_hi: int, seed_lo: int) -> None:
    """Row ``b``'s stock in the order of ``key`` (a number a card: the highest drawn first,
    ties in the order they lie), its generator's state ``(seed_hi, seed_lo)`` with the
    increment :data:`INCREMENT`."""
    n = st[b, I_STOCK_LEN]
    for i in range(1, n):  # insertion sort, ascending keys: the next card (last) has the highest
        c = cd[b, STOCK + i]
        k = key[c]
        j = i - 1
        while j >= 0 and key[cd[b, STOCK + j]] > k:
            cd[b, STOCK + j + 1] = cd[b, STOCK + j]
            j -= 1
        cd[b, STOCK + j + 1] = c
    st[b, RNG + RNG_STATE_HI] = seed_hi
    st[b, RNG + RNG_STATE_LO] = seed_lo
    st[b, RNG + RNG_INC_HI] = 0
    st[b, RNG + RNG_INC_LO] = INCREMENT
    st[b, RNG + RNG_HAS_UINT32] = 0


@inner
def _finished(st: Any, n: int, b: int, lo: int, hi: int, q: int) -> float:
    """Seat ``q``'s points of hands ``lo .. hi-1`` of row ``b`` (NaN beyond 53 bits)."""
    total = 0.0
    for h in range(lo, hi):
        if not rows.exact_hand_points(st, n, b, h, q):
            return np.nan
        total += np.float64(rows.finished_hand_points(st, n, b, h, q))
    return total


@inner
def _pairs(st: Any, cd: Any, a: int, b: int, have: Any, pair_from: Any, pair_to: Any) -> int:
    """Pair the cards of row ``b``'s stock that row ``a``'s lacks with those of ``a``'s that
    ``b``'s lacks, in ascending order (copies counted): ``pair_from[i]`` (``b``'s) takes
    ``pair_to[i]``'s key, so that the two stocks restack alike but for the cards revealed
    (common random numbers coupled card for card). The number of pairs."""
    for c in range(have.shape[0]):
        have[c] = 0
    for i in range(st[a, I_STOCK_LEN]):
        have[cd[a, STOCK + i]] += 1
    for i in range(st[b, I_STOCK_LEN]):
        have[cd[b, STOCK + i]] -= 1
    k_from = 0
    k_to = 0
    for c in range(have.shape[0]):
        for _ in range(-have[c]):
            pair_from[k_from] = c
            k_from += 1
        for _ in range(have[c]):
            pair_to[k_to] = c
            k_to += 1
    return min(k_from, k_to)


@entry
def event_values(
    st: Any,
    cd: Any,
    p: Any,
    sizes: Any,
    deck: Any,
    w: Any,
    mem: Any,
    si: Any,
    sf: Any,
    action: int,
    hand0: int,
    alt_keys: Any,
    alt_seeds: Any,
    roll_keys: Any,
    roll_seeds: Any,
    max_decisions: int,
    couple: bool,
    out: Any,
) -> int:
    """``out[r, q]`` := V of row ``r`` for seat ``q``, for ``r`` = ACTUAL and the K
    alternatives (rows 2 .. K+1, made here: ``action`` applied to the BEFORE row restacked by
    ``alt_keys[k]`` and seeded ``alt_seeds[k]``); V = the points of hands ``hand0`` .. the
    row's own hand finished in the row (the ACTUAL row's are the caller's: loaded rows do not
    hold them) plus the mean over the rollouts (``roll_keys[j]``, ``roll_seeds[j]``) of the
    points of the row's hand. 0, or :data:`NOT_EXACT` / :data:`STUCK`."""
    st, cd, p, sizes, deck = unowned(st), unowned(cd), unowned(p), unowned(sizes), unowned(deck)
    si, sf = unowned(si), unowned(sf)
    tb, ft, work = si[:_TABLE_INTS], sf[:TABLE_FLOATS], sf[TABLE_FLOATS:]
    dk = si[_TABLE_INTS : _TABLE_INTS + DECK_INTS]
    cnt = si[_TABLE_INTS + DECK_INTS : _TABLE_INTS + DECK_INTS + COUNT_INTS]
    deck_counts(deck, dk)
    n = p[P_PLAYERS]
    k_alt = alt_keys.shape[0]
    wk = k_alt + 2
    for k in range(k_alt):
        b = 2 + k
        _copy_row(st, cd, mem, BEFORE, b)
        _restack(st, cd, b, alt_keys[k], alt_seeds[k, 0], alt_seeds[k, 1])
        rows.apply(st, cd, p, sizes, deck, b, action)
    key = np.empty(roll_keys.shape[1], np.float64)
    have = np.zeros(roll_keys.shape[1], np.int64)
    pair_from = np.empty(cd.shape[1], np.int64)
    pair_to = np.empty(cd.shape[1], np.int64)
    for r in range(1, k_alt + 2):
        hand = st[r, I_HAND_INDEX]
        pairs = 0
        if couple and r > ACTUAL:
            pairs = _pairs(st, cd, ACTUAL, r, have, pair_from, pair_to)
        for q in range(n):
            out[r - 1, q] = 0.0
            if r > ACTUAL:
                done = _finished(st, n, r, hand0, hand, q)
                if np.isnan(done):
                    return NOT_EXACT
                out[r - 1, q] = done * roll_keys.shape[0]
        for j in range(roll_keys.shape[0]):
            _copy_row(st, cd, mem, r, wk)
            for c in range(key.shape[0]):
                key[c] = roll_keys[j, c]
            for i in range(pairs):  # the alternative's own cards take the actual's keys
                key[pair_from[i]] = roll_keys[j, pair_to[i]]
            _restack(st, cd, wk, key, roll_seeds[j, 0], roll_seeds[j, 1])
            forget_row(st, mem, wk)
            steps = 0
            while st[wk, I_HAND_INDEX] == hand and st[wk, I_PHASE] != PHASE_GAME_OVER:
                if steps >= max_decisions:
                    return STUCK
                if not settle(st, p, mem, wk):
                    return STUCK
                a = expert_action(st, p, w, mem, wk, dk, tb, ft, cnt, work)
                if not tell(st, p, mem, wk, a):
                    return STUCK
                rows.apply(st, cd, p, sizes, deck, wk, a)
                steps += 1
            for q in range(n):
                pts = _finished(st, n, wk, hand, st[wk, I_HAND_INDEX], q)
                if np.isnan(pts):
                    return NOT_EXACT
                out[r - 1, q] += pts
        for q in range(n):
            out[r - 1, q] /= roll_keys.shape[0]
    return 0


def free_copy(game: Game) -> Game:
    """``game`` without the deck orders scripted for later (a duplicate deal's next hands and
    reshuffles), its generator kept: what the rollouts play, to the end of its hand only."""
    snap = game.snapshot(resume=True)
    snap["resume"] = {**snap["resume"], "scheduled_deals": [], "scheduled_reshuffles": []}
    return Game.from_snapshot(snap)


def reveals(events: Sequence[Event]) -> bool:
    """Whether a decision's events revealed cards from the stock (a chance event)."""
    return any(isinstance(e, (Drew, Reshuffled, Dealt)) for e in events)


class RolloutLuck:
    """Corrections of a table's recorded games by compiled ``expert`` rollout values (see the
    module docstring): ``rollouts`` plays a value, ``alternatives`` samples of an event that
    is not stratified. ``seed`` makes the samples and the rollouts' keys; it must not be a
    seed the games' deals came from. ``couple=False`` (independent keys for each sample's
    cards) and ``stratify=False`` (``alternatives`` samples for every event) are the plainer
    schemes, for comparison (unbiased too)."""

    def __init__(
        self,
        num_players: int,
        rules: Rules,
        rollouts: int = 64,
        alternatives: int = 8,
        seed: int = 0,
        max_decisions: int = MAX_DECISIONS,
        couple: bool = True,
        stratify: bool = True,
    ) -> None:
        if rollouts < 1 or alternatives < 1:
            raise ValueError(
                f"rollouts, alternatives: got {rollouts}, {alternatives}; allowed 1 or more each"
            )
        self.num_players, self.rules = num_players, rules
        self.rollouts, self.alternatives, self.seed = rollouts, alternatives, seed
        self.max_decisions = max_decisions
        self.couple = couple
        self.stratify = stratify
        most = max(alternatives, 52)  # samples of an event: at most a card each
        self._game = VectorGame(most + 3, num_players, rules, seed=0, auto_reset=False)
        self._mem = new_memory(most + 3)
        self._weights = weights(ExpertAgent)
        self._ints = np.zeros(SCRATCH_INTS, np.int64)
        self._floats = np.zeros(SCRATCH_FLOATS, np.float64)
        self._out = np.zeros((most + 1, num_players), np.float64)

    def _keys(self, *salt: int) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng([self.seed, *salt])
        return rng.random((self.rollouts, 52)), rng.integers(
            0, 2**62, (self.rollouts, 2), dtype=np.int64
        )

    def values(
        self, before: Game, action: int, after: Game, salt: Sequence[int] = ()
    ) -> tuple[np.ndarray, np.ndarray]:
        """V of ``after`` and of the samples of ``action`` applied to ``before`` (free copies,
        :func:`free_copy`; ``after`` is ``before`` after ``action``), and the samples'
        weights: ``(samples + 1, n)`` (``after`` first) and ``(samples,)`` summing to 1.
        ``salt``: the event's own numbers (the samples' keys come from it).

        The samples: with ``stratify`` and a decision that does not end its hand drawing
        from a stock that is not empty, one per distinct card of the stock, that card drawn
        first (the rest restacked at random), weighted by its copies in the stock (the first
        card's expectation exact: stratified sampling); otherwise ``alternatives`` samples
        of the whole stock and generator, weighted alike."""
        state = self._game.state
        rows.load_game(state, BEFORE, before, None)
        rows.load_game(state, ACTUAL, after, None)
        hand0 = before.hand_index
        rng = np.random.default_rng([self.seed, 1, *salt])
        stock = np.bincount(before.stock, minlength=52)
        if self.stratify and stock.any() and after.hand_index == hand0:
            cards = np.flatnonzero(stock)
            alt_keys = rng.random((len(cards), 52))
            alt_keys[np.arange(len(cards)), cards] = 2.0  # drawn first (the highest key)
            weights = stock[cards] / stock.sum()
        else:
            alt_keys = rng.random((self.alternatives, 52))
            weights = np.full(self.alternatives, 1 / self.alternatives)
        alt_seeds = rng.integers(0, 2**62, (len(alt_keys), 2), dtype=np.int64)
        roll_keys, roll_seeds = self._keys(2, *salt)
        st, cd, p, sizes, deck = state.arrays()
        out = self._out[: len(alt_keys) + 1]
        announce_first_use(event_values)
        code = event_values(
            st, cd, p, sizes, deck, self._weights, self._mem, self._ints, self._floats,
            int(action), hand0, alt_keys, alt_seeds, roll_keys, roll_seeds,
            self.max_decisions, self.couple, out,
        )  # fmt: skip
        self._check(code)
        out = out.copy()
        # the ACTUAL row was loaded: the hands it finished since hand0 are the game's
        for h in range(hand0, min(after.hand_index, len(after.hand_points))):
            out[0] += after.hand_points[h]
        return out, weights

    def value(self, game: Game, salt: Sequence[int] = ()) -> np.ndarray:
        """``(n,)``: each seat's points to the end of ``game``'s hand (its penalties so far
        included), the mean of the rollouts (a free copy, :func:`free_copy`)."""
        state = self._game.state
        rows.load_game(state, ACTUAL, game, None)
        roll_keys, roll_seeds = self._keys(2, *salt)
        st, cd, p, sizes, deck = state.arrays()
        none = np.zeros((0, 52)), np.zeros((0, 2), np.int64)
        code = event_values(
            st, cd, p, sizes, deck, self._weights, self._mem, self._ints, self._floats,
            -1, game.hand_index, *none, roll_keys, roll_seeds, self.max_decisions, False,
            self._out,
        )  # fmt: skip
        self._check(code)
        return self._out[0].copy()

    def _check(self, code: int) -> None:
        """:class:`LuckError` (one line) for :func:`event_values`' error codes."""
        if code == NOT_EXACT:
            raise LuckError("a rollout's hand points need more than 53 bits (shuffle pressures)")
        if code == STUCK:
            raise LuckError(f"a rollout went past {self.max_decisions} decisions")

    def corrections(
        self, before: Game, action: int, after: Game, salt: Sequence[int] = ()
    ) -> np.ndarray:
        """``(n,)``: the event's correction for each seat (:meth:`values`)."""
        v, weights = self.values(before, action, after, salt)
        return v[0] - weights @ v[1:]

    def game(self, record: dict[str, Any], salt: Sequence[int] = ()) -> GameLuck:
        """The corrections of a finished game record (:mod:`craits_env.records`)."""
        if not record.get("finished"):
            raise LuckError("an unfinished game cannot be adjusted (its score is not final)")
        chance: set[int] = set()
        step = [0]

        def note(_g: Game, _p: int, _a: int, events: list[Event]) -> None:
            if reveals(events):
                chance.add(step[0])
            step[0] += 1

        replay(record, on_decision=note)
        n = int(record["num_players"])
        total = np.zeros(n)
        held: list[Game | None] = [None]
        step[0] = 0

        def start(g: Game, _events: Sequence[Event]) -> None:
            held[0] = free_copy(g) if 0 in chance else None

        def decide(g: Game, _p: int, action: int, _events: list[Event]) -> None:
            i = step[0]
            if i in chance:
                before = held[0]
                assert before is not None
                total[:] += self.corrections(before, action, free_copy(g), (*salt, i))
            held[0] = free_copy(g) if i + 1 in chance and not g.is_over else None
            step[0] += 1

        game = replay(record, on_start=start, on_decision=decide)
        return GameLuck(np.array(game.scores, np.float64), total, len(chance))


class RolloutEstimator:
    """:class:`RolloutLuck` as a tournament's luck estimator (``rollouts:R[:K]``): a game's
    samples and rollout keys come from its key (``record["meta"]["key"]``), so a game is
    corrected the same way wherever and whenever it is. Its identity
    (``rollouts-R-K/vN/expert@M``) names this scheme's version and the rollouts' player, so
    stored corrections of another are never reused."""

    SEED = 410_003
    VERSION = 1

    def __init__(
        self, num_players: int, rules: Rules, rollouts: int, alternatives: int = 8
    ) -> None:
        self.values = RolloutLuck(num_players, rules, rollouts, alternatives, seed=self.SEED)
        self.model_id = (
            f"rollouts-{rollouts}-{alternatives}/v{self.VERSION}/expert@{ExpertAgent.version}"
        )

    def game(self, record: dict[str, Any]) -> GameLuck:
        key = str((record.get("meta") or {}).get("key", ""))
        return self.values.game(record, (zlib.crc32(key.encode()),))
