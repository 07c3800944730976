"""What a searching bot's move costs at each table ``craits serve`` allows (issue 43, A): the
seconds of its searched decisions, per unit of its budget ``N`` and of the table's work.

A searched decision of ``pimc:N`` (and ``champion-search:N``, ``belief-search:N``) plays ``N``
rollouts to the end of the hand: its cost grows with ``N`` times the cards in play (players
times the hand size dealt). One of ``openspiel-ismcts:N`` runs ``N`` simulations to the end of
the game: ``N`` times the players times the cards of every hand left. This script plays a few
decisions of each spec at small and large tables and prints the 90th percentile of their
seconds, per ``N`` and per unit of work; ``craits.web.costs.COSTS`` is a fixed part and a part
per unit fitted over the tables (rounded up), and refuses a spec whose move would take more
than its budget at the table asked for (a move slower still stops at ``--move-seconds``)::

    python experiments/bench_web_costs.py --seconds 15
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from craits.agents.specs import make_agent
from craits.web.costs import work_units
from craits_env.engine import Game
from craits_env.public import PublicGame
from craits_env.rules import Rules

TABLES = {
    "2 players, 5 cards": (2, Rules(hand_sizes=(5, 4))),
    "4 players, standard": (4, Rules()),
    "10 players, 2 decks, 8 cards": (10, Rules(num_decks=2, hand_sizes=(8, 8))),
}
SPECS = ("champion-search:64", "belief-search:64", "openspiel-ismcts:2", "pimc:256")


def searched_seconds(spec: str, players: int, rules: Rules, seconds: float) -> list[float]:
    """Seconds of the decisions with a choice, over at most ``seconds`` of play."""
    game = Game(players, rules, seed=1)
    public = PublicGame(game)
    agents = [make_agent(spec, s, num_players=players, rules=rules) for s in range(players)]
    out: list[float] = []
    deadline = time.monotonic() + seconds
    while not game.is_over and time.monotonic() < deadline:
        p = game.current_player
        legal = game.legal_actions()
        start = time.perf_counter()
        action = agents[p].act(public.views[p])
        took = time.perf_counter() - start
        if len(legal) > 1:
            out.append(took)
        public.apply(action)
    return out


def _p90(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="per spec and table")
    args = parser.parse_args()
    for spec in SPECS:
        name, _, n = spec.partition(":")
        searched_seconds(spec, 4, Rules(hand_sizes=(3,)), 5.0)  # compiled, warmed up
        for label, (players, rules) in TABLES.items():
            try:
                took = searched_seconds(spec, players, rules, args.seconds)
            except ValueError as e:  # a table the agent refuses (the champion's: 4 players)
                print(json.dumps({"spec": spec, "table": label, "refused": str(e)}), flush=True)
                continue
            units = work_units(name, players, rules)
            p90 = _p90(took)
            row = {
                "spec": spec,
                "table": label,
                "decisions": len(took),
                "median_s": statistics.median(took) if took else None,
                "p90_s": p90,
                "max_s": max(took) if took else None,
                "work_units": units,
                "p90_s_per_n_unit": None if p90 is None else p90 / (int(n) * units),
            }
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
