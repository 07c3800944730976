"""A tournament's luck corrections: every game's, kept in ``DIR/luck.jsonl``.

:func:`tournament_luck` gives each finished game's corrections per seat by an estimator
(:func:`estimator`: ``model``, the shipped value model's
:class:`craits.agents.luck.LuckEstimator`, or ``rollouts:R[:K[:S]]``, compiled rollout values,
:class:`RolloutEstimator` of :class:`craits.agents.luck_rollouts.RolloutLuck`): read from
``DIR/luck.jsonl`` where the same estimator made them, else computed from the game's record
(``DIR/records.jsonl``, or the game played again: a game depends only on its tournament and
its task, :func:`craits.agents.duplicate_tournament.collect_records`) and appended there, so a
rerun computes nothing twice. A line is ``{"key", "model", "corrections"}`` (the estimator's
identity: the first 16 hex digits of the value model's weights' sha256, or
``rollouts-R-K/…``); lines of another estimator are ignored, and a torn last line is dropped.
Games recorded alike but for their ``meta`` (the seat rotations of a table of players who all
play alike) are corrected once.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from craits_env.jsonl import JsonlError, append_jsonl, read_jsonl
from craits_env.rules import Rules

from .base import RandomAgent
from .duplicate_tournament import TournamentConfig, TournamentError, collect_records
from .heuristics import ExpertAgent, GreedyAgent, TacticianAgent
from .luck import GameLuck, LuckEstimator
from .luck_rollouts import CLIP, RolloutLuck

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


def record_body(record: dict[str, Any]) -> bytes:
    """A game's record less ``meta`` (where and when it was played), as canonical JSON: the
    same for the same game recorded twice (the seat rotations of a table whose players all
    play alike)."""
    body = {k: v for k, v in record.items() if k != "meta"}
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def record_salt(record: dict[str, Any]) -> int:
    """A game's own number, the crc32 of :func:`record_body`: the same game recorded twice
    gets the same corrections."""
    return zlib.crc32(record_body(record))


class RolloutEstimator:
    """:class:`RolloutLuck` as a tournament's luck estimator (``rollouts:R[:K[:S]]``): a game's
    samples and rollout keys come from the game itself (:func:`record_salt`), so a game is
    corrected the same way wherever and whenever it is. Its identity
    (``rollouts-R-K/vN/clipC/seated:…``) names this scheme's version, its clip and the
    rollouts' players' versions, so stored corrections of another are never reused.
    Version 4 plays a network's seat by the network itself (version 3 by ``expert``);
    version 5 also corrects a ``random`` seat's own choices. At a table without a network or
    a ``random`` seat, all three give the same corrections, to the last bit."""

    SEED = 410_003
    VERSION = 5

    def __init__(
        self,
        num_players: int,
        rules: Rules,
        rollouts: int,
        alternatives: int = 8,
        sample_rollouts: int | None = None,
    ) -> None:
        self.values = RolloutLuck(
            num_players,
            rules,
            rollouts,
            alternatives,
            seed=self.SEED,
            sample_rollouts=sample_rollouts,
        )
        sized = f"{rollouts}-{alternatives}"
        if sample_rollouts is not None and sample_rollouts != rollouts:
            sized += f"-{sample_rollouts}"  # without it, the identity of the first runs
        players = ",".join(
            f"{name}@{cls.version}"
            for name, cls in (
                ("expert", ExpertAgent),
                ("tactician", TacticianAgent),
                ("greedy", GreedyAgent),
                ("random", RandomAgent),
            )
        )
        clip = f"clip{CLIP:g}"
        self.model_id = f"rollouts-{sized}/v{self.VERSION}/{clip}/seated:{players}"

    def game(self, record: dict[str, Any]) -> GameLuck:
        return self.values.game(record, (record_salt(record),))


ESTIMATORS = (
    "model, rollouts:R, rollouts:R:K or rollouts:R:K:S (R rollouts an event, K sampled "
    "outcomes, S rollouts a sample, at most R)"
)


def estimator(spec: str, num_players: int, rules: Rules) -> LuckEstimator | RolloutEstimator:
    """The luck estimator named ``spec`` (:data:`ESTIMATORS`) for a table; ``ValueError``
    (one line) for another name."""
    if spec == "model":
        return LuckEstimator()
    name, _, rest = spec.partition(":")
    parts = rest.split(":") if rest else []
    if name == "rollouts" and 1 <= len(parts) <= 3 and all(p.isdigit() for p in parts):
        numbers = [int(p) for p in parts]
        if all(1 <= k <= 4096 for k in numbers) and (len(numbers) < 3 or numbers[2] <= numbers[0]):
            return RolloutEstimator(num_players, rules, *numbers)
    raise ValueError(f"luck estimator: got {spec!r}, allowed {ESTIMATORS} (each 1 to 4096)")


def _same_game(record: dict[str, Any]) -> str:
    """What tells a game apart: its record less ``meta``, hashed."""
    return hashlib.sha256(record_body(record)).hexdigest()


def _corrections(job: tuple[str, int, dict[str, Any], list[dict[str, Any]]]) -> list[list[float]]:
    spec, players, rules, records = job
    chosen = estimator(spec, players, Rules.from_dict(rules))
    return [[float(x) for x in chosen.game(r).corrections] for r in records]


def tournament_luck(
    config: TournamentConfig,
    out: Path,
    games: dict[str, dict[str, Any]],
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
    by: str = "model",
) -> dict[str, list[float]]:
    """Every game of ``games`` (finished games by key)'s corrections per seat, by key, by the
    estimator ``by`` (:func:`estimator`; see the module docstring); ``workers`` processes
    compute the missing ones."""
    model_id = estimator(by, config.players, config.rules).model_id
    path = out / LUCK_FILE
    found = _stored(path, model_id)
    missing = {k: g for k, g in games.items() if k not in found}
    if progress:
        progress(len(games) - len(missing), len(games))
    if not missing:
        return {k: found[k] for k in games}
    records = []
    alike: dict[str, list[str]] = {}  # the keys of each distinct game
    for record in collect_records(config, out, missing):
        keys = alike.setdefault(_same_game(record), [])
        if not keys:
            records.append(record)
        keys.append(record["meta"]["key"])
    chunk = CHUNK if by == "model" else 1  # rollouts: seconds a game
    chunks = [records[i : i + chunk] for i in range(0, len(records), chunk)]
    rules = config.rules.to_dict()
    done = len(games) - len(missing)

    def keep(part: Sequence[dict[str, Any]], corrections: list[list[float]]) -> None:
        nonlocal done
        pairs = [
            (key, c) for r, c in zip(part, corrections, strict=True) for key in alike[_same_game(r)]
        ]
        append_jsonl(path, [{"key": k, "model": model_id, "corrections": c} for k, c in pairs])
        found.update(pairs)
        done += len(pairs)
        if progress:
            progress(done, len(games))

    jobs = [(by, config.players, rules, part) for part in chunks]
    if workers > 1 and len(chunks) > 1:
        with mp.get_context("spawn").Pool(min(workers, len(chunks))) as pool:
            for part, corrections in zip(chunks, pool.imap(_corrections, jobs), strict=True):
                keep(part, corrections)
    else:
        for job in jobs:
            keep(job[3], _corrections(job))
    return {k: found[k] for k in games}
