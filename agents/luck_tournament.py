"""A tournament's luck corrections: every game's, kept in ``DIR/luck.jsonl``.

:func:`tournament_luck` gives each finished game's corrections per seat
(:class:`craits.agents.luck.LuckEstimator`): read from ``DIR/luck.jsonl`` where the same value
model made them, else computed from the game's record (``DIR/records.jsonl``, or the game
played again: a game depends only on its tournament and its task,
:func:`craits.agents.duplicate_tournament.collect_records`) and appended there, so a rerun
computes nothing twice. A line is ``{"key", "model", "corrections"}`` (the model's identity:
the first 16 hex digits of its weights' sha256); lines of another model are ignored, and a
torn last line is dropped.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from craits_env.jsonl import JsonlError, append_jsonl, read_jsonl

from .duplicate_tournament import TournamentConfig, TournamentError, collect_records
from .luck import LuckEstimator

LUCK_FILE = "luck.jsonl"
CHUNK = 32  # records a worker process adjusts at a time


def _stored(path: Path, model: str) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    if not path.exists():
        return found
    try:
        for number, line in read_jsonl(path):
            if not isinstance(line, dict) or not isinstance(line.get("key"), str):
                raise TournamentError(f"{path} line {number}: not a game's luck corrections")
            if line.get("model") == model:
                found[line["key"]] = [float(x) for x in line["corrections"]]
    except JsonlError as e:
        raise TournamentError(str(e)) from None
    return found


def _corrections(records: list[dict[str, Any]]) -> list[list[float]]:
    estimator = LuckEstimator()
    return [[float(x) for x in estimator.game(r).corrections] for r in records]


def tournament_luck(
    config: TournamentConfig,
    out: Path,
    games: dict[str, dict[str, Any]],
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, list[float]]:
    """Every game of ``games`` (finished games by key)'s corrections per seat, by key (see
    the module docstring); ``workers`` processes compute the missing ones."""
    estimator = LuckEstimator()
    path = out / LUCK_FILE
    found = _stored(path, estimator.model_id)
    missing = {k: g for k, g in games.items() if k not in found}
    if progress:
        progress(len(games) - len(missing), len(games))
    if not missing:
        return {k: found[k] for k in games}
    records = collect_records(config, out, missing)
    chunks = [records[i : i + CHUNK] for i in range(0, len(records), CHUNK)]
    done = len(games) - len(missing)

    def keep(part: Sequence[dict[str, Any]], corrections: list[list[float]]) -> None:
        nonlocal done
        lines = [
            {"key": r["meta"]["key"], "model": estimator.model_id, "corrections": c}
            for r, c in zip(part, corrections, strict=True)
        ]
        append_jsonl(path, lines)
        for line in lines:
            found[line["key"]] = line["corrections"]
        done += len(lines)
        if progress:
            progress(done, len(games))

    if workers > 1 and len(chunks) > 1:
        with mp.get_context("spawn").Pool(min(workers, len(chunks))) as pool:
            for part, corrections in zip(chunks, pool.imap(_corrections, chunks), strict=True):
                keep(part, corrections)
    else:
        for part in chunks:
            keep(part, _corrections(part))
    return {k: found[k] for k in games}
