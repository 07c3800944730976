"""``craits train``: masked PPO self-play, logged to TensorBoard, checkpointed, evaluated.

It reads top to bottom like CleanRL's ``ppo.py``. :func:`train` is the run::

    config -> seeding (open_run) -> for each update: update() -> log -> checkpoint
    -> periodic evaluation; then the final evaluation

and :func:`update` is one update, whole::

    collect (the rollouts) -> GAE -> PPO epochs over minibatches -> the pool's snapshot

The games are played in this process (:class:`~craits.training.rollouts.LocalRollouts`) or
(``rollouts=RayOptions(...)``, ``craits train --ray``) by rollout workers on a Ray cluster
(:mod:`craits.training.distributed`): the same loop, the same run directory. The maths —
the masked distribution, GAE, the loss — is :mod:`craits.training.ppo`'s; the buffer the
rollouts fill is :mod:`craits.training.buffer`'s; the scalars logged are listed in
:mod:`craits.training.run_log`.

A run writes into its directory ``DIR`` (``--out``, else ``runs/<run name>``;
the run name is ``craits_v0__<config>__<seed>__<unix time>``; naming, finding and opening
it: :mod:`craits.training.run_dir`):

| path | content |
|---|---|
| ``DIR/events.out.tfevents.*`` | TensorBoard scalars (``tensorboard --logdir DIR``) |
| ``DIR/config.toml`` | the resolved configuration |
| ``DIR/checkpoints/step_<update>.pt`` | every ``checkpoint_every`` / ``eval_every`` updates |
| ``DIR/final.pt`` | the last checkpoint: play it as ``ppo:DIR/final.pt`` |
| ``DIR/eval/<opponent>/`` | the final duplicate tournament against each opponent |
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from craits.agents.checkpoint import save_checkpoint

from .buffer import RolloutStats
from .config import TrainConfig
from .evaluate import evaluate
from .ppo import (
    MaskedCategorical,
    annealed_learning_rate,
    explained_variance,
    gae_linked,
    normalize,
    ppo_loss,
)
from .rollouts import RolloutsFactory

# find_checkpoint and RunExists are also importable from here.
from .run_dir import CHECKPOINTS, FINAL, open_run
from .run_dir import RunExists as RunExists
from .run_dir import find_checkpoint as find_checkpoint
from .run_log import RunLog, StopRequest, peak_rss_mb
from .state import TrainingState


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


# ----------------------------------------------------------------------------- one update


def update(state: TrainingState) -> tuple[dict[str, float], RolloutStats]:
    """One PPO update of ``state``: collect a batch, its advantages, the epochs over it.

    Returns the mean losses and diagnostics, and what the games did.
    """
    c, net, dev = state.config, state.net, state.device

    # 1. Collect: play until batch_size transitions are complete (the rollouts' games).
    net.eval()
    segment, stats = state.rollouts.collect(state.actor, state.update, c.batch_size)
    state.batch_start_step = state.global_step
    state.global_step += stats.steps
    for k, v in stats.seconds.items():
        state.seconds[k] += v
    start = time.perf_counter()

    # 2. GAE along each seat's stream; an open transition only bootstraps its predecessor.
    advantages = gae_linked(
        segment.rewards,
        segment.values,
        segment.dones,
        segment.next_index,
        c.gamma,
        c.gae_lambda,
        bootstrap_only=segment.open,
    )
    batch = segment.batch(advantages)

    # 3. PPO epochs: shuffled minibatches, the clipped loss (and the hands head's).
    lr = annealed_learning_rate(
        c.learning_rate, state.batch_start_step, state.global_step, c.total_steps
    )
    for group in state.optimizer.param_groups:
        group["lr"] = lr
    obs = torch.from_numpy(batch.obs).to(dev)
    masks = torch.from_numpy(batch.masks).to(dev)
    actions = torch.from_numpy(batch.actions).to(dev)
    old_log_probs = torch.from_numpy(batch.log_probs).to(dev)
    old_values = torch.from_numpy(batch.values).to(dev)
    batch_advantages = torch.from_numpy(batch.advantages).to(dev)
    returns = torch.from_numpy(batch.returns).to(dev)
    # The hands head's targets (hands_coef > 0): does the opponent hold (a copy of) the card.
    held = torch.from_numpy(batch.hands).to(dev).clamp(max=1.0) if net.hands is not None else None
    net.train()
    sums: dict[str, float] = {}
    count = 0
    for _ in range(c.update_epochs):
        order = torch.randperm(len(batch), generator=state.shuffle_gen)
        for mb in order.tensor_split(c.num_minibatches):
            mb = mb.to(dev)
            hands_loss = None
            if held is not None:
                logits, value, hand_logits = net.with_hands(obs[mb])
                hands_loss = nn.functional.binary_cross_entropy_with_logits(hand_logits, held[mb])
            else:
                logits, value = net(obs[mb])
            dist = MaskedCategorical(logits, masks[mb])
            out = ppo_loss(
                new_log_prob=dist.log_prob(actions[mb]),
                old_log_prob=old_log_probs[mb],
                advantages=normalize(batch_advantages[mb]),
                entropy=dist.entropy(),
                new_value=value,
                old_value=old_values[mb],
                returns=returns[mb],
                clip_coef=c.clip_coef,
                clip_vloss=True,
                ent_coef=c.ent_coef,
                vf_coef=c.vf_coef,
            )
            loss = out.loss
            if hands_loss is not None:
                loss = loss + c.hands_coef * hands_loss
                sums["hands_loss"] = sums.get("hands_loss", 0.0) + hands_loss.item()
            state.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), c.max_grad_norm)
            state.optimizer.step()
            for key in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac"):
                sums[key] = sums.get(key, 0.0) + getattr(out, key)
            count += 1
    net.eval()
    state.sync_actor()

    # 4. The pool: a frozen snapshot of the network every snapshot_every updates.
    state.update += 1
    if state.update % c.snapshot_every == 0:
        state.pool.add_snapshot(net, state.update)
        state.rollouts.snapshot_added(state.pool)
    metrics = {k: v / count for k, v in sums.items()}
    metrics["explained_variance"] = explained_variance(batch.values, batch.returns)
    metrics["minibatches"] = float(count)
    metrics["learning_rate"] = lr
    state.seconds["update"] += time.perf_counter() - start
    return metrics, stats


# ----------------------------------------------------------------------------- the run


class RunInterrupted(KeyboardInterrupt):
    """A second Ctrl-C (or one outside the loop's handling) in the run at ``run_dir``."""

    def __init__(self, run_dir: Path) -> None:
        super().__init__(str(run_dir))
        self.run_dir = run_dir


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
    run = open_run(
        config, out=out, resume=resume, total_steps=total_steps, device=device, rollouts=rollouts
    )
    config, out, state = run.config, run.out, run.state
    try:
        log = RunLog(state, out, run.resumed_from, progress, echo)  # writing from here on
    except BaseException:
        state.close()
        raise
    final, saved, interrupted = out / FINAL, None, None
    evaluations: dict[str, dict[str, Any]] = {}
    try:
        with StopRequest() as stop:
            log.started()
            while state.global_step < config.total_steps and not stop.requested:
                metrics, stats = log.timed(update, state)  # collect, GAE, PPO epochs
                log.update(metrics, stats)
                done = state.global_step >= config.total_steps
                if _checkpoint_due(config, state.update, done or stop.requested):
                    saved = out / CHECKPOINTS / f"step_{state.update:06d}.pt"
                    checkpoint = state.checkpoint()
                    save_checkpoint(saved, checkpoint)
                    if done:
                        save_checkpoint(final, checkpoint)
                    elif _evaluation_due(config, state.update) and not stop.requested:
                        log.last_eval = _evaluate(log, saved, config)
            if stop.requested:  # stopped before the end, or before the final evaluation
                done = state.global_step >= config.total_steps
                interrupted = "evaluation" if done else "training"
        log.bar.close()
        if interrupted is None and not final.exists():  # resumed a finished run, no steps left
            save_checkpoint(final, state.checkpoint())
        log.lines(state.close())  # the rollout workers' CPUs are free for the evaluation
        if interrupted is None:
            try:
                evaluations = _final_evaluation(log, final, config, out, progress, echo)
            except KeyboardInterrupt:
                interrupted = "evaluation"
    except KeyboardInterrupt:  # a second Ctrl-C while training: the latest checkpoint stands
        raise RunInterrupted(out) from None
    finally:
        log.lines(state.close())
        log.close()
    return TrainResult(
        run_dir=out,
        final_checkpoint=final if interrupted != "training" else saved or final,
        global_step=state.global_step,
        updates=state.update,
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


def _evaluate(log: RunLog, path: Path, config: TrainConfig) -> dict[str, float]:
    """Evaluate ``path`` in memory against every eval opponent; the win rates (for the bar)."""
    rates = {}
    for opponent in config.eval_opponents:
        result = evaluate(
            path,
            opponent,
            config.num_players,
            config.rules,
            config.eval_deals,
            adjusted=config.eval_adjusted,
            luck=config.eval_luck,
        )
        log.evaluation(opponent, result)
        rates[opponent] = result["agent"]["win_rate"]
    return rates


def _final_evaluation(
    log: RunLog,
    final: Path,
    config: TrainConfig,
    out: Path,
    progress: bool,
    echo: Callable[[str], None],
) -> dict[str, dict[str, Any]]:
    """The duplicate tournament of ``final`` against each eval opponent, stored in
    ``out/eval/<opponent>`` (resumable; another agent's games there are replaced)."""
    from craits.agents.progress import Ticks

    evaluations: dict[str, dict[str, Any]] = {}
    if config.final_eval_deals <= 0:
        return evaluations
    echo(
        f"final evaluation: {config.final_eval_deals} deals × {config.num_players} rotations "
        f"against each of {', '.join(config.eval_opponents)}"
    )
    for opponent in config.eval_opponents:
        target = out / "eval" / re.sub(r"[^\w.-]+", "_", opponent)
        tick = Ticks(f"eval vs {opponent}", enabled=progress)  # no \r in a pipe
        luck = Ticks(f"eval vs {opponent}: luck", enabled=progress)
        with tick, luck:

            def stale(reason: str, target: Path = target) -> None:
                echo(f"{target}: held another agent's games ({reason}); playing them again")

            result = evaluate(
                final,
                opponent,
                config.num_players,
                config.rules,
                config.final_eval_deals,
                out=target,
                progress=tick,
                on_stale=stale,
                adjusted=config.eval_adjusted,
                luck_progress=luck,
                luck=config.eval_luck,
            )
        log.evaluation(opponent, result)
        evaluations[opponent] = result
    return evaluations
