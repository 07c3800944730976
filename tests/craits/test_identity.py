"""Identities that see what plays: a user's thin wrapper (same class source, same version)
that reads its weights from a file is another agent once the file changes — its stored
tournament games are refused in one line, never served as the new agent's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from craits.agents.duplicate_tournament import CONFIG_FILE
from craits.cli import main

from .test_trust import snapshot_dir, tournament

WRAPPER = '''
import json
from pathlib import Path

class FileAgent:
    """Plays the legal action of highest weight; the weights are read from weights.json."""

    name = "file-agent"
    version = 1

    def __init__(self, seed=None):
        self.weights = json.loads((Path(__file__).parent / "weights.json").read_text())

    def reset(self, seed=None):
        pass

    def act(self, observation):
        legal = [i for i, m in enumerate(observation["action_mask"]) if m]
        return max(legal, key=lambda a: self.weights[a])
'''


@pytest.mark.slow
def test_a_wrapper_reading_other_weights_is_refused_and_the_same_weights_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "wrapper.py").write_text(WRAPPER)
    weights = tmp_path / "weights.json"
    weights.write_text(json.dumps(list(range(59))))  # the highest action id first
    spec, out = f"{tmp_path / 'wrapper.py'}:FileAgent", tmp_path / "t"
    assert main(tournament(out, spec, "greedy")) == 0
    stored = json.loads((out / CONFIG_FILE).read_text())
    assert stored["agents"] == ["wrapper.py:FileAgent@1", "greedy@1"]
    assert stored["fingerprints"][0].startswith("fp-")
    capsys.readouterr()
    before = snapshot_dir(out)

    weights.write_text(json.dumps(list(range(59, 0, -1))))  # the lowest first: another agent
    assert main(tournament(out, spec, "greedy")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "different tournament" in err
    assert "agent " + spec + " (wrapper.py:FileAgent@1) plays differently now" in err
    assert snapshot_dir(out) == before  # refused: not a byte written

    weights.write_text(json.dumps(list(range(59))))  # the first weights again: the same agent
    assert main(tournament(out, spec, "greedy", deals=4)) == 0  # resumes: one deal more
    assert json.loads((out / CONFIG_FILE).read_text())["fingerprints"] == stored["fingerprints"]
