"""The default demo: a full game between bots, each hand's points and the standings.

The bots are agent specs (``greedy``, ``random``, ``expert``, ``pimc``, ``ppo:PATH``,
your own ``MODULE:ATTR`` … see :mod:`craits.agents.specs`), each acting on its own seat's view.
"""

from __future__ import annotations

from collections.abc import Callable

from craits.agents.arena import engine_table
from craits.agents.specs import make_agent
from craits_env.engine import Game
from craits_env.rules import Rules

DEFAULT_BOTS = ("greedy", "random")


def play_demo(
    num_players: int = 4,
    seed: int = 0,
    rules: Rules | None = None,
    bots: list[str] | None = None,
    out: Callable[[str], None] = print,
) -> Game:
    """Play and print one game; returns the finished game."""
    bots = bots or [DEFAULT_BOTS[s % 2] for s in range(num_players)]
    if len(bots) != num_players:
        raise ValueError(f"bots: got {len(bots)} specs for {num_players} players")
    agents = [make_agent(b, num_players=num_players, rules=rules) for b in bots]
    for s, agent in enumerate(agents):
        agent.reset(seed * 1000 + s)
    g = Game(num_players, rules, seed=seed)
    dealers = [g.dealer]  # each hand's dealer, as the hands begin

    def on_move(player: int, action: int) -> None:
        if len(g.hand_points) == len(dealers) and not g.is_over:
            dealers.append(g.dealer)

    decisions = engine_table(g, agents, names=bots, on_move=on_move).run()  # the arena
    names = [f"p{s}:{b}" for s, b in enumerate(bots)]
    width = max(10, *(len(n) for n in names))
    out(f"Craits — {num_players} players, seed {seed}, first dealer player_{g.first_dealer}")
    out(" hand  cards  dealer  " + "".join(n.rjust(width) for n in names))
    for hand, pts in enumerate(g.hand_points):
        size, dealer = g.rules.hand_sizes[hand], dealers[hand]
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
