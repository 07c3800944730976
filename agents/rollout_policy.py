"""The PIMC bot's rollout policy: :func:`greedy_rollout_action` and :func:`rollout_value`.

A rollout plays a determinized copy of a searched position to the end of the hand with a
fast policy acting for every seat, then scores it: the mean of the opponents' points for
the hand minus the seat's own. :class:`craits.agents.pimc.PIMCAgent` runs them on the
Python engine, or compiled: :mod:`craits.agents.search_rollouts` mirrors both functions in
numba (``tests/agents/test_pimc_vector.py`` holds the two to each other).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from craits_env import CALL_BASE, DECLARE, NUM_CARDS, Game
from craits_env.actions import PHASE_CALL_SUIT, PHASE_DECLARE, forced_action
from craits_env.cards import RANK_OF, SUIT_OF, Rank
from craits_env.scoring import CARD_POINTS, score_ranks

MAX_ROLLOUT_DECISIONS = 1000
"""A rollout stops after this many decisions and scores the hands as they stand."""

RolloutPolicy = Callable[[Game], int]

_IS_WILD: tuple[bool, ...] = tuple(RANK_OF[c] in (Rank.EIGHT, Rank.NINE) for c in range(NUM_CARDS))
ROLLOUT_VALUE: tuple[int, ...] = tuple(
    CARD_POINTS[RANK_OF[c]] - (100 if _IS_WILD[c] else 0) for c in range(NUM_CARDS)
)
"""The rollout policy's preference per card: its points (R8.2), 8s and 9s below every other."""


def greedy_rollout_action(game: Game) -> int:
    """A fast policy on the engine itself, for every seat of a rollout.

    Play (and the count): the highest-value playable card (R8.2), keeping 8s and
    9s while another card is playable; DRAW only when nothing is playable. Suit
    call: the legal suit with the most non-wild cards in hand. Always DECLARE.

    Mirrored in numba by :func:`craits.agents.search_rollouts.greedy_action` (the compiled
    rollouts): a change here must be made there too (``tests/agents/test_pimc_vector.py``).
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
        if a < NUM_CARDS and ROLLOUT_VALUE[a] > value:
            best, value = a, ROLLOUT_VALUE[a]
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
    better). The hand may have ended already (``game.hand_index > hand``). Compiled:
    :func:`craits.agents.search_rollouts.rollout_points`."""
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
