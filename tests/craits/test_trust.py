"""Results you can trust: stored results follow what an agent *is*, reruns and resumes are
exactly right or a clear refusal, Ctrl-C leaves a resumable run, checkpoints are checked
for the table before any game."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from craits.agents.checkpoint import load_checkpoint, save_checkpoint
from craits.agents.duplicate_tournament import CONFIG_FILE, GAMES_FILE
from craits.agents.specs import agent_identity, make_agent
from craits.cli import main
from craits.training.config import to_toml
from craits.training.evaluate import evaluate
from craits.training.ppo import annealed_learning_rate
from craits.training.state import TrainingState
from craits.training.train import find_checkpoint, train
from craits_env import Rules

from ..training.test_training import tiny

SHORT = Rules(hand_sizes=(3, 2, 1))
QUIET = {"progress": False, "echo": lambda s: None}


def checkpoint(path: Path, seed: int, **changes: object) -> Path:
    """A checkpoint of an untrained network (its weights drawn from ``seed``)."""
    config = tiny(seed=seed, **changes)
    save_checkpoint(path, TrainingState(config, torch.device("cpu"), f"test-{seed}").checkpoint())
    return path


def snapshot_dir(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and modification time."""
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def tournament(out: Path, *specs: str, deals: int = 3) -> list[str]:
    return [
        "tournament",
        *specs,
        "--players",
        "2",
        "--deals",
        str(deals),
        "--seed",
        "4",
        "-r",
        "hand_sizes=3,2,1",
        "--out",
        str(out),
        "--no-progress",
    ]


# ----------------------------------------------------------------------------- identities


def test_a_checkpoint_is_identified_by_its_weights_not_its_path(tmp_path: Path) -> None:
    a = checkpoint(tmp_path / "a.pt", 1)
    b = checkpoint(tmp_path / "b.pt", 2)
    moved = tmp_path / "elsewhere" / "a.pt"
    moved.parent.mkdir()
    shutil.copy(a, moved)
    ids = {p: agent_identity(f"ppo:{p}") for p in (a, b, moved)}
    assert ids[a] == ids[moved] != ids[b]
    assert ids[a].startswith("ppo@") and len(ids[a]) == len("ppo@") + 16
    # The same weights saved with other bookkeeping (step, run name) are the same agent.
    data = load_checkpoint(a)
    save_checkpoint(tmp_path / "c.pt", {**data, "global_step": 99, "run_name": "other"})
    assert agent_identity(f"ppo:{tmp_path / 'c.pt'}") == ids[a]
    # Overwritten in place (same size, maybe the same time stamp): read again, a new agent.
    shutil.copy(b, a)
    assert agent_identity(f"ppo:{a}") == ids[b]
    assert agent_identity("expert") == "expert@1" and agent_identity("pimc:8") == "pimc:8@2"


def test_ppo_accepts_a_run_directory(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"no final.pt in this run directory.*step_N.pt"):
        make_agent(f"ppo:{run}")
    checkpoint(run / "final.pt", 3)
    assert agent_identity(f"ppo:{run}") == agent_identity(f"ppo:{run / 'final.pt'}")


# ----------------------------------------------------------------------------- tournaments


@pytest.mark.slow
def test_an_overwritten_checkpoint_is_another_tournament_refused_and_nothing_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ckpt = checkpoint(tmp_path / "agent.pt", 1, rules={"hand_sizes": [3, 2, 1]})
    out = tmp_path / "t"
    assert main(tournament(out, f"ppo:{ckpt}", "random")) == 0
    first = json.loads((out / "results.json").read_text())
    capsys.readouterr()
    before = snapshot_dir(out)
    checkpoint(ckpt, 2, rules={"hand_sizes": [3, 2, 1]})  # another agent under the same path
    assert main(tournament(out, f"ppo:{ckpt}", "random")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "different tournament" in err and "rerun" not in err
    assert "its agents are ppo@" in err and "this tournament's are ppo@" in err
    assert snapshot_dir(out) == before  # refused: not a byte written
    # Elsewhere, the new agent gets its own games and its own numbers.
    assert main(tournament(tmp_path / "t2", f"ppo:{ckpt}", "random")) == 0
    second = json.loads((tmp_path / "t2" / "results.json").read_text())
    assert second["config"]["agents"] != first["config"]["agents"]


@pytest.mark.slow
def test_a_moved_checkpoint_resumes_its_tournament_without_replaying(tmp_path: Path) -> None:
    ckpt = checkpoint(tmp_path / "agent.pt", 1, rules={"hand_sizes": [3, 2, 1]})
    out = tmp_path / "t"
    assert main(tournament(out, f"ppo:{ckpt}", "random", deals=2)) == 0
    games = (out / GAMES_FILE).read_text().splitlines()
    moved = tmp_path / "moved" / "agent.pt"
    moved.parent.mkdir()
    shutil.move(ckpt, moved)
    assert main(tournament(out, f"ppo:{moved}", "random", deals=3)) == 0
    after = [json.loads(line) for line in (out / GAMES_FILE).read_text().splitlines()]
    assert len(after) == 6 and [g["key"] for g in after[:4]] == [
        json.loads(line)["key"] for line in games
    ]
    assert all(f"ppo:{moved}" in g["specs"] for g in after)  # seats renamed, not replayed
    stored = json.loads((out / CONFIG_FILE).read_text())
    assert stored["specs"][0] == f"ppo:{moved}" and stored["deals"] == 3
    fresh = tmp_path / "fresh"
    assert main(tournament(fresh, f"ppo:{moved}", "random", deals=3)) == 0
    table = json.loads((out / "results.json").read_text())["agents"]
    assert table == json.loads((fresh / "results.json").read_text())["agents"]


@pytest.mark.slow
def test_a_store_without_identities_or_of_an_older_engine_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t"
    assert main(tournament(out, "greedy", "random")) == 0
    stored = json.loads((out / CONFIG_FILE).read_text())
    for change, reason in (
        ({"rules_revision": 1}, "rules revision 1"),
        ({"agents": None}, "older craits"),
    ):
        old = {k: v for k, v in {**stored, **change}.items() if v is not None}
        (out / CONFIG_FILE).write_text(json.dumps(old))
        capsys.readouterr()
        assert main(tournament(out, "greedy", "random")) == 2
        err = capsys.readouterr().err
        assert reason in err and err.count("\n") == 1


def test_a_checkpoint_for_another_table_is_refused_before_any_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ckpt = checkpoint(tmp_path / "two.pt", 1)  # 2 players, hands 3,2,1
    out = tmp_path / "t"
    argv = [
        "tournament",
        f"ppo:{ckpt}",
        "random",
        "random",
        "--players",
        "3",
        "--deals",
        "1",
        "--out",
        str(out),
    ]
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2 and not out.exists()
    assert "trained for 2 players" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main([*tournament(out, f"ppo:{ckpt}", "random"), "-r", "face_cards=true"])
    assert info.value.code == 2 and not out.exists()
    assert "trained with face_cards=False" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["play", "--opponents", f"ppo:{ckpt}", "random", "--seed", "1"])
    assert info.value.code == 2 and "trained for 2 players" in capsys.readouterr().err
    from craits.agents.gym_env import CraitsGymEnv

    with pytest.raises(ValueError, match="trained for 2 players"):
        CraitsGymEnv(num_players=3, opponents=f"ppo:{ckpt}")
    # Another game length is the same table: a policy plays any number of hands.
    CraitsGymEnv(num_players=2, opponents=f"ppo:{ckpt}", rules=Rules.short_game())
    with pytest.raises(ValueError, match=r"config opponents: ppo:.*trained for 2 players"):
        tiny(num_players=3, opponents={"self": 1.0, f"ppo:{ckpt}": 1.0})


# ----------------------------------------------------------------------------- training


@pytest.mark.slow
def test_a_training_evaluation_replays_when_the_checkpoint_changed(tmp_path: Path) -> None:
    ckpt = checkpoint(tmp_path / "final.pt", 1)
    out = tmp_path / "eval"
    ticks: list[tuple[int, int]] = []
    a = evaluate(ckpt, "random", 2, SHORT, 3, out=out, progress=lambda d, t: ticks.append((d, t)))
    assert ticks[0] == (0, 6) and ticks[-1] == (6, 6)  # the final evaluation's progress bar
    assert evaluate(ckpt, "random", 2, SHORT, 3, out=out)["agent"] == a["agent"]
    checkpoint(ckpt, 2)
    stale: list[str] = []
    b = evaluate(ckpt, "random", 2, SHORT, 3, out=out, on_stale=stale.append)
    assert len(stale) == 1 and "ppo@" in stale[0]
    assert b["agent"] == evaluate(ckpt, "random", 2, SHORT, 3)["agent"]  # = in memory, fresh
    stored = json.loads((out / "results.json").read_text())
    assert stored["config"]["agents"][0] == agent_identity(f"ppo:{ckpt}")


@pytest.mark.slow
def test_extending_a_run_evaluates_the_new_agent(tmp_path: Path) -> None:
    out = tmp_path / "run"
    config = tiny(total_steps=300, final_eval_deals=3, eval_opponents=["random"])
    first = train(config, out=out, **QUIET)
    old_id = agent_identity(f"ppo:{out}")
    second = train(resume=out, total_steps=900, out=None, **QUIET)
    assert second.global_step > first.global_step and second.interrupted is None
    new_id = agent_identity(f"ppo:{out}")
    assert new_id != old_id
    fresh = evaluate(out / "final.pt", "random", 2, SHORT, 3)
    assert second.evaluations["random"]["agent"] == fresh["agent"]
    stored = json.loads((out / "eval" / "random" / "results.json").read_text())
    assert stored["config"]["agents"][0] == new_id
    # TensorBoard: each final evaluation at its own step, with its own agent's numbers.
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(out))
    events.Reload()
    points = {e.step: e.value for e in events.Scalars("eval/random/win_rate")}
    assert points == pytest.approx(
        {
            first.global_step: first.evaluations["random"]["agent"]["win_rate"],
            second.global_step: second.evaluations["random"]["agent"]["win_rate"],
        }
    )
    # (The two agents play differently here, so stale games could not pass for new ones.)
    old, new = (r.evaluations["random"]["agent"]["mean_score"] for r in (first, second))
    assert old != new


@pytest.mark.slow
def test_a_moved_run_directory_resumes_and_a_failed_check_writes_nothing(tmp_path: Path) -> None:
    bot = checkpoint(tmp_path / "bot.pt", 5)
    out = tmp_path / "run"
    config = tiny(
        total_steps=300,
        final_eval_deals=2,
        eval_opponents=["random"],
        opponents={"self": 1.0, f"ppo:{bot}": 1.0},
    )
    train(config, out=out, **QUIET)
    moved = tmp_path / "moved"
    shutil.move(out, moved)

    def stored_games() -> list[dict]:
        lines = (moved / "eval" / "random" / GAMES_FILE).read_text().splitlines()
        return [json.loads(line) for line in lines]

    games = stored_games()
    again = train(resume=moved, **QUIET)  # finished: only the evaluation, from its store
    renamed = stored_games()
    assert [g["specs"] for g in renamed] == [
        [s.replace(str(out), str(moved)) for s in g["specs"]] for g in games
    ]  # the same games (not replayed), the agent's seats renamed to the moved path
    assert [{**g, "specs": 0} for g in renamed] == [{**g, "specs": 0} for g in games]
    assert again.evaluations["random"]["agent"]["games"] == 4
    result = train(resume=moved, total_steps=600, **QUIET)
    assert result.global_step >= 600 and (moved / "final.pt").is_file()
    # A check that fails (an opponent's checkpoint is gone) fails before any write.
    bot.unlink()
    before = snapshot_dir(moved)
    with pytest.raises(ValueError, match=r"opponents: checkpoint .*bot\.pt: no such file"):
        train(resume=moved, total_steps=900, **QUIET)
    assert snapshot_dir(moved) == before


def test_learning_rate_never_reaches_zero_even_when_a_run_overshoots(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    config = tiny(total_steps=1000, checkpoint_every=0)  # batches of ~300 steps overshoot
    result = train(config, out=tmp_path, **QUIET)
    assert result.global_step > config.total_steps
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    rates = [e.value for e in events.Scalars("charts/learning_rate")]
    assert len(rates) == result.updates >= 2
    assert all(r > 0 for r in rates) and rates == sorted(rates, reverse=True)
    assert rates[0] == pytest.approx(config.learning_rate)
    last = annealed_learning_rate(config.learning_rate, 990, 1150, 1000)  # the last overshoots
    assert last == pytest.approx(config.learning_rate * 160 / 1000)
    assert annealed_learning_rate(config.learning_rate, 0, 300, 1000) == config.learning_rate


def _craits(*args: str) -> list[str]:
    return [sys.executable, "-m", "craits", *args]


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_craits_train_leaves_a_resumable_checkpoint(
    tmp_path: Path, sig: signal.Signals
) -> None:
    config = tmp_path / "long.toml"
    config.write_text(to_toml(tiny(total_steps=50_000_000, checkpoint_every=0)))
    out = tmp_path / "run"
    proc = subprocess.Popen(
        _craits("train", "--config", str(config), "--out", str(out), "--no-progress"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # printed once the loop (and its handler) is running
        assert line.startswith("run craits_v0__"), line
        time.sleep(0.5)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "checkpoint saved" in err and f"craits train --resume {out}" in err
    found = find_checkpoint(out)
    data = load_checkpoint(found)
    assert data["update"] >= 1 and not (out / "final.pt").exists()
    result = train(resume=out, total_steps=int(data["global_step"]) + 100, **QUIET)
    assert result.updates == int(data["update"]) + 1 and result.interrupted is None


def test_version_and_help_show_the_quick_run(capsys: pytest.CaptureFixture[str]) -> None:
    from craits_env import __version__

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out.strip() == f"craits {__version__}"
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "A quick run" in text and "--set final_eval_deals=20" in text
    with pytest.raises(SystemExit):
        main(["tournament", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Exit status: 0 done; 1 failed while playing" in text and "MODULE:ATTR" in text


@pytest.mark.slow
def test_identities_are_deterministic_across_processes(tmp_path: Path) -> None:
    ckpt = checkpoint(tmp_path / "a.pt", 1)
    code = f"from craits.agents.specs import agent_identity; print(agent_identity('ppo:{ckpt}'))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == agent_identity(f"ppo:{ckpt}")
