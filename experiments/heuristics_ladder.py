"""Measure the heuristic bots while tuning their weights: the duplicate ladder and their speed.

The weights of :class:`craits.agents.heuristics.TacticianAgent` and ``ExpertAgent`` are class
attributes; after changing one, two measurements say whether it helped and what it cost:

``ladder``
    random, greedy, tactician and expert at one four-seat table, every deal played under
    every seat rotation (the duplicate core of
    :mod:`craits.agents.duplicate_tournament`). Prints each bot's
    mean game score (lower is better) with a 95% half-width over deals, and each step of
    the ladder as a difference paired by deal. ``tests/agents/test_heuristics.py`` asserts the
    order ``expert < tactician < greedy < random`` on its own deals.
``speed``
    Self-play of each bot at every seat through :class:`craits_env.public.PublicGame`:
    decisions/s, games/s (and as a share of random play), µs per decision in ``act``,
    decisions per game.

Nothing is asserted or written: the numbers are printed. Usage::

    python experiments/heuristics_ladder.py ladder --deals 300          # 4 players, short game
    python experiments/heuristics_ladder.py ladder --deals 300 --full   # the 15-hand game
    python experiments/heuristics_ladder.py speed --seconds 5
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence

from craits.agents.duplicate_tournament import GamePlayer, TournamentConfig, plan
from craits.agents.specs import make_agent
from craits_env import Game, Rules
from craits_env.public import PublicGame

LADDER = ("random", "greedy", "tactician", "expert")  # weakest first
BOTS = LADDER[1:]


def ladder(specs: Sequence[str], deals: int, rules: Rules, seed: int) -> list[list[float]]:
    """Per deal, each spec's mean game score over the deal's seat rotations (duplicate format)."""
    config = TournamentConfig(
        specs=tuple(specs), players=len(specs), deals=deals, seed=seed, rules=rules
    )
    player = GamePlayer(config)
    per_deal = [[0.0] * len(specs) for _ in range(deals)]
    for task in plan(config):
        game = player.play(task)
        for seat, spec in enumerate(game["specs"]):
            per_deal[game["deal"]][specs.index(spec)] += game["scores"][seat] / len(specs)
    return per_deal


def mean_half_width(xs: Sequence[float]) -> tuple[float, float]:
    """The mean of ``xs`` and the half-width of its 95% normal confidence interval."""
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    return m, 1.96 * sd / math.sqrt(len(xs))


def speed(spec: str, seconds: float, n: int = 4, rules: Rules | None = None) -> dict[str, float]:
    """Self-play of ``spec`` at every seat through PublicGame: decisions/s, games/s, µs/act."""
    rules = Rules() if rules is None else rules
    bots = [make_agent(spec, s) for s in range(n)]
    decisions = games = 0
    acting = 0.0
    clock = time.perf_counter
    start = clock()
    while clock() - start < seconds:
        g = Game(n, rules, seed=games)
        pg = PublicGame(g)
        views, apply = pg.views, pg.apply
        for s, bot in enumerate(bots):
            bot.reset(games * n + s)
        while not g.is_over:
            p = g.current_player
            t0 = clock()
            action = bots[p].act(views[p])
            acting += clock() - t0
            apply(action)
            decisions += 1
        games += 1
    elapsed = clock() - start
    return {
        "decisions_per_s": decisions / elapsed,
        "games_per_s": games / elapsed,
        "act_us": acting / decisions * 1e6,
        "decisions_per_game": decisions / games,
    }


def print_ladder(deals: int, rules: Rules, seed: int) -> None:
    start = time.perf_counter()
    per_deal = ladder(LADDER, deals, rules, seed)
    took = time.perf_counter() - start
    n = len(LADDER)
    hands = len(rules.hand_sizes)
    print(f"{deals} deals x {n} rotations, {n} players, {hands} hands ({took:.0f} s)")
    for i, spec in enumerate(LADDER):
        m, hw = mean_half_width([row[i] for row in per_deal])
        print(f"  {spec:10s} mean game score {m:7.1f} ± {hw:4.1f}")
    for stronger in range(1, n):
        weaker = stronger - 1
        m, hw = mean_half_width([row[weaker] - row[stronger] for row in per_deal])
        print(
            f"  {LADDER[stronger]} vs {LADDER[weaker]}: {m:+.1f} ± {hw:.1f} better (paired by deal)"
        )


def print_speed(seconds: float) -> None:
    base = speed("random", seconds)
    for spec in LADDER:
        s = base if spec == "random" else speed(spec, seconds)
        share = s["games_per_s"] / base["games_per_s"]
        print(
            f"  {spec:10s} {s['decisions_per_s']:9.0f} decisions/s "
            f"{s['games_per_s']:7.1f} games/s ({share:4.0%} of random) "
            f"{s['act_us']:5.2f} µs/act {s['decisions_per_game']:6.0f} decisions/game"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python experiments/heuristics_ladder.py", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="what", required=True)
    lad = sub.add_parser("ladder", help="duplicate ladder: " + ", ".join(LADDER))
    lad.add_argument("--deals", type=int, default=300, help="deals (default 300)")
    lad.add_argument("--full", action="store_true", help="the 15-hand game (default: short)")
    lad.add_argument("--seed", type=int, default=1000, help="seed of the deals (default 1000)")
    spd = sub.add_parser("speed", help="self-play decisions/s of each bot vs random play")
    spd.add_argument("--seconds", type=float, default=5.0, help="per bot (default 5)")
    args = parser.parse_args(argv)
    if args.what == "ladder" and args.deals < 2:
        parser.error(f"--deals: got {args.deals}, need at least 2 for a confidence interval")
    if args.what == "ladder":
        print_ladder(args.deals, Rules() if args.full else Rules.short_game(), args.seed)
    else:
        print_speed(args.seconds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
