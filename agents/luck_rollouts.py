"""Luck corrections from compiled rollout values: a value function close to the players' own.

:mod:`craits.agents.luck` corrects every chance event with a small learnt value model, which
removes little of a game's variance (its width ratios are about 1; ``docs/luck.md``). Here
``V`` is measured instead of learnt: the mean of ``rollouts`` plays of the rest of the hand
from the full state, on the compiled rules (:mod:`craits_env.vector.rows`), each seat played
as the table played it where a compiled player exists (``expert``, ``tactician``, ``greedy``:
:mod:`craits.agents.compiled_expert` …, ``random``: uniform on a generator of the rollout's
own; :func:`seat_players`), a network (``champion``, ``ppo:PATH``) by itself, its rollouts'
rows played side by side and its moves computed for all of them at once
(:mod:`craits.agents.luck_networks`, :meth:`RolloutLuck.players`), and by ``expert``
otherwise (a search agent); the experts start from what the hand so far showed publicly
(:func:`load_memory`, the :class:`~craits_env.public_tracker.PublicTracker`'s inferences), as
the table's did; a rollout's points of a seat count at most :data:`CLIP` either way.

**The events.** The first hand's deal and starter (R2.2, R2.3), and each decision whose events
reveal cards — a draw from the stock (R3.3, R4, R5.3, R6.1, R7.1, R9), a reshuffle (R10.1),
the next hand's deal and starter when it ends a hand — are the chance events. A decision's
correction for each seat is

    V(the state after it) − Σ weight × V(a sample of the decision again)

where a sample applies the same decision to the state before it with the stock restacked
and the generator seeded at random: for a draw from a stock that is not empty, one sample per
distinct card of the stock with that card drawn first, weighted by its copies (stratified:
the first card's expectation is exact); otherwise ``alternatives`` samples of equal weight.
The correction's mean is zero whatever ``V`` is and however few samples are taken, so a
seat's adjusted score (its score less its corrections) is unbiased (Burch et al., "AIVAT",
AAAI 2018). ``V`` of a state counts each seat's points from the event's hand (R8, its
penalties included) to the end of the hand the state is in: a decision that ends a hand is
valued by that hand's exact points plus the next hand's rollouts. The first deal's correction
is ``V`` of the game's start less the mean ``V`` of ``alternatives`` other deals of a shuffled
deck by the same first dealer (:meth:`RolloutLuck.deal_correction`; the first dealer, drawn
apart from the shuffle by R2.1, is not corrected).

**A random player's choices** are chance too, of a known law (``RandomAgent``: uniform over
the legal moves): a ``random`` seat's decision with more than one legal move is corrected by
``V`` after it less the mean ``V`` after each legal move applied to the state before it as it
stands (its stock in its order) — mean zero over the player's choice, whatever the stock —
and then, if it revealed cards, as any chance event.

**Common random numbers.** Every rollout ``j`` of an event restacks the unrevealed cards by
the same random key a card and seeds the shuffles alike; a sample's own cards (those the
actual state's stock lacks) take the keys of the actual state's cards that its stock lacks,
so the sample that drew the card actually drawn is valued exactly as the actual state, and
the others differ from it only by what they revealed. The differences, not the values, are
what the corrections need: this is what makes a few dozen rollouts enough.

A rollout whose hand points
pass 53 bits (more than ``EXACT_PRESSURES`` shuffle pressures in a hand) counts the clip; a
game whose own hand points pass it, or whose rollouts do unclipped, is refused
(:class:`~craits.agents.luck.LuckError`).

**Cost.** An event costs ``rollouts`` + its samples × ``sample_rollouts`` plays of the rest of
its hand: seconds a standard game (``docs/luck.md``), where the shipped model takes 0.1 s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from craits_env import Game, Rules
from craits_env.actions import NUM_ACTIONS, PHASE_GAME_OVER
from craits_env.cards import NUM_RANKS
from craits_env.events import Dealt, Drew, Event, Reshuffled
from craits_env.public_tracker import PublicTracker
from craits_env.records import replay
from craits_env.vector import VectorGame, rows
from craits_env.vector.jit import announce_first_use, entry, unowned
from craits_env.vector.layout import (
    I_CURRENT,
    I_EPISODE,
    I_HAND_DECISIONS,
    I_HAND_INDEX,
    I_PHASE,
    P_PLAYERS,
)

from .compiled_expert import (
    COUNT_INTS,
    DECK_INTS,
    M_DECISIONS,
    M_EPISODE,
    M_HAND,
    M_NO_COUNT,
    M_NO_WILD,
    M_PENDING,
    M_PLAYED,
    M_VOID,
    UNKNOWN,
    deck_counts,
    new_memory,
    settle,
    tell,
)
from .compiled_expert import TABLE_INTS as _TABLE_INTS
from .compiled_table import EXPERT, GREEDY, NETWORK, RANDOM, TACTICIAN
from .compiled_tactician import SCRATCH_FLOATS, SCRATCH_INTS, TABLE_FLOATS
from .compiled_values import weights
from .heuristics import ExpertAgent, TacticianAgent
from .luck import GameLuck, LuckError
from .luck_networks import BatchedRollouts, network_or_none
from .rollout_rows import (
    ACTUAL,
    BEFORE,
    FORGOT,
    MAX_DECISIONS,
    NOT_EXACT,
    STUCK,
    bot_move,
    finished,
    make_alternatives,
    pairs_of,
    start_rollout,
)

ROLLOUT_PLAYERS: dict[str, int] = {
    "expert": EXPERT,
    "greedy": GREEDY,
    "tactician": TACTICIAN,
    "random": RANDOM,
}
"""The seats a rollout plays as the table did with a compiled player, by spec; every other
spec's seat plays ``expert`` here (:meth:`RolloutLuck.players` seats the networks)."""
DEAL_SALT = 2**32  # the first deal's salt (decisions are numbered below it)
CHOICE_SALT = 1  # a random player's choice: (decision, CHOICE_SALT), its draw (decision,)
CLIP = 600.0
"""A rollout's points of a seat count at most this much (either way): a spiral of shuffle
pressures (R10.1) in one rollout of a table with ``greedy`` or ``random`` reached thousands of
points and widened the intervals; clipped, the corrections stay unbiased (any ``V`` does) and
bounded (the learnt model's targets are clipped alike)."""


@entry
def event_values(
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
    actions: Any,
    hand0: int,
    alt_keys: Any,
    alt_seeds: Any,
    roll_keys: Any,
    roll_seeds: Any,
    alt_rollouts: int,
    max_decisions: int,
    couple: bool,
    remember: bool,
    clip: float,
    out: Any,
) -> int:
    """``out[r, q]`` := V of row ``r`` for seat ``q``, for ``r`` = ACTUAL and the K
    alternatives (rows 2 .. K+1, made here: ``actions[k]`` applied to the BEFORE row restacked
    by ``alt_keys[k]`` and seeded ``alt_seeds[k]``); V = the points of hands ``hand0`` .. the
    row's own hand finished in the row (the ACTUAL row's are the caller's: loaded rows do not
    hold them) plus the mean over the rollouts (``roll_keys[j]``, ``roll_seeds[j]``; the
    alternatives' rows the first ``alt_rollouts`` of them) of the points of the row's hand,
    each seat played by ``table[seat]`` (``EXPERT``, ``GREEDY``,
    ``TACTICIAN`` or ``RANDOM``). With ``remember`` the rollouts' expert memory starts from
    the rows' (the caller's, of the hand so far; told ``actions[k]`` in the alternatives), else
    from nothing. A rollout's points of a seat count at most ``clip`` either way (a rollout
    whose points pass 53 bits, a spiral of pressures, counts ``clip``; unclipped, it is
    :data:`NOT_EXACT`). 0, or :data:`NOT_EXACT` / :data:`STUCK` / :data:`FORGOT`."""
    st, cd, p, sizes, deck = unowned(st), unowned(cd), unowned(p), unowned(sizes), unowned(deck)
    si, sf = unowned(si), unowned(sf)
    tb, ft, work = si[:_TABLE_INTS], sf[:TABLE_FLOATS], sf[TABLE_FLOATS:]
    dk = si[_TABLE_INTS : _TABLE_INTS + DECK_INTS]
    cnt = si[_TABLE_INTS + DECK_INTS : _TABLE_INTS + DECK_INTS + COUNT_INTS]
    deck_counts(deck, dk)
    n = p[P_PLAYERS]
    k_alt = alt_keys.shape[0]
    wk = k_alt + 2
    dice = k_alt + 3
    if not make_alternatives(st, cd, p, sizes, deck, mem, actions, alt_keys, alt_seeds, remember):
        return FORGOT
    key = np.empty(roll_keys.shape[1], np.float64)
    have = np.zeros(roll_keys.shape[1], np.int64)
    pair_from = np.empty(cd.shape[1], np.int64)
    pair_to = np.empty(cd.shape[1], np.int64)
    for r in range(1, k_alt + 2):
        hand = st[r, I_HAND_INDEX]
        runs = roll_keys.shape[0] if r == ACTUAL else alt_rollouts
        pairs = 0
        if couple and r > ACTUAL:
            pairs = pairs_of(st, cd, ACTUAL, r, have, pair_from, pair_to)
        for q in range(n):
            out[r - 1, q] = 0.0
            if r > ACTUAL:
                done = finished(st, n, r, hand0, hand, q)
                if np.isnan(done):
                    return NOT_EXACT
                out[r - 1, q] = done * runs
        for j in range(runs):
            start_rollout(st, cd, mem, r, wk, dice, key, roll_keys[j], roll_seeds[j], pairs,
                          pair_from, pair_to, remember)  # fmt: skip
            steps = 0
            while st[wk, I_HAND_INDEX] == hand and st[wk, I_PHASE] != PHASE_GAME_OVER:
                if steps >= max_decisions:
                    return STUCK
                if not settle(st, p, mem, wk):
                    return FORGOT
                who = table[st[wk, I_CURRENT]]
                a = bot_move(st, p, who, w_tactician, w, mem, wk, dice, dk, tb, ft, cnt, work)
                if not tell(st, p, mem, wk, a):
                    return FORGOT
                rows.apply(st, cd, p, sizes, deck, wk, a)
                steps += 1
            for q in range(n):
                pts = finished(st, n, wk, hand, st[wk, I_HAND_INDEX], q)
                if np.isnan(pts):  # a spiral of pressures: positive, past any finite clip
                    if np.isinf(clip):
                        return NOT_EXACT
                    pts = clip
                out[r - 1, q] += min(max(pts, -clip), clip)
        for q in range(n):
            out[r - 1, q] /= runs
    return 0


def load_memory(mem: np.ndarray, st: np.ndarray, b: int, tracker: PublicTracker) -> None:
    """Row ``b``'s expert memory := what ``tracker`` (following the game loaded in row ``b``)
    inferred of the hand so far, settled at the row as it stands (the memory
    :func:`~craits.agents.compiled_expert.settle` would have built deciding by deciding)."""
    state = tracker.state()
    mem[b, :] = UNKNOWN
    for seat, bases in enumerate(state["void_base"]):
        for suit, base in enumerate(bases):
            mem[b, M_VOID + 4 * seat + suit] = UNKNOWN if base is None else base
    for seat, base in enumerate(state["no_wild_base"]):
        mem[b, M_NO_WILD + seat] = UNKNOWN if base is None else base
    for seat, base in enumerate(state["no_count_base"]):
        mem[b, M_NO_COUNT + seat] = UNKNOWN if base is None else base
    mem[b, M_PLAYED:] = 0
    for seat, cards in enumerate(tracker.played):
        for card in cards:
            mem[b, M_PLAYED + 4 * seat + card // NUM_RANKS] += 1
    mem[b, M_EPISODE] = st[b, I_EPISODE]
    mem[b, M_HAND] = st[b, I_HAND_INDEX]
    mem[b, M_DECISIONS] = st[b, I_HAND_DECISIONS]
    mem[b, M_PENDING] = 0


def seat_players(seats: Sequence[str]) -> np.ndarray:
    """The rollouts' player of each seat (:data:`ROLLOUT_PLAYERS`; ``expert`` for others)."""
    return np.array([ROLLOUT_PLAYERS.get(s, EXPERT) for s in seats], np.int64)


def free_copy(game: Game) -> Game:
    """``game`` without the deck orders scripted for later (a duplicate deal's next hands and
    reshuffles), its generator kept: what the rollouts play, to the end of its hand only."""
    return game.clone(scheduled=False)


def reveals(events: Sequence[Event]) -> bool:
    """Whether a decision's events revealed cards from the stock (a chance event)."""
    return any(isinstance(e, (Drew, Reshuffled, Dealt)) for e in events)


class RolloutLuck:
    """Corrections of a table's recorded games by compiled rollout values (see the module
    docstring): ``rollouts`` plays a value, ``alternatives`` samples of an event that is not
    stratified (and of the first deal), ``sample_rollouts`` (default ``rollouts``) the plays
    that value each sample of a decision — the first of the actual state's rollouts, so a
    sample's value is no less coupled to the actual one: fewer cost less and keep the mean
    zero, the actual state's value keeping its ``rollouts``. ``seed`` makes the samples and
    the rollouts' keys; it must not be a seed the games' deals came from. The plainer
    schemes, for comparison (all unbiased): ``couple=False`` (independent keys for each
    sample's cards), ``stratify=False`` (``alternatives`` samples for every event),
    ``remember=False`` (the rollouts' experts start knowing nothing of the hand so far),
    ``first_deal=False`` (the first hand's deal not corrected), ``seated=False`` (every
    seat's rollouts play ``expert``, whoever sat there), ``networks=False`` (a network's seat
    played by ``expert``, as version 3 did: about a quarter of the cost where a network sits),
    ``choices=False`` (a ``random`` seat's own moves not corrected, as versions 3 and 4),
    ``clip=None`` (a rollout's points not bounded)."""

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
        remember: bool = True,
        first_deal: bool = True,
        seated: bool = True,
        clip: float | None = CLIP,
        sample_rollouts: int | None = None,
        networks: bool = True,
        choices: bool = True,
    ) -> None:
        if rollouts < 1 or alternatives < 1:
            raise ValueError(
                f"rollouts, alternatives: got {rollouts}, {alternatives}; allowed 1 or more each"
            )
        sample_rollouts = rollouts if sample_rollouts is None else sample_rollouts
        if isinstance(sample_rollouts, bool) or not 1 <= sample_rollouts <= rollouts:
            raise ValueError(
                f"sample_rollouts: got {sample_rollouts!r}, allowed 1 to rollouts ({rollouts})"
            )
        if clip is not None and not clip > 0:
            raise ValueError(f"clip: got {clip!r}, allowed a number of points above 0 or None")
        self.num_players, self.rules = num_players, rules
        self.rollouts, self.alternatives, self.seed = rollouts, alternatives, seed
        self.sample_rollouts = sample_rollouts
        self.max_decisions = max_decisions
        self.couple, self.stratify, self.remember = couple, stratify, remember
        self.first_deal, self.seated, self.networks = first_deal, seated, networks
        self.choices = choices and seated
        self.clip = np.inf if clip is None else float(clip)
        most = max(alternatives, NUM_ACTIONS)  # samples: at most a card or a move each
        self._game = VectorGame(most + 4, num_players, rules, seed=0, auto_reset=False)
        self._mem = new_memory(most + 4)
        self._weights = weights(ExpertAgent)
        self._w_tactician = weights(TacticianAgent)
        self._experts = seat_players(["expert"] * num_players)
        self._ints = np.zeros(SCRATCH_INTS, np.int64)
        self._floats = np.zeros(SCRATCH_FLOATS, np.float64)
        self._out = np.zeros((most + 1, num_players), np.float64)
        self._most = most
        self._nets: dict[str, int] = {}  # a network seat's spec: its index in _batched
        self._net_list: list[tuple[Any, bool]] = []
        self._batched: Any = None  # luck_networks.BatchedRollouts, made for the first network

    def _keys(self, *salt: int) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng([self.seed, *salt])
        return rng.random((self.rollouts, 52)), rng.integers(
            0, 2**62, (self.rollouts, 2), dtype=np.int64
        )

    def _table(self, table: Sequence[int] | np.ndarray | None) -> np.ndarray:
        if table is None:
            return self._experts
        codes = np.asarray(table, np.int64)
        known = [*ROLLOUT_PLAYERS.values(), *range(NETWORK, NETWORK + len(self._net_list))]
        if codes.shape != (self.num_players,) or not np.isin(codes, known).all():
            raise ValueError(
                f"table: got {list(table)!r}, allowed {self.num_players} of "
                f"{sorted(known)} (players)"
            )
        return codes

    def _rows(self, table: np.ndarray) -> tuple[VectorGame, np.ndarray]:
        """The game and expert memory whose rows an event of ``table`` is valued in: the
        batched rows where a network plays (:mod:`craits.agents.luck_networks`)."""
        if (table >= NETWORK).any():
            return self._batched.game, self._batched.mem
        return self._game, self._mem

    def players(self, seats: Sequence[str]) -> np.ndarray:
        """Each seat's rollout player (``table``): :func:`seat_players`, but with
        ``networks`` a network's seat (``champion``, ``ppo:PATH``) is played by the network
        itself, its moves as it makes them (``NETWORK + k``: the k-th network met)."""
        table = seat_players(seats)
        if not self.networks:
            return table
        for seat, spec in enumerate(seats):
            if spec in ROLLOUT_PLAYERS:
                continue
            if spec not in self._nets:
                found = network_or_none(spec, self.num_players, self.rules)
                self._nets[spec] = -1 if found is None else len(self._net_list)
                if found is not None:
                    self._net_list.append(found)
                    if self._batched is None:
                        self._batched = BatchedRollouts(
                            self.num_players, self.rules, self._most, self.rollouts,
                            self.sample_rollouts, self._net_list,
                        )  # fmt: skip
            if self._nets[spec] >= 0:
                table[seat] = NETWORK + self._nets[spec]
        return table

    def values(
        self,
        before: Game,
        action: int,
        after: Game,
        salt: Sequence[int] = (),
        table: Sequence[int] | np.ndarray | None = None,
        memory: tuple[PublicTracker, PublicTracker] | None = None,
        choices: Sequence[int] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """V of ``after`` and of the samples of ``action`` applied to ``before`` (free copies,
        :func:`free_copy`; ``after`` is ``before`` after ``action``), and the samples'
        weights: ``(samples + 1, n)`` (``after`` first) and ``(samples,)`` summing to 1.
        ``salt``: the event's own numbers (the samples' keys come from it). ``table``: each
        seat's rollout player (:func:`seat_players`; ``expert`` everywhere by default).
        ``memory``: public trackers of the hand at ``before`` and at ``after``, whose
        inferences the rollouts' experts start from (with ``remember``; else, or without
        them, they start knowing nothing).

        The samples: with ``stratify`` and a decision that does not end its hand drawing
        from a stock that is not empty, one per distinct card of the stock, that card drawn
        first (the rest restacked at random), weighted by its copies in the stock (the first
        card's expectation exact: stratified sampling); otherwise ``alternatives`` samples
        of the whole stock and generator, weighted alike. With ``choices`` (a uniformly
        random player's legal moves, ``action`` one of them), a sample a move instead, each
        applied to ``before`` as it stands (the stock in its order), weighted alike and
        valued by all ``rollouts``."""
        table_ = self._table(table)
        game, mem = self._rows(table_)
        rows.load_game(game.state, BEFORE, before, None)
        rows.load_game(game.state, ACTUAL, after, None)
        remember = self.remember and memory is not None
        if remember:
            assert memory is not None
            load_memory(mem, game.state.st, BEFORE, memory[0])
            load_memory(mem, game.state.st, ACTUAL, memory[1])
        hand0 = before.hand_index
        rng = np.random.default_rng([self.seed, 1, *salt])
        stock = np.bincount(before.stock, minlength=52)
        if choices is not None:
            actions = np.array(choices, np.int64)
            alt_keys = np.zeros((len(actions), 52))  # keys alike: the stock keeps its order
            weights = np.full(len(actions), 1 / len(actions))
        elif self.stratify and stock.any() and after.hand_index == hand0:
            cards = np.flatnonzero(stock)
            alt_keys = rng.random((len(cards), 52))
            alt_keys[np.arange(len(cards)), cards] = 2.0  # drawn first (the highest key)
            weights = stock[cards] / stock.sum()
        else:
            alt_keys = rng.random((self.alternatives, 52))
            weights = np.full(self.alternatives, 1 / self.alternatives)
        if choices is None:
            actions = np.full(len(alt_keys), int(action), np.int64)
        alt_seeds = rng.integers(0, 2**62, (len(alt_keys), 2), dtype=np.int64)
        roll_keys, roll_seeds = self._keys(2, *salt)
        # a choice's few samples take every rollout: the one of the move made is then valued
        # exactly as the actual state (coupled), the others differ from it by their move only
        runs = self.rollouts if choices is not None else self.sample_rollouts
        out = self._run(
            actions, hand0, alt_keys, alt_seeds, roll_keys, roll_seeds, table_, remember, runs
        )
        # the ACTUAL row was loaded: the hands it finished since hand0 are the game's
        for h in range(hand0, min(after.hand_index, len(after.hand_points))):
            out[0] += after.hand_points[h]
        return out, weights

    def _run(
        self,
        actions: np.ndarray,
        hand0: int,
        alt_keys: np.ndarray,
        alt_seeds: np.ndarray,
        roll_keys: np.ndarray,
        roll_seeds: np.ndarray,
        table: np.ndarray,
        remember: bool,
        alt_rollouts: int,
    ) -> np.ndarray:
        out = self._out[: len(alt_keys) + 1]
        if (table >= NETWORK).any():
            keys = (alt_keys, alt_seeds, roll_keys, roll_seeds)
            code = self._batched.run(
                actions, hand0, keys, alt_rollouts, table, self.couple, remember,
                self.clip, self.max_decisions, out,
            )  # fmt: skip
            self._check(code)
            return out.copy()
        st, cd, p, sizes, deck = self._game.state.arrays()
        announce_first_use(event_values)
        code = event_values(
            st, cd, p, sizes, deck, table, self._w_tactician, self._weights, self._mem,
            self._ints, self._floats, actions, hand0, alt_keys, alt_seeds, roll_keys,
            roll_seeds, alt_rollouts, self.max_decisions, self.couple, remember,
            self.clip, out,
        )  # fmt: skip
        self._check(code)
        return out.copy()

    def value(
        self, game: Game, salt: Sequence[int] = (), table: Sequence[int] | np.ndarray | None = None
    ) -> np.ndarray:
        """``(n,)``: each seat's points to the end of ``game``'s hand (its penalties so far
        included), the mean of the rollouts (a free copy, :func:`free_copy`; the rollouts'
        experts start knowing nothing of the hand so far)."""
        table_ = self._table(table)
        rows.load_game(self._rows(table_)[0].state, ACTUAL, game, None)
        roll_keys, roll_seeds = self._keys(2, *salt)
        none = np.zeros((0, 52)), np.zeros((0, 2), np.int64)
        moves = np.zeros(0, np.int64)
        return self._run(
            moves, game.hand_index, *none, roll_keys, roll_seeds, table_, False, self.rollouts
        )[0]

    def deal_correction(
        self, game: Game, salt: Sequence[int] = (), table: Sequence[int] | np.ndarray | None = None
    ) -> np.ndarray:
        """``(n,)``: the first deal's correction of ``game`` (at its start): its value less
        the mean value of ``alternatives`` deals of a uniformly shuffled deck (R2.2) by the
        same first dealer, all with the same rollout keys. Unbiased when the game's own deck
        order was uniformly shuffled, whatever its first dealer (R2.1 draws the dealer apart
        from the shuffle)."""
        rng = np.random.default_rng([self.seed, 3, *salt])
        actual = self.value(free_copy(game), salt, table)
        samples = [
            self.value(
                free_copy(Game(self.num_players, self.rules, dealer=game.first_dealer, seed=s)),
                salt,
                table,
            )
            for s in rng.integers(0, 2**62, self.alternatives).tolist()
        ]
        return actual - np.mean(samples, axis=0)

    def _check(self, code: int) -> None:
        """:class:`LuckError` (one line) for :func:`event_values`' error codes."""
        if code == NOT_EXACT:
            raise LuckError("a rollout's hand points need more than 53 bits (shuffle pressures)")
        if code == STUCK:
            raise LuckError(f"a rollout went past {self.max_decisions} decisions")
        if code == FORGOT:
            raise LuckError("a rollout's expert memory lost track of its row (a bug)")

    def corrections(
        self,
        before: Game,
        action: int,
        after: Game,
        salt: Sequence[int] = (),
        table: Sequence[int] | np.ndarray | None = None,
        memory: tuple[PublicTracker, PublicTracker] | None = None,
    ) -> np.ndarray:
        """``(n,)``: the event's correction for each seat (:meth:`values`)."""
        v, weights = self.values(before, action, after, salt, table, memory)
        return v[0] - weights @ v[1:]

    def game(self, record: dict[str, Any], salt: Sequence[int] = ()) -> GameLuck:
        """The corrections of a finished game record (:mod:`craits_env.records`): its first
        deal's (with ``first_deal``) and every decision's that revealed cards, the rollouts
        playing each seat as the record's ``seats`` (with ``seated``: :func:`seat_players`)
        and remembering the hand so far (with ``remember``)."""
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
        table = self.players(record["seats"]) if self.seated else self._experts
        total = np.zeros(n)
        # the state before the next decision to correct, its memory, the random player's moves
        held: list[Any] = [None, None, None]
        tracker: list[PublicTracker] = []
        step[0] = 0
        choices = 0

        def keep(g: Game, i: int) -> None:
            moves = None
            if self.choices and not g.is_over and table[g.current_player] == RANDOM:
                legal = g.legal_actions()
                moves = legal if len(legal) > 1 else None
            corrected = (i in chance or moves is not None) and not g.is_over
            held[0] = free_copy(g) if corrected else None
            held[1] = tracker[0].copy_for(held[0]) if corrected and self.remember else None
            held[2] = moves

        def start(g: Game, _events: Sequence[Event]) -> None:
            tracker.append(PublicTracker(g))
            if self.first_deal:
                total[:] += self.deal_correction(g, (*salt, DEAL_SALT), table)
            keep(g, 0)

        def decide(g: Game, _p: int, action: int, events: list[Event]) -> None:
            nonlocal choices
            i = step[0]
            tracker[0].observe(events)
            before, moves = held[0], held[2]
            if before is not None:
                after = free_copy(g)
                memory = None
                if self.remember:
                    memory = (held[1], tracker[0].copy_for(after))
                if moves is not None:  # the random player's choice, then what it revealed
                    v, w = self.values(
                        before, action, after, (*salt, i, CHOICE_SALT), table, memory, moves
                    )
                    total[:] += v[0] - w @ v[1:]
                    choices += 1
                if i in chance:
                    total[:] += self.corrections(before, action, after, (*salt, i), table, memory)
            keep(g, i + 1)
            step[0] += 1

        game = replay(record, on_start=start, on_decision=decide)
        events = len(chance) + choices + (1 if self.first_deal else 0)
        return GameLuck(np.array(game.scores, np.float64), total, events)
