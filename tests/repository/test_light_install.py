"""The core package needs only numpy, gymnasium and pettingzoo: with every optional module
blocked, the environments, the bots and the light commands work, and the commands that need
an extra say which one in one line (exit 2)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow  # subprocesses with every optional module blocked

OPTIONAL = ("torch", "tensorboard", "openskill", "tqdm", "matplotlib", "rich", "ray")

BLOCKER = f"""
import importlib.abc, sys
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {OPTIONAL!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Blocker())
"""


def run_blocked(code: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCKER + textwrap.dedent(code)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_the_core_works_without_any_optional_dependency() -> None:
    proc = run_blocked(
        """
        import gymnasium, numpy as np
        from pettingzoo.test import api_test
        import craits_env
        from craits_env import craits_v0
        from craits.agents import make_agent
        api_test(craits_v0.env(num_players=3), num_cycles=200)
        env = gymnasium.make("craits/Craits-v0", num_players=3, opponents=["expert", "pimc:4"])
        obs, info = env.reset(seed=0)
        done = False
        while not done:
            action = int(np.flatnonzero(obs["action_mask"])[0])
            obs, reward, term, trunc, info = env.step(action)
            done = term or trunc
        from craits.cli import main
        assert main(["demo", "--players", "2"]) == 0
        assert main(["bench", "engine", "--seconds", "0.2", "--no-state", "--json"]) == 0
        blocked = [m for m in sys.modules if m.split(".")[0] in {OPTIONAL}]
        assert not blocked, blocked
        print("core ok")
    """.replace("{OPTIONAL}", repr(OPTIONAL))
    )
    assert proc.returncode == 0, proc.stderr
    assert "core ok" in proc.stdout


def test_craits_play_without_rich_is_plain_text() -> None:
    proc = run_blocked(
        """
        from craits.cli import main
        sys.exit(main(["play", "--opponents", "greedy", "--seed", "3", "--color", "always"]))
    """,
        stdin="quit\n",
    )
    assert proc.returncode == 0, proc.stderr
    assert "\x1b[" not in proc.stdout and "Standings" in proc.stdout


def test_commands_that_need_an_extra_name_it_in_one_line() -> None:
    for argv, extra in (
        (["train"], "train"),
        (["tournament", "random", "random", "--out", "/tmp/never"], "tournament"),
        (["play", "--opponents", "ppo:x.pt"], "train"),
    ):
        proc = run_blocked(f"""
            from craits.cli import main
            sys.exit(main({argv!r}))
        """)
        assert proc.returncode == 2, (argv, proc.stderr)
        assert proc.stderr.count("\n") == 1, proc.stderr
        assert f"pip install 'craits[{extra}]'" in proc.stderr, proc.stderr
