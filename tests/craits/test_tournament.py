"""craits tournament: duplicate deals, rotations, statistics, resume, workers, Ray, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from craits.agents.base import RandomAgent
from craits.agents.duplicate_tournament import (
    CONFIG_FILE,
    GAMES_FILE,
    TournamentConfig,
    TournamentError,
    plan,
    results_in_order,
    run_games,
    seats_of,
)
from craits.agents.specs import register
from craits.agents.stats import summarize
from craits.tournament_workers import run_tournament
from craits_env import Phase, Rules

SHORT = Rules(hand_sizes=(4, 2, 1))


class _Illegal(RandomAgent):
    name = "illegal"

    def act(self, observation):  # type: ignore[no-untyped-def]
        return 58 if observation.phase != Phase.DECLARE else 0  # never legal in that phase


register("test-illegal", lambda arg, seed: _Illegal(seed))


def config(
    specs: tuple[str, ...], deals: int = 6, seed: int = 1, players: int = 3
) -> TournamentConfig:
    return TournamentConfig(specs, players, deals, seed, SHORT)


def table(games: dict, cfg: TournamentConfig) -> dict:
    return summarize(results_in_order(games, cfg), list(cfg.specs), cfg.seed)


def test_each_deal_is_played_under_every_rotation(tmp_path: Path) -> None:
    cfg = config(("random", "random", "random"), deals=3)
    tasks = plan(cfg)
    assert len(tasks) == 3 * 3
    assert seats_of(("a", "b", "c"), 1) == ["b", "c", "a"]
    games = run_games(cfg, tmp_path)
    by_deal: dict[int, list[dict]] = {}
    for g in games.values():
        by_deal.setdefault(g["deal"], []).append(g)
    for deal_games in by_deal.values():
        assert sorted(g["rotation"] for g in deal_games) == [0, 1, 2]


def test_same_cards_in_every_rotation_of_a_deal(tmp_path: Path) -> None:
    from craits.agents.duplicate_tournament import GamePlayer, GameTask

    cfg = config(("random", "random", "random"), deals=2)
    player = GamePlayer(cfg)
    a = player.play(GameTask(1, 0, 0))
    b = player.play(GameTask(1, 0, 2))
    c = player.play(GameTask(0, 0, 0))
    assert a["key"] != b["key"]
    # Same deal: same first hand dealt (the engine is driven by the deal's deck orders).
    from craits.agents.duplicate_tournament import deal_cards

    assert deal_cards(cfg, 1) == deal_cards(cfg, 1) != deal_cards(cfg, 0)
    assert c["deal"] == 0


def test_more_specs_than_players_plays_every_combination(tmp_path: Path) -> None:
    cfg = TournamentConfig(("random", "a", "b", "c"), 3, 2, 0, SHORT)
    assert len(cfg.lineups()) == 4
    assert len(plan(cfg)) == 2 * 4 * 3
    cycle = TournamentConfig(("random", "a", "b", "c"), 3, 8, 0, SHORT, schedule="cycle")
    tasks = plan(cycle)
    assert len(tasks) == 8 * 3
    assert [t.lineup for t in tasks[::3]] == [0, 1, 2, 3, 0, 1, 2, 3]
    with pytest.raises(ValueError, match="schedule"):
        TournamentConfig(("random", "a", "b", "c"), 3, 8, 0, SHORT, schedule="some")
    with pytest.raises(ValueError, match="at least 3"):
        TournamentConfig(("random", "random"), 3, 2, 0, SHORT)


def test_one_rotation_plays_each_deal_once_and_pairs_with_the_full_tournament(
    tmp_path: Path,
) -> None:
    """rotations="one": deal d under rotation d % players only, the first spec in seat
    -d % players; each of its games is the full tournament's game of that deal and rotation
    (so two tournaments of one seed pair deal by deal)."""
    specs = ("greedy", "random", "random")
    one = TournamentConfig(specs, 3, 6, 4, SHORT, rotations="one")
    assert [(t.deal, t.rotation) for t in plan(one)] == [(d, d % 3) for d in range(6)]
    assert [seats_of(specs, t.rotation).index("greedy") for t in plan(one)] == [0, 2, 1] * 2
    games = run_games(one, tmp_path / "one")
    full = run_games(TournamentConfig(specs, 3, 6, 4, SHORT), tmp_path / "all")
    assert len(games) == 6 and all(full[k] == g for k, g in games.items())
    assert json.loads((tmp_path / "one" / CONFIG_FILE).read_text())["rotations"] == "one"
    with pytest.raises(TournamentError, match="different tournament"):
        run_games(TournamentConfig(specs, 3, 6, 4, SHORT), tmp_path / "one")
    with pytest.raises(ValueError, match="rotations: got 'two', allowed 'all', 'one'"):
        TournamentConfig(specs, 3, 6, 4, SHORT, rotations="two")


@pytest.mark.slow
def test_table_schema_and_reproducibility(tmp_path: Path) -> None:
    cfg = config(("random", "random", "random"), deals=8)
    t1 = table(run_games(cfg, tmp_path / "a"), cfg)
    t2 = table(run_tournament(cfg, tmp_path / "b", workers=2), cfg)
    assert t1 == t2  # same seed, same table, whatever the number of workers
    (agent,) = t1["agents"]
    keys = (
        "spec",
        "games",
        "win_rate",
        "win_rate_ci",
        "mean_score",
        "mean_score_ci",
        "rating_mu",
        "rating_sigma",
        "mean_hand_points",
        "mean_hand_points_ci",
    )
    assert set(keys) <= agent.keys()
    assert agent["games"] == 8 * 3 * 3
    lo, hi = agent["mean_score_ci"]
    assert lo <= agent["mean_score"] <= hi
    assert agent["win_rate"] == pytest.approx(1 / 3)
    other = table(
        run_games(config(cfg.specs, deals=8, seed=2), tmp_path / "c"),
        config(cfg.specs, deals=8, seed=2),
    )
    assert other != t1


@pytest.mark.slow
def test_resume_after_interruption_gives_the_same_table(tmp_path: Path) -> None:
    cfg = config(("random", "random", "random"), deals=6)
    full = table(run_games(cfg, tmp_path / "full"), cfg)
    out = tmp_path / "part"
    calls = []

    def stop_midway(done: int, total: int) -> None:
        calls.append(done)
        if done >= 6:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_games(cfg, out, progress=stop_midway)
    kept = (out / GAMES_FILE).read_text().splitlines()
    assert 6 <= len(kept) < 18
    with (out / GAMES_FILE).open("a") as f:
        f.write('{"key": "torn')  # a crash in the middle of a line
    games = run_games(cfg, out)
    lines = (out / GAMES_FILE).read_text().splitlines()
    assert len(lines) == 18 and len({json.loads(x)["key"] for x in lines}) == 18
    assert table(games, cfg) == full


def test_results_directory_of_another_tournament_is_refused(tmp_path: Path) -> None:
    run_games(config(("random", "random", "random"), deals=2), tmp_path)
    for other in (
        config(("random", "random", "random"), deals=2, seed=9),
        config(("random", "random", "greedy"), deals=2),
        config(("random", "random", "random"), deals=1),
    ):
        with pytest.raises(TournamentError, match="different tournament"):
            run_games(other, tmp_path)


@pytest.mark.slow
def test_more_deals_extend_a_finished_tournament(tmp_path: Path) -> None:
    """Growing --deals keeps the games played and plays only the new deals: the table equals
    a fresh run of the larger tournament."""
    specs = ("random", "greedy", "tactician", "expert")
    small = TournamentConfig(specs, 3, 4, 5, SHORT, schedule="cycle")
    large = TournamentConfig(specs, 3, 7, 5, SHORT, schedule="cycle")
    out = tmp_path / "grow"
    first = run_games(small, out)
    assert len(first) == 4 * 3
    played: list[int] = []
    grown = run_games(large, out, progress=lambda done, total: played.append(done))
    assert played[0] == 4 * 3 and played[-1] == 7 * 3  # only the three new deals were played
    assert {k: grown[k] for k in first} == first
    assert table(grown, large) == table(run_games(large, tmp_path / "fresh"), large)
    assert json.loads((out / CONFIG_FILE).read_text())["deals"] == 7


def test_illegal_action_stops_cleanly_naming_agent_and_position(tmp_path: Path) -> None:
    cfg = config(("random", "random", "test-illegal"), deals=2)
    with pytest.raises(TournamentError, match=r"agent 'test-illegal' \(seat \d\).*game .*hand 1"):
        run_games(cfg, tmp_path)
    assert (tmp_path / "tournament.json").exists()


def test_head_to_head_and_ratings_order() -> None:
    games = [
        {
            "deal": d,
            "specs": ["a", "b"],
            "scores": [10, 20],
            "winners": [0],
            "hand_points": [[10, 20]],
            "decisions": 1,
        }
        for d in range(20)
    ]
    t = summarize(games, ["a", "b"], 0)
    assert [a["spec"] for a in t["agents"]] == ["a", "b"]
    assert t["head_to_head"]["a"]["b"] == 1.0 and t["head_to_head"]["b"]["a"] == 0.0
    a, b = t["agents"]
    assert a["rating_mu"] > b["rating_mu"] and a["win_rate"] == 1.0


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "craits", "tournament", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_cli_writes_every_output(tmp_path: Path) -> None:
    out = tmp_path / "t"
    proc = run_cli(
        "random",
        "random",
        "--players",
        "2",
        "--deals",
        "3",
        "--seed",
        "4",
        "-r",
        "hand_sizes=3,2",
        "--out",
        str(out),
        "--no-progress",
    )
    assert proc.returncode == 0, proc.stderr
    for name in ("results.json", "results.csv", "results.md", "results.png", "games.jsonl"):
        assert (out / name).stat().st_size > 0
    data = json.loads((out / "results.json").read_text())
    assert data["agents"][0]["spec"] == "random" and data["games"] == 6
    assert (out / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["nobody", "random", "random", "random"], "unknown agent spec 'nobody'; known:"),
        (["random"], "at least 4"),
        (["random"] * 4 + ["--deals", "0"], "--deals"),
    ],
)
@pytest.mark.slow
def test_cli_bad_input_one_line(tmp_path: Path, args: list[str], fragment: str) -> None:
    proc = run_cli(*args, "--out", str(tmp_path / "x"))
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and fragment in proc.stderr


@pytest.mark.slow
def test_ray_local_gives_the_same_table(tmp_path: Path) -> None:
    import ray  # noqa: F401  (the dev extra installs it: never skipped)

    cfg = config(("random", "random", "random"), deals=4)
    local = table(run_games(cfg, tmp_path / "local"), cfg)
    on_ray = table(run_tournament(cfg, tmp_path / "ray", use_ray=True), cfg)
    assert on_ray == local


def test_decisions_counted_and_seats_balanced(tmp_path: Path) -> None:
    cfg = config(("random", "random", "random"), deals=2)
    games = run_games(cfg, tmp_path)
    seats = Counter(tuple(g["specs"]) for g in games.values())
    assert sum(seats.values()) == 6
    assert all(g["decisions"] > 0 for g in games.values())
    assert np.isfinite([g["scores"] for g in games.values()]).all()


@pytest.mark.slow
def test_cli_adjusted_mean_score_by_default_and_not_with_no_adjusted(tmp_path: Path) -> None:
    """Each agent row of results.json gains adjusted_mean_score and its interval (the luck-
    adjusted estimate, docs/luck.md), computed from the games' records and kept per game in
    luck.jsonl; --no-adjusted leaves them out."""
    from craits.agents.luck import LuckEstimator
    from craits_env.records import read_records

    common = ["random", "expert", "--players", "2", "--deals", "3", "-r", "hand_sizes=3,1,2"]
    out = tmp_path / "t"
    proc = run_cli(*common, "--out", str(out), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    data = json.loads((out / "results.json").read_text())
    estimator = LuckEstimator()
    adjusted: dict[str, list[float]] = {"random": [], "expert": []}
    for _, record in read_records(out / "records.jsonl"):
        for spec, value in zip(record["seats"], estimator.adjusted_scores(record), strict=True):
            adjusted[spec].append(value)
    for row in data["agents"]:
        lo, hi = row["adjusted_mean_score_ci"]
        assert row["adjusted_mean_score"] == pytest.approx(np.mean(adjusted[row["spec"]]))
        assert lo <= row["adjusted_mean_score"] <= hi
        assert {"mean_score", "mean_score_ci", "win_rate", "games"} <= set(row)
    lines = (out / "luck.jsonl").read_text().splitlines()
    assert len(lines) == 6 and json.loads(lines[0])["model"] == estimator.model_id
    assert "adjusted mean score [95% CI]" in (out / "results.md").read_text()
    assert "adjusted_mean_score_lo" in (out / "results.csv").read_text()
    plain = tmp_path / "p"
    proc = run_cli(*common, "--out", str(plain), "--no-progress", "--no-adjusted")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads((plain / "results.json").read_text())["agents"]
    assert all("adjusted_mean_score" not in row for row in rows)
    assert [r["mean_score"] for r in rows] == [r["mean_score"] for r in data["agents"]]
    assert not (plain / "luck.jsonl").exists()


@pytest.mark.slow
def test_cli_luck_rollouts_corrects_by_compiled_rollout_values(tmp_path: Path) -> None:
    """--luck rollouts:R:K: every game's corrections are RolloutEstimator's (keyed by the
    game, so a worker process gives the same numbers), kept under their own identity in
    luck.jsonl beside the model's; a rerun computes nothing; a bad estimator is refused."""
    from craits.agents.luck_tournament import RolloutEstimator
    from craits_env.records import read_records

    common = ["expert", "random", "--players", "2", "--deals", "2", "-r", "hand_sizes=3,2"]
    out = tmp_path / "t"
    proc = run_cli(*common, "--out", str(out), "--no-progress", "--luck", "rollouts:3:2")
    assert proc.returncode == 0, proc.stderr
    estimator = RolloutEstimator(2, Rules(hand_sizes=(3, 2)), 3, 2)
    expected = {
        record["meta"]["key"]: estimator.game(record).corrections.tolist()
        for _, record in read_records(out / "records.jsonl")
    }
    lines = [json.loads(x) for x in (out / "luck.jsonl").read_text().splitlines()]
    assert {x["model"] for x in lines} == {estimator.model_id}
    assert estimator.model_id.startswith("rollouts-3-2/v5/clip600/seated:expert@")
    assert {x["key"]: x["corrections"] for x in lines} == expected
    assert json.loads((out / "results.json").read_text())["luck_estimator"] == estimator.model_id
    assert f"(`{estimator.model_id}`)" in (out / "results.md").read_text()
    before = (out / "luck.jsonl").read_bytes()
    proc = run_cli(*common, "--out", str(out), "--no-progress", "--luck", "rollouts:3:2")
    assert proc.returncode == 0, proc.stderr
    assert (out / "luck.jsonl").read_bytes() == before
    for bad in ("rollouts:0", "rollout:8", "rollouts:8:2:9", "rollouts:8:2:1:1", "model:1"):
        proc = run_cli(*common, "--out", str(tmp_path / bad), "--no-progress", "--luck", bad)
        assert proc.returncode == 2
        assert f"luck estimator: got {bad!r}, allowed model, rollouts:R" in proc.stderr
        assert not (tmp_path / bad).exists()
    proc = run_cli(*common, "--out", str(tmp_path / "n"), "--no-adjusted", "--luck", "rollouts:8")
    assert proc.returncode == 2 and "drop --no-adjusted" in proc.stderr
    # a table whose players all play alike: a deal's rotations are one game, corrected once
    # (the same numbers under each key, from the game's record, not its key)
    same = tmp_path / "same"
    args = ["expert", "expert", "--players", "2", "--deals", "2", "-r", "hand_sizes=3,2"]
    proc = run_cli(*args, "--out", str(same), "--no-progress", "--luck", "rollouts:3:2")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(x) for x in (same / "luck.jsonl").read_text().splitlines()]
    by_deal: dict[str, list] = {}
    for x in lines:
        by_deal.setdefault(x["key"].split("-")[0], []).append(x["corrections"])
    assert len(lines) == 4 and all(len(c) == 2 and c[0] == c[1] for c in by_deal.values())
    assert len({json.dumps(c[0]) for c in by_deal.values()}) == 2
