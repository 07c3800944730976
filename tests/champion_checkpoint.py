"""The champion as a training checkpoint, for the tests that drive ``ppo:PATH``, distillation or
one step of improvement from it: its training checkpoint is not committed, so it is rebuilt from
the shipped playing weights (``experiments/export_champion.py``: the same policy, a zero value
head), once per process, in a folder removed at exit."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import cache
from pathlib import Path


@cache
def champion_checkpoint() -> Path:
    from craits.agents.checkpoint import save_checkpoint
    from experiments.export_champion import checkpoint_from_weights

    folder = Path(tempfile.mkdtemp(prefix="craits-champion-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "champion.pt"
    save_checkpoint(path, checkpoint_from_weights())
    return path
