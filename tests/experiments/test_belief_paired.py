"""``experiments/belief_diagnostics.py --paired``: two tournaments compared deal by deal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.belief_diagnostics import paired, searcher_games


def _tournament(path: Path, name: str, games: list[tuple[int, int, int, list[int]]]) -> Path:
    """A games.jsonl of (deal, rotation, seat of ``name``, scores) rows; the lowest wins."""
    path.mkdir()
    lines = []
    for deal, rotation, seat, scores in games:
        specs = ["expert"] * 4
        specs[seat] = name
        low = min(scores)
        lines.append(
            json.dumps(
                {
                    "key": f"{deal}-0-{rotation}",
                    "deal": deal,
                    "rotation": rotation,
                    "specs": specs,
                    "scores": scores,
                    "winners": [i for i, s in enumerate(scores) if s == low],
                }
            )
        )
    (path / "games.jsonl").write_text("\n".join(lines) + "\n")
    return path


def test_paired_compares_the_shared_whole_deals_only(tmp_path: Path) -> None:
    a = _tournament(
        tmp_path / "a",
        "belief-search",
        [
            (0, 0, 0, [100, 200, 300, 400]),  # a win
            (0, 1, 1, [100, 150, 300, 400]),  # no win
            (1, 0, 0, [200, 200, 300, 400]),  # a shared win: 1/2
            (1, 1, 1, [100, 300, 300, 400]),
            (2, 0, 0, [50, 200, 300, 400]),  # deal 2 is not whole in b: left out
            (2, 1, 1, [50, 10, 300, 400]),
        ],
    )
    b = _tournament(
        tmp_path / "b",
        "champion-search",
        [
            (0, 0, 0, [300, 200, 300, 400]),
            (0, 1, 1, [100, 150, 300, 400]),  # the same score as a's
            (1, 0, 0, [400, 200, 300, 400]),
            (1, 1, 1, [100, 200, 300, 400]),
            (2, 0, 0, [50, 200, 300, 400]),
        ],
    )
    assert searcher_games(a)["1-0-0"] == (1, 200.0, 0.5)
    text = paired(a, b)
    lines = text.splitlines()
    assert lines[0].startswith("4 games on 2 whole deals held by both")
    # a: deal 0 wins (1 + 0) / 2, deal 1 (0.5 + 0) / 2; scores (100 + 150) / 2, (200 + 300) / 2.
    # b: no win; scores (300 + 150) / 2 and (400 + 200) / 2.
    assert lines[4].startswith("| `a` | 0.375 [") and "| 187.5 [" in lines[4]
    assert lines[5] == "| `b` | 0.000 [0.000, 0.000] | 262.5 [189.0, 336.0] |"
    assert lines[6].startswith("| difference per deal (first − second) | +0.375 [")
    assert "| -75.0 [" in lines[6]
    assert lines[-1] == "1 of the 4 games ended with the same score for the searcher."


def test_paired_needs_two_tournaments(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        paired(tmp_path / "none", tmp_path / "none2")
