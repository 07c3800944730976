"""Agent specs: the built-in table, your own agents by MODULE:ATTR or path/file.py:ATTR,
their identities, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from craits.agents.specs import agent_identity, known_specs, make_agent, register, resolve_agent
from craits.cli import main
from craits_env import Rules, craits_v0

AGENT_FILE = '''
"""A user's agent: plays the lowest legal action id."""
import numpy as np


class LowestAgent:
    name = "lowest"

    def reset(self, seed=None):
        pass

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


def make(seed=None):
    return LowestAgent()


class NoReset:
    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[-1])


class Versioned(LowestAgent):
    version = "2.1"


NOT_AN_AGENT = 3
'''


@pytest.fixture
def agent_file(tmp_path: Path) -> Path:
    path = tmp_path / "my_agent.py"
    path.write_text(AGENT_FILE)
    return path


def play_one(spec: str) -> list[int]:
    """The actions of ``spec`` (seat 0) in one short 2-player game against random."""
    env = craits_v0.raw_env(2, Rules(hand_sizes=(3, 2, 1)))
    env.reset(seed=3)
    me, other = make_agent(spec), make_agent("random", 1)
    actions = []
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        a = (me if agent == "player_0" else other).act(obs)
        if agent == "player_0":
            actions.append(a)
        env.step(a)
    return actions


@pytest.mark.slow
def test_the_table_lists_every_builtin_and_no_import_registers_anything() -> None:
    code = "import craits.agents.specs; print(sorted(craits.agents.specs.known_specs()))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    builtin = [
        "belief-search",
        "champion",
        "champion-search",
        "expert",
        "greedy",
        "openspiel-ismcts",
        "pimc",
        "ppo",
        "random",
        "tactician",
    ]
    assert out.strip() == str(builtin)
    versions = {"random": 1, "greedy": 1, "tactician": 1, "expert": 1, "pimc": 2, "pimc:4": 2}
    for spec, version in versions.items():  # pimc@2: its samples come from numpy's generator
        agent, identity = resolve_agent(spec, 1)
        assert identity == f"{spec}@{version}" and callable(agent.act)


def test_a_file_agent_and_a_module_agent_play(agent_file: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    file_actions = play_one(f"{agent_file}:LowestAgent")
    assert file_actions == play_one(f"{agent_file}:make")  # a factory works as the class
    monkeypatch.chdir(agent_file.parent)  # MODULE:ATTR finds modules of the working directory
    assert play_one("my_agent:LowestAgent") == file_actions
    assert play_one(f"{agent_file}:NoReset")  # reset is optional
    assert agent_identity(f"{agent_file}:Versioned") == "my_agent.py:Versioned@2.1"


def test_a_user_agent_is_identified_by_its_source(agent_file: Path) -> None:
    spec = f"{agent_file}:LowestAgent"
    before = agent_identity(spec)
    assert before.startswith("my_agent.py:LowestAgent@src-")
    moved = agent_file.parent / "sub" / "my_agent.py"
    moved.parent.mkdir()
    moved.write_text(AGENT_FILE)
    assert agent_identity(f"{moved}:LowestAgent") == before  # the same code elsewhere
    other = agent_file.parent / "other" / "my_agent.py"
    other.parent.mkdir()
    other.write_text(AGENT_FILE + "\n# changed\n")
    assert agent_identity(f"{other}:LowestAgent") != before


def test_bad_specs_are_one_line_errors(agent_file: Path) -> None:
    cases = {
        "nobody": "unknown agent spec 'nobody'; known: random, greedy",
        "no_such_module_xyz:Agent": "no module 'no_such_module_xyz'",
        f"{agent_file.parent / 'missing.py'}:A": "no such file",
        f"{agent_file}:Missing": "has no attribute 'Missing'",
        f"{agent_file}:NOT_AN_AGENT": "is not a class or factory of an agent",
        f"{agent_file}:np": "is not a class or factory",
        "json:dumps": r"dumps\(\) failed",
        "expert:7": "takes no argument",
        "pimc:zero": "pimc:N",
        "pimc:²": "pimc:N",  # "²".isdigit(), but int("²") fails
        "pimc:٣": "pimc:N",  # int("٣") == 3: not a number written here
        "pimc:+3": "pimc:N",
        "champion-search:٣": "champion-search:N",
        "ppo": "needs a checkpoint",
    }
    for spec, match in cases.items():
        with pytest.raises(ValueError, match=match) as info:
            make_agent(spec)
        assert "\n" not in str(info.value), spec


def test_register_adds_a_name_explicitly() -> None:
    from craits.agents.base import RandomAgent

    register("test-specs-mine", lambda arg, seed: RandomAgent(seed), summary="mine")
    assert "test-specs-mine" in known_specs()
    assert agent_identity("test-specs-mine") == "test-specs-mine@1"
    for bad in ("expert", "a:b", ""):
        with pytest.raises(ValueError, match="register: got name"):
            register(bad, lambda arg, seed: RandomAgent(seed))


@pytest.mark.slow
def test_a_file_agent_in_a_tournament_with_workers_and_in_the_gym_view(
    agent_file: Path, tmp_path: Path
) -> None:
    spec = f"{agent_file}:LowestAgent"
    tables = []
    for workers in ("1", "2"):
        out = tmp_path / f"t{workers}"
        assert (
            main(
                [
                    "tournament",
                    spec,
                    "random",
                    "--players",
                    "2",
                    "--deals",
                    "2",
                    "--seed",
                    "1",
                    "-r",
                    "hand_sizes=2,1",
                    "--workers",
                    workers,
                    "--out",
                    str(out),
                    "--no-progress",
                ]
            )
            == 0
        )
        results = json.loads((out / "results.json").read_text())
        assert results["config"]["agents"][0] == agent_identity(spec)
        tables.append(results["agents"])
    assert tables[0] == tables[1]
    import gymnasium

    env = gymnasium.make("craits/Craits-v0", num_players=2, opponents=spec)
    env.reset(seed=0)
    env.close()


@pytest.mark.slow
def test_craits_play_and_demo_take_the_same_specs(agent_file: Path) -> None:
    script = textwrap.dedent("quit\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "craits",
            "play",
            "--opponents",
            f"{agent_file}:LowestAgent",
            "--seed",
            "1",
        ],
        input=script,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "craits",
            "demo",
            "--players",
            "2",
            "--bots",
            "expert",
            f"{agent_file}:LowestAgent",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "craits", "demo", "-n", "2", "--bots", "nobody", "random"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "unknown agent spec 'nobody'" in proc.stderr
