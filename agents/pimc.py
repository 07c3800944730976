"""Perfect Information Monte Carlo search (PIMC): determinize, roll out, pick the best mean.

:class:`PIMCAgent` plays the expert heuristic's move (its *prior*,
:class:`agents.heuristics.ExpertAgent`) and searches the decisions where search
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

The agent only reads the view's public attributes, its own hand,
``unseen_cards()``, ``tracker`` and ``determinize()`` — never the live game.
Spec strings: ``"pimc"`` (default budget) and ``"pimc:N"`` (N rollouts per
searched decision).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import numpy as np

from craits_env import CALL_BASE, DECLARE, NUM_CARDS, Game
from craits_env.actions import PHASE_CALL_SUIT, PHASE_DECLARE, forced_action
from craits_env.cards import RANK_OF, SUIT_OF, Rank
from craits_env.public import PublicTracker, SeatView
from craits_env.scoring import CARD_POINTS, score_ranks

from .base import Agent, Observation, legal_actions_of
from .heuristics import ExpertAgent

DEFAULT_SIMULATIONS = 128
"""Rollouts per searched decision for ``"pimc"`` (timings: ``experiments/bench_tournament.py``)."""

ENDGAME = 3
"""Search once some player holds this many cards or fewer (``None``: every decision)."""

MARGIN = 1.0
"""Standard errors by which an action must beat the rollout policy's own choice."""

MAX_ROLLOUT_DECISIONS = 1000
"""A rollout stops after this many decisions and scores the hands as they stand."""

RolloutPolicy = Callable[[Game], int]

_IS_WILD: tuple[bool, ...] = tuple(RANK_OF[c] in (Rank.EIGHT, Rank.NINE) for c in range(NUM_CARDS))
# Rollout preference: a card's points (R8.2), 8s and 9s below every other card.
_ROLLOUT_VALUE: tuple[int, ...] = tuple(
    CARD_POINTS[RANK_OF[c]] - (100 if _IS_WILD[c] else 0) for c in range(NUM_CARDS)
)

# Constraint categories of a card: its suit (0-3), WILD (an 8 or 9), COUNTER (an ace or two).
_WILD, _COUNTER = 4, 5
_NUM_CATEGORIES = 6
_CATEGORIES: tuple[tuple[int, ...], ...] = tuple(
    (SUIT_OF[c],)
    + ((_WILD,) if _IS_WILD[c] else ())
    + ((_COUNTER,) if RANK_OF[c] in (Rank.ACE, Rank.TWO) else ())
    for c in range(NUM_CARDS)
)
_UNLIMITED = 1 << 30


# ---------------------------------------------------------------------------- rollouts


def greedy_rollout_action(game: Game) -> int:
    """A fast policy on the engine itself, for every seat of a rollout.

    Play (and the count): the highest-value playable card (R8.2), keeping 8s and
    9s while another card is playable; DRAW only when nothing is playable. Suit
    call: the legal suit with the most non-wild cards in hand. Always DECLARE.
    """
    legal = game.legal_actions()
    forced = forced_action(legal)
    if forced is not None:
        return forced
    phase = game.phase
    if phase == PHASE_DECLARE:
        return DECLARE
    if phase == PHASE_CALL_SUIT:
        held = [0, 0, 0, 0]
        for c in game.hands[game.current_player]:
            if not _IS_WILD[c]:
                held[SUIT_OF[c]] += 1
        best, most = legal[0], -1
        for a in legal:
            k = held[a - CALL_BASE]
            if k > most:
                best, most = a, k
        return best
    best, value = legal[0], -(1 << 30)
    for a in legal:
        if a < NUM_CARDS and _ROLLOUT_VALUE[a] > value:
            best, value = a, _ROLLOUT_VALUE[a]
    return best


def rollout_value(
    game: Game,
    seat: int,
    hand: int,
    policy: RolloutPolicy = greedy_rollout_action,
    max_decisions: int = MAX_ROLLOUT_DECISIONS,
    others: float = 1.0,
) -> float:
    """Play ``game`` (modified in place) to the end of hand number ``hand`` with ``policy`` for
    every seat; the mean of the opponents' points for that hand minus ``seat``'s (higher is
    better). The hand may have ended already (``game.hand_index > hand``)."""
    apply = game.apply
    steps = 0
    while game.hand_index == hand and steps < max_decisions:
        apply(policy(game))
        steps += 1
    if game.hand_index != hand:  # the hand (maybe the game) ended: its points are recorded
        points: Sequence[int] = game.hand_points[hand]
    else:  # cut short: score the cards held now (R8.2–R8.4)
        rules = game.rules
        points = [score_ranks([RANK_OF[c] for c in h], rules) for h in game.hands]
    n = len(points)
    own = points[seat]
    return others * (sum(points) - own) / (n - 1) - own


# ---------------------------------------------------------------------------- sampling


def _caps(tracker: PublicTracker, seat: int) -> list[int]:
    """Per category (suits 0-3, 8s and 9s, aces and twos), the cards ``seat`` has drawn since
    it showed it held none of it; ``_UNLIMITED`` where nothing is known."""
    caps = [_UNLIMITED] * _NUM_CATEGORIES
    for suit in range(4):
        k = tracker.void_draws(seat, suit)
        if k is not None:
            caps[suit] = k
    k = tracker.no_wild_draws(seat)
    if k is not None:
        caps[_WILD] = k
    k = tracker.no_count_draws(seat)
    if k is not None:
        caps[_COUNTER] = k
    return caps


def sample_hidden(
    unseen: Sequence[int],
    sizes: dict[int, int],
    caps: dict[int, list[int]],
    rng: random.Random,
    attempts: int = 4,
) -> tuple[dict[int, list[int]], list[int]]:
    """Deal ``unseen`` to the seats of ``sizes`` (seat -> hand size) and the stock (the rest).

    ``caps[seat][category]`` (categories: suit 0-3, 4 = 8s and 9s, 5 = aces and
    twos; see :func:`_caps`) is the number of cards the seat has drawn since it
    showed it held no card of the category. Every card it holds of such a
    category came with those draws, so for each ``k`` the seat holds at most
    ``k`` cards of all the categories whose value is ``k`` or less together (a
    seat that drew one card since drawing on a heart holds at most one card
    that is a heart, an 8 or a 9).

    The cards of a bounded category are placed first, in random order, each into
    a uniformly random free slot that may still take it (the stock takes
    anything); the others then fill the remaining slots in random order. If a
    card finds no slot, the deal is retried; after ``attempts`` failures the
    bounds are dropped (a plain shuffle), which no real position needs.
    Returns ``(hands, stock)``, the stock next-card-first.
    """
    seats = [s for s in sizes if sizes[s] > 0]
    stock_size = len(unseen) - sum(sizes[s] for s in seats)
    if stock_size < 0:
        raise ValueError("sample_hidden: fewer unseen cards than hidden hand slots")
    chains = {s: _Chain(caps[s]) for s in seats if s in caps and min(caps[s]) < _UNLIMITED}
    bounded = [
        any(chain.entry[k] < _NO_LEVEL for chain in chains.values()) for k in range(_NUM_CATEGORIES)
    ]
    constrained: list[int] = []
    free_cards: list[int] = []
    for c in unseen:
        if any(bounded[k] for k in _CATEGORIES[c]):
            constrained.append(c)
        else:
            free_cards.append(c)
    for _ in range(attempts if constrained else 0):
        dealt = _deal_constrained(constrained, seats, sizes, stock_size, chains, rng)
        if dealt is not None:
            hands, stock = dealt
            break
    else:
        hands, stock = {s: [] for s in seats}, []
        free_cards = list(unseen)
    rng.shuffle(free_cards)
    k = 0
    for s in seats:
        need = sizes[s] - len(hands[s])
        hands[s].extend(free_cards[k : k + need])
        k += need
    stock.extend(free_cards[k:])
    rng.shuffle(stock)
    for s in sizes:
        hands.setdefault(s, [])
    return hands, stock


_NO_LEVEL = 99


class _Chain:
    """One seat's nested bounds: level ``j`` holds the categories whose cap is the ``j``-th
    smallest, and the cards of levels ``0..j`` together may number at most that cap."""

    __slots__ = ("entry", "left")

    def __init__(self, caps: list[int]) -> None:
        levels = sorted({k for k in caps if k < _UNLIMITED})
        self.left = levels
        self.entry = [levels.index(k) if k < _UNLIMITED else _NO_LEVEL for k in caps]

    def level(self, card: int) -> int:
        """The first level ``card`` counts in (it then counts in every later one)."""
        return min(self.entry[k] for k in _CATEGORIES[card])


def _deal_constrained(
    cards: list[int],
    seats: list[int],
    sizes: dict[int, int],
    stock_size: int,
    chains: dict[int, _Chain],
    rng: random.Random,
) -> tuple[dict[int, list[int]], list[int]] | None:
    """Place ``cards`` one by one into random free slots within the bounds; ``None`` if stuck."""
    order = cards[:]
    rng.shuffle(order)
    left = {s: chain.left[:] for s, chain in chains.items()}
    free = {s: sizes[s] for s in seats}
    hands: dict[int, list[int]] = {s: [] for s in seats}
    stock: list[int] = []
    stock_free = stock_size
    for c in order:
        entry = {s: chain.level(c) for s, chain in chains.items()}
        open_seats = [
            s for s in seats if free[s] and (s not in entry or min(left[s][entry[s] :], default=1))
        ]
        total = stock_free + sum(free[s] for s in open_seats)
        if total == 0:
            return None
        r = rng.randrange(total)
        if r < stock_free:
            stock.append(c)
            stock_free -= 1
            continue
        r -= stock_free
        for s in open_seats:
            if r < free[s]:
                break
            r -= free[s]
        hands[s].append(c)
        free[s] -= 1
        if s in left:
            bounds = left[s]
            for j in range(entry[s], len(bounds)):
                bounds[j] -= 1
    return hands, stock


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
            :class:`~agents.heuristics.ExpertAgent`; ``None``: the rollout policy.
        endgame: search once some player holds at most this many cards;
            ``None`` (or no prior) searches every decision.
        others: weight of the opponents' mean points in a rollout's value
            (1: the hand's relative result; 0: own points only).
    """

    name = "pimc"
    version = 1  # bump when its play (or its prior's) changes: stored results are keyed by it

    def __init__(
        self,
        simulations: int = DEFAULT_SIMULATIONS,
        seed: int | None = None,
        rollout: RolloutPolicy = greedy_rollout_action,
        margin: float = MARGIN,
        prior: Agent | str | None = "expert",
        endgame: int | None = ENDGAME,
        others: float = 1.0,
    ) -> None:
        if isinstance(simulations, bool) or not isinstance(simulations, int) or simulations < 1:
            raise ValueError(f"simulations: got {simulations!r}, expected a positive integer")
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
        self.name = "pimc" if simulations == DEFAULT_SIMULATIONS else f"pimc:{simulations}"
        self._random = random.Random(seed)
        self._np_rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if self.prior is not None:
            self.prior.reset(seed)
        if seed is not None:
            self._random = random.Random(seed)
            self._np_rng = np.random.default_rng(seed)

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

    def _evaluate(self, view: SeatView, legal: list[int]) -> tuple[list[list[float]], int]:
        """Per sample, the rollout value of each action; and the index of the action the
        rollout policy itself would take (on the first sample)."""
        seat = view.seat
        sizes = {s: k for s, k in enumerate(view.hand_sizes) if s != seat}
        tracker = view.tracker
        caps = {s: _caps(tracker, s) for s in sizes}
        unseen = view.unseen_cards()
        samples = max(1, self.simulations // len(legal))
        np_rng, rollout = self._np_rng, self.rollout
        hand = view.hand_index
        values: list[list[float]] = []
        default = 0
        for k in range(samples):
            hands, stock = sample_hidden(unseen, sizes, caps, self._random)
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


def make_pimc(arg: str, seed: int | None) -> Agent:
    """The spec ``pimc`` (default budget) or ``pimc:N`` (N rollouts per searched decision)."""
    if not arg:
        return PIMCAgent(seed=seed)
    try:
        simulations = int(arg)
    except ValueError:
        simulations = 0
    if simulations < 1:
        raise ValueError(
            f"agent spec 'pimc:{arg}': expected 'pimc:N', N rollouts per move (N >= 1)"
        )
    return PIMCAgent(simulations, seed=seed)
