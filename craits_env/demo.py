"""The default demo: a full game between simple bots, each hand's points and the standings.

The bots here see only their own hand and the legal actions (nothing hidden):
``random`` picks uniformly; ``greedy`` sheds the highest-scoring playable card
(R8.2), calls the suit it holds most of, and always declares "one card".
"""

from __future__ import annotations

import random
from collections.abc import Callable

from .actions import CALL_BASE, DECLARE, DRAW, Phase
from .cards import RANK_OF, SUIT_OF
from .engine import Game
from .rules import Rules
from .scoring import CARD_POINTS

EnginePolicy = Callable[[Game], int]


def random_policy(rng: random.Random) -> EnginePolicy:
    def act(g: Game) -> int:
        legal = g.legal_actions()
        return legal[rng.randrange(len(legal))]

    return act


def greedy_policy(g: Game) -> int:
    legal = g.legal_actions()
    if g.phase == Phase.DECLARE:
        return DECLARE
    p = g.current_player
    assert p is not None
    hand = g.hands[p]
    if g.phase == Phase.CALL_SUIT:
        return max(legal, key=lambda a: (sum(SUIT_OF[c] == a - CALL_BASE for c in hand), -a))
    cards = [a for a in legal if a != DRAW]
    if not cards:
        return DRAW
    return max(cards, key=lambda c: (CARD_POINTS[RANK_OF[c]], c))


POLICIES = ("random", "greedy")


def play_demo(
    num_players: int = 4,
    seed: int = 0,
    rules: Rules | None = None,
    bots: list[str] | None = None,
    out: Callable[[str], None] = print,
) -> Game:
    """Play and print one game; returns the finished game."""
    bots = bots or [POLICIES[s % 2] for s in range(num_players)]
    if len(bots) != num_players:
        raise ValueError(f"bots: got {len(bots)} names for {num_players} players")
    rng = random.Random(seed)
    policies: list[EnginePolicy] = []
    for name in bots:
        if name == "random":
            policies.append(random_policy(rng))
        elif name == "greedy":
            policies.append(greedy_policy)
        else:
            raise ValueError(f"unknown bot {name!r}; known: {', '.join(POLICIES)}")
    g = Game(num_players, rules, seed=seed)
    names = [f"p{s}:{b}" for s, b in enumerate(bots)]
    width = max(10, *(len(n) for n in names))
    out(f"Craits — {num_players} players, seed {seed}, first dealer player_{g.first_dealer}")
    out(" hand  cards  dealer  " + "".join(n.rjust(width) for n in names))
    decisions = 0
    while not g.is_over:
        hand, dealer, size = g.hand_index, g.dealer, g.hand_size
        while g.hand_index == hand and not g.is_over:
            g.apply(policies[g.current_player or 0](g))
            decisions += 1
        pts = g.hand_points[hand]
        out(f" {hand + 1:>4}  {size:>5}  {dealer:>6}  " + "".join(str(p).rjust(width) for p in pts))
    out(" " * 21 + "".join(str(s).rjust(width) for s in g.scores) + "   total")
    out("")
    out("Standings (lowest total wins, R8.6):")
    order = sorted(range(num_players), key=lambda s: (g.scores[s], s))
    for rank, s in enumerate(order, 1):
        mark = "  winner" if s in g.winners() else ""
        out(
            f" {rank:>2}. player_{s} ({bots[s]}) {g.scores[s]:>6} points, "
            f"{g.shuffle_pressures[s]} shuffle pressure(s){mark}"
        )
    out(f"{decisions} decisions in {len(g.hand_points)} hands")
    return g
