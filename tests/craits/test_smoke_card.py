"""A benchmark card in minutes (issue 44, finding 6): ``--size smoke`` plays the first few deals
of each small deal set at every table against every opponent, says it is a smoke card, and
stays off the leaderboard; an evaluation counts its tournaments and times each opponent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from craits.agents.duplicate_tournament import deal_cards
from craits.benchmark import card as cards
from craits.benchmark.deal_sets import load, make, write
from craits.benchmark.evaluate import Options, evaluate
from craits.benchmark.leaderboard import rows
from craits.benchmark.suite import SIZES, SMOKE_DEALS, V1, Suite, Table
from craits.cli import build_parser
from craits.commands import evaluate as command
from craits_env.rules import Rules


@pytest.mark.slow
def test_a_smoke_deal_set_is_the_first_deals_of_the_small_one() -> None:
    for table in V1.tables:
        small = load("v1", table.search)
        smoke = V1.deal_set(table, "greedy", "expert", "smoke")
        assert smoke.name == f"{table.search}_smoke" and smoke.deals == SMOKE_DEALS == 5
        assert (smoke.seed, smoke.players, smoke.rules) == (small.seed, small.players, small.rules)
        assert smoke.sha256 != small.sha256 and len(smoke.sha256) == 64
        mine, theirs = (
            smoke.config(("random",) * smoke.players),
            small.config(("random",) * small.players),
        )
        for deal in range(smoke.deals):
            assert deal_cards(mine, deal) == deal_cards(theirs, deal)
        assert V1.deal_set(table, "greedy", "pimc", "smoke") == smoke  # searching or not


def test_the_command_offers_the_suites_sizes_and_says_what_each_costs() -> None:
    assert command.SIZES == SIZES == ("full", "search", "smoke")
    parser = next(p for name, p in _commands() if name == "craits evaluate")
    text = " ".join(parser.format_help().split())
    assert f"smoke: the first {SMOKE_DEALS} deals of each small set" in text
    assert (
        "Time with --workers 2 on 2 shared cores, for a fast agent (greedy): smoke 3 to 5 "
        "min (measured); search about 1.5 h, full about 2 h (extrapolated"
    ) in text


def _commands() -> list[tuple[str, Any]]:
    import argparse

    found = []
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            found += [(p.prog, p) for p in action.choices.values()]
    return found


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    """Two small tables (4 and 2 players), small sets of 3 deals, a smoke card of 2."""
    folder = tmp_path_factory.mktemp("deals")
    quick = Rules(hand_sizes=(2, 1))
    for name, players, seed, deals in (
        ("four", 4, 11, 6),
        ("four_search", 4, 12, 3),
        ("two", 2, 13, 6),
        ("two_search", 2, 14, 3),
    ):
        write(make(name, "tiny", players, quick, seed, deals), folder)
    tables = (
        Table("four", "4 players", "four", "four_search"),
        Table("two", "2 players", "two", "two_search"),
    )
    return Suite(
        "tiny", tables, zoo=("random", "greedy", "expert", "champion"), folder=folder, smoke_deals=2
    )


@pytest.mark.slow
def test_a_smoke_card_has_every_table_and_opponent_and_says_what_it_is(
    tiny: Suite, tmp_path: Path
) -> None:
    seen: list[tuple[str, int, int]] = []
    options = Options(
        tmp_path / "smoke", progress=lambda what, done, total: seen.append((what, done, total))
    )
    smoke = evaluate("greedy", tiny, "smoke", options)
    jsonschema.validate(
        json.loads((tmp_path / "smoke" / "card.json").read_text()),
        json.loads(cards.SCHEMA.read_text()),
    )
    assert smoke["size"] == "smoke"
    four, two = smoke["tables"]
    assert [o["opponent"] for o in four["opponents"]] == ["random", "greedy", "expert", "champion"]
    assert [(o["deals"], o["games"], o["deal_set"]) for o in four["opponents"]] == [
        (2, 8, "four_search_smoke")
    ] * 4
    assert [o["opponent"] for o in two["opponents"]] == ["random", "greedy", "expert"]
    assert [s["opponent"] for s in two["skipped"]] == ["champion"]
    assert all(o["paired"] is not None for t in smoke["tables"] for o in t["opponents"])
    assert smoke["rating"]["sigma"] > 0 and smoke["compute"]["ms_per_decision"] > 0
    assert set(smoke["compute"]["seconds_by_opponent"]) == {
        "random",
        "greedy",
        "expert",
        "champion",
    }
    markdown = (tmp_path / "smoke" / "card.md").read_text()
    assert markdown.splitlines()[4] == cards.SMOKE_NOTE
    assert (
        "Seconds by opponent (its tournaments in that run: the agent's, the reference's, "
        "the anchors'): random " in markdown
    )
    # Each tournament once, counted: (4 + 3 opponents) x (greedy, expert); the anchors are
    # the reference's own games at the first table.
    names = list(dict.fromkeys(what for what, _, _ in seen))
    assert len(names) == 14 and names[0] == "[1/14] four: greedy vs random"
    assert names[1] == "[2/14] four: expert vs random"
    assert names[-1] == "[14/14] two: expert vs expert"
    assert (names[-1], 4, 4) in seen  # 2 deals x 2 rotations
    search = evaluate("greedy", tiny, "search", Options(tmp_path / "search"))
    assert [o["deals"] for o in search["tables"][0]["opponents"]] == [3] * 4
    board = rows([smoke, search])
    assert [r["size"] for r in board] == ["search"]  # the smoke card gets no row


def test_no_adjusted_skips_the_luck_corrections(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """craits evaluate --no-adjusted: the card is played without the luck corrections (their
    cost); by default they are computed."""
    import craits.benchmark.evaluate as module

    seen: list[bool] = []

    def fake(spec: str, chosen: Any, size: str, options: Options) -> Any:
        seen.append(options.adjusted)
        raise KeyboardInterrupt  # stop there: the options are what is checked

    monkeypatch.setattr(module, "evaluate", fake)
    parser = build_parser()
    for extra in ([], ["--no-adjusted"], ["--adjusted"]):
        args = parser.parse_args(
            ["evaluate", "greedy", "--size", "smoke", "--out", str(tmp_path), *extra]
        )
        assert command.run(args, parser) == 130
    assert seen == [True, False, True]
