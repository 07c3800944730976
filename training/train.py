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
clipfrac,explained_variance}`` (and ``losses/hands`` with ``hands_coef > 0``),
``charts/{SPS,SPS_wall,learning_rate,updates,transitions,peak_rss_mb}`` (and
``charts/oracle_keep`` with ``oracle_guiding``),
``time/{env,encode,forward,update}`` (share of the training time),
``learner/{mean_hand_points,win_rate,mean_score}``,
``eval/<opponent>/{win_rate,win_rate_ci_lo,win_rate_ci_hi,mean_score,
mean_score_ci_lo,mean_score_ci_hi}``, ``pool/{<kind>_share,snapshots}``; the
hyper-parameters as a text table.

The games are played in this process, or (``rollouts=RayOptions(...)``, ``craits train
--ray``) by rollout workers on a Ray cluster (:mod:`craits.training.distributed`, which adds
``charts/{worker_<k>_sps,policy_lag,worker_restarts,broadcast_ms,gather_ms}``): the
same loop, the same run directory.
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
from .learner import Learner, LocalRollouts, RolloutsFactory, resolve_device
from .selfplay import RolloutStats

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
        raise ValueError(f"{path}: no checkpoint in this directory")
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
    learner: Learner
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
    """Check everything a run needs and build its learner — writing nothing.

    ``resume`` is a checkpoint or a run directory (its latest checkpoint); the run's
    configuration then comes from the checkpoint and ``config`` must be ``None``. The run
    directory is relocatable: nothing in it names the directory. ``rollouts``: where the
    games are played (default: here; :class:`craits.training.distributed.RayOptions`: on Ray).
    Errors a user can fix raise ``ValueError`` with one line.
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
    torch.set_num_threads(config.torch_threads)
    dev = resolve_device(config.device)
    config = config.replace(device=dev.type)  # config.toml and checkpoints say what was used
    learner = Learner(config, dev, run_name, rollouts or LocalRollouts)
    try:
        if data is not None:
            learner.load_state(data, str(resume))
        elif config.init_policy:
            learner.init_policy(config.init_policy)
    except BaseException:
        learner.close()
        raise
    return Run(config, out, learner, resume)


class RunExists(ValueError):
    """A new run was asked for in a directory that already holds one."""

    def __init__(self, out: Path) -> None:
        super().__init__(f"{out} already holds a run: resume it, or choose another directory")
        self.out = out


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
    rollouts: RolloutsFactory | None = None,
    progress: bool = True,
    echo: Callable[[str], None] = print,
) -> TrainResult:
    """Run ``config`` (or, with ``resume``, continue a run); the module docstring lists the outputs.

    ``total_steps`` overrides the configuration's (to extend a run); ``device`` overrides
    ``config.device``; see :func:`open_run` for ``resume``. Ctrl-C (or SIGTERM) while
    training stops at the end of the current update and saves a checkpoint
    (``TrainResult.interrupted == "training"``); during the final evaluation it keeps the
    games played (``"evaluation"``). Either way ``--resume`` continues exactly.
    ``rollouts``: where the games are played (see :func:`open_run`).
    """
    run = open_run(config, out=out, resume=resume, total_steps=total_steps, device=device,
                   rollouts=rollouts)  # fmt: skip
    config, out, learner = run.config, run.out, run.learner
    try:
        log = RunLog(run, progress, echo)  # the run directory is written from here on
    except BaseException:
        learner.close()
        raise
    final, saved, interrupted = out / FINAL, None, None
    evaluations: dict[str, dict[str, Any]] = {}
    try:
        with StopRequest() as stop:
            log.started()
            while learner.global_step < config.total_steps and not stop.requested:
                batch, stats = log.timed(learner.collect)  # play until a batch is complete
                metrics = log.timed(learner.learn, batch)  # PPO epochs over it
                log.update(metrics, stats)
                done = learner.global_step >= config.total_steps
                if _checkpoint_due(config, learner.update, done or stop.requested):
                    saved = out / CHECKPOINTS / f"step_{learner.update:06d}.pt"
                    state = learner.state()
                    save_checkpoint(saved, state)
                    if done:
                        save_checkpoint(final, state)
                    elif _evaluation_due(config, learner.update) and not stop.requested:
                        log.evaluated(_evaluate(log.writer, learner.global_step, saved, config,
                                                config.eval_deals))  # fmt: skip
            if stop.requested:  # stopped before the end, or before the final evaluation
                done = learner.global_step >= config.total_steps
                interrupted = "evaluation" if done else "training"
        log.bar.close()
        if interrupted is None and not final.exists():  # resumed a finished run, no steps left
            save_checkpoint(final, learner.state())
        learner.close()  # the rollout workers' CPUs are free for the evaluation
        if interrupted is None:
            try:
                evaluations = _final_evaluation(log.writer, learner.global_step, final, config,
                                                out, progress, echo)  # fmt: skip
            except KeyboardInterrupt:
                interrupted = "evaluation"
    except KeyboardInterrupt:  # a second Ctrl-C while training: the latest checkpoint stands
        raise RunInterrupted(out) from None
    finally:
        learner.close()
        log.close()
    return TrainResult(
        run_dir=out,
        final_checkpoint=final if interrupted != "training" else saved or final,
        global_step=learner.global_step,
        updates=learner.update,
        sps=log.sps,
        seconds=log.session_seconds,
        peak_rss_mb=peak_rss_mb(),
        evaluations=evaluations,
        interrupted=interrupted,
    )


def _checkpoint_due(config: TrainConfig, update: int, last: bool) -> bool:
    """Whether update ``update`` saves a checkpoint (every ``checkpoint_every`` and
    ``eval_every`` updates, and the last one)."""
    every = [n for n in (config.checkpoint_every, config.eval_every) if n > 0]
    return last or any(update % n == 0 for n in every)


def _evaluation_due(config: TrainConfig, update: int) -> bool:
    return config.eval_every > 0 and update % config.eval_every == 0


class RunLog:
    """The run directory's ``config.toml`` and TensorBoard events, the progress bar, and this
    session's clock (steps per second, where the time went)."""

    def __init__(self, run: Run, progress: bool, echo: Callable[[str], None]) -> None:
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm

        self.run, self.echo = run, echo
        config, learner = run.config, run.learner
        if run.resumed_from is not None:
            echo(f"resuming {learner.run_name} at step {learner.global_step:,} "
                 f"(update {learner.update}) from {run.resumed_from}")  # fmt: skip
            if learner.resume_note:
                echo(f"resuming: {learner.resume_note}")
        run.out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(run.out / "config.toml", to_toml(config))
        # A resumed run hides the events logged after its checkpoint (they are replayed).
        resumed = run.resumed_from is not None
        purge = learner.global_step + 1 if resumed else None
        self.writer = SummaryWriter(str(run.out), purge_step=purge)
        if not resumed:
            self.writer.add_text("hyperparameters", hparams_table(config))
        self.bar = tqdm(total=config.total_steps, unit="step", unit_scale=True,
                        initial=min(learner.global_step, config.total_steps),
                        dynamic_ncols=True, disable=not progress)  # fmt: skip
        self.start = time.perf_counter()
        self.steps = 0  # environment steps in this session
        self.busy = 0.0  # seconds collecting and learning in this session
        self.session_seconds = dict.fromkeys(learner.seconds, 0.0)
        self.last_eval: dict[str, float] = {}

    @property
    def sps(self) -> float:
        return self.steps / self.busy if self.busy else 0.0

    def started(self) -> None:
        config, learner = self.run.config, self.run.learner
        self.echo(f"run {learner.run_name}: {config.name}, {config.num_players} players, "
                  f"{config.total_steps:,} steps, device {learner.device}, writing to "
                  f"{self.run.out} (Ctrl-C saves a checkpoint and stops)")  # fmt: skip
        where = learner.rollouts.describe()
        if where:  # rollout workers elsewhere (craits train --ray)
            self.echo(where)
            self.writer.add_text("rollouts", where, learner.global_step)

    def timed(self, step: Callable[..., Any], *args: Any) -> Any:
        """``step(*args)``, its time counted as busy and split by the learner's own clocks."""
        before = dict(self.run.learner.seconds)
        t0 = time.perf_counter()
        result = step(*args)
        self.busy += time.perf_counter() - t0
        for k, v in self.run.learner.seconds.items():
            self.session_seconds[k] += v - before[k]
        return result

    def update(self, metrics: dict[str, float], stats: RolloutStats) -> None:
        learner, total = self.run.learner, self.run.config.total_steps
        self.steps += stats.steps
        wall = time.perf_counter() - self.start
        _log_update(self.writer, learner.global_step, learner, metrics, stats, self.steps,
                    self.busy, wall, self.session_seconds)  # fmt: skip
        for line in learner.rollouts.messages():  # a rollout worker replaced
            self.echo(line)
        self.bar.update(min(learner.global_step, total) - self.bar.n)
        win = np.mean(stats.learner_wins) if stats.learner_wins else float("nan")
        self.bar.set_postfix_str(
            f"SPS {self.sps:,.0f} | learner win {win:.2f}"
            + "".join(f" | {k} {v:.2f}" for k, v in self.last_eval.items()),
            refresh=False,
        )

    def evaluated(self, win_rates: dict[str, float]) -> None:
        self.last_eval = win_rates

    def close(self) -> None:
        for line in self.run.learner.rollouts.messages():  # a worker replaced after the last log
            self.echo(line)
        self.bar.close()
        self.writer.close()


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

            result = evaluate(final, opponent, config.num_players, config.rules,
                              config.final_eval_deals, out=target, record=config.eval_records,
                              progress=tick, on_stale=stale)  # fmt: skip
        _log_eval(writer, step, opponent, result)
        evaluations[opponent] = result
    return evaluations


def _log_update(
    writer: Any,
    step: int,
    learner: Learner,
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
    if "hands_loss" in metrics:  # hands_coef > 0: the hands head's cross-entropy
        scalar("losses/hands", metrics["hands_loss"], step)
    scalar("losses/early_stop", metrics["early_stop"], step)
    scalar("charts/learning_rate", metrics["learning_rate"], step)
    if learner.config.oracle_guiding:  # the batch's probability of showing a hidden card
        scalar("charts/oracle_keep", learner.config.oracle_keep(learner.batch_start_step), step)
    scalar("charts/SPS", session_steps / busy if busy else 0.0, step)
    scalar("charts/SPS_wall", session_steps / wall if wall else 0.0, step)
    scalar("charts/updates", learner.update, step)
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
    for kind, share in learner.pool.composition().items():
        scalar(f"pool/{kind}_share", share, step)
    scalar("pool/snapshots", len(learner.pool.snapshots), step)
    for tag, value in learner.rollouts.scalars().items():  # rollout workers' (on Ray)
        scalar(tag, value, step)


def _evaluate(
    writer: Any, step: int, path: Path, config: TrainConfig, deals: int
) -> dict[str, float]:
    """Evaluate ``path`` in memory against every eval opponent; the win rates (for the bar)."""
    rates = {}
    for opponent in config.eval_opponents:
        result = evaluate(path, opponent, config.num_players, config.rules, deals)
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
