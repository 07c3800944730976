"""What a duplicate tournament is: its configuration, its games (the plan) and their deals.

A :class:`TournamentConfig` (the same config gives the same table) plans a list of
:class:`GameTask` (deal, line-up, seat rotation); :func:`deal_cards` gives a deal's cards from
the tournament's seed alone, so a game's result does not depend on where or when it is played.
:mod:`craits.agents.duplicate_tournament` plays them, :mod:`craits.agents.tournament_store`
keeps them.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from craits_env import Rules
from craits_env.deck import deck_cards, draw_first_dealer, shuffled
from craits_env.rules import RULES_REVISION
from craits_env.seeding import derive_rng, draw_seed

from .fingerprint import AGENT_SEED, fingerprints
from .specs import resolve_agent, searches

SCHEDULES = ("all", "cycle")
ROTATIONS = ("all", "one")


class TournamentError(Exception):
    """A tournament cannot go on (an illegal action, a corrupt results file …)."""


class TournamentRefused(TournamentError):
    """A tournament cannot start: its results directory holds another tournament's games."""


@dataclass(frozen=True)
class TournamentConfig:
    """What defines a tournament: the same config gives the same table."""

    specs: tuple[str, ...]
    players: int
    deals: int
    seed: int
    rules: Rules = field(default_factory=Rules)
    schedule: str = "all"
    """With more specs than players: "all" plays every line-up on every deal; "cycle" plays
    line-up ``deal % L`` on deal ``deal`` (each deal still under every rotation), so every
    line-up gets an equal share of the deals for 1/L of the games."""
    agents: tuple[str, ...] = ()
    """the identity of each spec's agent (:func:`identify`); empty: not resolved yet"""
    rotations: str = "all"
    """"all" plays each line-up of a deal under every seat rotation; "one" under rotation
    ``deal % players`` only (a line-up's first spec in seat ``-deal % players``): one game per
    deal and line-up, for many deals at a quarter of the cost (no duplicate cancelling
    within a deal; two tournaments of the same seed still pair deal by deal)."""
    fingerprints: tuple[str, ...] = ()
    """each spec's behavioural fingerprint at this table (``fp-…``), or why it has none
    (``unprobed: …``; :mod:`craits.agents.fingerprint`); empty: not probed"""

    def __post_init__(self) -> None:
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule: got {self.schedule!r}, allowed 'all', 'cycle'")
        if self.rotations not in ROTATIONS:
            raise ValueError(f"rotations: got {self.rotations!r}, allowed 'all', 'one'")
        if len(self.specs) < self.players:
            raise ValueError(
                f"{len(self.specs)} agent spec(s) for {self.players} players: give at least "
                f"{self.players} (repeat a spec to seat it more than once)"
            )
        if self.deals < 1:
            raise ValueError(f"deals: got {self.deals}, allowed an int >= 1")
        if self.agents and len(self.agents) != len(self.specs):
            raise ValueError(f"agents: got {len(self.agents)}, need one per spec")
        if self.fingerprints and len(self.fingerprints) != len(self.specs):
            raise ValueError(f"fingerprints: got {len(self.fingerprints)}, need one per spec")

    def lineups(self) -> list[tuple[str, ...]]:
        """The line-ups: the specs themselves, or every combination of ``players`` of them."""
        if len(self.specs) == self.players:
            return [self.specs]
        return [tuple(c) for c in itertools.combinations(self.specs, self.players)]

    def to_dict(self) -> dict[str, Any]:
        d = {
            "specs": list(self.specs),
            "players": self.players,
            "deals": self.deals,
            "seed": self.seed,
            "rules": self.rules.to_dict(),
            "rules_revision": RULES_REVISION,
        }
        if self.schedule != "all":
            d["schedule"] = self.schedule
        if self.rotations != "all":
            d["rotations"] = self.rotations
        if self.agents:
            d["agents"] = list(self.agents)
        if self.fingerprints:
            d["fingerprints"] = list(self.fingerprints)
        return d


def config_from_dict(d: dict[str, Any]) -> TournamentConfig:
    """The config of :meth:`TournamentConfig.to_dict` (a ``tournament.json``)."""
    return TournamentConfig(
        specs=tuple(d["specs"]),
        players=d["players"],
        deals=d["deals"],
        seed=d["seed"],
        rules=Rules.from_dict(d["rules"]),
        schedule=d.get("schedule", "all"),
        agents=tuple(d.get("agents", ())),
        rotations=d.get("rotations", "all"),
        fingerprints=tuple(d.get("fingerprints", ())),
    )


def identify(config: TournamentConfig, *, probe: bool = True) -> TournamentConfig:
    """``config`` with the identity of every spec's agent, each checked for the table, and
    (``probe``) its behavioural fingerprint at the table (:mod:`craits.agents.fingerprint`:
    computed once per distinct spec).

    An unknown spec, a missing checkpoint or one trained for another table raises
    ``ValueError`` (one line) — before any game.
    """
    ids: dict[str, str] = {}
    fresh: dict[str, Any] = {}
    prints: dict[str, str] = {}
    for spec in dict.fromkeys(config.specs):
        agent, ids[spec] = resolve_agent(
            spec, AGENT_SEED, num_players=config.players, rules=config.rules
        )
        if searches(spec):
            prints[spec] = "unprobed: it searches (identified by its version and budget)"
        else:
            fresh[spec] = agent
    found = fingerprints(fresh, config.players, config.rules) if probe else {}
    for spec, fp in found.items():
        prints[spec] = fp.value if fp.value is not None else f"unprobed: {fp.reason}"
    return dataclasses.replace(
        config,
        agents=tuple(ids[s] for s in config.specs),
        fingerprints=tuple(prints[s] for s in config.specs) if probe else (),
    )


@dataclass(frozen=True)
class GameTask:
    """One game: deal ``deal``, line-up ``lineup``, seat rotation ``rotation``."""

    deal: int
    lineup: int
    rotation: int

    @property
    def key(self) -> str:
        return f"{self.deal}-{self.lineup}-{self.rotation}"


def plan(config: TournamentConfig) -> list[GameTask]:
    """Every game of the tournament, deal by deal (so partial results cover whole deals)."""
    n_lineups = len(config.lineups())

    def rotations(deal: int) -> range:
        if config.rotations == "one":
            return range(deal % config.players, deal % config.players + 1)
        return range(config.players)

    if config.schedule == "cycle":
        return [GameTask(d, d % n_lineups, r) for d in range(config.deals) for r in rotations(d)]
    return [
        GameTask(d, lineup, r)
        for d in range(config.deals)
        for lineup in range(n_lineups)
        for r in rotations(d)
    ]


def seats_of(lineup: Sequence[str], rotation: int) -> list[str]:
    """The spec at each seat: seat ``s`` gets ``lineup[(s + rotation) % n]``."""
    n = len(lineup)
    return [lineup[(s + rotation) % n] for s in range(n)]


def deal_cards(config: TournamentConfig, deal: int) -> tuple[int, list[bytes], int]:
    """The first dealer, every hand's deck order and the reshuffle seed of a deal."""
    rng = derive_rng(config.seed, deal, 0xDEA1)
    rules = config.rules
    deck = deck_cards(rules.decks_for(config.players), rules.remove_kings_queens)
    dealer = draw_first_dealer(rng, config.players, deck)
    orders = [shuffled(deck, rng) for _ in rules.hand_sizes]
    return dealer, orders, draw_seed(rng)
