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
the run name is ``craits_v0__<config>__<seed>__<unix time>``):

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

from craits.agents.checkpoint import load_checkpoint, save_checkpoint

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
from .rollouts import LocalRollouts, RolloutsFactory
from .run_log import RunLog, StopRequest, peak_rss_mb
from .state import TrainingState, resolve_device

FINAL = "final.pt"
CHECKPOINTS = "checkpoints"
TORCH_THREADS = 1  # the update's intra-op threads (the games are stepped in one thread)


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
    advantages = gae_linked(segment.rewards, segment.values, segment.dones, segment.next_index,
                            c.gamma, c.gae_lambda, bootstrap_only=segment.open)  # fmt: skip
    batch = segment.batch(advantages)

    # 3. PPO epochs: shuffled minibatches, the clipped loss (and the hands head's).
    lr = annealed_learning_rate(c.learning_rate, state.batch_start_step, state.global_step,
                                c.total_steps)  # fmt: skip
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
    run = open_run(config, out=out, resume=resume, total_steps=total_steps, device=device,
                   rollouts=rollouts)  # fmt: skip
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
        result = evaluate(path, opponent, config.num_players, config.rules, config.eval_deals)
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
                              config.final_eval_deals, out=target, progress=tick,
                              on_stale=stale)  # fmt: skip
        log.evaluation(opponent, result)
        evaluations[opponent] = result
    return evaluations
