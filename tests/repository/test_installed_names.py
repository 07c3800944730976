"""The installed names are the project's own: a user's ``agents.py``, ``agents/``,
``training.py`` or ``training/`` beside their script never breaks ``import craits_env``,
``gymnasium.make("craits/Craits-v0", ...)``, ``make_agent`` from ``craits.agents`` or a
``craits`` command run from that directory.

The wheel is built once (``pip wheel --no-deps``, from a copy of the files git tracks or
would track, so that no stale ``build/`` of the checkout leaks in; a link, if any, copied as the
text file a checkout without links holds, as on Windows) and unpacked into a folder
that comes first on ``PYTHONPATH``, so the code under test is the wheel's, not the source
checkout's; the user's directory is the working directory and the script's directory
(``sys.path[0]``). The Makefile's ``test-core`` does the same with a fresh venv and
``pip install .``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a wheel built and unpacked

ROOT = Path(__file__).resolve().parents[2]

USER_SCRIPT = """
import gymnasium
import craits_env
from craits.agents import make_agent

env = gymnasium.make("craits/Craits-v0", opponents=["expert"] * 3)
obs, info = env.reset(seed=3)
agent = make_agent("expert", seed=1)
import agents, training  # the user's own, untouched by craits
print("user", agents.MINE, training.MINE, type(agent).__name__, obs["action_mask"].sum() > 0)
"""


@pytest.fixture(scope="module")
def wheel_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = out / "source"  # the tracked and new files only: no stale build/ of the checkout
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for name in filter(None, listed.split("\0")):
        src, dst = ROOT / name, source / name
        if src.is_symlink() or src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_symlink():
                dst.write_text(os.readlink(src))
            else:
                shutil.copy2(src, dst)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    (whl,) = out.glob("craits-*.whl")
    site = out / "site"
    with zipfile.ZipFile(whl) as z:
        z.extractall(site)
    return site


def _user_dir(base: Path, layout: str) -> Path:
    user = base / layout
    user.mkdir()
    for name in ("agents", "training"):
        if layout == "modules":
            (user / f"{name}.py").write_text(f"MINE = {name!r}\n")
        else:
            (user / name).mkdir()
            (user / name / "__init__.py").write_text(f"MINE = {name!r}\n")
    (user / "script.py").write_text(textwrap.dedent(USER_SCRIPT))
    return user


def _run(args: list[str], cwd: Path, site: Path, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(
        args, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=300
    )


def test_the_wheel_installs_only_the_projects_own_names(wheel_dir: Path) -> None:
    tops = {p.name for p in wheel_dir.iterdir() if not p.name.endswith(".dist-info")}
    assert tops == {"craits", "craits_env"}
    for path in (
        "agents/pimc.py",
        "training/configs/ppo_4p.toml",
        "agents/weights/champion.npz",
        "web/static/common.js",
        "benchmark/card.schema.json",
    ):
        assert (wheel_dir / "craits" / path).is_file(), path
    assert list((wheel_dir / "craits" / "benchmark" / "deals" / "v1").glob("*.json"))
    assert not (wheel_dir / "experiments").exists() and not (wheel_dir / "tests").exists()
    files = [p for p in wheel_dir.rglob("*") if p.is_file()]
    assert not [
        p for p in files if p.suffix in (".pt", ".pyc", ".jsonl") or "__pycache__" in p.parts
    ], "training checkpoints, caches or test data in the wheel"
    whl = next(wheel_dir.parent.glob("craits-*.whl"))
    assert whl.stat().st_size < 2_000_000, f"the wheel is {whl.stat().st_size:,} bytes"


@pytest.mark.parametrize("layout", ["modules", "packages"])
def test_a_users_agents_and_training_beside_their_script_break_nothing(
    wheel_dir: Path, tmp_path: Path, layout: str
) -> None:
    user = _user_dir(tmp_path, layout)
    proc = _run([sys.executable, "script.py"], user, wheel_dir)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["user", "agents", "training", "ExpertAgent", "True"]
    # The craits command from that directory (python -m puts it first on sys.path).
    proc = _run(
        [sys.executable, "-m", "craits", "demo", "-n", "2", "--bots", "expert", "greedy"],
        user,
        wheel_dir,
    )
    assert proc.returncode == 0, proc.stderr
    proc = _run(
        [sys.executable, "-m", "craits", "play", "--opponents", "expert", "--seed", "1"],
        user,
        wheel_dir,
        stdin="quit\n",
    )
    assert proc.returncode == 0, proc.stderr
    proc = _run([sys.executable, "-m", "craits", "--version"], user, wheel_dir)
    assert proc.returncode == 0 and proc.stdout.strip().endswith(
        __import__("craits_env").__version__
    )


# Deprecated in 0.3.0, removed in 0.4.0 (CHANGELOG.md, "Removed").
REMOVED = [
    "agents",
    "training",
    "craits_env.scenario",
    "craits_env.random_rules",
    "craits_env.vector.differential",
    "craits_env.picture",
    "craits_env.render",
    "craits_env.bench",
    "craits_env.localray",
    "craits_env.oracle",
    "craits_env.deprecation",
    "craits.agents.tournament",
    "craits.tournament",
    "craits.agents.ppo",
    "craits.training.checkpoint",
    "craits_env.gym_env",
]


def test_the_names_removed_in_0_4_0_are_gone_and_their_replacements_import(
    wheel_dir: Path, tmp_path: Path
) -> None:
    code = textwrap.dedent(f"""
        import importlib
        for name in {REMOVED!r}:
            try:
                importlib.import_module(name)
            except ModuleNotFoundError as e:
                assert e.name == name, (name, e.name)
            else:
                print("still there:", name)
        import craits.agents.duplicate_tournament, craits.agents.checkpoint_agent
        import craits_env.testing.scenario, craits_env.render_rgb, craits.localray, craits.bench
        import craits.tournament_workers, craits_env.opponent_hands, craits.agents.checkpoint
        print("ok")
    """)
    proc = _run([sys.executable, "-c", code], tmp_path, wheel_dir)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["ok"]
