"""``experiments/luck_widths.py``'s store of rollout corrections (committed beside the cards:
hours of compute a card): what a run computes is kept deal by deal, to a thousandth of a point;
a rerun computes nothing again and replays the stored deals' games, checked score for score;
a store that is not of these games, or not a store, stops the run in one line."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from statistics import NormalDist
from types import SimpleNamespace

import numpy as np
import pytest

from craits.agents import luck_tournament
from craits.benchmark.card import Matchup, agent_seat, matchup_entry
from craits.benchmark.evaluate import write
from experiments import luck_widths
from experiments.luck_widths import measure, read_store, write_store

BY = "rollouts:4:2"  # cheap: the store, not the estimator, is under test
MODEL = "rollouts-4-2_v5_clip600_seated_expert_1_tactician_1_greedy_1_random_1.jsonl.gz"
NAME = f"greedy-{MODEL}"


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
            g["luck_by"] == "rollouts-4-2/v5/clip600/seated:expert@1,tactician@1,greedy@1,random@1"
        )
    assert np.abs(first["correction"]).sum() > 0

    # a third deal: only it is computed (the estimator refuses the stored deals' games)
    def only_deal_2(self: luck_tournament.RolloutEstimator, record: dict) -> object:
        assert record["meta"]["key"].startswith("2-"), record["meta"]["key"]
        return real(self, record)

    real = luck_tournament.RolloutEstimator.game
    monkeypatch.setattr(luck_tournament.RolloutEstimator, "game", only_deal_2)
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


def test_cards_gains_the_adjusted_figures_only_where_the_games_give_the_committed_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--cards`` on a card whose committed entry against ``expert`` these games give (a copy
    of ``greedy``'s card with its entry made from two deals' games): the entry gains the
    adjusted figures and the estimator's name, nothing else of the card changes; games that
    do not give the committed entry leave every file as it was."""
    monkeypatch.setattr(luck_widths.mp, "get_context", lambda _: _Inline())
    found = measure(["expert", "greedy"], 2, 1, None, BY, tmp_path / "store")
    deal_set = luck_widths.load("v1", "standard_4p")
    monkeypatch.setattr(
        luck_widths, "load", lambda *_: SimpleNamespace(deals=2, seed=deal_set.seed)
    )
    card = json.loads((luck_widths.CARDS / "greedy" / "card.json").read_text())
    cards = tmp_path / "cards"
    monkeypatch.setattr(luck_widths, "CARDS", cards)
    entries = card["tables"][0]["opponents"]
    k = next(i for i, o in enumerate(entries) if o["opponent"] == "expert")

    def plain(games: list[dict]) -> list[dict]:
        return [{key: v for key, v in g.items() if key not in ("luck", "luck_by")} for g in games]

    mine, ref = found["greedy"]["games"], found["expert"]["games"]
    entries[k] = {
        **matchup_entry(
            Matchup("expert", entries[k]["identity"], plain(mine), plain(ref)), deal_set.seed
        ),
        "deal_set": "standard_4p",
    }
    write(card, cards / "greedy")
    before = {p.name: p.read_bytes() for p in (cards / "greedy").iterdir()}

    tampered = {**found, "greedy": {**found["greedy"], "games": [dict(g) for g in mine]}}
    tampered["greedy"]["games"][0]["scores"] = [s + 1 for s in mine[0]["scores"]]
    refused = r"card\.json: these games do not give the committed entry"
    with pytest.raises(SystemExit, match=refused):
        luck_widths.write_cards(tampered, 2, ["greedy"])
    assert {p.name: p.read_bytes() for p in (cards / "greedy").iterdir()} == before

    assert luck_widths.write_cards(found, 2, ["greedy"]) == [str(cards / "greedy")]
    new = json.loads((cards / "greedy" / "card.json").read_text())
    got = new["tables"][0]["opponents"][k]
    assert got["adjusted"]["estimator"] == mine[0]["luck_by"]
    seats = [agent_seat(g) for g in mine]
    adjusted = [g["scores"][s] - g["luck"][s] for g, s in zip(mine, seats, strict=True)]
    assert got["adjusted"]["mean_score"] == pytest.approx(np.mean(adjusted), abs=1e-9)
    ref_adjusted = [g["scores"][s] - g["luck"][s] for g, s in zip(ref, seats, strict=True)]
    paired = np.mean(adjusted) - np.mean(ref_adjusted)
    assert got["paired"]["adjusted_mean"] == pytest.approx(paired, abs=1e-9)
    del got["adjusted"]
    got["paired"] = {key: v for key, v in got["paired"].items() if not key.startswith("adjusted")}
    new["tables"][0]["opponents"][k] = got
    assert new == json.loads(before["card.json"])
    assert "adjusted" in (cards / "greedy" / "card.md").read_text()


def test_step_fills_the_store_a_few_deals_at_a_time_every_agent_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--step``: the deals the store lacks, ``step`` at a time for each agent in turn (the
    stored ones not played again); refused with the shipped model."""
    monkeypatch.setattr(luck_widths.mp, "get_context", lambda _: _Inline())
    seen: list[tuple[str, str]] = []

    def note(self: luck_tournament.RolloutEstimator, record: dict) -> object:
        seen.append((record["seats"][0] if record["seats"][0] != "expert" else record["seats"][1],
                     record["meta"]["key"].split("-")[0]))  # fmt: skip
        return real(self, record)

    real = luck_tournament.RolloutEstimator.game
    monkeypatch.setattr(luck_tournament.RolloutEstimator, "game", note)
    measure(["greedy"], 1, 1, None, BY, tmp_path)  # deal 0 of greedy stored already
    seen.clear()
    luck_widths.fill(["expert", "greedy"], 3, 2, 1, BY, tmp_path)
    order = list(dict.fromkeys(seen))
    assert order == [("expert", "0"), ("expert", "1"), ("greedy", "1"), ("expert", "2"),
                     ("greedy", "2")]  # fmt: skip
    assert sorted(read_store(tmp_path / NAME)) == [0, 1, 2]
    seen.clear()
    luck_widths.fill(["expert", "greedy"], 3, 2, 1, BY, tmp_path)
    assert seen == []  # all stored: nothing played


def committed_game_sets() -> dict[str, Path]:
    """Each game set's committed store (an agent on a deal set: the file name before
    ``-rollouts``), the one of the most deals where several estimators corrected its games."""
    chosen: dict[str, tuple[int, Path]] = {}
    for path in sorted(luck_widths.STORE.glob("*.jsonl.gz")):
        games, deals = path.name.split("-rollouts")[0], len(read_store(path))
        if deals > chosen.get(games, (0, path))[0]:
            chosen[games] = (deals, path)
    return {games: path for games, (_, path) in chosen.items()}


def agent_corrections(path: Path) -> np.ndarray:
    """A store's mean correction of the agent's seat, a deal (every rotation: key D-T-R)."""
    means = []
    for stored in read_store(path).values():
        seats = [agent_seat({"scores": g["scores"], "rotation": key.split("-")[-1]})
                 for key, g in stored.items()]  # fmt: skip
        means.append(np.mean([g["luck"][q] for g, q in zip(stored.values(), seats, strict=True)]))
    return np.array(means)


def test_the_committed_corrections_are_unbiased_over_every_stored_game() -> None:
    """Over every committed store's games the mean correction is zero within its interval:
    the agent's seat's mean correction a deal, each game set once, pooled (95% bootstrap over
    deals), and no game set's own mean beyond the bound of a family-wise 5% (Bonferroni: with
    ten sets, one of them past 1.96 standard errors is what chance gives a third of the
    time)."""
    sets = committed_game_sets()
    assert {
        "expert",
        "random",
        "greedy",
        "tactician",
        "champion",
        "pimc-standard_4p_search",
    } <= set(sets)
    bound = NormalDist().inv_cdf(1 - 0.05 / (2 * len(sets)))
    pooled = []
    for games, path in sets.items():
        per_deal = agent_corrections(path)
        z = per_deal.mean() / (per_deal.std(ddof=1) / np.sqrt(len(per_deal)))
        assert abs(z) < bound, (games, per_deal.mean(), z)
        pooled.extend(per_deal)
    values = np.array(pooled)
    means = values[np.random.default_rng(0).integers(0, len(values), (2000, len(values)))].mean(1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    assert lo < 0 < hi, (values.mean(), lo, hi)
    assert len(values) >= 1000 and hi - lo < 10  # many games: an interval of a few points


def test_the_search_set_plays_the_search_cards_games_into_stores_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--set search``: the searching members' games are their search cards' (checked score
    for score against ``pimc``'s committed card), stored apart from the full set's; ``--cards``
    on a card without such an entry stops in one line."""
    monkeypatch.setattr(luck_widths.mp, "get_context", lambda _: _Inline())
    search = luck_widths.SETS["search"]
    found = measure(["expert", "pimc"], 1, 1, None, BY, tmp_path, search)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"expert-{search}-{MODEL}",
        f"pimc-{search}-{MODEL}",
    ]
    committed = luck_widths.committed_scores("pimc", 1, search)
    assert committed is not None and np.array_equal(found["pimc"]["score"], committed)
    assert luck_widths.committed_scores("pimc", 1) is None  # no entry on the full set
    assert np.abs(found["pimc"]["correction"]).sum() > 0
    assert len(read_store(tmp_path / f"pimc-{search}-{MODEL}")[0]) == 4  # every rotation
    monkeypatch.setattr(luck_widths, "load", lambda *_: SimpleNamespace(deals=1, seed=1))
    with pytest.raises(
        SystemExit, match=f"expert/card.json: no entry against expert on the deal set {search}$"
    ):
        luck_widths.write_cards(found, 1, ["expert"], search)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--step", "5"], "--step: got 5 with --luck model; allowed a number of deals of 1"),
        (["--step", "0", "--luck", "rollouts:4:2"], "--step: got 0 with --luck rollouts:4:2"),
        (
            ["--set", "search", "--deals", "101"],
            "--deals: got 101, allowed 1 to 100 (--set search)",
        ),
        (["--set", "all"], "--set: invalid choice: 'all' (choose from 'full', 'search')"),
    ],
)
def test_bad_arguments_give_one_line(args: list[str], fragment: str) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "experiments/luck_widths.py", "--deals", "1", *args],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert fragment in done.stderr.strip().splitlines()[-1]
