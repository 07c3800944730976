"""Progress that reads well in a pipe (issue 44, findings 6 and 9): plain lines with done/total,
elapsed time and an estimate, never a carriage return; a live bar only on a terminal."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from craits.agents.progress import Progress, Ticks, duration


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_pipe_gets_a_line_at_the_start_every_30_s_and_at_the_end() -> None:
    out, clock = io.StringIO(), Clock()
    bar = Progress(400, "standard_4p: greedy vs pimc", stream=out, clock=clock)
    for done in range(1, 401):
        clock.now += 0.5  # a game every half second: 200 s in all
        bar.update(done)
    bar.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "standard_4p: greedy vs pimc: 0/400 games (0%)"
    assert lines[1] == "standard_4p: greedy vs pimc: 60/400 games (15%), 30s elapsed, ETA 2m50s"
    assert lines[2] == "standard_4p: greedy vs pimc: 120/400 games (30%), 1m00s elapsed, ETA 2m20s"
    assert lines[-1] == "standard_4p: greedy vs pimc: 400/400 games, done in 3m20s"
    assert len(lines) == 1 + 6 + 1  # 200 s: a line at 30, 60, …, 180 s
    assert "\r" not in out.getvalue()


def test_the_estimate_counts_only_this_sessions_rate_and_a_note_follows() -> None:
    out, clock = io.StringIO(), Clock()
    bar = Progress(20_000, "training", "step", done=10_000, stream=out, every=10, clock=clock)
    clock.now += 10
    bar.update(12_000, "SPS 200")
    clock.now += 40
    bar.update(20_480, "SPS 210")  # a run's last update may pass its total
    assert out.getvalue().splitlines() == [
        "training: 10,000/20,000 steps (50%)",
        "training: 12,000/20,000 steps (60%), 10s elapsed, ETA 40s; SPS 200",
        "training: 20,000/20,000 steps, done in 50s; SPS 210",
    ]
    kept = io.StringIO()
    Ticks("done before", stream=kept, clock=clock)(4, 4)
    assert kept.getvalue() == "done before: 4/4 games, all done before (kept)\n"
    one = io.StringIO()
    Progress(1, "x", stream=one, clock=clock)
    assert one.getvalue() == "x: 0/1 game (0%)\n"


def test_a_terminal_gets_a_live_bar_and_ticks_can_be_off() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    with Ticks("eval vs expert", stream=screen) as tick:
        tick(0, 8)
        tick(8, 8)
    assert "\r" in screen.getvalue() and "8/8" in screen.getvalue()
    silent = io.StringIO()
    with Ticks("nothing", enabled=False, stream=silent) as tick:
        tick(3, 8)
    off = Progress(8, "off", stream=silent, live=True, enabled=False)
    off.update(8)
    off.close()
    assert silent.getvalue() == ""


def test_durations_read_at_a_glance() -> None:
    assert [duration(s) for s in (0, 9.4, 61, 3599, 7260)] == [
        "0s",
        "9s",
        "1m01s",
        "59m59s",
        "2h01m",
    ]


@pytest.mark.slow
def test_craits_train_into_a_file_writes_no_carriage_return(tmp_path: Path) -> None:
    """``make run`` piped to a file: plain progress lines, none of tqdm's ``\\r`` updates (the
    training bar and the final evaluation's)."""

    def train(*more: str) -> str:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "craits",
                "train",
                "--total-steps",
                "2048",
                "--set",
                "final_eval_deals=1",
                "--set",
                "eval_every=0",
                *more,
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout + proc.stderr

    out = train("--out", str(tmp_path / "run"))
    assert "\r" not in out
    lines = out.splitlines()
    assert "training: 0/2,048 steps (0%)" in lines
    assert any(line.startswith("training: 2,048/2,048 steps, done in ") for line in lines)
    assert any(line.startswith("eval vs ") and ": 4/4 games, done in " in line for line in lines)
    quiet = train("--out", str(tmp_path / "quiet"), "--no-progress")
    assert "training: " not in quiet and "eval vs " not in quiet and "\r" not in quiet
