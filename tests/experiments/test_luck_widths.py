"""``experiments/luck_widths.py``'s store of rollout corrections (committed beside the cards:
hours of compute a card): what a run computes is kept deal by deal, to a thousandth of a point;
a rerun computes nothing again and replays the stored deals' games, checked score for score;
a store that is not of these games, or not a store, stops the run in one line."""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from craits.agents import luck_rollouts
from experiments import luck_widths
from experiments.luck_widths import measure, read_store, write_store

BY = "rollouts:4:2"  # cheap: the store, not the estimator, is under test
NAME = "greedy-rollouts-4-2_v3_clip600_seated_expert_1_tactician_1_greedy_1_random_1.jsonl.gz"


def test_a_rerun_reads_the_stored_corrections_and_computes_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = measure(["greedy"], 2, 1, None, BY, tmp_path)["greedy"]
    stored = read_store(tmp_path / NAME)
    assert sorted(stored) == [0, 1]
    assert [sorted(stored[d]) for d in (0, 1)] == [[f"{d}-0-{r}" for r in range(4)] for d in (0, 1)]
    for g in first["games"]:
        kept = stored[g["deal"]][g["key"]]
        assert kept["scores"] == g["scores"] and kept["luck"] == g["luck"]
        assert all(round(x, 3) == x for x in g["luck"])  # a thousandth of a point
        assert (
            g["luck_by"] == "rollouts-4-2/v3/clip600/seated:expert@1,tactician@1,greedy@1,random@1"
        )
    assert np.abs(first["correction"]).sum() > 0

    # a third deal: only it is computed (the estimator refuses the stored deals' games)
    def only_deal_2(self: luck_rollouts.RolloutEstimator, record: dict) -> object:
        assert record["meta"]["key"].startswith("2-"), record["meta"]["key"]
        return real(self, record)

    real = luck_rollouts.RolloutEstimator.game
    monkeypatch.setattr(luck_rollouts.RolloutEstimator, "game", only_deal_2)
    # the workers are spawned: they see the patch only through a module they import
    monkeypatch.setattr(luck_widths.mp, "get_context", lambda _: _Inline())
    again = measure(["greedy"], 3, 1, None, BY, tmp_path)["greedy"]
    assert again["games"][:8] == first["games"]
    assert sorted(read_store(tmp_path / NAME)) == [0, 1, 2]

    # the same bytes on every machine: rewriting the store changes nothing
    before = (tmp_path / NAME).read_bytes()
    write_store(tmp_path / NAME, read_store(tmp_path / NAME))
    assert (tmp_path / NAME).read_bytes() == before


def test_a_store_of_other_games_or_not_a_store_stops_the_run_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(luck_widths.mp, "get_context", lambda _: _Inline())
    measure(["greedy"], 1, 1, None, BY, tmp_path)
    path = tmp_path / NAME
    stored = read_store(path)
    stored[0]["0-0-2"]["scores"][1] += 1
    write_store(path, stored)
    other = re.escape(f"{NAME}: stored corrections of game 0-0-2 are of another game (scores [")
    with pytest.raises(SystemExit, match=other):
        measure(["greedy"], 1, 1, None, BY, tmp_path)

    path.write_bytes(gzip.compress(b'{"deal": 0, "games": [{"key": "0-0-0"}]}\n'))
    with pytest.raises(SystemExit, match=r"line 1: not a deal's corrections \(\{\"deal\""):
        measure(["greedy"], 1, 1, None, BY, tmp_path)
    path.write_bytes(gzip.compress(b"not json\n{}\n"))
    with pytest.raises(SystemExit, match=r"\.gz line 1: not valid JSON"):
        measure(["greedy"], 1, 1, None, BY, tmp_path)
    path.write_bytes(gzip.compress(b"{}\n")[:10])
    with pytest.raises(SystemExit, match=r"\.gz: Compressed file ended"):
        measure(["greedy"], 1, 1, None, BY, tmp_path)


class _Inline:
    """A pool that runs its jobs here (so that a patched estimator is the one used)."""

    def Pool(self, workers: int) -> _Inline:
        return self

    def __enter__(self) -> _Inline:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def imap(self, fn: Callable, jobs: list) -> Iterator:
        return map(fn, jobs)
