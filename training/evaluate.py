"""Evaluation of a checkpoint against a bot with the tournament code (duplicate deals).

The table is the agent ``"ppo:PATH"`` and ``num_players - 1`` copies of the
opponent; every deal is played under every seat rotation
(:mod:`craits.agents.duplicate_tournament`), and the statistics — win rate and mean score
with 95% bootstrap intervals over deals — are :func:`craits.agents.stats.summarize`'s.
The deals come from :data:`EVAL_SEED`, the same for every evaluation of every
run, so points on a learning curve are comparable.

A stored evaluation (``out``) is keyed by the agents' identities (the
checkpoint's weight hash): rerun on the same weights — the same run resumed, a
moved run directory — it plays only the missing games; on other weights (a run
extended, a checkpoint overwritten) its old games are deleted and replayed,
never mixed in (:func:`clear_stale`).
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from craits.agents.duplicate_tournament import (
    GamePlayer,
    ResultStore,
    TournamentConfig,
    TournamentRefused,
    identify,
    plan,
    results_in_order,
    run_games,
)
from craits.agents.report import to_markdown, write_outputs
from craits.agents.stats import summarize
from craits_env import Rules

EVAL_SEED = 20_251_130


def eval_config(
    checkpoint: str | Path, opponent: str, num_players: int, rules: Rules, deals: int
) -> TournamentConfig:
    """The tournament: ``ppo:checkpoint`` against ``num_players - 1`` copies of ``opponent``."""
    specs = (f"ppo:{checkpoint}",) + (opponent,) * (num_players - 1)
    return TournamentConfig(specs, num_players, deals, EVAL_SEED, rules)


def tournament_command(config: TournamentConfig) -> str:
    """The ``craits tournament`` command that plays the same games."""
    words = [
        "craits",
        "tournament",
        *config.specs,
        "--players",
        str(config.players),
        "--deals",
        str(config.deals),
        "--seed",
        str(config.seed),
    ]
    default = Rules().to_dict()
    for name, value in config.rules.to_dict().items():
        if value != default[name]:
            if isinstance(value, list):
                value = ",".join(map(str, value))
            words += ["-r", f"{name}={str(value).lower() if isinstance(value, bool) else value}"]
    return shlex.join(words) + " --out DIR"


def clear_stale(out: Path, config: TournamentConfig) -> str | None:
    """Delete ``out`` if it holds games of another tournament (another agent); why, or None.

    Only for directories this code owns (a run's ``eval/<opponent>``).
    """
    try:
        ResultStore.check(out, config)
    except TournamentRefused as e:
        shutil.rmtree(out)
        return str(e)
    return None


def evaluate(
    checkpoint: str | Path,
    opponent: str,
    num_players: int,
    rules: Rules,
    deals: int,
    out: Path | None = None,
    title: str | None = None,
    record: bool = False,
    progress: Callable[[int, int], None] | None = None,
    on_stale: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The agent's and the opponent's rows of the table (:mod:`craits.agents.stats`).

    With ``out``, the games are stored and the usual outputs written there
    (``results.json``, ``.md``, ``.csv``, ``.png``), and with ``record`` every game's
    record too (``records.jsonl``, :mod:`craits_env.records`); without ``out``, it plays
    in memory.
    ``progress(done, total)`` is called as games finish; ``on_stale(reason)`` when ``out``
    held another agent's games (deleted, replayed).
    Returns ``{"agent": row, "opponent": row, "summary": summary, "markdown": table}``.
    """
    config = identify(eval_config(checkpoint, opponent, num_players, rules, deals))
    if out is None:
        player = GamePlayer(config)
        tasks = plan(config)
        games = []
        for task in tasks:
            games.append(player.play(task))
            if progress:
                progress(len(games), len(tasks))
    else:
        reason = clear_stale(out, config)
        if reason and on_stale:
            on_stale(reason)
        games = results_in_order(run_games(config, out, record=record, progress=progress), config)
    summary = summarize(games, list(config.specs), config.seed)
    title = title or f"`{config.specs[0]}` against {num_players - 1} × `{opponent}`"
    command = tournament_command(config)
    if out is not None:
        write_outputs(summary, config.to_dict(), out, title, command)
    rows = {row["spec"]: row for row in summary["agents"]}
    return {
        "agent": rows[config.specs[0]],
        "opponent": rows[opponent],
        "summary": summary,
        "markdown": to_markdown(summary, title, command),
    }
