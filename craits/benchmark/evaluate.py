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
goes to ``OUT/card.json``, ``card.md`` and ``card.png``, each written atomically. Every
game's luck corrections (:mod:`craits.agents.luck_tournament`) are kept beside its tournament's
games (``luck.jsonl``) for the card's luck-adjusted estimates.

Every tournament is planned first (:func:`plan`, each once), so the progress says which of
how many is playing (``[k/N]``); the card's ``compute.seconds_by_opponent`` is how long this
run spent on each opponent's tournaments (the agent's, the reference's and the anchors').
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
    RECORDS_FILE,
    TournamentConfig,
    deal_cards,
    identify,
    results_in_order,
)
from craits.agents.luck_tournament import estimator, tournament_luck
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
    adjusted: bool = True
    """compute every game's luck corrections (:mod:`craits.agents.luck`) for the card's
    adjusted estimates; the games' records are dropped once they are corrected"""
    luck: str = "model"
    """the luck estimator (:func:`craits.agents.luck_tournament.estimator`: ``model`` or
    ``rollouts:R[:K[:S]]``), named in the card's adjusted entries"""

    @property
    def games(self) -> Path:
        return self.games_dir or self.out / "games"


@dataclass(frozen=True)
class Run:
    """One duplicate tournament of an evaluation: a line-up on a deal set, kept in ``folder``."""

    what: str
    """``TABLE: AGENT vs OPPONENT``, for progress lines"""
    opponent: str
    config: TournamentConfig
    folder: Path


@dataclass
class _Planned:
    """A table's opponent: the agent's run and the reference's (``None``: the agent is it)."""

    opponent: str
    deal_set: DealSet
    agent: Run
    reference: Run | None


@dataclass
class _Plan:
    """Every run of an evaluation, each once, in the order they are played."""

    identity: str
    reference_id: str
    runs: dict[Path, Run]
    tables: list[tuple[Table, DealSet, list[_Planned], list[dict[str, str]]]]
    anchors: list[Run]

    def add(self, run: Run) -> Run:
        return self.runs.setdefault(run.folder, run)


def slug(spec: str) -> str:
    """A folder name for ``spec`` (``ppo:runs/a`` → ``ppo_runs_a``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", spec).strip("_") or "agent"


def _lineup(spec: str, opponent: str, players: int) -> tuple[str, ...]:
    return (spec, *([opponent] * (players - 1)))


def _run(spec: str, opponent: str, table: Table, deal_set: DealSet, options: Options) -> Run:
    config = identify(deal_set.config(_lineup(spec, opponent, deal_set.players)))
    folder = options.games / table.name / deal_set.name / f"{slug(spec)}-vs-{slug(opponent)}"
    return Run(f"{table.name}: {spec} vs {opponent}", opponent, config, folder)


def plan(spec: str, suite: Suite, size: str, options: Options) -> _Plan:
    """Every tournament that ``spec``'s card on ``suite`` needs (see the module docstring):
    per table it can play and per opponent, the agent's run then the reference's; then the
    reference's runs the anchors read (most are among those already)."""
    if size not in SIZES:
        raise ValueError(f"size: got {size!r}, allowed {', '.join(SIZES)}")
    _, identity = resolve_agent(spec)
    _, reference_id = resolve_agent(suite.reference)
    is_reference = identity == reference_id
    found = _Plan(identity, reference_id, {}, [], [])
    for table in suite.tables:
        first = suite.deal_set(table, spec, suite.zoo[0], size)
        try:
            resolve_agent(spec, num_players=first.players, rules=first.rules)
        except ValueError:
            continue  # the agent cannot play this table
        planned, skipped = [], []
        for opponent in suite.zoo:
            deal_set = suite.deal_set(table, spec, opponent, size)
            try:
                mine = found.add(_run(spec, opponent, table, deal_set, options))
            except ValueError as e:
                skipped.append({"opponent": opponent, "why": str(e)})
                continue
            theirs = None
            if not is_reference:
                theirs = found.add(_run(suite.reference, opponent, table, deal_set, options))
            planned.append(_Planned(opponent, deal_set, mine, theirs))
        found.tables.append((table, first, planned, skipped))
    if not found.tables:
        raise ValueError(f"agent {spec!r} can play none of the tables of suite {suite.name}")
    # The zoo's anchors: the reference's games on the standard table's small deal set (the
    # smoke card's own few deals for a smoke card) against every zoo member.
    table, anchored = suite.tables[0], "smoke" if size == "smoke" else "search"
    for opponent in suite.zoo:
        deal_set = suite.deal_set(table, suite.reference, opponent, anchored)
        found.anchors.append(found.add(_run(suite.reference, opponent, table, deal_set, options)))
    return found


def evaluate(spec: str, suite: Suite, size: str, options: Options) -> dict[str, Any]:
    """Play ``spec`` on ``suite`` (see the module docstring); its card (also written)."""
    start = time.monotonic()
    found = plan(spec, suite, size, options)
    games: dict[Path, list[dict]] = {}
    seconds: dict[str, float] = dict.fromkeys(suite.zoo, 0.0)
    for k, run in enumerate(found.runs.values(), 1):
        began = time.monotonic()
        games[run.folder] = _play(run, f"[{k}/{len(found.runs)}] {run.what}", options)
        seconds[run.opponent] += time.monotonic() - began
    tables, standard = [], []
    for table, first, planned, skipped in found.tables:
        opponents, used, mine = [], {}, []
        for p in planned:
            used[p.deal_set.name] = p.deal_set
            ours = games[p.agent.folder]
            reference = None if p.reference is None else games[p.reference.folder]
            matchup = cards.Matchup(p.opponent, p.agent.config.agents[1], ours, reference)
            opponents.append(
                {**cards.matchup_entry(matchup, p.deal_set.seed), "deal_set": p.deal_set.name}
            )
            mine.append(ours)
        tables.append(
            {
                "name": table.name,
                "title": table.title,
                "players": first.players,
                "rules": first.rules.to_dict(),
                "deal_sets": [d.to_dict() for d in used.values()],
                "opponents": opponents,
                "skipped": skipped,
            }
        )
        if table is suite.tables[0]:
            standard = mine
    anchors = cards.anchors([games[run.folder] for run in found.anchors])
    card: dict[str, Any] = {
        "format": cards.FORMAT,
        "suite": suite.name,
        "size": size,
        "created": time.strftime("%Y-%m-%d", time.gmtime()),
        "command": options.command,
        "agent": {"spec": spec, "identity": found.identity},
        "reference": {"spec": suite.reference, "identity": found.reference_id},
        "engine": {"craits": __version__, "rules_revision": RULES_REVISION},
        "rating": cards.rating(standard, anchors) if standard else None,
        "compute": {
            "seconds": time.monotonic() - start,
            **_timing(spec, suite, size),
            "seconds_by_opponent": seconds,
        },
        "tables": tables,
    }
    write(card, options.out)
    return card


def _play(run: Run, what: str, options: Options) -> list[dict]:
    def progress(done: int, total: int) -> None:
        if options.progress is not None:
            options.progress(what, done, total)

    games = run_tournament(
        run.config,
        run.folder,
        workers=options.workers,
        use_ray=options.use_ray,
        ray_address=options.ray_address,
        progress=progress,
        record=options.adjusted,
    )
    ordered = results_in_order(games, run.config)
    if options.adjusted:  # each game's luck corrections, for the adjusted estimates
        by = options.luck
        luck = tournament_luck(run.config, run.folder, games, options.workers, by=by)
        (run.folder / RECORDS_FILE).unlink(missing_ok=True)  # luck.jsonl keeps what counts
        named = estimator(by, run.config.players, run.config.rules).model_id
        ordered = [{**g, "luck": luck[g["key"]], "luck_by": named} for g in ordered]
    return ordered


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
