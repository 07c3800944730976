"""Game records: record → replay identity, files, error messages naming the line,
``craits replay``, and ``craits tournament --record``."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from craits.agents.duplicate_tournament import (
    RECORDS_FILE,
    TournamentConfig,
    collect_records,
    results_in_order,
    run_games,
)
from craits.tournament_workers import run_tournament
from craits_env import Game, Phase, Rules
from craits_env.records import (
    FORMAT,
    VERSION,
    GameRecorder,
    RecordError,
    append_record,
    encode_record,
    read_records,
    replay,
    write_records,
)
from craits_env.scoring import GOING_OUT_BONUS, explain_hand

from ..craits.test_play import run_cli
from .test_invariants import random_config


def random_record(seed: int, n: int = 3, rules: Rules | None = None) -> dict[str, Any]:
    """A finished game with uniformly random decisions, recorded."""
    r = random.Random(seed)
    game = Game(n, rules or Rules(hand_sizes=(3, 1, 2)), seed=seed, record=True)
    recorder = GameRecorder(game, ["random"] * n, seed=seed)
    while not game.is_over:
        legal = game.legal_actions()
        recorder.apply(legal[r.randrange(len(legal))])
    return recorder.record()


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(3))
def test_record_replays_to_the_identical_game_over_random_games_and_options(chunk: int) -> None:
    r = random.Random(100 + chunk)
    for i in range(70):
        n, rules = random_config(r)
        game = Game(n, rules, seed=i + 1000 * chunk, record=True)
        recorder = GameRecorder(game, [r.choice(("random", "greedy", "human")) for _ in range(n)])
        while not game.is_over:
            legal = game.legal_actions()
            recorder.apply(legal[r.randrange(len(legal))])
        record = json.loads(encode_record(recorder.record()))  # through JSON, as in a file
        assert record["format"] == FORMAT and record["version"] == VERSION
        replayed = replay(record)
        assert replayed.snapshot() == game.snapshot()
        assert record["scores"] == game.scores and record["finished"]
        k = r.randrange(len(record["hands"])) + 1  # the end of one hand, as it was scored
        end = replay(record, hands=k, verify=False)
        assert end.is_over and [list(p) for p in end.hand_points] == record["hand_points"][:k]
        bonus = GOING_OUT_BONUS if rules.going_out_bonus else 0
        for s, hand in enumerate(end.hands):
            cards = bonus if s in end.went_out else explain_hand(hand, rules).points
            assert cards <= record["hand_points"][k - 1][s]  # + shuffle pressures, never less


def test_unfinished_game_records_and_replays() -> None:
    game = Game(4, Rules(), seed=5, record=True)
    recorder = GameRecorder(game, ["human", "random", "random", "random"], seed=5)
    r = random.Random(5)
    for _ in range(150):
        legal = game.legal_actions()
        recorder.apply(legal[r.randrange(len(legal))])
    record = recorder.record()
    assert not record["finished"] and record["winners"] is None
    assert replay(record).snapshot() == game.snapshot()


def test_recorder_refuses_a_game_under_way_and_skips_illegal_actions() -> None:
    game = Game(2, seed=0)
    game.apply(game.legal_actions()[0])
    with pytest.raises(ValueError, match="before its first decision"):
        GameRecorder(game, ["random", "random"])  # its deals are known from its events only
    game = Game(2, seed=0)  # no record=True: the recorder reads the deals from the events
    recorder = GameRecorder(game, ["random", "random"])
    with pytest.raises(ValueError, match="illegal action"):
        recorder.apply(58 if game.phase != Phase.DECLARE else 0)
    assert recorder.decisions == []


def test_file_round_trip_append_and_torn_last_line(tmp_path: Path) -> None:
    recs = [random_record(s) for s in range(3)]
    path = tmp_path / "games.jsonl"
    write_records(path, recs[:2])
    append_record(path, recs[2])
    assert [rec for _, rec in read_records(path)] == recs
    with path.open("a") as f:
        f.write(encode_record(recs[0])[:50])  # a crash in the middle of a line
    torn: list[int] = []
    assert [n for n, _ in read_records(path, on_torn=torn.append)] == [1, 2, 3]
    assert torn == [4]
    append_record(path, recs[1])  # drops the torn line first
    assert [n for n, _ in read_records(path)] == [1, 2, 3, 4]
    assert path.read_text().count("\n") == 4


def _write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _tamper(record: dict[str, Any], change: str) -> dict[str, Any]:
    rec = copy.deepcopy(record)
    decisions = rec["hands"][0]["decisions"]
    if change == "score":
        rec["scores"][1] += 1
    elif change == "hand points":
        rec["hand_points"][0][0] += 5
    elif change == "illegal":
        decisions[2][1] = 57 if decisions[2][1] != 57 else 52
    elif change == "player":
        decisions[2][0] = (decisions[2][0] + 1) % rec["num_players"]
    elif change == "cut":
        del rec["hands"][-1]["decisions"][-1]
    elif change == "version":
        rec["version"] = 99
    elif change == "missing":
        del rec["first_dealer"]
    elif change == "card":
        rec["hands"][0]["deal"][0] = "Zz"
    elif change == "deal":
        rec["hands"][0]["deal"][0] = rec["hands"][0]["deal"][1]
    elif change == "rules":
        rec["rules"]["colour"] = "red"
    return rec


@pytest.mark.parametrize(
    "change, fragment",
    [
        ("score", "replayed scores"),
        ("hand points", "hand 1: replayed points"),
        ("illegal", "hand 1, decision 3: illegal action"),
        ("player", "hand 1, decision 3: recorded for player_"),
        ("cut", "says the game is finished"),
        ("version", "unsupported record version 99"),
        ("missing", "missing key(s): first_dealer"),
        ("card", "hand 1: deal: invalid card 'Zz'"),
        ("deal", "cannot deal the recorded game"),
        ("rules", "unknown rule option"),
    ],
)
def test_a_bad_record_is_an_error_naming_the_line(
    tmp_path: Path, change: str, fragment: str
) -> None:
    good = random_record(1)
    path = _write_lines(
        tmp_path / "r.jsonl", [encode_record(good)] * 2 + [encode_record(_tamper(good, change))]
    )
    with pytest.raises(RecordError) as info:
        list(read_records(path))
    message = str(info.value)
    assert message.startswith(f"{path} line 3: ") and fragment in message, message


@pytest.mark.parametrize(
    "line, fragment",
    [
        ('{"format": "craits-record", "version": 1', "line 1: not valid JSON"),
        ('{"key": "0-0-1", "scores": [1, 2]}', "line 1: not a Craits game record (no format"),
        ('{"format": "rlcard-uno"}', "format 'rlcard-uno'"),
        ("[1, 2, 3]", "expected a JSON object (a game record), got an array"),
    ],
)
def test_corrupt_and_foreign_lines(tmp_path: Path, line: str, fragment: str) -> None:
    path = _write_lines(tmp_path / "r.jsonl", [line, encode_record(random_record(2))])
    with pytest.raises(RecordError, match="line 1: ") as info:
        list(read_records(path))
    assert fragment in str(info.value)


def test_empty_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(RecordError, match="no game record"):
        list(read_records(tmp_path / "empty.jsonl"))
    with pytest.raises(RecordError, match="cannot read"):
        list(read_records(tmp_path / "nothing.jsonl"))


# ----------------------------------------------------------------------------- craits replay


@pytest.mark.slow
def test_replay_command_shows_a_game_step_by_step_and_checks_scores(tmp_path: Path) -> None:
    record = random_record(3, n=4, rules=Rules(hand_sizes=(3, 1), face_cards=True))
    path = tmp_path / "one.jsonl"
    write_records(path, [random_record(4), record])
    decisions = sum(len(h["decisions"]) for h in record["hands"])
    proc = run_cli("replay", str(path), "--game", "2", "--step", stdin="\n" * 5)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert f"Replayed scores match the record: {record['scores']}" in out
    assert "Hand 1/2: 3 cards each" in out and "Hand 2 is over" in out and "Final standings" in out
    assert out.count("[Enter: next decision, q: stop]") == 6  # 5 lines, then the end of input
    assert f"{decisions:>5}. " in out  # every decision is told, numbered
    assert "\x1b[" not in out  # no colours in a pipe
    summary = run_cli("replay", str(path))
    assert summary.returncode == 0 and "2 games replayed" in summary.stdout
    stop = run_cli("replay", str(path), "--game", "1", "--step", stdin="q\n")
    assert stop.returncode == 0 and "Stopped." in stop.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    "lines, args, fragment",
    [
        (['{"format": "craits-record", "version": 2}'], [], "line 1: unsupported record version 2"),
        (["not json"], [], "line 1: not valid JSON"),
        ([], ["--game", "9"], "there is no game 9"),
    ],
)
def test_replay_command_errors_are_one_line(
    tmp_path: Path, lines: list[str], args: list[str], fragment: str
) -> None:
    path = _write_lines(tmp_path / "bad.jsonl", [*lines, encode_record(random_record(5))])
    proc = run_cli("replay", str(path), *args)
    assert proc.returncode == 2
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("craits replay: error: ") and fragment in err[0]


# ----------------------------------------------------------------------------- tournaments


@pytest.mark.slow
def test_tournament_records_replay_to_its_scores_whatever_the_workers(tmp_path: Path) -> None:
    cfg = TournamentConfig(("random", "greedy", "random"), 3, 2, 7, Rules(hand_sizes=(3, 1)))
    games = run_games(cfg, tmp_path / "one", record=True)
    records = collect_records(cfg, tmp_path / "one", games)
    assert (tmp_path / "one" / RECORDS_FILE).exists()
    assert "record" not in next(iter(games.values()))  # results stay as they were
    ordered = results_in_order(games, cfg)
    assert len(records) == len(ordered) == 6
    for rec, result in zip(records, ordered, strict=True):
        assert rec["seats"] == result["specs"] and rec["meta"]["key"] == result["key"]
        assert replay(rec).scores == result["scores"] == rec["scores"]
    # Two workers, or a run without records resumed with them: the same records.
    two = run_tournament(cfg, tmp_path / "two", workers=2, record=True)
    assert collect_records(cfg, tmp_path / "two", two) == records
    plain = run_games(cfg, tmp_path / "plain")
    assert collect_records(cfg, tmp_path / "plain", plain) == records


@pytest.mark.slow
def test_tournament_command_writes_the_record_file(tmp_path: Path) -> None:
    out, path = tmp_path / "t", tmp_path / "games.jsonl"
    proc = run_cli(
        "tournament",
        "random",
        "greedy",
        "--players",
        "2",
        "--deals",
        "2",
        "--seed",
        "3",
        "-r",
        "hand_sizes=2,1",
        "--out",
        str(out),
        "--no-progress",
        "--record",
        str(path),
    )
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(x) for x in (out / "games.jsonl").read_text().splitlines()]
    recorded = {rec["meta"]["key"]: rec["scores"] for _, rec in read_records(path)}
    assert recorded == {g["key"]: g["scores"] for g in results} and len(recorded) == 4
