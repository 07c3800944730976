"""What a run writes as it goes: TensorBoard scalars, the progress bar, the clock, Ctrl-C.

Scalars (x axis: environment steps): ``losses/{policy,value,entropy,approx_kl,
clipfrac,explained_variance}`` (and ``losses/hands`` with ``hands_coef > 0``),
``charts/{SPS,SPS_wall,learning_rate,updates,transitions,network_decisions,peak_rss_mb}``,
``time/{env,encode,forward,update}`` (share of the training time),
``learner/{mean_hand_points,win_rate,mean_score,games}``,
``eval/<opponent>/{win_rate,win_rate_ci_lo,win_rate_ci_hi,mean_score,
mean_score_ci_lo,mean_score_ci_hi,opponent_mean_score}`` (and, with ``eval_adjusted``,
``adjusted_mean_score``, ``adjusted_mean_score_ci_lo``, ``adjusted_mean_score_ci_hi`` and
``adjusted_width_ratio``: :mod:`craits.training.evaluate`), ``pool/{<kind>_share,snapshots}``;
the hyper-parameters as a text table; rollout workers' own on Ray
(:mod:`craits.training.distributed`). The progress (:class:`craits.agents.progress.Progress`)
is a live bar on a terminal and a plain line every 30 s anywhere else: a log file gets no
carriage returns.
"""

from __future__ import annotations

import re
import resource
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from craits.agents.progress import Progress
from craits_env.fileio import atomic_write_text

from .buffer import RolloutStats
from .config import TrainConfig, to_toml
from .state import TrainingState


def peak_rss_mb() -> float:
    """This process's peak resident memory (``ru_maxrss``: KiB on Linux, bytes on macOS)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (2**20 if sys.platform == "darwin" else 2**10)


def hparams_table(config: TrainConfig) -> str:
    rows = ["|param|value|", "|-|-|"]
    rows += [f"|{k}|{v}|" for k, v in config.to_dict().items()]
    return "\n".join(rows)


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


class RunLog:
    """The run directory's ``config.toml`` and TensorBoard events, the progress bar, and this
    session's clock (steps per second, where the time went)."""

    def __init__(
        self,
        state: TrainingState,
        out: Path,
        resumed_from: Path | None,
        progress: bool,
        echo: Callable[[str], None],
    ) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.state, self.out, self.echo = state, out, echo
        config = state.config
        if resumed_from is not None:
            echo(
                f"resuming {state.run_name} at step {state.global_step:,} "
                f"(update {state.update}) from {resumed_from}"
            )
            if state.resume_note:
                echo(f"resuming: {state.resume_note}")
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "config.toml", to_toml(config))
        # A resumed run hides the events logged after its checkpoint (they are replayed).
        purge = state.global_step + 1 if resumed_from is not None else None
        self.writer = SummaryWriter(str(out), purge_step=purge)
        if resumed_from is None:
            self.writer.add_text("hyperparameters", hparams_table(config))
        # a live bar on a terminal, a plain line every 30 s elsewhere (no \r in a log file)
        self.bar = Progress(
            config.total_steps, "training", "step", done=state.global_step, enabled=progress
        )
        self.start = time.perf_counter()
        self.steps = 0  # environment steps in this session
        self.busy = 0.0  # seconds collecting and learning in this session
        self.session_seconds = dict.fromkeys(state.seconds, 0.0)
        self.last_eval: dict[str, float] = {}

    @property
    def sps(self) -> float:
        return self.steps / self.busy if self.busy else 0.0

    def started(self) -> None:
        config, state = self.state.config, self.state
        self.echo(
            f"run {state.run_name}: {config.name}, {config.num_players} players, "
            f"{config.total_steps:,} steps, device {state.device}, writing to "
            f"{self.out} (Ctrl-C saves a checkpoint and stops)"
        )
        where = state.rollouts.description
        if where:  # rollout workers elsewhere (craits train --ray)
            self.echo(where)
            self.writer.add_text("rollouts", where, state.global_step)

    def timed(self, step: Callable[..., Any], *args: Any) -> Any:
        """``step(*args)``, its time counted as busy and split by the state's own clocks."""
        before = dict(self.state.seconds)
        t0 = time.perf_counter()
        result = step(*args)
        self.busy += time.perf_counter() - t0
        for k, v in self.state.seconds.items():
            self.session_seconds[k] += v - before[k]
        return result

    def update(self, metrics: dict[str, float], stats: RolloutStats) -> None:
        """Log one update: its scalars, the rollouts' lines, the progress bar."""
        state = self.state
        self.steps += stats.steps
        wall = time.perf_counter() - self.start
        self._scalars(metrics, stats, wall)
        self.lines(stats.messages)  # a rollout worker replaced
        win = np.mean(stats.learner_wins) if stats.learner_wins else float("nan")
        self.bar.update(
            state.global_step,
            f"SPS {self.sps:,.0f} | learner win {win:.2f}"
            + "".join(f" | {k} {v:.2f}" for k, v in self.last_eval.items()),
        )

    def _scalars(self, metrics: dict[str, float], stats: RolloutStats, wall: float) -> None:
        state, step, scalar = self.state, self.state.global_step, self.writer.add_scalar
        for key in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac"):
            scalar(f"losses/{key.removesuffix('_loss')}", metrics[key], step)
        scalar("losses/explained_variance", metrics["explained_variance"], step)
        if "hands_loss" in metrics:  # hands_coef > 0: the hands head's cross-entropy
            scalar("losses/hands", metrics["hands_loss"], step)
        scalar("charts/learning_rate", metrics["learning_rate"], step)
        scalar("charts/SPS", self.sps, step)
        scalar("charts/SPS_wall", self.steps / wall if wall else 0.0, step)
        scalar("charts/updates", state.update, step)
        scalar("charts/transitions", stats.transitions, step)
        scalar("charts/network_decisions", stats.network_decisions, step)
        scalar("charts/peak_rss_mb", peak_rss_mb(), step)
        total = sum(self.session_seconds.values())
        for key, value in self.session_seconds.items():
            scalar(f"time/{key}", value / total if total else 0.0, step)
        if stats.learner_hand_points:
            scalar("learner/mean_hand_points", float(np.mean(stats.learner_hand_points)), step)
        if stats.learner_wins:
            scalar("learner/win_rate", float(np.mean(stats.learner_wins)), step)
            scalar("learner/mean_score", float(np.mean(stats.learner_scores)), step)
            scalar("learner/games", len(stats.learner_wins), step)
        for kind, share in state.pool.composition().items():
            scalar(f"pool/{kind}_share", share, step)
        scalar("pool/snapshots", len(state.pool.snapshots), step)
        for tag, value in stats.scalars.items():  # rollout workers' (on Ray)
            scalar(tag, value, step)

    def evaluation(self, opponent: str, result: dict[str, Any]) -> None:
        """Log an evaluation of the agent against ``opponent`` (at the current step)."""
        row, step = result["agent"], self.state.global_step
        tag = "eval/" + re.sub(r"[^\w.-]+", "_", opponent)
        scalar = self.writer.add_scalar
        scalar(f"{tag}/win_rate", row["win_rate"], step)
        scalar(f"{tag}/win_rate_ci_lo", row["win_rate_ci"][0], step)
        scalar(f"{tag}/win_rate_ci_hi", row["win_rate_ci"][1], step)
        scalar(f"{tag}/mean_score", row["mean_score"], step)
        scalar(f"{tag}/mean_score_ci_lo", row["mean_score_ci"][0], step)
        scalar(f"{tag}/mean_score_ci_hi", row["mean_score_ci"][1], step)
        scalar(f"{tag}/opponent_mean_score", result["opponent"]["mean_score"], step)
        if "adjusted_mean_score" in row:  # eval_adjusted: the luck-adjusted figures
            scalar(f"{tag}/adjusted_mean_score", row["adjusted_mean_score"], step)
            scalar(f"{tag}/adjusted_mean_score_ci_lo", row["adjusted_mean_score_ci"][0], step)
            scalar(f"{tag}/adjusted_mean_score_ci_hi", row["adjusted_mean_score_ci"][1], step)
            scalar(f"{tag}/adjusted_width_ratio", row["adjusted_width_ratio"], step)
        self.writer.flush()

    def lines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.echo(line)

    def close(self) -> None:
        self.bar.close()
        self.writer.close()
