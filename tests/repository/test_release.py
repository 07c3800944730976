"""What a release promises: the citation file is valid CFF 1.2.0, the changelog names this
version, and the environment's observations, masks and rewards are exactly those of the
current version (docs/versioning.md): an unannounced change fails here."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import jsonschema
import numpy as np
import pytest
import yaml

import craits_env
from craits_env import Rules, craits_v0
from craits_env.rules import RULES_REVISION

ROOT = Path(__file__).resolve().parents[2]

# The pinned version of the environment: (its name, the rules revision, the hash of the games
# below). Changing any of them means a new environment version: docs/versioning.md.
PINNED = ("craits_v0", 2, "005e3f002b21f556")

GAMES = [  # (players, rules, reward mode, seed)
    (4, Rules(), "relative", 11),
    (2, Rules(), "score", 12),
    (3, Rules.short_game(face_cards=True), "win", 13),
    (5, Rules.short_game(), "bounded", 14),
]


def play_hash(backend: str) -> str:
    digest = hashlib.sha256()
    for players, rules, reward, seed in GAMES:
        env = craits_v0.raw_env(num_players=players, rules=rules, reward=reward, backend=backend)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for agent in env.agent_iter():
            obs, r, termination, truncation, info = env.last()
            digest.update(agent.encode())
            digest.update(obs["observation"].tobytes())
            digest.update(obs["action_mask"].tobytes())
            digest.update(np.float64(r).tobytes())
            digest.update(json.dumps(info, sort_keys=True).encode())
            if termination or truncation:
                env.step(None)
            else:
                env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return digest.hexdigest()[:16]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["python", "vector"])
def test_the_environment_is_the_pinned_version(backend: str) -> None:
    got = (craits_v0.raw_env.metadata["name"], RULES_REVISION, play_hash(backend))
    assert got == PINNED, (
        "observations, masks, rewards, infos or the rules revision changed: that is a new "
        "environment version (docs/versioning.md) — bump it, say so in CHANGELOG.md, then pin "
        f"the new value {got}"
    )


def test_citation_file_is_valid_cff_1_2_0_of_this_version() -> None:
    schema = json.loads((ROOT / "tests/data/citation-cff-1.2.0.schema.json").read_text())
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    jsonschema.validate(citation, schema)
    assert citation["cff-version"] == "1.2.0"
    assert str(citation["version"]) == craits_env.__version__


def test_changelog_has_a_section_for_this_version_and_keeps_its_form() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    versions = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", text, flags=re.M)
    assert versions[0] == craits_env.__version__
    assert versions == sorted(versions, key=lambda v: tuple(map(int, v.split("."))), reverse=True)
    kinds = set(re.findall(r"^### (\w+)", text, flags=re.M))
    assert kinds <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
