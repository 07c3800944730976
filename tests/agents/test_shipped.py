"""Agents by content (craits.agents.shipped): what a spec reads from files is packed on the
driver and unpacked on a node under its content's hash; the spec text and the agent's identity
stay the same, and no path of the driver's machine is needed on the node."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from craits.agents import specs
from craits.agents.shipped import pack, unpack
from craits.agents.specs import resolve_agent
from tests.champion_checkpoint import champion_checkpoint

AGENT = """
class Agent:
    version = None

    def act(self, observation):
        return int(observation["action_mask"].nonzero()[0][0])
"""


@pytest.fixture(autouse=True)
def no_substitutes() -> None:
    saved = dict(specs._SUBSTITUTES)
    yield
    specs._SUBSTITUTES.clear()
    specs._SUBSTITUTES.update(saved)


def test_a_checkpoint_a_file_and_a_module_reach_a_node_by_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver, node = tmp_path / "driver", tmp_path / "node"
    (driver / "runs" / "r").mkdir(parents=True)
    shutil.copy(champion_checkpoint(), driver / "runs" / "r" / "final.pt")
    (driver / "mine.py").write_text(AGENT)
    (driver / "pkg").mkdir()
    (driver / "pkg" / "__init__.py").write_text("")
    (driver / "pkg" / "bots.py").write_text(AGENT)
    wanted = ["ppo:runs/r", "mine.py:Agent", "pkg.bots:Agent", "greedy", "random"]
    monkeypatch.chdir(driver)
    here = {spec: resolve_agent(spec)[1] for spec in wanted}
    entries = pack(wanted)
    assert [(e["spec"], e["kind"], e["name"]) for e in entries] == [
        ("ppo:runs/r", "ppo", "final.pt"),
        ("mine.py:Agent", "file", "mine.py"),
        ("pkg.bots:Agent", "module", "pkg"),
    ]  # the bots read no file: nothing packed
    # On a node: another working directory, where none of those paths exists.
    node.mkdir()
    monkeypatch.chdir(node)
    for name in [n for n in __import__("sys").modules if n == "pkg" or n.startswith("pkg.")]:
        monkeypatch.delitem(__import__("sys").modules, name)
    with pytest.raises(ValueError, match="runs/r"):
        resolve_agent("ppo:runs/r")
    substitutes = unpack(entries, root=tmp_path / "cache")
    assert set(substitutes) == {"ppo:runs/r", "mine.py:Agent"}
    assert all(str(tmp_path / "cache") in v for v in substitutes.values())
    there = {spec: resolve_agent(spec)[1] for spec in wanted}
    assert there == here  # the same agents, by identity
    assert unpack(entries, root=tmp_path / "cache") == substitutes  # written once: idempotent
    hashes = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert hashes == sorted(e["hash"] for e in entries)
