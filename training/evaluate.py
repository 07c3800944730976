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

With ``adjusted`` (off by default; a training run's ``eval_adjusted``) the rows also carry the
luck-adjusted mean score and its interval (``adjusted_mean_score``, ``adjusted_mean_score_ci``:
the score less what the cards did, :mod:`craits.agents.luck`, summed as ``craits tournament``
sums them) and the agent's row ``adjusted_width_ratio``, its interval's width over the plain
``mean_score_ci``'s; ``luck`` (a run's ``eval_luck``) names the estimator, as ``craits
tournament --luck`` does: ``model`` (the shipped value model) or ``rollouts:R[:K[:S]]``
(rollout values, the checkpoint's seat played by its own network: narrower, seconds a
game). A stored evaluation keeps the games' corrections in ``luck.jsonl``
(:func:`craits.agents.luck_tournament.tournament_luck`: a rerun computes nothing twice; the
records they came from in ``records.jsonl`` only with ``record``) and names the estimator
(``luck_estimator``); in memory each game's corrections come from its record as it finishes.
"""

from __future__ import annotations

import math
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from craits.agents.duplicate_tournament import (
    RECORDS_FILE,
    GamePlayer,
    ResultStore,
    TournamentConfig,
    TournamentRefused,
    identify,
    plan,
    results_in_order,
    run_games,
)
from craits.agents.luck_tournament import estimator, tournament_luck
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


def tournament_command(config: TournamentConfig, adjusted: bool = True, luck: str = "model") -> str:
    """The ``craits tournament`` command that plays the same games (and, ``adjusted`` or not,
    by the estimator ``luck``, gives the same table)."""
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
    if not adjusted:
        words.append("--no-adjusted")
    elif luck != "model":
        words += ["--luck", luck]
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
    adjusted: bool = False,
    luck_progress: Callable[[int, int], None] | None = None,
    luck: str = "model",
) -> dict[str, Any]:
    """The agent's and the opponent's rows of the table (:mod:`craits.agents.stats`).

    With ``out``, the games are stored and the usual outputs written there
    (``results.json``, ``.md``, ``.csv``, ``.png``), and with ``record`` every game's
    record too (``records.jsonl``, :mod:`craits_env.records`); without ``out``,
    it plays in memory.
    ``progress(done, total)`` is called as games finish; ``on_stale(reason)`` when ``out``
    held another agent's games (deleted, replayed); ``adjusted``: the luck-adjusted figures
    too (module docstring), by the estimator ``luck``
    (:func:`craits.agents.luck_tournament.estimator`), ``luck_progress(done, total)`` called
    as a stored evaluation's corrections are computed.
    Returns ``{"agent": row, "opponent": row, "summary": summary, "markdown": table}``.
    """
    config = identify(eval_config(checkpoint, opponent, num_players, rules, deals))
    chosen = estimator(luck, num_players, rules) if adjusted else None  # a bad name: now
    corrected: dict[str, list[float]] = {}  # each game's corrections per seat, by key
    if out is None:
        player = GamePlayer(config, record=adjusted)
        tasks = plan(config)
        games = []
        for task in tasks:
            game = player.play(task)
            if chosen is not None:  # the record goes once its corrections are known
                corrections = chosen.game(game.pop("record")).corrections
                corrected[game["key"]] = [float(x) for x in corrections]
            games.append(game)
            if progress:
                progress(len(games), len(tasks))
    else:
        reason = clear_stale(out, config)
        if reason and on_stale:
            on_stale(reason)
        stored = run_games(config, out, record=record or adjusted, progress=progress)
        if adjusted:
            corrected = tournament_luck(config, out, stored, progress=luck_progress, by=luck)
            if not record:  # luck.jsonl keeps what counts; a game missing there is replayed
                (out / RECORDS_FILE).unlink(missing_ok=True)
        games = results_in_order(stored, config)
    summary = summarize(
        games, list(config.specs), config.seed, luck=corrected if chosen is not None else None
    )
    if chosen is not None:
        summary["luck_estimator"] = chosen.model_id
    title = title or f"`{config.specs[0]}` against {num_players - 1} × `{opponent}`"
    command = tournament_command(config, adjusted, luck)
    if out is not None:
        write_outputs(summary, config.to_dict(), out, title, command)
    rows = {row["spec"]: row for row in summary["agents"]}
    agent = rows[config.specs[0]]
    if adjusted:
        agent = {**agent, "adjusted_width_ratio": width_ratio(agent)}
    return {
        "agent": agent,
        "opponent": rows[opponent],
        "summary": summary,
        "markdown": to_markdown(summary, title, command),
    }


def width_ratio(row: dict[str, Any]) -> float:
    """The width of a row's ``adjusted_mean_score_ci`` over its ``mean_score_ci``'s (NaN where
    the plain interval has no width)."""
    (lo, hi), (alo, ahi) = row["mean_score_ci"], row["adjusted_mean_score_ci"]
    return (ahi - alo) / (hi - lo) if hi > lo else math.nan
