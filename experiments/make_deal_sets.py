"""Write the deal sets of the Craits benchmark (``craits/benchmark/deals/SUITE/*.json``).

A deal set is made once, when its suite is defined, and never again: its file holds the
seed, the size, the rules revision and the content hash its deals are checked against
whenever it is loaded (:mod:`craits.benchmark.deal_sets`). Rerunning this script writes
the same files (the same seeds give the same deals and hashes); a changed file is a new
suite, not a new version of v1. Usage::

    python experiments/make_deal_sets.py
"""

from __future__ import annotations

from craits.benchmark.deal_sets import make, write
from craits_env.rules import Rules

FULL, SEARCH = 1000, 100
"""Deals in each table's large set and in its small one (an opponent that searches)."""
V1 = (  # name, players, rules, seed: seeds used by nothing else
    ("standard_4p", 4, Rules(), 2026120401, FULL),
    ("standard_4p_search", 4, Rules(), 2026120402, SEARCH),
    ("two_player", 2, Rules(), 2026120403, FULL),
    ("two_player_search", 2, Rules(), 2026120404, SEARCH),
    ("short_4p", 4, Rules.short_game(), 2026120405, FULL),
    ("short_4p_search", 4, Rules.short_game(), 2026120406, SEARCH),
)


def main() -> None:
    for name, players, rules, seed, deals in V1:
        path = write(make(name, "v1", players, rules, seed, deals))
        print(path)


if __name__ == "__main__":
    main()
