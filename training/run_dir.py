"""The run directory of ``craits train``: its name, where its checkpoints are, the latest of
them, and opening a run — new or resumed — with everything checked before anything is written.

The run name is ``craits_v0__<config>__<seed>__<unix time>``; a new run's directory is
``--out``, else ``runs/<run name>``; a resumed run's is the one its checkpoint is in. What
the run writes there: :mod:`craits.training.train`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from craits.agents.checkpoint import load_checkpoint

from .config import TrainConfig
from .rollouts import LocalRollouts, RolloutsFactory
from .state import TrainingState, resolve_device

FINAL = "final.pt"
CHECKPOINTS = "checkpoints"
TORCH_THREADS = 1  # the update's intra-op threads (the games are stepped in one thread)


def run_name_for(config: TrainConfig) -> str:
    return f"craits_v0__{config.name}__{config.seed}__{int(time.time())}"


def find_checkpoint(path: Path) -> Path:
    """``path`` itself, or for a run directory its ``final.pt`` or latest ``step_*.pt``."""
    if path.is_dir():
        steps = sorted(
            (path / CHECKPOINTS).glob("step_*.pt"),
            key=lambda p: int(re.sub(r"\D", "", p.stem) or 0),
        )
        if steps:
            return steps[-1]
        if (path / FINAL).is_file():
            return path / FINAL
        raise ValueError(f"{path}: no checkpoint in this directory")
    return path


@dataclass
class Run:
    """A run opened by :func:`open_run`: checked, nothing written yet."""

    config: TrainConfig
    out: Path
    state: TrainingState
    resumed_from: Path | None


def open_run(
    config: TrainConfig | None,
    *,
    out: Path | None = None,
    resume: Path | None = None,
    total_steps: int | None = None,
    device: str | None = None,
    rollouts: RolloutsFactory | None = None,
) -> Run:
    """Check everything a run needs and build its state — writing nothing.

    ``resume`` is a checkpoint or a run directory (its latest checkpoint); the run's
    configuration then comes from the checkpoint and ``config`` must be ``None`` (a
    checkpoint of an older release that used an option removed since is refused in one
    line: :data:`craits.training.config.REMOVED`). The run directory is relocatable:
    nothing in it names the directory. ``rollouts``: where the games are played (default:
    here; :class:`craits.training.distributed.RayOptions`: on Ray). Errors a user can fix
    raise ``ValueError`` with one line.
    """
    data = None
    if resume is not None:
        if config is not None:
            raise ValueError("a resumed run keeps its own configuration: give no config")
        resume = find_checkpoint(resume)
        data = load_checkpoint(resume)
        try:
            config = TrainConfig.from_dict(data["config"])
        except (KeyError, TypeError) as e:
            raise ValueError(f"checkpoint {resume}: unusable config ({e})") from None
        except ValueError as e:
            raise ValueError(f"checkpoint {resume}: {e}") from None
    if config is None:
        raise ValueError("train: give a config or a checkpoint to resume")
    # The command line's settings reach the configuration one way, for new and resumed runs.
    settings = {"total_steps": total_steps, "device": device}
    config = config.replace(**{k: v for k, v in settings.items() if v is not None})
    if data is not None:
        assert resume is not None
        run_name = str(data.get("run_name", "resumed"))
        if out is None:
            parent = resume.parent
            out = parent.parent if parent.name == CHECKPOINTS else parent
    else:
        run_name = run_name_for(config)
        out = out if out is not None else Path("runs") / run_name
        if (out / FINAL).exists() or any((out / CHECKPOINTS).glob("*.pt")):
            raise RunExists(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out}: not a directory (the run directory)")
    torch.set_num_threads(TORCH_THREADS)
    dev = resolve_device(config.device)
    config = config.replace(device=dev.type)  # config.toml and checkpoints say what was used
    state = TrainingState(config, dev, run_name, rollouts or LocalRollouts)  # seeds everything
    try:
        if data is not None:
            state.load_checkpoint(data, str(resume))
        elif config.init_policy:
            state.init_policy(config.init_policy)
    except BaseException:
        state.close()
        raise
    return Run(config, out, state, resume)


class RunExists(ValueError):
    """A new run was asked for in a directory that already holds one."""

    def __init__(self, out: Path) -> None:
        super().__init__(f"{out} already holds a run: resume it, or choose another directory")
        self.out = out
