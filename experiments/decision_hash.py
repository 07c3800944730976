"""The hash of an agent's decisions: a refactor that must not change how a searcher plays
proves it (and times it).

Plays ``--games`` short games (hands 4, 3, 2, 1, seeds from ``--seed``) of each SPEC at seat 0
against three ``expert`` and prints the first 16 hex digits of the SHA-256 over every action
(the specs' names left out) and final score, with the seconds each spec spent deciding.
Compare two trees in one session (the tree of commit C exported to DIR with
``git archive C | tar -x -C DIR``)::

    python experiments/decision_hash.py champion-search belief-search --games 6
    PYTHONPATH=DIR python experiments/decision_hash.py champion-search belief-search --games 6
"""

from __future__ import annotations

import argparse
import hashlib
import time

from craits.agents.heuristics import ExpertAgent
from craits.agents.specs import make_agent
from craits_env import Game, Rules
from craits_env.public import PublicGame


def decision_hash(specs: list[str], games: int, seed: int) -> tuple[str, dict[str, float]]:
    """The hash of the specs' games (module doc) and each spec's seconds spent deciding."""
    digest = hashlib.sha256()
    spent: dict[str, float] = {}
    for spec in specs:
        agent = make_agent(spec, seed=7, num_players=4)
        others = [ExpertAgent() for _ in range(3)]
        spent[spec] = 0.0
        digest.update(b"|")  # the specs' games in turn: only their moves and scores count
        for g in range(games):
            game = Game(4, Rules(hand_sizes=(4, 3, 2, 1)), seed=seed + g)
            public = PublicGame(game)
            while not game.is_over:
                p = game.current_player
                view = public.view(p)
                if p == 0:
                    t0 = time.perf_counter()
                    action = agent.act(view)
                    spent[spec] += time.perf_counter() - t0
                else:
                    action = others[p - 1].act(view)
                digest.update(f"{action},".encode())
                public.apply(action)
            digest.update(repr(game.scores).encode())
    return digest.hexdigest()[:16], spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="+", help="agent specs, each at seat 0 in turn")
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--seed", type=int, default=900)
    args = parser.parse_args()
    if args.games < 1:
        parser.error(f"--games: got {args.games}, expected at least 1")
    digest, spent = decision_hash(args.specs, args.games, args.seed)
    times = ", ".join(f"{spec} {seconds:.2f} s" for spec, seconds in spent.items())
    print(f"{digest}  ({times})")


if __name__ == "__main__":
    main()
