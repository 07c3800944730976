"""Perfect Information Monte Carlo search (PIMC): determinize, roll out, pick the best mean.

:class:`PIMCAgent` plays the expert heuristic's move (its *prior*,
:class:`craits.agents.heuristics.ExpertAgent`) and searches the decisions where search
is accurate: the end of a hand, once some player holds ``endgame`` (default 3)
cards or fewer. There the rest of the hand is short, so rollouts with a fast
policy predict it well; earlier, a rollout is dozens of moves of a crude policy
and its noise costs more than it teaches (measured: searching every decision at
64 rollouts was level with the expert; searching the end of hands at 128
rollouts beat it by about 7 points a game). At a searched decision it repeats:

1. **Sample the hidden cards** consistently with everything public (R11): the
   seat's :meth:`~craits_env.public.SeatView.unseen_cards` are dealt to the
   opponents' hands (sizes known) and the stock (size known), respecting the
   :class:`~craits_env.public.PublicTracker` inferences — a seat that showed it
   held no card of a suit (no 8 or 9, no ace or two in the count) and has drawn
   ``k`` unknown cards since holds at most ``k`` of them, all such categories
   with ``k`` or fewer draws since counted together (:func:`sample_hidden`).
2. **Build the determinized game** with :meth:`SeatView.determinize`.
3. **Evaluate every legal action on that same sample** (common random numbers):
   apply it to a clone and play the rest of the hand out with a fast rollout
   policy acting for every seat (:func:`greedy_rollout_action`: shed the
   highest-value playable card but keep the wild 8s and 9s while anything else
   is playable, call the most-held suit, always declare).
   The value of a rollout is the mean of the opponents' points for the hand
   minus the seat's own points (``Game.hand_points``, penalties included).

The action with the best mean value is played (ties: the lowest action id) if
it beats the prior's choice by more than ``margin`` (default 1) standard
errors of their paired difference over the samples; otherwise the prior's
choice is kept, so small budgets do not trade a sound move for noise. The
budget ``simulations`` is the number of rollouts per searched decision: the
number of samples is ``max(1, simulations // len(legal))``; with a single
sample the prior's choice is played. A one-card declaration is always DECLARE
(silence can only cost, R7.1) and a single legal action is returned at once.
``endgame=None`` searches every decision; ``prior=None`` searches every
decision with the rollout policy's own choice as the default (the first
version of this bot, ``PIMCAgent(64, prior=None)``).

**Compiled search** (``engine``, default ``"auto"``): with the default rollout
policy the samples and the rollouts run compiled (numba) —
:mod:`craits.agents.search_sampling` draws :func:`sample_hidden`'s samples from the same
numpy generator draw for draw, :mod:`craits.agents.search_rollouts` plays every sample's
every action in one call on the compiled rules with its mirror of
:func:`greedy_rollout_action`, carrying the rollouts' numpy generator from rollout to
rollout in the Python order. So the values, the choices and both generators' states
after a decision are the Python path's, bit for bit (``tests/agents/test_pimc_vector.py``); a
searched decision costs about a ninth of the time
(``experiments/results/pimc/bench_pimc.md``). ``engine="python"`` keeps everything on
the Python engine; a custom ``rollout`` always runs there. Both generators are numpy's
(:data:`SAMPLING_STREAM`); :attr:`PIMCAgent.version` 2 says so (version 1 sampled with
``random.Random``).

The agent only reads the view's public attributes, its own hand,
``unseen_cards()``, ``tracker`` and ``determinize()`` — never the live game.
Spec strings: ``"pimc"`` (default budget) and ``"pimc:N"`` (N rollouts per
searched decision), both compiled. After a searched decision :attr:`PIMCAgent.last_values`
holds each legal action's mean rollout value (what ``craits.training.distill`` records).
"""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from craits_env import DECLARE, Game, Rules
from craits_env.actions import forced_action
from craits_env.public import SeatView
from craits_env.seeding import derive_rng

from .base import Agent, Observation, legal_actions_of
from .heuristics import ExpertAgent
from .hidden_cards import sample_hidden, seat_caps
from .rollout_policy import (
    MAX_ROLLOUT_DECISIONS,
    RolloutPolicy,
    greedy_rollout_action,
    rollout_value,
)

if TYPE_CHECKING:
    from .belief import WorldSampler
    from .search_rollouts import Rollouts

DEFAULT_SIMULATIONS = 128
"""Rollouts per searched decision for ``"pimc"`` (timings: ``experiments/bench_pimc.py``)."""

ENDGAME = 3
"""Search once some player holds this many cards or fewer (``None``: every decision)."""

MARGIN = 1.0
"""Standard errors by which an action must beat the rollout policy's own choice."""

ENGINES = ("auto", "compiled", "python")
"""Where the rollouts run: ``compiled`` (:mod:`craits.agents.search_rollouts`, numba), ``python``
(the engine itself), ``auto`` (compiled for the default rollout policy and rules the compiled
engine represents, else Python). Both give the same values, bit for bit."""

SAMPLING_STREAM = 1
"""The samples draw from ``derive_rng(seed, SAMPLING_STREAM)``, the rollouts from
``default_rng(seed)``: two independent numpy generators."""


# ---------------------------------------------------------------------------- the agent


class PIMCAgent:
    """Determinized Monte-Carlo search over a :class:`~craits_env.public.SeatView`.

    Args:
        simulations: rollouts per decision, split evenly over the legal actions
            (at least one sample, so at least one rollout per action).
        seed: seeds the sampling and the rollouts' reshuffles; ``reset(seed)`` reseeds.
        rollout: the policy that plays every seat in the rollouts; it acts on a
            determinized engine copy, never on the real game.
        margin: standard errors by which the best action must beat the prior's
            choice to be played instead of it.
        prior: the agent whose move is played where there is no search and
            kept unless search finds a clearly better one; default a new
            :class:`~craits.agents.heuristics.ExpertAgent`; ``None``: the rollout policy.
        endgame: search once some player holds at most this many cards;
            ``None`` (or no prior) searches every decision.
        others: weight of the opponents' mean points in a rollout's value
            (1: the hand's relative result; 0: own points only).
        engine: where samples and rollouts run (:data:`ENGINES`): ``"auto"``
            (compiled for the default rollout policy, unless the compiled engine
            cannot represent the rules), ``"compiled"`` (refuses a custom rollout),
            ``"python"``. The results are the same; only the time differs.
        sampler: where the samples come from: ``None`` (default) the uniform consistent
            sampler above; a :class:`~craits.agents.belief.WorldSampler` such as
            :class:`~craits.agents.belief.PolicyBelief`, its worlds weighted by an opponent
            model (drawn from the same generator).
    """

    name = "pimc"
    # Bump when its play (or its prior's) changes: stored results are keyed by it.
    # 2: the samples draw from a numpy generator (derive_rng(seed, SAMPLING_STREAM)), not
    # random.Random: other samples, so other choices than version 1's.
    version = 2

    def __init__(
        self,
        simulations: int = DEFAULT_SIMULATIONS,
        seed: int | None = None,
        rollout: RolloutPolicy = greedy_rollout_action,
        margin: float = MARGIN,
        prior: Agent | str | None = "expert",
        endgame: int | None = ENDGAME,
        others: float = 1.0,
        engine: str = "auto",
        sampler: WorldSampler | None = None,
    ) -> None:
        if isinstance(simulations, bool) or not isinstance(simulations, int) or simulations < 1:
            raise ValueError(f"simulations: got {simulations!r}, expected a positive integer")
        if engine not in ENGINES:
            raise ValueError(f"engine: got {engine!r}, allowed one of {', '.join(ENGINES)}")
        custom = rollout is not greedy_rollout_action
        if engine == "compiled" and custom:
            raise ValueError(
                "engine: 'compiled' runs only the default rollout policy "
                "(greedy_rollout_action); a custom rollout needs engine='python' or 'auto'"
            )
        self.engine = "python" if engine == "python" or custom else "compiled"
        self._strict = engine == "compiled"  # else rules the compiled engine lacks use Python
        self._tables: dict[tuple[int, Rules], Rollouts | None] = {}
        self.simulations = simulations
        self.rollout = rollout
        self.margin = margin
        if prior == "expert":
            prior = ExpertAgent()
        if isinstance(prior, str):
            raise ValueError(f"prior: got {prior!r}, expected 'expert', an agent or None")
        self.prior = prior
        self.others = others
        self.endgame = endgame
        self.sampler = sampler
        self.name = "pimc" if simulations == DEFAULT_SIMULATIONS else f"pimc:{simulations}"
        self._sample_rng, self._np_rng = _generators(seed)
        self.last_values: dict[int, float] | None = None  # the last searched decision's means

    def __getstate__(self) -> dict[str, object]:
        """Pickles without the compiled rollouts' state arrays (rebuilt on first use)."""
        return self.__dict__ | {"_tables": {}}

    def reset(self, seed: int | None = None) -> None:
        if self.prior is not None:
            self.prior.reset(seed)
        if seed is not None:
            self._sample_rng, self._np_rng = _generators(seed)

    def generator_states(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The numpy states of the samples' and the rollouts' generators (copies)."""
        return dict(self._sample_rng.bit_generator.state), dict(self._np_rng.bit_generator.state)

    def check_table(self, num_players: int, rules: Rules) -> None:
        """``ValueError`` (one line) if the prior cannot play this table (``champion-search``
        at 2 players: the champion was trained for 4); the search itself plays any table."""
        check = getattr(self.prior, "check_table", None)
        if check is not None:
            check(num_players, rules)

    def act(self, observation: Observation) -> int:
        legal = legal_actions_of(observation)
        if not legal:
            raise ValueError("PIMCAgent.act: no legal action in this observation")
        forced = forced_action(legal)
        if forced is not None:
            return forced
        if DECLARE in legal:  # R7.1: declaring is never worse than silence
            return DECLARE
        if not isinstance(observation, SeatView):
            raise TypeError(
                "PIMCAgent.act needs a craits_env.public.SeatView, got "
                + type(observation).__name__
            )
        prior, endgame = self.prior, self.endgame
        if prior is not None and endgame is not None and min(observation.hand_sizes) > endgame:
            return int(prior.act(observation))
        return self._search(observation, [int(a) for a in legal])

    def action_values(self, view: SeatView) -> dict[int, float]:
        """The mean rollout value of each legal action (for analysis; consumes randomness)."""
        legal = [int(a) for a in view.legal_actions]
        values, _ = self._evaluate(view, legal)
        return {a: sum(row[i] for row in values) / len(values) for i, a in enumerate(legal)}

    def _search(self, view: SeatView, legal: list[int]) -> int:
        values, default = self._evaluate(view, legal)
        samples = len(values)
        means = [sum(row[i] for row in values) / samples for i in range(len(legal))]
        self.last_values = dict(zip(legal, means, strict=True))
        best = max(range(len(legal)), key=means.__getitem__)
        if best == default or samples < 2:
            return legal[default if samples < 2 else best]
        # Paired (same samples) difference to the rollout policy's own choice.
        diffs = [row[best] - row[default] for row in values]
        mean = sum(diffs) / samples
        var = sum((d - mean) ** 2 for d in diffs) / (samples - 1)
        if mean > self.margin * (var / samples) ** 0.5:
            return legal[best]
        return legal[default]

    def _setup(
        self, view: SeatView, legal: list[int]
    ) -> tuple[int, dict[int, int], dict[int, list[int]], list[int], int]:
        """A searched decision's seat, the other seats' hand sizes and bounds
        (:func:`~craits.agents.hidden_cards.seat_caps`), the unseen cards and the number of
        samples."""
        seat = view.seat
        sizes = {s: k for s, k in enumerate(view.hand_sizes) if s != seat}
        tracker = view.tracker
        caps = {s: seat_caps(tracker, s) for s in sizes}
        return seat, sizes, caps, view.unseen_cards(), max(1, self.simulations // len(legal))

    def _evaluate(self, view: SeatView, legal: list[int]) -> tuple[list[list[float]], int]:
        """Per sample, the rollout value of each action; and the index of the action the
        rollout policy itself would take (on the first sample)."""
        table = self._table(view) if self.engine == "compiled" else None
        if table is not None:
            return self._evaluate_compiled(view, legal, table)
        seat, sizes, caps, unseen, samples = self._setup(view, legal)
        np_rng, rollout = self._np_rng, self.rollout
        hand = view.hand_index
        values: list[list[float]] = []
        default = 0
        drawn = None if self.sampler is None else self._sampler_worlds(view, samples, sizes)
        for k in range(samples):
            if drawn is None:
                hands, stock = sample_hidden(unseen, sizes, caps, self._sample_rng)
            else:
                hands, stock = drawn[k]
            root = view.determinize(hands, stock, np_rng)
            if k == 0:
                if self.prior is not None:
                    default = legal.index(self.prior.act(view))
                else:
                    default = legal.index(rollout(root))  # the policy only reads the game
            row = []
            others = self.others
            for action in legal:
                g = root.clone(rng=np_rng)
                g.apply(action)
                row.append(rollout_value(g, seat, hand, rollout, others=others))
            values.append(row)
        return values, default

    def _table(self, view: SeatView) -> Rollouts | None:
        """The compiled rollouts of this table (made once per players and rules); ``None``
        where the compiled engine cannot represent the rules and the engine was 'auto'."""
        from craits_env.vector import unsupported_options

        from .search_rollouts import Rollouts

        key = (view.num_players, view.rules)
        if key not in self._tables:
            if unsupported_options(view.rules) and not self._strict:
                self._tables[key] = None
            else:
                self._tables[key] = Rollouts(*key)
        return self._tables[key]

    def _evaluate_compiled(
        self, view: SeatView, legal: list[int], table: Rollouts
    ) -> tuple[list[list[float]], int]:
        """:meth:`_evaluate` with every rollout in one compiled call: the samples are drawn
        and checked first (all at once, as ``determinize`` checks each) — their order in
        ``self._sample_rng`` is unchanged, the rollouts draw from nothing else — then played
        in the Python order, drawing from ``self._np_rng`` as the Python rollouts do; so the
        values are the Python ones, bit for bit, and ``self._np_rng`` ends in the same
        state."""
        seat, sizes, caps, unseen, samples = self._setup(view, legal)
        np_rng = self._np_rng
        from .search_sampling import compiled_samples

        if self.sampler is None:
            dealt = compiled_samples(samples, unseen, sizes, caps, self._sample_rng)
        else:
            dealt = self.sampler.sample(view, samples, self._sample_rng).rows
        ends = list(itertools.accumulate(sizes.values()))
        stock_size = len(unseen) - sum(sizes.values())
        rows = dealt.tolist()

        def root(k: int) -> Game:
            row = rows[k]
            hands = {s: row[end - sizes[s] : end] for s, end in zip(sizes, ends, strict=True)}
            return view.determinize(hands, row[len(row) - stock_size :], np_rng)  # checks it

        # Every sample is checked at once (what ``determinize`` checks of each: the sizes by
        # the layout, the cards by this sort); only the first becomes a game, to load the row.
        if dealt.shape != (samples, len(unseen)) or not np.array_equal(
            np.sort(dealt, axis=1), np.broadcast_to(np.asarray(unseen), dealt.shape)
        ):
            raise ValueError("determinized: the sample is not the unseen cards")
        first = root(0)
        table.load(first)
        if self.prior is not None:
            default = legal.index(self.prior.act(view))
        else:
            default = legal.index(self.rollout(first))
        owners = [s for s in sizes for _ in range(sizes[s])]
        owners += [-1] * (len(unseen) - len(owners))
        values, state = table.values(
            dealt,
            np.array(owners, np.int64),
            legal,
            seat,
            np_rng.bit_generator.state,
            others=self.others,
            max_decisions=MAX_ROLLOUT_DECISIONS,
        )
        if values is None:  # points beyond float64's exact integers: Python's big ints
            others = self.others
            python = []
            for k in range(samples):
                start = root(k)
                row = []
                for action in legal:
                    g = start.clone(rng=np_rng)
                    g.apply(action)
                    row.append(rollout_value(g, seat, view.hand_index, others=others))
                python.append(row)
            return python, default
        np_rng.bit_generator.state = state
        return values.tolist(), default

    def _sampler_worlds(
        self, view: SeatView, samples: int, sizes: dict[int, int]
    ) -> list[tuple[dict[int, list[int]], list[int]]]:
        """The sampler's worlds as ``sample_hidden`` returns them: (hands, stock)."""
        assert self.sampler is not None
        worlds = []
        for row in self.sampler.sample(view, samples, self._sample_rng).rows.tolist():
            hands, at = {}, 0
            for s, k in sizes.items():
                hands[s] = row[at : at + k]
                at += k
            worlds.append((hands, row[at:]))
        return worlds


def _generators(seed: int | None) -> tuple[np.random.Generator, np.random.Generator]:
    """The samples' and the rollouts' generators of ``seed`` (fresh entropy for ``None``)."""
    if seed is None:
        return np.random.default_rng(), np.random.default_rng()
    return derive_rng(seed, SAMPLING_STREAM), np.random.default_rng(seed)


BUDGET = re.compile(r"[0-9]{1,9}")
"""How a spec's N is written: ASCII digits only (``"٣".isdecimal()`` and ``int("٣") == 3``)."""


def budget(arg: str) -> int:
    """The N of ``NAME:N`` written in ASCII digits, else 0 (refused by the caller)."""
    return int(arg) if BUDGET.fullmatch(arg) else 0


def make_pimc(arg: str, seed: int | None) -> Agent:
    """The spec ``pimc`` (default budget) or ``pimc:N`` (N rollouts per searched decision)."""
    if not arg:
        return PIMCAgent(seed=seed)
    simulations = budget(arg)
    if simulations < 1:
        raise ValueError(
            f"agent spec 'pimc:{arg}': expected 'pimc:N', N rollouts per move (N >= 1)"
        )
    return PIMCAgent(simulations, seed=seed)
