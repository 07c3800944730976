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
import signal
import sys
import threading
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
    interrupted: str | None = None
    """None, "training" (stopped early; ``final_checkpoint`` is the checkpoint saved) or
    "evaluation" (stopped in the final evaluation; its games played are kept)"""


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


@dataclass
class Run:
    """A run opened by :func:`open_run`: checked, nothing written yet."""

    config: TrainConfig
    out: Path
    trainer: Trainer
    resumed_from: Path | None


def open_run(
    config: TrainConfig | None,
    *,
    out: Path | None = None,
    resume: Path | None = None,
    total_steps: int | None = None,
    device: str | None = None,
) -> Run:
    """Check everything a run needs and build its trainer — writing nothing.

    ``resume`` is a checkpoint or a run directory (its latest checkpoint); the run's
    configuration then comes from the checkpoint and ``config`` must be ``None``. The run
    directory is relocatable: nothing in it names the directory. Errors a user can fix
    raise ``ValueError`` with one line.
    """
    data = None
    if resume is not None:
        if config is not None:
            raise ValueError("--resume continues a run with its own configuration: give no config")
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
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: not a directory")
    torch.set_num_threads(config.torch_threads)
    trainer = Trainer(config, resolve_device(device or config.device), run_name)
    if data is not None:
        trainer.load_state(data, str(resume))
    return Run(config, out, trainer, resume)


class RunInterrupted(KeyboardInterrupt):
    """A second Ctrl-C (or one outside the loop's handling) in the run at ``run_dir``."""

    def __init__(self, run_dir: Path) -> None:
        super().__init__(str(run_dir))
        self.run_dir = run_dir


class StopRequest:
    """While active, SIGINT (Ctrl-C) and SIGTERM ask the loop to stop at the end of the
    current update instead of killing it; a second signal acts as usual.

    Only in the main thread (signal handlers can be set nowhere else); elsewhere it is inert.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.signal: int | None = None
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        return self.signal is not None

    def _handle(self, signum: int, frame: Any) -> None:
        self.signal = signum
        self._restore()  # a second Ctrl-C interrupts at once

    def _restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def __enter__(self) -> StopRequest:
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        self._restore()


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

    ``total_steps`` overrides the configuration's (to extend a run); ``device`` overrides
    ``config.device``; see :func:`open_run` for ``resume``. Ctrl-C (or SIGTERM) while
    training stops at the end of the current update and saves a checkpoint
    (``TrainResult.interrupted == "training"``); during the final evaluation it keeps the
    games played (``"evaluation"``). Either way ``--resume`` continues exactly.
    """
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    run = open_run(config, out=out, resume=resume, total_steps=total_steps, device=device)
    config, out, trainer = run.config, run.out, run.trainer
    if run.resumed_from is not None:
        echo(f"resuming {trainer.run_name} at step {trainer.global_step:,} "
             f"(update {trainer.update}) from {run.resumed_from}")  # fmt: skip

    # -- the run directory: written only now that every check passed ----------------------
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "config.toml", to_toml(config))
    # A resumed run hides the events logged after its checkpoint (they are replayed).
    resumed = run.resumed_from is not None
    writer = SummaryWriter(str(out), purge_step=trainer.global_step + 1 if resumed else None)
    if not resumed:
        writer.add_text("hyperparameters", hparams_table(config))

    # -- the loop ----------------------------------------------------------------------
    session_start = time.perf_counter()
    session_steps = 0
    session_seconds = dict.fromkeys(trainer.seconds, 0.0)
    busy = 0.0  # seconds collecting and learning in this session
    last_eval: dict[str, float] = {}
    evaluations: dict[str, dict[str, Any]] = {}
    interrupted: str | None = None
    final = out / FINAL
    saved = None
    bar = tqdm(total=config.total_steps, initial=min(trainer.global_step, config.total_steps),
               unit="step", unit_scale=True, dynamic_ncols=True, disable=not progress)  # fmt: skip
    try:
        with StopRequest() as stop:
            echo(f"run {trainer.run_name}: {config.name}, {config.num_players} players, "
                 f"{config.total_steps:,} steps, device {trainer.device}, writing to {out} "
                 "(Ctrl-C saves a checkpoint and stops)")  # fmt: skip
            while trainer.global_step < config.total_steps and not stop.requested:
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
                u = trainer.update
                do_eval = config.eval_every > 0 and u % config.eval_every == 0
                do_save = config.checkpoint_every > 0 and u % config.checkpoint_every == 0
                if do_save or do_eval or done or stop.requested:
                    saved = out / CHECKPOINTS / f"step_{u:06d}.pt"
                    state = trainer.state()
                    save_checkpoint(saved, state)
                    if done:
                        save_checkpoint(final, state)
                    if do_eval and not done and not stop.requested:
                        last_eval = _evaluate(writer, step, saved, config, config.eval_deals)
                win = np.mean(stats.learner_wins) if stats.learner_wins else float("nan")
                bar.set_postfix_str(
                    f"SPS {session_steps / busy:,.0f} | learner win {win:.2f}"
                    + "".join(f" | {k} {v:.2f}" for k, v in last_eval.items()),
                    refresh=False,
                )
            if stop.requested:  # stopped before the final evaluation, or before the end
                interrupted = (
                    "training" if trainer.global_step < config.total_steps else ("evaluation")
                )
        bar.close()
        if interrupted is None:
            if not final.exists():  # resumed a finished run with no more steps to take
                save_checkpoint(final, trainer.state())
            try:
                evaluations = _final_evaluation(writer, trainer.global_step, final, config, out,
                                                progress, echo)  # fmt: skip
            except KeyboardInterrupt:
                interrupted = "evaluation"
    except KeyboardInterrupt:  # a second Ctrl-C while training: the latest checkpoint stands
        raise RunInterrupted(out) from None
    finally:
        bar.close()
        writer.close()
    return TrainResult(
        run_dir=out,
        final_checkpoint=final if interrupted != "training" else saved or final,
        global_step=trainer.global_step,
        updates=trainer.update,
        sps=session_steps / busy if busy else 0.0,
        seconds=session_seconds,
        peak_rss_mb=peak_rss_mb(),
        evaluations=evaluations,
        interrupted=interrupted,
    )


def _final_evaluation(
    writer: Any,
    step: int,
    final: Path,
    config: TrainConfig,
    out: Path,
    progress: bool,
    echo: Callable[[str], None],
) -> dict[str, dict[str, Any]]:
    """The duplicate tournament of ``final`` against each eval opponent, stored in
    ``out/eval/<opponent>`` (resumable; another agent's games there are replaced)."""
    from tqdm import tqdm

    evaluations: dict[str, dict[str, Any]] = {}
    if config.final_eval_deals <= 0:
        return evaluations
    echo(f"final evaluation: {config.final_eval_deals} deals × {config.num_players} rotations "
         f"against each of {', '.join(config.eval_opponents)}")  # fmt: skip
    for opponent in config.eval_opponents:
        target = out / "eval" / re.sub(r"[^\w.-]+", "_", opponent)
        with tqdm(desc=f"eval vs {opponent}", unit="game", dynamic_ncols=True,
                  disable=not progress) as bar:  # fmt: skip

            def tick(done: int, total: int, bar: Any = bar) -> None:
                bar.total = total
                bar.update(done - bar.n)

            def stale(reason: str, target: Path = target) -> None:
                echo(f"{target}: held another agent's games ({reason}); playing them again")

            result = evaluate(final, opponent, config.num_players, config.game_rules,
                              config.final_eval_deals, out=target, record=config.eval_records,
                              progress=tick, on_stale=stale)  # fmt: skip
        _log_eval(writer, step, opponent, result)
        evaluations[opponent] = result
    return evaluations


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
    writer: Any, step: int, path: Path, config: TrainConfig, deals: int
) -> dict[str, float]:
    """Evaluate ``path`` in memory against every eval opponent; the win rates (for the bar)."""
    rates = {}
    for opponent in config.eval_opponents:
        result = evaluate(path, opponent, config.num_players, config.game_rules, deals)
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
