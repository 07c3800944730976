"""The Craits benchmark's suites: which tables, which deal sets, which frozen opponents.

Suite ``v1`` (docs/benchmark.md):

- **tables**: the standard game with 4 players (R2.1), the 2-player game and the short
  4-player game (eight hands 8…1, R2.2);
- **deal sets** per table (:mod:`craits.benchmark.deal_sets`): a large one (``full``) and a
  small one (``search``, every 10th the size) — an opponent that searches is always met on
  the small set, and ``--size search`` plays everything on it; ``--size smoke`` plays the
  first :data:`SMOKE_DEALS` deals of each small set (:meth:`Suite.deal_set`): a **smoke
  card**, every table, opponent and field of a card in minutes, to check that an agent runs
  through the benchmark — its numbers compare with no other card's (the leaderboard leaves it
  out). How long each size takes: docs/benchmark.md;
- **the frozen zoo**: :data:`ZOO`, each opponent seated ``players - 1`` times against the
  agent, in every seat rotation of every deal; the card names each one's identity
  (:func:`craits.agents.specs.agent_identity`), so a later version of a bot is another
  opponent, never the same name with other numbers;
- **the reference** for paired estimates: ``expert``, played on the same deals, seats and
  opponents.

The deal sets' seeds are used nowhere else: a test checks that no committed training or
evaluation configuration deals one of their deals.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .deal_sets import DEALS_DIR, DealSet, first_deals, load

ZOO = ("random", "greedy", "tactician", "expert", "champion", "pimc", "champion-search")
"""The frozen opponents of suite v1, weakest first (as the committed ladder ranks them)."""
SEARCHING = frozenset({"pimc", "champion-search", "belief-search", "openspiel-ismcts"})
"""Spec names that search at every decision: met on the small deal sets only."""
REFERENCE = "expert"
"""The agent whose score, in the same seat of the same deal, a paired estimate subtracts."""
SIZES = ("full", "search", "smoke")
"""``full``: the large deal sets (the small ones against searching opponents); ``search``:
the small ones throughout; ``smoke``: the first :data:`SMOKE_DEALS` deals of the small ones."""
SMOKE_DEALS = 5
"""Deals of each small set a smoke card plays (its first ones)."""


@dataclass(frozen=True)
class Table:
    """One table of a suite: its name, what it is, and its two deal sets."""

    name: str
    title: str
    full: str
    search: str


@dataclass(frozen=True)
class Suite:
    """A benchmark suite (see the module docstring)."""

    name: str
    tables: tuple[Table, ...]
    zoo: tuple[str, ...] = ZOO
    reference: str = REFERENCE
    folder: Path = DEALS_DIR
    """where the suite's deal sets are (``FOLDER/NAME/SET.json``)"""
    smoke_deals: int = SMOKE_DEALS
    """deals of each small set a smoke card plays"""

    def deal_set(self, table: Table, agent: str, opponent: str, size: str) -> DealSet:
        """The deal set on which ``agent`` meets ``opponent`` at ``table``: with
        ``size="smoke"`` the first :attr:`smoke_deals` deals of the small one (named
        ``SMALL_smoke``); the small one with ``size="search"`` or against a searching
        opponent; else the large one."""
        if size == "smoke":
            searched = load(self.name, table.search, self.folder)
            return first_deals(searched, self.smoke_deals, f"{table.search}_smoke")
        small = size == "search" or is_searching(opponent)
        return load(self.name, table.search if small else table.full, self.folder)


def is_searching(spec: str) -> bool:
    """Whether ``spec`` names a searching agent (:data:`SEARCHING`)."""
    return spec.partition(":")[0] in SEARCHING


V1 = Suite(
    "v1",
    (
        Table("standard_4p", "the standard game, 4 players", "standard_4p", "standard_4p_search"),
        Table("two_player", "the standard game, 2 players", "two_player", "two_player_search"),
        Table("short_4p", "the short game (8…1), 4 players", "short_4p", "short_4p_search"),
    ),
)
SUITES = {V1.name: V1}


def suite(name: str) -> Suite:
    """The suite ``name`` (``ValueError`` naming the suites otherwise)."""
    if name not in SUITES:
        raise ValueError(f"suite: got {name!r}, allowed {', '.join(SUITES)}")
    return SUITES[name]
