"""Committed results keep their game logs compressed (experiments/results/README.md): JSON Lines
read from ``FILE.gz`` with the same rules as from the plain file, and a tournament whose folder
holds only ``games.jsonl.gz`` resumes from it — the same table, no game played twice."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from craits.agents.duplicate_tournament import (
    GAMES_FILE,
    TournamentConfig,
    results_in_order,
    run_games,
)
from craits.agents.stats import summarize
from craits_env import Rules
from craits_env.jsonl import JsonlError, find_jsonl, read_jsonl

SHORT = Rules(hand_sizes=(3, 2, 1))


def test_a_compressed_file_reads_as_the_plain_one_torn_tail_and_errors_included(
    tmp_path: Path,
) -> None:
    plain = tmp_path / "a.jsonl"
    plain.write_text('{"n": 1}\n\n{"n": 2}\n{"n": 3, "torn')
    packed = tmp_path / "b.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes(), mtime=0))
    torn: list[int] = []
    assert list(read_jsonl(packed, on_torn=torn.append)) == [(1, {"n": 1}), (3, {"n": 2})]
    assert list(read_jsonl(plain)) == list(read_jsonl(packed)) and torn == [4]
    bad = tmp_path / "c.jsonl.gz"
    bad.write_bytes(gzip.compress(b'{"n": 1}\nnot json\n{"n": 2}\n', mtime=0))
    with pytest.raises(JsonlError, match=r"^.*c\.jsonl\.gz line 2: not valid JSON"):
        list(read_jsonl(bad))


def test_find_jsonl_prefers_the_plain_file_and_falls_back_to_the_compressed_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "games.jsonl"
    assert find_jsonl(path) == path  # neither exists: the plain name (for the error)
    (tmp_path / "games.jsonl.gz").write_bytes(gzip.compress(b"", mtime=0))
    assert find_jsonl(path) == tmp_path / "games.jsonl.gz"
    path.write_text("")
    assert find_jsonl(path) == path


def test_a_tournament_resumes_from_its_compressed_games(tmp_path: Path) -> None:
    small = TournamentConfig(("random", "greedy", "random"), 3, 2, 5, SHORT)
    larger = TournamentConfig(("random", "greedy", "random"), 3, 3, 5, SHORT)
    whole = run_games(larger, tmp_path / "whole")
    out = tmp_path / "committed"
    run_games(small, out)
    games = out / GAMES_FILE
    lines = games.read_text().splitlines()
    assert len(lines) == 2 * 3
    games.with_name(GAMES_FILE + ".gz").write_bytes(gzip.compress(games.read_bytes(), mtime=0))
    games.unlink()  # as committed: only the compressed log
    again = run_games(larger, out)
    assert games.read_text().splitlines()[: len(lines)] == lines  # unpacked, then appended
    assert len(games.read_text().splitlines()) == 3 * 3
    order = list(larger.specs)
    assert summarize(results_in_order(again, larger), order, 5) == summarize(
        results_in_order(whole, larger), order, 5
    )
    assert {json.loads(x)["key"] for x in games.read_text().splitlines()} == set(whole)
