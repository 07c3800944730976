"""Texts that say what is true (issue 44, finding 8): what a tournament table ranks by, the
standings of an abandoned game, plurals, the hand size dealt, one error form for every
command, and how to recover from a corrupt games file."""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from craits.agents.report import to_markdown
from craits.agents.stats import summarize
from craits.cli import build_parser, main
from craits.narrate import CardText, Narrator
from craits.play import PlaySession, table_lines
from craits.replay_view import record_line
from craits.terminal import Terminal
from craits_env import DRAW, Rules
from craits_env.engine import Game
from craits_env.testing.scenario import stacked_game


def craits(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "craits", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


# ----------------------------------------------------------------------------- tournament tables


def test_a_tournament_table_says_it_ranks_by_mean_score_not_win_rate() -> None:
    """``champion`` wins less often than ``expert`` but scores less: it ranks first, and the
    table says why."""
    games = []
    for deal in range(4):  # champion: 10 points, wins once; expert: 25 on average, wins 3 times
        scores = [10.0, 100.0 if deal == 0 else 0.0, 20.0]
        winners = [int(min(range(3), key=lambda s: scores[s]))]
        games.append(
            {
                "deal": deal,
                "rotation": 0,
                "specs": ["champion", "expert", "random"],
                "scores": scores,
                "winners": winners,
                "hand_points": [scores],
                "decisions": 1,
            }
        )
    summary = summarize(games, ["champion", "expert", "random"], seed=0)
    by_spec = {a["spec"]: a for a in summary["agents"]}
    assert by_spec["champion"]["win_rate"] < by_spec["expert"]["win_rate"]
    lines = to_markdown(summary, "Ladder").splitlines()
    assert lines[2] == (
        "4 games, ranked by mean game score (lower is better; R8.6); 95% "
        "bootstrap intervals over deals; ratings are OpenSkill Plackett–Luce "
        "(μ ± σ)."
    )
    assert lines[4].startswith("| rank (mean score) | agent | games | win rate [95% CI] |")
    assert [line.split("|")[1:3] for line in lines[6:9]] == [
        [" 1 ", " `champion` "],
        [" 2 ", " `random` "],
        [" 3 ", " `expert` "],
    ]


# ----------------------------------------------------------------------------- craits play


@pytest.mark.slow
def test_quitting_in_hand_1_says_the_game_is_abandoned(tmp_path: Path) -> None:
    proc = craits("play", "-o", "random", "--seed", "3", "--color", "never", stdin="quit\n")
    assert proc.returncode == 0, proc.stderr
    tail = proc.stdout.split("your move> quit\n", 1)[1].splitlines()
    assert tail == [
        "You quit in hand 1: the game is abandoned.",
        "Standings: the game was abandoned in hand 1 of 15, before any hand was scored; no winner:",
        "  1. you (player_0)          0 points",
        "  2. player_1 (random)       0 points",
    ]


def test_the_standings_of_a_game_abandoned_later_count_the_hands_scored() -> None:
    game = Game(2, Rules(hand_sizes=(2, 1, 2)), seed=4)
    while game.hand_index < 2:  # into the third hand
        game.apply(game.legal_actions()[0])
    standings = Narrator(["a", "b"], 0).standings(game)
    assert standings[0] == (
        "Standings: the game was abandoned in hand 3 of 3, after 2 hands scored; no winner:"
    )
    assert len(standings) == 3 and not any("winner" in line for line in standings[1:])
    while not game.is_over:
        game.apply(game.legal_actions()[0])
    assert Narrator(["a", "b"], 0).standings(game)[0] == (
        "Final standings (lowest total wins, R8.6):"
    )


def test_the_table_names_the_cards_dealt_this_hand_and_those_each_player_holds() -> None:
    """The header's size is what was dealt this hand; a player who drew holds more (the
    finding: "8 cards each" above a hand of 18)."""
    game = stacked_game(
        [["7c", "5c"], ["Ad", "Kd"]], "Qh", ["2s", "3s", "4s", "6s", "8h"], dealer=1
    )
    labels = ["you (player_0)", "player_1 (x)"]
    lines = table_lines(game, 0, labels, CardText())
    assert lines[1] == "── hand 1/1 · 2 cards dealt to each · dealer player_1 (x) · stock 47 ──"
    assert lines[3:5] == [
        " ▶ you (player_0)    2 cards  score     0",
        "   player_1 (x)      2 cards  score     0",
    ]
    game.apply(DRAW)  # player_0 draws: 3 cards, while 2 were dealt
    while game.current_player != 0:
        game.apply(game.legal_actions()[0])
    lines = table_lines(game, 0, labels, CardText())
    assert lines[1].startswith("── hand 1/1 · 2 cards dealt to each · ")
    held = len(game.hands[0])
    assert held > 2 and lines[3].startswith(f" ▶ you (player_0)  {held:>3} cards  score")


def test_one_of_a_thing_is_singular() -> None:
    game = stacked_game([["7c"], ["Ad"]], "Qh", ["2s", "3s", "4s"], dealer=1)
    game.shuffle_pressures[1] = 1
    lines = table_lines(game, 0, ["you", "bot"], CardText())
    assert lines[1] == "── hand 1/1 · 1 card dealt to each · dealer bot · stock 49 ──"
    assert lines[3:5] == [
        " ▶ you    1 card   score     0",
        "   bot    1 card   score     0  (1 shuffle pressure)",
    ]
    out = io.StringIO()
    PlaySession(
        ["random"],
        Terminal(out, io.StringIO("")),
        seed=3,
        rules=Rules(hand_sizes=(1,)),
        interactive=False,
    ).run()
    assert out.getvalue().startswith("Craits — 2 players, 1 hand, seed 3; you are player_0.")
    record = {
        "seats": ["a", "b"],
        "hands": [{"decisions": [7]}],
        "winners": [0],
        "finished": True,
        "scores": [0, 5],
    }
    assert record_line(1, 1, record) == (
        "game 1 (line 1): p0:a, p1:b; 1 hand, 1 decision; scores [0, 5]; winners player_0"
    )


# ----------------------------------------------------------------------------- one error form


def commands() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    def walk(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in dict.fromkeys(action.choices.values()):
                    yield child.prog, child
                    yield from walk(child)

    return walk(build_parser())


def test_every_commands_bad_argument_error_names_the_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    names = [name for name, _ in commands()]
    assert {"craits tournament", "craits evaluate", "craits bench engine", "craits serve"} <= set(
        names
    )
    for name in names:
        with pytest.raises(SystemExit) as e:
            main([*name.split()[1:], "--no-such-option"])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith(f"{name}: error: ") and err.endswith(" (see --help)\n"), err
        assert err.count("\n") == 1, err
    with pytest.raises(SystemExit):
        main(["demo", "--no-such-option"])
    assert capsys.readouterr().err == (
        "craits demo: error: unrecognized arguments: --no-such-option (see --help)\n"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["tournament", "random", "nosuchbot", "-n", "2", "--out", "{tmp}/t"],
            "craits tournament: error: unknown agent spec 'nosuchbot'",
        ),
        (["bench"], "craits bench: error: bench needs a target"),
        (
            ["demo", "-r", "colour=red"],
            "craits demo: error: argument --rule/-r: invalid rule option",
        ),
        (
            ["play", "-o", "random", "--seat", "5"],
            "craits play: error: seat: got 5, allowed 0 to 1",
        ),
        (["replay", "{tmp}/none.jsonl"], "craits replay: error: "),
        (["train", "--set", "nosuch=1"], "craits train: error: "),
        (["evaluate", "nosuchbot"], "craits evaluate: error: unknown agent spec 'nosuchbot'"),
    ],
)
def test_errors_found_while_running_take_the_same_form(
    args: list[str], line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Errors a command finds after parsing (an unknown spec, a missing file) name the command
    as argparse does, never ``craits: error:``."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    try:
        status = main(args)
    except SystemExit as e:
        status = int(e.code or 0)
    err = capsys.readouterr().err
    assert status == 2 and err.startswith(line) and err.count("\n") == 1, err


@pytest.mark.slow
def test_a_corrupt_games_file_names_the_line_and_how_to_recover(tmp_path: Path) -> None:
    out = tmp_path / "t"
    args = [
        "tournament",
        "random",
        "random",
        "-n",
        "2",
        "--deals",
        "2",
        "--no-progress",
        "-r",
        "hand_sizes=2,1",
        "--out",
        str(out),
    ]
    assert craits(*args).returncode == 0
    games = out / "games.jsonl"
    lines = games.read_text().splitlines(keepends=True)
    games.write_text(lines[0] + "{not json\n" + "".join(lines[1:]))
    proc = craits(*args)
    assert proc.returncode == 2
    error, hint = proc.stderr.splitlines()
    assert error.startswith(f"craits tournament: error: {games} line 2: ")
    assert hint == (
        f"craits tournament: hint: remove line 2 of {games} (that game is played "
        "again; the finished games on the other lines are kept), or remove "
        f"{out} to start over"
    )
