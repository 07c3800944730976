"""``craits train``: masked PPO self-play, logged to TensorBoard, checkpointed, evaluated.

The loop reads top to bottom like CleanRL's ``ppo.py``::

    collect a batch (SelfPlayRollout) -> learn (PPO epochs) -> log -> evaluate -> checkpoint

A run writes into its directory ``DIR`` (``--out``, else ``runs/<run name>``;
the run name is ``craits_v0__<config>__<seed>__<unix time>``):

| path | content |
|---|---|
| ``DIR/events.out.tfevents.*`` | TensorBoard scalars (``tensorboard --logdir DIR``) |
| ``DIR/config.toml`` | the resolved configuration |
| ``DIR/checkpoints/step_<update>.pt`` | every ``checkpoint_every`` / ``eval_every`` updates |
| ``DIR/final.pt`` | the last checkpoint: play it as ``ppo:DIR/final.pt`` |
| ``DIR/eval/<opponent>/`` | the final duplicate tournament against each opponent |

Scalars (x axis: environment steps): ``losses/{policy,value,entropy,approx_kl,
clipfrac,explained_variance}``, ``charts/{SPS,SPS_wall,learning_rate,
updates,transitions,peak_rss_mb}``, ``time/{env,encode,forward,update}`` (share
of the training time), ``learner/{mean_hand_points,win_rate,mean_score}``,
``eval/<opponent>/{win_rate,win_rate_ci_lo,win_rate_ci_hi,mean_score,
mean_score_ci_lo,mean_score_ci_hi}``, ``pool/{<kind>_share,snapshots}``; the
hyper-parameters as a text table.
"""

from __future__ import annotations

import re
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from craits_env.fileio import atomic_write_text

from .checkpoint import load_checkpoint, save_checkpoint
from .config import TrainConfig, to_toml
from .evaluate import evaluate
from .selfplay import RolloutStats
from .trainer import Trainer, resolve_device

FINAL = "final.pt"
CHECKPOINTS = "checkpoints"


@dataclass
class TrainResult:
    """What a run did (``craits train`` prints it; the benchmark reads it)."""

    run_dir: Path
    final_checkpoint: Path
    global_step: int
    updates: int
    sps: float  # environment steps per second of collecting and learning, this session
    seconds: dict[str, float]  # env, encode, forward, update: this session
    peak_rss_mb: float
    evaluations: dict[str, dict[str, Any]] = field(default_factory=dict)


def run_name_for(config: TrainConfig) -> str:
    return f"craits_v0__{config.name}__{config.seed}__{int(time.time())}"


def peak_rss_mb() -> float:
    """This process's peak resident memory (``ru_maxrss``: KiB on Linux, bytes on macOS)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (2**20 if sys.platform == "darwin" else 2**10)


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
        raise ValueError(f"--resume {path}: no checkpoint in this directory")
    return path


def hparams_table(config: TrainConfig) -> str:
    rows = ["|param|value|", "|-|-|"]
    rows += [f"|{k}|{v}|" for k, v in config.to_dict().items()]
    return "\n".join(rows)


def train(
    config: TrainConfig | None = None,
    *,
    out: Path | None = None,
    resume: Path | None = None,
    total_steps: int | None = None,
    device: str | None = None,
    progress: bool = True,
    echo: Callable[[str], None] = print,
) -> TrainResult:
    """Run ``config`` (or, with ``resume``, continue a run); the module docstring lists the outputs.

    ``resume`` is a checkpoint or a run directory (its latest checkpoint); the
    run's configuration then comes from the checkpoint and ``config`` must be
    ``None``. ``total_steps`` overrides the configuration's (to extend a run);
    ``device`` overrides ``config.device``. Errors a user can fix raise
    ``ValueError`` with one line.
    """
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    data = None
    if resume is not None:
        if config is not None:
            raise ValueError("--resume continues a run with its own configuration: give no config")
        resume = find_checkpoint(resume)
        data = load_checkpoint(resume)
        try:
            config = TrainConfig.from_dict(data["config"])
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"checkpoint {resume}: unusable config ({e})") from None
    if config is None:
        raise ValueError("train: give a config or a checkpoint to resume")
    if total_steps is not None:
        config = config.replace(total_steps=total_steps)
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
            raise ValueError(
                f"{out} already holds a run: continue it with --resume {out}, or choose "
                "another --out"
            )

    # -- seeding and setup ----------------------------------------------------------------
    torch.set_num_threads(config.torch_threads)
    dev = resolve_device(device or config.device)
    trainer = Trainer(config, dev, run_name)
    if data is not None:
        trainer.load_state(data, str(resume))
        echo(f"resuming {trainer.run_name} at step {trainer.global_step:,} "
             f"(update {trainer.update}) from {resume}")  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "config.toml", to_toml(config))
    writer = SummaryWriter(str(out), purge_step=trainer.global_step if data else None)
    if data is None:
        writer.add_text("hyperparameters", hparams_table(config))
    echo(f"run {trainer.run_name}: {config.name}, {config.num_players} players, "
         f"{config.total_steps:,} steps, device {dev}, writing to {out}")  # fmt: skip

    # -- the loop ----------------------------------------------------------------------
    session_start = time.perf_counter()
    session_steps = 0
    session_seconds = dict.fromkeys(trainer.seconds, 0.0)
    busy = 0.0  # seconds collecting and learning in this session
    last_eval: dict[str, float] = {}
    bar = tqdm(total=config.total_steps, initial=min(trainer.global_step, config.total_steps),
               unit="step", unit_scale=True, dynamic_ncols=True, disable=not progress)  # fmt: skip
    evaluations: dict[str, dict[str, Any]] = {}
    try:
        while trainer.global_step < config.total_steps:
            before = dict(trainer.seconds)
            t0 = time.perf_counter()
            batch, stats = trainer.collect()
            metrics = trainer.learn(batch)
            busy += time.perf_counter() - t0
            session_steps += stats.steps
            for k, v in trainer.seconds.items():
                session_seconds[k] += v - before[k]
            step = trainer.global_step
            _log_update(writer, step, trainer, metrics, stats, session_steps, busy,
                        time.perf_counter() - session_start, session_seconds)  # fmt: skip
            bar.update(min(step, config.total_steps) - bar.n)
            done = step >= config.total_steps
            do_eval = config.eval_every > 0 and trainer.update % config.eval_every == 0
            do_save = config.checkpoint_every > 0 and trainer.update % config.checkpoint_every == 0
            if do_save or do_eval or done:
                path = out / CHECKPOINTS / f"step_{trainer.update:06d}.pt"
                state = trainer.state()
                save_checkpoint(path, state)
                if done:
                    save_checkpoint(out / FINAL, state)
                if do_eval and not done:
                    last_eval = _evaluate(writer, step, path, config, config.eval_deals, None)
            win = np.mean(stats.learner_wins) if stats.learner_wins else float("nan")
            bar.set_postfix_str(
                f"SPS {session_steps / busy:,.0f} | learner win {win:.2f}"
                + "".join(f" | {k} {v:.2f}" for k, v in last_eval.items()),
                refresh=False,
            )
        bar.close()
        final = out / FINAL
        if not final.exists():  # resumed a finished run with no more steps to take
            save_checkpoint(final, trainer.state())
        if config.final_eval_deals > 0:
            echo(f"final evaluation: {config.final_eval_deals} deals against each of "
                 f"{', '.join(config.eval_opponents)}")  # fmt: skip
            for opponent in config.eval_opponents:
                target = out / "eval" / re.sub(r"[^\w.-]+", "_", opponent)
                result = evaluate(final, opponent, config.num_players, config.game_rules,
                                  config.final_eval_deals, out=target,
                                  record=config.eval_records)  # fmt: skip
                _log_eval(writer, trainer.global_step, opponent, result)
                evaluations[opponent] = result
    finally:
        bar.close()
        writer.close()
    sps = session_steps / busy if busy else 0.0
    return TrainResult(
        run_dir=out,
        final_checkpoint=final,
        global_step=trainer.global_step,
        updates=trainer.update,
        sps=sps,
        seconds=session_seconds,
        peak_rss_mb=peak_rss_mb(),
        evaluations=evaluations,
    )


def _log_update(
    writer: Any,
    step: int,
    trainer: Trainer,
    metrics: dict[str, float],
    stats: RolloutStats,
    session_steps: int,
    busy: float,
    wall: float,
    seconds: dict[str, float],
) -> None:
    scalar = writer.add_scalar
    for key in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac"):
        scalar(f"losses/{key.removesuffix('_loss')}", metrics[key], step)
    scalar("losses/explained_variance", metrics["explained_variance"], step)
    scalar("losses/early_stop", metrics["early_stop"], step)
    scalar("charts/learning_rate", metrics["learning_rate"], step)
    scalar("charts/SPS", session_steps / busy if busy else 0.0, step)
    scalar("charts/SPS_wall", session_steps / wall if wall else 0.0, step)
    scalar("charts/updates", trainer.update, step)
    scalar("charts/transitions", stats.transitions, step)
    scalar("charts/network_decisions", stats.network_decisions, step)
    scalar("charts/peak_rss_mb", peak_rss_mb(), step)
    total = sum(seconds.values())
    for key, value in seconds.items():
        scalar(f"time/{key}", value / total if total else 0.0, step)
    if stats.learner_hand_points:
        scalar("learner/mean_hand_points", float(np.mean(stats.learner_hand_points)), step)
    if stats.learner_wins:
        scalar("learner/win_rate", float(np.mean(stats.learner_wins)), step)
        scalar("learner/mean_score", float(np.mean(stats.learner_scores)), step)
        scalar("learner/games", len(stats.learner_wins), step)
    for kind, share in trainer.pool.composition().items():
        scalar(f"pool/{kind}_share", share, step)
    scalar("pool/snapshots", len(trainer.pool.snapshots), step)


def _evaluate(
    writer: Any, step: int, path: Path, config: TrainConfig, deals: int, out: Path | None
) -> dict[str, float]:
    """Evaluate ``path`` against every eval opponent; the win rates (for the progress bar)."""
    rates = {}
    for opponent in config.eval_opponents:
        result = evaluate(path, opponent, config.num_players, config.game_rules, deals, out)
        _log_eval(writer, step, opponent, result)
        rates[opponent] = result["agent"]["win_rate"]
    return rates


def _log_eval(writer: Any, step: int, opponent: str, result: dict[str, Any]) -> None:
    row = result["agent"]
    tag = "eval/" + re.sub(r"[^\w.-]+", "_", opponent)
    writer.add_scalar(f"{tag}/win_rate", row["win_rate"], step)
    writer.add_scalar(f"{tag}/win_rate_ci_lo", row["win_rate_ci"][0], step)
    writer.add_scalar(f"{tag}/win_rate_ci_hi", row["win_rate_ci"][1], step)
    writer.add_scalar(f"{tag}/mean_score", row["mean_score"], step)
    writer.add_scalar(f"{tag}/mean_score_ci_lo", row["mean_score_ci"][0], step)
    writer.add_scalar(f"{tag}/mean_score_ci_hi", row["mean_score_ci"][1], step)
    writer.add_scalar(f"{tag}/opponent_mean_score", result["opponent"]["mean_score"], step)
    writer.flush()
