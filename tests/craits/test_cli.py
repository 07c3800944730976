"""The craits command: outputs of demo and bench, and one-line errors for bad arguments."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from craits.cli import main


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "craits", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_demo_prints_each_hand_and_standings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--players", "3", "--seed", "5", "--short"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line[:5].strip().isdigit()]
    assert len(rows) == 8  # one line per hand of the short game
    assert "Standings" in out and "winner" in out
    assert main(["demo", "--players", "3", "--seed", "5", "--short"]) == 0
    assert capsys.readouterr().out == out  # same seed, same game


@pytest.mark.parametrize("target, key", [("engine", "decisions_per_s"), ("env", "steps_per_s")])
def test_bench_json(target: str, key: str, capsys: pytest.CaptureFixture[str]) -> None:
    extra = ["--no-state"] if target == "engine" else []
    assert main(["bench", target, "--players", "3", "--seconds", "0.2", "--json", *extra]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result[key] > 0
    # a loaded machine may not finish a game in 0.2 s: games may be 0, never inconsistent
    assert result["games"] >= 0 and (result["games_per_s"] > 0) == (result["games"] > 0)


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, fragment",
    [
        (["nope"], "invalid choice"),
        (["demo", "--players", "11"], "allowed 2 to 10"),
        (["demo", "-r", "seven_hits=x"], "seven_hits"),
        (["demo", "-r", "colour=red"], "invalid rule option"),
        (["demo", "-n", "7", "-r", "num_decks=1"], "cannot deal"),
        (["demo", "--bots", "random"], "bots"),
        (["bench", "engine", "--seconds", "-1"], "--seconds"),
        (["bench"], "engine or env"),
    ],
)
def test_bad_arguments_give_one_line_and_status_2(args: list[str], fragment: str) -> None:
    proc = run(*args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_help_of_every_subcommand() -> None:
    for args in (
        ["--help"],
        ["demo", "--help"],
        ["bench", "engine", "--help"],
        ["bench", "env", "--help"],
    ):
        proc = run(*args)
        assert proc.returncode == 0 and "usage: craits" in proc.stdout


def test_every_command_says_its_exit_statuses_in_its_help() -> None:
    from craits.cli import build_parser

    def parsers(parser: argparse.ArgumentParser, name: str) -> Iterator[tuple[str, Any]]:
        yield name, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, child in action.choices.items():
                    yield from parsers(child, f"{name} {sub}")

    found = dict(parsers(build_parser(), "craits"))
    assert {"craits play", "craits serve", "craits bench vector"} <= set(found)
    for name, parser in found.items():
        text = " ".join(parser.format_help().split())
        assert "Exit status: 0 " in text or "In short: 0 done" in text, name
        assert "2 bad arguments" in text, name
        assert "130 interrupted" in text or "0 stopped" in text, name  # serve: Ctrl-C stops it
