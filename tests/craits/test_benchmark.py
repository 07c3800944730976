"""The Craits benchmark (issue 30 §2): deal sets as checked data, report cards whose paired
estimate is right and narrower, the same card for any number of workers, resuming, the
schema, and suite deals that no training or evaluation configuration deals."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

from craits.agents.duplicate_tournament import TournamentConfig, deal_cards
from craits.benchmark import card as cards
from craits.benchmark.deal_sets import DEALS_DIR, DealSetError, load, make, write
from craits.benchmark.evaluate import Options, evaluate
from craits.benchmark.suite import V1, Suite, Table, is_searching
from craits.training.config import load_config
from craits.training.evaluate import EVAL_SEED
from craits_env.rules import Rules

SETS = (
    "standard_4p",
    "standard_4p_search",
    "two_player",
    "two_player_search",
    "short_4p",
    "short_4p_search",
)


# ----------------------------------------------------------------------------- deal sets


@pytest.mark.slow
def test_the_shipped_deal_sets_check_and_are_what_suite_v1_names() -> None:
    loaded = {name: load("v1", name) for name in SETS}
    assert {t.full for t in V1.tables} | {t.search for t in V1.tables} == set(SETS)
    assert len({d.seed for d in loaded.values()}) == len(SETS)  # a seed of its own each
    assert loaded["standard_4p"].players == 4 and loaded["standard_4p"].rules == Rules()
    assert loaded["two_player"].players == 2
    assert loaded["short_4p"].rules == Rules.short_game()
    for table in V1.tables:
        full, small = loaded[table.full], loaded[table.search]
        assert full.deals == 10 * small.deals and (full.players, full.rules) == (
            small.players,
            small.rules,
        )


def test_a_deal_set_that_does_not_check_is_refused_in_one_line(tmp_path: Path) -> None:
    made = make("tiny", "t1", 4, Rules(hand_sizes=(2, 1)), 99, 5)
    write(made, tmp_path)
    assert load("t1", "tiny", tmp_path) == made
    path = tmp_path / "t1" / "tiny.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "seed": 100}))  # other deals under the same name
    with pytest.raises(DealSetError, match=r"deal set t1/tiny: its deals hash to") as e:
        load("t1", "tiny", tmp_path)
    assert "\n" not in str(e.value)
    path.write_text(json.dumps({**data, "rules_revision": 1}))
    with pytest.raises(DealSetError, match="made under rules revision 1"):
        load("t1", "tiny", tmp_path)
    path.write_text("{not json")
    with pytest.raises(DealSetError, match="unreadable"):
        load("t1", "tiny", tmp_path)
    with pytest.raises(DealSetError, match="no such set"):
        load("t1", "other", tmp_path)


@pytest.mark.slow
def test_no_committed_configuration_deals_a_deal_of_the_suite() -> None:
    """Training games come from a config's seed, evaluation games from EVAL_SEED's
    tournament: neither is a suite seed, and no evaluation deal is a suite deal."""
    suite_sets = [load("v1", name) for name in SETS]
    seeds = {d.seed for d in suite_sets}
    configs = [p.stem for p in (Path(__file__).parents[2] / "training" / "configs").glob("*.toml")]
    assert configs
    for name in configs:
        assert load_config(name).seed not in seeds, name
    assert EVAL_SEED not in seeds

    def first_orders(config: TournamentConfig, deals: int) -> set[bytes]:
        return {bytes(deal_cards(config, d)[1][0]) for d in range(deals)}

    for deal_set in suite_sets:
        ours = first_orders(deal_set.config(("random",) * deal_set.players), deal_set.deals)
        theirs = first_orders(
            TournamentConfig(
                ("random",) * deal_set.players, deal_set.players, 300, EVAL_SEED, deal_set.rules
            ),
            300,
        )
        assert not ours & theirs, deal_set.name


# ----------------------------------------------------------------------------- the card


def game(deal: int, rotation: int, scores: list[float], winners: list[int]) -> dict[str, Any]:
    n = len(scores)
    return {
        "deal": deal,
        "rotation": rotation,
        "scores": scores,
        "winners": winners,
        "specs": ["x"] * n,
        "hand_points": [],
        "decisions": 1,
    }


def test_the_agent_sits_where_its_rotation_puts_line_up_position_zero() -> None:
    for n in (2, 4):
        for r in range(n):
            seats = [(s + r) % n for s in range(n)]  # duplicate_tournament.seats_of
            assert seats[cards.agent_seat(game(0, r, [0.0] * n, [0]))] == 0


def test_the_paired_estimate_subtracts_the_reference_in_the_same_seat_of_the_same_deal() -> None:
    rng = np.random.default_rng(0)
    mine, theirs = [], []
    for deal in range(200):
        luck = rng.normal(0, 40)  # what the cards do: shared by both runs of the deal
        for r in range(2):
            seat = (-r) % 2
            ours = [0.0, 0.0]
            ref = [0.0, 0.0]
            ours[seat] = 100 + luck + rng.normal(0, 5)
            ref[seat] = 110 + luck + rng.normal(0, 5)
            mine.append(game(deal, r, ours, [seat]))
            theirs.append(game(deal, r, ref, [1 - seat]))
    entry = cards.matchup_entry(cards.Matchup("expert", "expert@1", mine, theirs), seed=3)
    assert entry["games"] == 400 and entry["deals"] == 200 and entry["win_rate"] == 1.0
    assert entry["mean_score"] == pytest.approx(
        np.mean([g["scores"][cards.agent_seat(g)] for g in mine])
    )
    paired = entry["paired"]
    exact = np.mean(
        [
            a["scores"][cards.agent_seat(a)] - b["scores"][cards.agent_seat(b)]
            for a, b in zip(mine, theirs, strict=True)
        ]
    )
    assert paired["mean"] == pytest.approx(exact) and exact == pytest.approx(-10, abs=1.5)
    assert paired["ci"][0] < exact < paired["ci"][1]
    assert paired["width_ratio"] < 0.3  # the luck cancels: a far narrower interval
    lo, hi = entry["mean_score_ci"]
    assert lo < entry["mean_score"] < hi and hi - lo > 10  # the plain one carries the luck
    missing = cards.Matchup("expert", "expert@1", mine, theirs[:-1])
    with pytest.raises(ValueError, match="the reference has no game for deal 199 rotation 1"):
        cards.matchup_entry(missing, seed=3)


@pytest.mark.slow
def test_ratings_are_against_an_anchored_zoo_so_cards_compare() -> None:
    """The zoo's ratings are fitted once on the reference's games; an agent's rating moves only
    the agent: one that plays as the reference does lands on the reference's rating, a stronger
    one above it, a weaker one below, whatever else was rated."""
    rng = np.random.default_rng(1)
    strength = {"weak": -1.0, "expert": 0.0, "strong": 1.0}

    def matchups(agent: str, skill: float) -> list[list[dict[str, Any]]]:
        out = []
        for opponent in ("weak", "expert", "strong"):
            games = []
            for deal in range(150):
                r = deal % 4
                seat = (-r) % 4
                scores = [-strength[opponent] + rng.normal(0, 1) for _ in range(4)]
                scores[seat] = -skill + rng.normal(0, 1)
                specs = [opponent] * 4
                specs[seat] = agent
                games.append({**game(deal, r, scores, [int(np.argmin(scores))]), "specs": specs})
            out.append(games)
        return out

    zoo = cards.anchors(matchups("expert", 0.0))
    assert zoo["weak"][0] < zoo["expert"][0] < zoo["strong"][0]
    before = dict(zoo)
    like = cards.rating(matchups("expert", 0.0), zoo)
    better = cards.rating(matchups("x", 0.6), zoo)
    worse = cards.rating(matchups("y", -0.6), zoo)
    assert zoo == before  # the anchors never move
    assert abs(like["mu"] - zoo["expert"][0]) < 1.5
    one = cards.rating(matchups("expert", 0.0)[:1], zoo)
    assert like["sigma"] < one["sigma"] - 0.3  # no drift (tau = 0): more games, more certain
    assert worse["mu"] < like["mu"] - 3 and better["mu"] > like["mu"] + 3
    assert like["ordinal"] == pytest.approx(like["mu"] - 3 * like["sigma"])
    # Only the first RATED_DEALS deals of each opponent count: every card reads as many games.
    games = matchups("x", 0.6)
    assert len(games[0]) > cards.RATED_DEALS
    tail = [
        [{**g, "scores": [0.0] * 4} if g["deal"] >= cards.RATED_DEALS else g for g in m]
        for m in games
    ]
    assert cards.rating(tail, zoo) == cards.rating(games, zoo) != cards.rating(games[:2], zoo)
    assert cards.interleaved([[1, 2, 3], [4], [5, 6]]) == [1, 4, 5, 2, 6, 3]  # type: ignore[list-item]


# ----------------------------------------------------------------------------- evaluate


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    """Suite "tiny": two small tables (4 and 2 players), four deals, three zoo members."""
    folder = tmp_path_factory.mktemp("deals")
    quick = Rules(hand_sizes=(2, 1))
    for name, players, seed, deals in (
        ("four", 4, 11, 4),
        ("four_search", 4, 12, 2),
        ("two", 2, 13, 4),
        ("two_search", 2, 14, 2),
    ):
        write(make(name, "tiny", players, quick, seed, deals), folder)
    tables = (
        Table("four", "4 players", "four", "four_search"),
        Table("two", "2 players", "two", "two_search"),
    )
    return Suite("tiny", tables, zoo=("random", "greedy", "expert", "champion"), folder=folder)


VARIES = ("created", "command", "compute")  # what may differ between two runs of a card


def same(card: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in json.loads(cards.to_json(card)).items() if k not in VARIES}


@pytest.mark.slow
def test_a_card_checks_against_its_schema_and_is_the_same_for_any_workers(
    tiny: Suite, tmp_path: Path
) -> None:
    one = evaluate("greedy", tiny, "full", Options(tmp_path / "one"))
    schema = json.loads(cards.SCHEMA.read_text())
    jsonschema.validate(json.loads((tmp_path / "one" / "card.json").read_text()), schema)
    assert (tmp_path / "one" / "card.md").read_text().startswith("# Report card: `greedy`")
    assert (tmp_path / "one" / "card.png").read_bytes()[:4] == b"\x89PNG"
    four, two = one["tables"]
    assert [o["opponent"] for o in four["opponents"]] == ["random", "greedy", "expert", "champion"]
    assert [o["games"] for o in four["opponents"]] == [16, 16, 16, 16]  # 4 deals x 4 seats
    assert [o["opponent"] for o in two["opponents"]] == ["random", "greedy", "expert"]
    assert two["skipped"][0]["opponent"] == "champion"  # trained for 4 players
    assert all(o["paired"] is not None for o in four["opponents"])
    assert one["agent"]["identity"].startswith("greedy@") and one["rating"]["sigma"] > 0
    two_workers = evaluate("greedy", tiny, "full", Options(tmp_path / "two", workers=2))
    assert same(two_workers) == same(one)


@pytest.mark.slow
def test_the_reference_has_no_paired_estimate_and_a_shared_games_folder_is_reused(
    tiny: Suite, tmp_path: Path
) -> None:
    games = tmp_path / "games"
    evaluate("greedy", tiny, "search", Options(tmp_path / "greedy", games_dir=games))
    reference = games / "four" / "four_search" / "expert-vs-random" / "games.jsonl"
    before = reference.read_text()
    card = evaluate("expert", tiny, "search", Options(tmp_path / "expert", games_dir=games))
    assert reference.read_text() == before  # the reference's games were played once
    assert all(o["paired"] is None for t in card["tables"] for o in t["opponents"])
    assert {o["deal_set"] for o in card["tables"][0]["opponents"]} == {"four_search"}
    again = evaluate("expert", tiny, "search", Options(tmp_path / "expert", games_dir=games))
    assert same(again) == same(card)  # resumed: nothing left to play, the same card


@pytest.mark.slow
def test_a_card_names_its_luck_estimator(tiny: Suite, tmp_path: Path) -> None:
    """``Options.luck`` (craits evaluate --luck): the adjusted estimates by compiled rollout
    values, the estimator's identity in each adjusted entry and on the page; the same games
    as a card by the shipped model, whose identity it names in turn."""
    from craits.agents.luck import LuckEstimator
    from craits.agents.luck_tournament import RolloutEstimator

    games = tmp_path / "games"
    rolled = evaluate(
        "greedy", tiny, "search", Options(tmp_path / "r", games_dir=games, luck="rollouts:2:2")
    )
    jsonschema.validate(rolled, json.loads(cards.SCHEMA.read_text()))
    entries = [o for t in rolled["tables"] for o in t["opponents"]]
    named = RolloutEstimator(4, Rules(), 2, 2).model_id
    assert {o["adjusted"]["estimator"] for o in entries} == {named}
    assert f"Estimator: `{named}`." in (tmp_path / "r" / "card.md").read_text()
    model = evaluate("greedy", tiny, "search", Options(tmp_path / "m", games_dir=games))
    others = [o for t in model["tables"] for o in t["opponents"]]
    assert {o["adjusted"]["estimator"] for o in others} == {LuckEstimator().model_id}
    assert [o["scores"] for o in others] == [o["scores"] for o in entries]  # the same games
    assert [o["adjusted"]["mean_score"] for o in others] != [
        o["adjusted"]["mean_score"] for o in entries
    ]


@pytest.mark.slow
def test_searching_opponents_are_met_on_the_small_deal_set() -> None:
    assert (
        is_searching("pimc:64") and is_searching("champion-search") and not is_searching("expert")
    )
    table = V1.tables[0]
    assert V1.deal_set(table, "greedy", "pimc", "full").name == "standard_4p_search"
    assert V1.deal_set(table, "greedy", "expert", "full").name == "standard_4p"
    assert V1.deal_set(table, "greedy", "expert", "search").name == "standard_4p_search"


def craits(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "craits", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["evaluate", "nosuchbot"], "unknown agent spec"),
        (["evaluate", "expert", "--suite", "v9"], "suite: got 'v9', allowed v1"),
        (["evaluate", "expert", "--size", "huge"], "invalid choice: 'huge'"),
        (["evaluate", "expert", "--luck", "rollouts:0"], "luck estimator: got 'rollouts:0'"),
        (["evaluate", "expert", "--luck", "rollouts:8", "--no-adjusted"], "drop --no-adjusted"),
    ],
)
@pytest.mark.slow
def test_bad_evaluate_arguments_give_one_line_and_status_2(args: list[str], fragment: str) -> None:
    proc = craits(*args)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and fragment in lines[0], proc.stderr


def test_the_package_ships_the_deal_sets_and_the_schema() -> None:
    assert cards.SCHEMA.is_file() and (DEALS_DIR / "v1" / "standard_4p.json").is_file()
    assert dataclasses.is_dataclass(V1)


@pytest.mark.slow
def test_the_compare_page_reads_every_card_under_its_results_folders(
    tiny: Suite, tmp_path: Path
) -> None:
    from ..webclient import client

    results = tmp_path / "results"
    evaluate("greedy", tiny, "search", Options(results / "greedy", games_dir=tmp_path / "g"))
    evaluate(
        "expert", tiny, "search", Options(results / "mine" / "expert", games_dir=tmp_path / "g")
    )
    (results / "junk").mkdir()
    (results / "junk" / "card.json").write_text('{"format": "something else"}')
    board = client(tmp_path / "games", result_dirs=[results]).get("/api/cards?suite=tiny").json()
    assert board["suite"] == "tiny" and board["complete"]
    assert sorted(r["spec"] for r in board["rows"]) == ["expert", "greedy"]
    reference = next(r for r in board["rows"] if r["spec"] == "expert")
    assert reference["is_reference"] and reference["paired_mean"] == 0.0
    assert set(reference["win_rates"]) == {
        "random",
        "expert",
        "champion",
        "pimc",
        "champion-search",
    }
    assert reference["win_rates"]["pimc"] is None  # not in this suite's zoo
    assert client(tmp_path / "games", result_dirs=[results]).get("/api/cards").json()["rows"] == []


@pytest.mark.slow
def test_the_interval_widths_are_read_from_the_cards(tiny: Suite, tmp_path: Path) -> None:
    from craits.benchmark.leaderboard import widths, widths_markdown

    card = evaluate("greedy", tiny, "full", Options(tmp_path / "greedy"))
    found = widths([card])
    assert [(w["table"], w["deal_set"], w["deals"]) for w in found] == [
        ("four", "four", 4),
        ("two", "two", 4),
    ]
    four = card["tables"][0]["opponents"]
    spans = sorted(o["win_rate_ci"][1] - o["win_rate_ci"][0] for o in four)
    assert found[0]["win_rate"] == spans[len(spans) // 2]
    assert widths_markdown(found).count("\n") == 3


def test_the_champions_refuse_a_table_they_were_not_trained_for_naming_no_path() -> None:
    """A card's ``skipped`` reasons are committed: they must name the agent, not a path of
    the machine that made them."""
    from craits.agents.specs import resolve_agent

    for spec in ("champion", "champion-search", "belief-search"):
        with pytest.raises(ValueError) as e:
            resolve_agent(spec, num_players=2, rules=Rules())
        message = str(e.value)
        assert message.startswith("champion was trained for 4 players") and "/" not in message
    resolve_agent("champion-search", num_players=4, rules=Rules())  # its own table: accepted


def test_the_card_adds_the_luck_adjusted_estimates_when_every_game_has_its_corrections() -> None:
    """A game's ``luck`` (its corrections per seat, craits.agents.luck) gives the adjusted
    mean score and paired estimate, from the same resamples as the plain ones: corrections
    that remove the cards' luck exactly leave only the play's spread."""
    rng = np.random.default_rng(1)
    mine, theirs = [], []
    for deal in range(200):
        for r in range(2):
            seat = (-r) % 2
            luck = rng.normal(0, 40, 2)  # what each game's cards did, known to the estimator
            ours, ref = [0.0, 0.0], [0.0, 0.0]
            ours[seat] = 100 + luck[0] + rng.normal(0, 5)
            ref[seat] = 110 + luck[1] + rng.normal(0, 5)
            mine.append({**game(deal, r, ours, [seat]), "luck": [luck[0]] * 2})
            theirs.append({**game(deal, r, ref, [1 - seat]), "luck": [luck[1]] * 2})
    entry = cards.matchup_entry(cards.Matchup("expert", "expert@1", mine, theirs), seed=3)
    adjusted, paired = entry["adjusted"], entry["paired"]
    exact = np.mean(
        [g["scores"][cards.agent_seat(g)] - g["luck"][cards.agent_seat(g)] for g in mine]
    )
    assert adjusted["mean_score"] == pytest.approx(exact) and exact == pytest.approx(100, abs=1.5)
    lo, hi = adjusted["mean_score_ci"]
    assert lo < exact < hi
    assert adjusted["width_ratio"] == pytest.approx(
        (hi - lo) / (entry["mean_score_ci"][1] - entry["mean_score_ci"][0])
    )
    assert adjusted["width_ratio"] < 0.3
    assert paired["adjusted_mean"] == pytest.approx(-10, abs=1.5)
    assert paired["adjusted_width_ratio"] < 0.3  # the games' own luck no longer enters it
    text = cards.to_markdown(
        {
            "agent": {"spec": "a", "identity": "a@1"},
            "engine": {"craits": "0", "rules_revision": 1},
            "reference": {"identity": "expert@1"},
            "suite": "v1",
            "size": "full",
            "created": "today",
            "compute": {"seconds": 1.0},
            "command": "craits evaluate a",
            "tables": [{"title": "t", "players": 2, "opponents": [{**entry, "deal_set": "s"}]}],
        }
    )
    assert "adjusted score [95%] (width ×)" in text and f"(×{adjusted['width_ratio']:.2f})" in text
    bare = [{k: v for k, v in g.items() if k != "luck"} for g in mine]
    assert "adjusted" not in cards.matchup_entry(cards.Matchup("x", "x@1", bare, None), seed=3)
