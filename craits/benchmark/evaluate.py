"""``craits evaluate``: an agent played on a benchmark suite, and its report card written.

For each table of the suite and each opponent of its zoo, a duplicate tournament
(:mod:`craits.agents.duplicate_tournament`) of the line-up ``(agent, opponent × (n-1))`` on
the deal set the suite names (:meth:`craits.benchmark.suite.Suite.deal_set`), every seat
rotation of every deal; then the same for the reference (``expert``) in the agent's place,
for the paired estimates. Each tournament keeps its games in its own folder under
``games_dir`` (default ``OUT/games``): an interrupted evaluation rerun with the same
arguments plays only what is missing, and evaluations that share a ``games_dir`` share the
reference's games. A game depends only on its deal set and its task, so the card is the
same for any number of workers, here or on Ray. The card (:mod:`craits.benchmark.card`)
goes to ``OUT/card.json``, ``card.md`` and ``card.png``, each written atomically.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from craits.agents.arena import engine_table
from craits.agents.duplicate_tournament import (
    TournamentConfig,
    deal_cards,
    identify,
    results_in_order,
)
from craits.agents.specs import make_agent, resolve_agent
from craits_env import __version__
from craits_env.engine import Game
from craits_env.fileio import atomic_write_bytes, atomic_write_text
from craits_env.public import PublicGame
from craits_env.rules import RULES_REVISION

from ..tournament_workers import run_tournament
from . import card as cards
from .deal_sets import DealSet
from .suite import SIZES, Suite, Table

Progress = Callable[[str, int, int], None]
"""``progress(what, done, total)``: games done of one tournament."""
Games = list[list[dict]]  # one list of games per opponent
TIMED_DEALS = 2  # deals of the standard table timed for the card's compute figures


@dataclass(frozen=True)
class Options:
    """Where and how to play (the card does not depend on them)."""

    out: Path
    games_dir: Path | None = None
    workers: int = 1
    use_ray: bool = False
    ray_address: str | None = None
    progress: Progress | None = None
    command: str = ""

    @property
    def games(self) -> Path:
        return self.games_dir or self.out / "games"


def slug(spec: str) -> str:
    """A folder name for ``spec`` (``ppo:runs/a`` → ``ppo_runs_a``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", spec).strip("_") or "agent"


def _play(config: TournamentConfig, folder: Path, what: str, options: Options) -> list[dict]:
    def progress(done: int, total: int) -> None:
        if options.progress is not None:
            options.progress(what, done, total)

    games = run_tournament(config, folder, workers=options.workers, use_ray=options.use_ray,
                           ray_address=options.ray_address, progress=progress)  # fmt: skip
    return results_in_order(games, config)


def _lineup(spec: str, opponent: str, players: int) -> tuple[str, ...]:
    return (spec, *([opponent] * (players - 1)))


def evaluate(spec: str, suite: Suite, size: str, options: Options) -> dict[str, Any]:
    """Play ``spec`` on ``suite`` (see the module docstring); its card (also written)."""
    if size not in SIZES:
        raise ValueError(f"size: got {size!r}, allowed {', '.join(SIZES)}")
    start = time.monotonic()
    _, identity = resolve_agent(spec)
    _, reference_id = resolve_agent(suite.reference)
    is_reference = identity == reference_id
    tables, standard = [], []
    for table in suite.tables:
        entry = _table(spec, table, suite, size, options, is_reference)
        if entry is None:
            continue
        tables.append(entry[0])
        if table is suite.tables[0]:
            standard = entry[1]
    if not tables:
        raise ValueError(f"agent {spec!r} can play none of the tables of suite {suite.name}")
    card: dict[str, Any] = {
        "format": cards.FORMAT, "suite": suite.name, "size": size,
        "created": time.strftime("%Y-%m-%d", time.gmtime()), "command": options.command,
        "agent": {"spec": spec, "identity": identity},
        "reference": {"spec": suite.reference, "identity": reference_id},
        "engine": {"craits": __version__, "rules_revision": RULES_REVISION},
        "rating": cards.rating(standard, _anchors(suite, options)) if standard else None,
        "compute": {"seconds": time.monotonic() - start, **_timing(spec, suite, size)},
        "tables": tables,
    }  # fmt: skip
    write(card, options.out)
    return card


def _anchors(suite: Suite, options: Options) -> dict[str, tuple[float, float]]:
    """The zoo's fixed ratings (:func:`craits.benchmark.card.anchors`) from the reference's
    games on the standard table's small deal set against every zoo member — the same games,
    so the same anchors, for every card of the suite (played here where missing)."""
    table, ours = suite.tables[0], suite.reference
    reference = []
    for opponent in suite.zoo:
        deal_set = suite.deal_set(table, ours, opponent, "search")
        config = identify(deal_set.config(_lineup(ours, opponent, deal_set.players)))
        folder = options.games / table.name / deal_set.name / f"{slug(ours)}-vs-{slug(opponent)}"
        reference.append(_play(config, folder, f"{table.name}: {ours} vs {opponent}", options))
    return cards.anchors(reference)


def _table(spec: str, table: Table, suite: Suite, size: str, options: Options,
           is_reference: bool) -> tuple[dict[str, Any], Games] | None:  # fmt: skip
    """The card's entry for ``table`` and the agent's games there (one list per opponent;
    ``None``: the agent cannot play the table)."""
    first = suite.deal_set(table, spec, suite.zoo[0], size)
    try:
        resolve_agent(spec, num_players=first.players, rules=first.rules)
    except ValueError:
        return None
    opponents, skipped, used, all_games = [], [], {}, []
    for opponent in suite.zoo:
        deal_set = suite.deal_set(table, spec, opponent, size)
        config = deal_set.config(_lineup(spec, opponent, deal_set.players))
        try:
            config = identify(config)
        except ValueError as e:
            skipped.append({"opponent": opponent, "why": str(e)})
            continue
        used[deal_set.name] = deal_set
        folder = options.games / table.name / deal_set.name
        games = _play(config, folder / f"{slug(spec)}-vs-{slug(opponent)}",
                      f"{table.name}: {spec} vs {opponent}", options)  # fmt: skip
        reference = None
        if not is_reference:
            ours = suite.reference
            ref = identify(deal_set.config(_lineup(ours, opponent, deal_set.players)))
            reference = _play(ref, folder / f"{slug(ours)}-vs-{slug(opponent)}",
                              f"{table.name}: {ours} vs {opponent}", options)  # fmt: skip
        matchup = cards.Matchup(opponent, config.agents[1], games, reference)
        opponents.append({**cards.matchup_entry(matchup, deal_set.seed),
                          "deal_set": deal_set.name})  # fmt: skip
        all_games.append(games)
    entry = {"name": table.name, "title": table.title, "players": first.players,
             "rules": first.rules.to_dict(),
             "deal_sets": [d.to_dict() for d in used.values()],
             "opponents": opponents, "skipped": skipped}  # fmt: skip
    return entry, all_games


class _Timed:
    """An agent whose decisions are timed (all of them, and those with a choice)."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = getattr(agent, "name", "agent")
        self.seconds = self.choice_seconds = 0.0
        self.decisions = self.choices = 0

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    def act(self, observation: Any) -> int:
        start = time.perf_counter()
        action = int(self.agent.act(observation))
        spent = time.perf_counter() - start
        self.seconds += spent
        self.decisions += 1
        if int(observation["action_mask"].sum()) > 1:
            self.choice_seconds += spent
            self.choices += 1
        return action


def _timing(spec: str, suite: Suite, size: str) -> dict[str, float | None]:
    """The agent's ms per decision and per choice on the first deals of the first table,
    against the reference in every other seat (one process, after a warm-up game)."""
    deal_set: DealSet = suite.deal_set(suite.tables[0], spec, suite.reference, size)
    n, rules = deal_set.players, deal_set.rules
    config = deal_set.config(_lineup(spec, suite.reference, n))
    timed = _Timed(make_agent(spec, 0, num_players=n, rules=rules))
    others = [make_agent(suite.reference, s, num_players=n, rules=rules) for s in range(1, n)]
    for deal in range(TIMED_DEALS + 1):
        if deal == 1:  # the first deal warms up (a compiled search compiles or loads)
            timed.seconds = timed.choice_seconds = 0.0
            timed.decisions = timed.choices = 0
        dealer, orders, reshuffle_seed = deal_cards(config, deal)
        rng = np.random.default_rng(reshuffle_seed)
        game = Game(n, rules, dealer=dealer, deals=orders, rng=rng)
        timed.reset(deal)
        engine_table(game, [timed, *others], public=PublicGame(game)).run()
    return {
        "ms_per_decision": 1000 * timed.seconds / timed.decisions if timed.decisions else None,
        "ms_per_choice": 1000 * timed.choice_seconds / timed.choices if timed.choices else None,
    }


def write(card: dict[str, Any], out: Path) -> None:
    """``card.json``, ``card.md`` and ``card.png`` in ``out``, each written atomically."""
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "card.json", cards.to_json(card))
    atomic_write_text(out / "card.md", cards.to_markdown(card))
    atomic_write_bytes(out / "card.png", cards.to_png(card))
