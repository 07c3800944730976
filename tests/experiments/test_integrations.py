"""The RL libraries researchers already use train on Craits with no glue: each example under
experiments/integrations runs a few hundred steps against the installed library (the
integrations extra, installed by make test — never skipped)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # RL libraries training in subprocesses

ROOT = Path(__file__).resolve().parents[2]


def load_example(name: str):  # type: ignore[no-untyped-def]
    """An example script as a module (the scripts are not a package)."""
    path = ROOT / "experiments" / "integrations" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sb3_maskable_ppo_trains_and_evaluates(tmp_path: Path) -> None:
    example = load_example("sb3_maskable_ppo")
    assert (
        example.main(
            ["--steps", "300", "--envs", "2", "--eval-episodes", "3", "--out", str(tmp_path)]
        )
        == 0
    )
    result = json.loads((tmp_path / "results.json").read_text())
    assert result["steps"] == 300 and result["after"]["episodes"] == 3
    assert 0 <= result["after"]["win_rate"] <= 1 and (tmp_path / "model.zip").is_file()
    assert "MaskablePPO" in (tmp_path / "results.md").read_text()
