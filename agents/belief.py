"""A belief over a seat's hidden cards: uniform consistent worlds, weighted by an opponent model.

:func:`~craits.agents.hidden_cards.sample_hidden` deals the cards a seat cannot see uniformly
among the worlds that fit the hard public facts (hand sizes, cards seen, suits a player
showed it lacked, R11). The opponents' *choices* say more: a player who played a low club
while holding (in some world) a high one it would have shed, or called hearts while
holding (in that world) four spades, is unlikely under a model of how players choose.
:class:`PolicyBelief` weights the uniform worlds by that evidence:

1. **Candidates**: ``oversample * n`` worlds from the uniform consistent sampler (the
   compiled twin of ``sample_hidden``, :func:`~craits.agents.search_sampling.compiled_samples`).
2. **Evidence**: the hand's public decisions, :attr:`PublicTracker.steps
   <craits_env.public.PublicTracker.steps>`. A decision of opponent ``j`` whose hand is
   known in a world is one after which ``j`` drew nothing (its hand size now equals its size
   then minus the cards it played since): its hand then was its hand in the world plus the
   cards it played since. For each such play, count or suit call (R3.1, R5.2, R4), the
   model (``expert`` or ``tactician``, :mod:`craits.agents.heuristics`, asked through a
   :class:`PastView` of that moment) names its choice; the decision's probability is
   ``(1 - epsilon) * [action == choice] + epsilon / legal`` — an action the world makes
   illegal gets :data:`ILLEGAL` — and the world's log-weight is the sum of their logs over
   ``temperature``. Decisions before an opponent's last draw are not used (which cards it
   drew is not in the world), nor declarations (the models always declare, R7.1).
3. **Resampling**: ``n`` worlds by systematic resampling of the normalised weights
   (:func:`systematic_resample`); :attr:`BeliefSample.ess` is the candidates' effective size.

This is the plain importance version, not sequential Monte Carlo: every decision weights
fresh candidates against the hand's whole history (its cost per world:
``experiments/results/belief/README.md``). The model's choice at a decision depends on the
opponent's hand then and on that decision's public table only — the table of its
:class:`~craits_env.public.PublicStep` and the public inferences as they stood then
(:func:`past_inferences`, rebuilt from the decisions before it) — so it is cached per
(decision, hand) for the rest of the hand. The belief reads the view's public attributes, its
own hand and the tracker — never a hidden card: ``tests/agents/test_card_belief.py`` permutes the
hidden cards and finds the same samples and weights.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol, cast

import numpy as np

from craits_env import NUM_CARDS
from craits_env.actions import CALL_BASE, DRAW, PHASE_CALL_SUIT, PHASE_COUNT, PHASE_PLAY
from craits_env.cards import RANK_OF, SUIT_OF, Rank
from craits_env.public import PublicStep, SeatView

from .heuristics import ExpertAgent, TacticianAgent
from .hidden_cards import seat_caps
from .search_sampling import compiled_samples

MODELS = ("expert", "tactician")
"""The opponent models: the heuristic bots of :mod:`craits.agents.heuristics`."""
ILLEGAL = 1e-6
"""The probability of a decision that the world makes illegal (the hard facts' sampler has
approximate bounds, :func:`~craits.agents.hidden_cards.seat_caps`)."""
MAX_LEGAL = NUM_CARDS + 1
"""The most legal actions a decision has (every card and DRAW)."""
_WILD_RANKS = (int(Rank.EIGHT), int(Rank.NINE))
_COUNTERS = (int(Rank.ACE), int(Rank.TWO))
_NINE = int(Rank.NINE)
_MODELLED = (PHASE_PLAY, PHASE_COUNT, PHASE_CALL_SUIT)
_LOG_ILLEGAL = math.log(ILLEGAL)


def legal_then(step: PublicStep, hand: Sequence[int], voluntary_draw: bool) -> tuple[int, ...]:
    """The legal actions of ``step``'s seat holding ``hand`` at that decision, ascending."""
    if step.phase == PHASE_CALL_SUIT:  # R4: an 8 calls any suit, a 9 its own or its colour's
        card = step.top  # the 8 or 9 just played
        if RANK_OF[card] == _NINE:
            own = SUIT_OF[card]
            return tuple(sorted((CALL_BASE + own, CALL_BASE + 3 - own)))
        return tuple(range(CALL_BASE, CALL_BASE + 4))
    if step.phase == PHASE_COUNT:  # R5.2: aces and twos only
        cards = {c for c in hand if RANK_OF[c] in _COUNTERS}
    else:  # R3.1: the active suit, the top's rank, or a wild
        suit, rank = step.active_suit, RANK_OF[step.top]
        cards = {
            c for c in hand if SUIT_OF[c] == suit or RANK_OF[c] == rank or RANK_OF[c] in _WILD_RANKS
        }
    legal = sorted(cards)
    if not legal or voluntary_draw:  # R3.3, R5.3
        legal.append(DRAW)
    return tuple(legal)


class PastInferences:
    """The tracker's inferences as they stood at decision ``i`` of the hand, rebuilt from the
    decisions before it (:func:`past_inferences`): exactly what
    :class:`~craits_env.public.PublicTracker` knew then, whatever came after."""

    __slots__ = ("_drawn", "_no_count", "_no_wild", "_void")

    def __init__(
        self,
        void: list[list[int | None]],
        no_wild: list[int | None],
        no_count: list[int | None],
        drawn: tuple[int, ...],
    ) -> None:
        self._void, self._no_wild, self._no_count, self._drawn = void, no_wild, no_count, drawn

    def _since(self, base: int | None, seat: int) -> int | None:
        return None if base is None else self._drawn[seat] - base

    def void_draws(self, seat: int, suit: int) -> int | None:
        return self._since(self._void[seat][suit], seat)

    def no_wild_draws(self, seat: int) -> int | None:
        return self._since(self._no_wild[seat], seat)

    def no_count_draws(self, seat: int) -> int | None:
        return self._since(self._no_count[seat], seat)


def past_inferences(
    steps: Sequence[PublicStep], num_players: int, voluntary_draw: bool
) -> list[PastInferences]:
    """Per decision of the hand, the inferences before it (``len(steps)`` of them): a seat that
    drew one or more cards at a play decision showed no card of the active suit and no 8 or 9
    (R3.3), at a count decision no ace or two (R5.3), each from its draw counter then — what
    :meth:`PublicTracker.observe <craits_env.public.PublicTracker.observe>` learns, decision by
    decision (``tests/agents/test_card_belief.py`` holds the two equal). With ``voluntary_draw`` a
    draw shows nothing."""
    void: list[list[int | None]] = [[None] * 4 for _ in range(num_players)]
    no_wild: list[int | None] = [None] * num_players
    no_count: list[int | None] = [None] * num_players
    out = []
    for k, step in enumerate(steps):
        out.append(PastInferences([v[:] for v in void], no_wild[:], no_count[:], step.drawn))
        if voluntary_draw or step.action != DRAW or k + 1 == len(steps):
            continue
        j = step.seat
        if steps[k + 1].drawn[j] == step.drawn[j]:  # nothing left to draw: nothing shown
            continue
        if step.phase == PHASE_PLAY:
            void[j][step.active_suit] = no_wild[j] = step.drawn[j]
        elif step.phase == PHASE_COUNT:
            no_count[j] = step.drawn[j]
    return out


class PastView:
    """What the seat of a past decision saw (a :class:`~craits_env.public.SeatView`'s
    attributes that the heuristic bots read), in a world where its hand was ``hand``."""

    def __init__(
        self,
        step: PublicStep,
        hand: list[int],
        legal: tuple[int, ...],
        view: SeatView,
        tracker: PastInferences,
    ) -> None:
        self.seat = step.seat
        self.hand = hand
        self.legal_actions = legal
        self.phase = step.phase
        self.top = step.top
        self.active_suit = step.active_suit
        self.count = step.count_value
        self.direction = step.direction
        self.hand_sizes = list(step.hand_sizes)
        self.discard = list(step.discard)
        self.extra_play = step.extra_play
        self.king_cards_left = step.king_left
        self.jack_run = step.jack_run
        self.num_players = view.num_players
        self.rules = view.rules
        self.tracker = tracker


class BeliefSample(NamedTuple):
    """Worlds of a belief: ``rows[k]`` holds the other seats' hands (in seat order, sizes
    ``sizes``), then the stock (next card first), as
    :func:`~craits.agents.search_sampling.compiled_samples` lays them out."""

    rows: np.ndarray
    weights: np.ndarray  # normalised
    ess: float  # the effective sample size of the weighted candidates
    candidates: int


class WorldSampler(Protocol):
    """What :class:`~craits.agents.pimc.PIMCAgent` asks of its ``sampler``: ``n`` worlds of a
    seat's view (consistent with it: the search checks each), drawn from ``rng``.
    :class:`PolicyBelief` is one; ``experiments/`` holds others (a learned card-location
    model, an oracle that measures how much information the search needs)."""

    def sample(self, view: SeatView, n: int, rng: np.random.Generator) -> BeliefSample: ...


def systematic_resample(weights: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` indices drawn by systematic resampling of the normalised ``weights`` (one
    uniform draw: index ``i`` appears ``floor`` or ``ceil`` of ``n * weights[i]`` times)."""
    edges = np.cumsum(weights)
    edges[-1] = 1.0
    points = (rng.random() + np.arange(n)) / n
    return np.searchsorted(edges, points, side="right")


class PolicyBelief:
    """Worlds consistent with everything public, weighted by an opponent model (module doc).

    Args:
        model: ``"expert"`` or ``"tactician"`` (:data:`MODELS`).
        temperature: the log-likelihood of the decisions is divided by it (higher: softer).
        epsilon: the probability a modelled player plays uniformly among its legal actions.
        oversample: candidates drawn per world returned by :meth:`sample`...
        limit: ...but no more than ``limit`` candidates (or ``n``, if more) per call.
    """

    def __init__(
        self,
        model: str = "expert",
        temperature: float = 1.0,
        epsilon: float = 0.1,
        oversample: int = 4,
        limit: int = 512,
    ) -> None:
        if model not in MODELS:
            raise ValueError(f"model: got {model!r}, allowed one of {', '.join(MODELS)}")
        if not temperature > 0 or not 0 < epsilon <= 1 or oversample < 1 or limit < 1:
            raise ValueError(
                f"temperature {temperature!r} > 0, 0 < epsilon {epsilon!r} <= 1 and "
                f"oversample {oversample!r}, limit {limit!r} >= 1 expected"
            )
        self.model = model
        self.temperature = temperature
        self.epsilon = epsilon
        self.oversample = oversample
        self.limit = limit
        # Per number of legal actions n: the log-probability of a miss and of a hit.
        self._log_eps = [0.0] + [math.log(epsilon / n) for n in range(1, MAX_LEGAL + 1)]
        self._log_hit = [0.0] + [
            math.log(1.0 - epsilon + epsilon / n) for n in range(1, MAX_LEGAL + 1)
        ]
        agent: TacticianAgent = ExpertAgent() if model == "expert" else TacticianAgent()
        self._agent = agent
        # Per hand (the decisions seen so far, ``_seen``; a history that does not extend
        # them is another hand): the model's choices and the decisions' terms per (decision,
        # hand held then), and the inferences before each decision. None of them depends on
        # what came after the decision, so they hold for every later position of the hand.
        self._choices: dict[tuple[int, tuple[int, ...]], int] = {}
        self._terms: dict[tuple[int, tuple[int, ...]], float] = {}
        self._pasts: list[PastInferences] = []
        self._seen: list[PublicStep] = []
        self._rules_key: tuple[int, Any] | None = None

    @property
    def identity(self) -> str:
        """The belief's settings, for an agent's identity."""
        return (
            f"belief({self.model},T={self.temperature:g},eps={self.epsilon:g},"
            f"x{self.oversample},<={self.limit})"
        )

    # -- the worlds --------------------------------------------------------------------

    def layout(self, view: SeatView) -> tuple[dict[int, int], dict[int, list[int]], list[int]]:
        """The other seats' hand sizes, their bounds and the unseen cards of ``view``."""
        sizes = {s: k for s, k in enumerate(view.hand_sizes) if s != view.seat}
        caps = {s: seat_caps(view.tracker, s) for s in sizes}
        return sizes, caps, view.unseen_cards()

    def candidates(self, view: SeatView, k: int, rng: np.random.Generator) -> BeliefSample:
        """``k`` uniform consistent worlds with their normalised weights under the model."""
        sizes, caps, unseen = self.layout(view)
        rows = compiled_samples(k, unseen, sizes, caps, rng)
        scorer = self.scorer(view)
        logw = np.array([scorer(row) for row in rows.tolist()])
        weights = np.exp(logw - logw.max())
        weights /= weights.sum()
        return BeliefSample(rows, weights, float(1.0 / np.sum(weights**2)), k)

    def sample(self, view: SeatView, n: int, rng: np.random.Generator) -> BeliefSample:
        """``n`` worlds resampled from ``oversample * n`` weighted candidates, at most
        ``limit`` (or ``n``); the worlds' weights are then ``1 / n``. Where no opponent
        decision is read (:meth:`evidence` finds none) every candidate weighs the same, and
        the worlds are the uniform consistent sampler's ``n``, drawn as ``champion-search``
        draws them: the same generator state gives the same worlds."""
        steps = view.tracker.steps
        if not steps or not self.evidence(view, steps):
            sizes, caps, unseen = self.layout(view)
            rows = compiled_samples(n, unseen, sizes, caps, rng)
            return BeliefSample(rows, np.full(n, 1.0 / n), float(n), n)
        pool = self.candidates(view, max(n, min(self.oversample * n, self.limit)), rng)
        picked = systematic_resample(pool.weights, n, rng)
        return BeliefSample(pool.rows[picked], np.full(n, 1.0 / n), pool.ess, pool.candidates)

    def log_likelihood(self, view: SeatView, hands: dict[int, Sequence[int]]) -> float:
        """The log-weight of the world where the other seats hold ``hands`` (natural log, up
        to the uniform prior's constant): the model's evidence of the hand's decisions."""
        sizes, _, unseen = self.layout(view)
        row = [c for s in sizes for c in hands.get(s, ())]
        return self.scorer(view)(row + [0] * (len(unseen) - len(row)))

    # -- the evidence ------------------------------------------------------------------

    def scorer(self, view: SeatView) -> Callable[[list[int]], float]:
        """The log-weight of a world given as a row of :class:`BeliefSample`."""
        steps = view.tracker.steps
        if not steps:  # no decision yet, or a history not kept (a restored tracker)
            return _no_evidence
        self._position(view, steps)
        sizes = {s: k for s, k in enumerate(view.hand_sizes) if s != view.seat}
        offsets: dict[int, int] = {}
        at = 0
        for s, k in sizes.items():
            offsets[s] = at
            at += k
        evidence = self.evidence(view, steps)
        if not evidence:
            return _no_evidence
        terms, term, scale = self._terms, self._term, 1.0 / self.temperature

        def score(row: list[int]) -> float:
            total = 0.0
            for i, step, later in evidence:
                j = step.seat
                hand = tuple(sorted(row[offsets[j] : offsets[j] + sizes[j]] + later))
                value = terms.get((i, hand))
                if value is None:
                    value = terms[(i, hand)] = term(i, step, hand, view)
                total += value
            return total * scale

        return score

    def _position(self, view: SeatView, steps: list[PublicStep]) -> None:
        """Keep the cached choices, terms and inferences while ``steps`` extends the history
        they were made for (the same hand, later); forget them for any other history."""
        seen = self._seen
        key = (view.num_players, view.rules)  # the model reads the rules too
        if key != self._rules_key or len(steps) < len(seen) or steps[: len(seen)] != seen:
            self._choices, self._terms, self._seen = {}, {}, []
            self._rules_key = key
            seen = self._seen
        if len(steps) > len(seen):
            seen.extend(steps[len(seen) :])
            self._pasts = past_inferences(seen, view.num_players, bool(view.rules.voluntary_draw))

    def _term(self, i: int, step: PublicStep, hand: tuple[int, ...], view: SeatView) -> float:
        """The log-probability (before the temperature) of decision ``i``'s action, its seat
        holding ``hand`` then: :data:`ILLEGAL` if the hand makes it illegal, nothing if it was
        the only legal action, else a hit's or a miss's (module doc, step 2)."""
        legal = legal_then(step, hand, bool(view.rules.voluntary_draw))
        if step.action not in legal:
            return _LOG_ILLEGAL
        n = len(legal)
        if n == 1:
            return 0.0
        hit = self._choose(i, step, list(hand), legal, view) == step.action
        return self._log_hit[n] if hit else self._log_eps[n]

    def evidence(
        self, view: SeatView, steps: list[PublicStep]
    ) -> list[tuple[int, PublicStep, list[int]]]:
        """The decisions of opponents whose hand then a world tells: ``(index, step, cards
        the seat played from then on)``, for decisions after the seat's last draw."""
        now = view.hand_sizes
        played_after: dict[int, list[int]] = {s: [] for s in range(view.num_players)}
        out = []
        for i in range(len(steps) - 1, -1, -1):
            step = steps[i]
            j = step.seat
            if step.action < NUM_CARDS and step.phase in (PHASE_PLAY, PHASE_COUNT):
                played_after[j].append(step.action)
            if j == view.seat or step.phase not in _MODELLED:
                continue
            drew_since = now[j] - step.hand_sizes[j] + len(played_after[j])
            if drew_since == 0:
                out.append((i, step, played_after[j][:]))
        return out

    def _choose(
        self, i: int, step: PublicStep, hand: list[int], legal: tuple[int, ...], view: SeatView
    ) -> int:
        """The model's action at decision ``i`` holding ``hand`` (cached per hand; the
        position is :meth:`scorer`'s, which sets it)."""
        key = (i, tuple(hand))
        choice = self._choices.get(key)
        if choice is None:
            tracker = self._pasts[i]
            past = cast(Any, PastView(step, hand, legal, view, tracker))
            agent = self._agent
            if step.phase == PHASE_PLAY:
                choice = agent.play(past, legal)
            elif step.phase == PHASE_COUNT:
                choice = agent.count(past, legal)
            else:
                choice = agent.call(past, legal)
            self._choices[key] = choice
        return choice


def split_row(view: SeatView, row: Sequence[int]) -> tuple[dict[int, list[int]], list[int]]:
    """A world row of :class:`BeliefSample` as ``(hands, stock)``: seat -> cards of every
    other seat, and the stock, next card first."""
    hands, at = {}, 0
    for s, k in enumerate(view.hand_sizes):
        if s != view.seat:
            hands[s] = [int(c) for c in row[at : at + k]]
            at += k
    return hands, [int(c) for c in row[at:]]


class BeliefSampler:
    """A belief as the ``sampler`` of ``python_craits``'s ``state.resample_from_infostate``
    (:mod:`craits_env.integrations.openspiel`): called, a uniform draw in [0, 1) from its own
    seeded generator (what OpenSpiel's probability samplers give, here only seeding the
    world's generator); :meth:`sample` draws the world from the belief. The same seed gives
    the same sequence of worlds."""

    def __init__(self, belief: PolicyBelief, seed: int | None = None) -> None:
        self.belief = belief
        self._rng = np.random.default_rng(seed)

    def __call__(self) -> float:
        return float(self._rng.random())

    def sample(
        self, view: SeatView, n: int, rng: np.random.Generator
    ) -> list[tuple[dict[int, list[int]], list[int]]]:
        """``n`` worlds of the belief, each ``(hands, stock)``."""
        return [split_row(view, row) for row in self.belief.sample(view, n, rng).rows.tolist()]


def _no_evidence(row: list[int]) -> float:
    """The log-weight of every world when no decision is read: all alike."""
    return 0.0
