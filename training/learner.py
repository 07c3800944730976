"""The state of a PPO run and its two steps: collect a batch, learn from it.

:class:`Learner` owns the network, the optimiser, the opponent pool, the
vectorised self-play games and every random generator; :meth:`Learner.state`
and :meth:`Learner.load_state` turn all of it into a checkpoint and back, so a
resumed run continues exactly where it stopped (same games in flight, same
generators: the same parameters as an uninterrupted run, on the same device
and thread count). The loop around it — logging, evaluation, checkpoints — is
:mod:`craits.training.train`.

Randomness: ``torch.manual_seed(seed)`` initialises the network; the games,
seats and bots' seeds come from one ``numpy`` generator; the actions are sampled
with one ``torch.Generator`` and the minibatches shuffled with another.

**Where the games are played** is a :class:`Rollouts`: :class:`LocalRollouts`
(this process, ``craits train``) or :class:`craits.training.distributed.RayRollouts`
(rollout workers on a Ray cluster, ``craits train --ray``). The learner's part —
the PPO update, the pool's snapshots, the checkpoint — is the same code for both.
The games of rollout worker ``w`` in its ``i``-th incarnation are seeded by
:func:`rollout_generators` ``(seed, w, i)``; worker 0's first incarnation *is*
the single-process rollout, so one Ray worker trains exactly what ``craits train``
trains.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import torch
from torch import nn

from craits.agents.network import PolicyNet
from craits_env.seeding import derive_rng, derive_seed

from .checkpoint import bytes_to_tensor, load_checkpoint, policy_from_checkpoint, tensor_to_bytes
from .config import TrainConfig
from .pool import OpponentPool
from .ppo import MaskedCategorical, explained_variance, normalize, ppo_loss
from .selfplay import Batch, RolloutStats, SelfPlayRollout
from .vector_selfplay import VectorSelfPlayRollout


def resolve_device(name: str) -> torch.device:
    """``auto``: CUDA when available, else the CPU."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("device cuda: CUDA is not available on this machine")
    return torch.device(name)


ROLLOUT_SEED = 0x5E1F  # the single-process rollout's games: derive_rng(seed, ROLLOUT_SEED)
WORKER_SEED = 0x3041  # other workers' and incarnations' games: derive_seed(seed, WORKER_SEED, w, i)


def rollout_generators(
    seed: int, worker: int = 0, incarnation: int = 0
) -> tuple[np.random.Generator, torch.Generator]:
    """The games' generator and the action-sampling generator of a rollout.

    Worker 0's first incarnation gets the single-process run's generators
    (``derive_rng(seed, ROLLOUT_SEED)``, ``seed * 2 + 1``); every other
    ``(worker, incarnation)`` its own, derived from all three integers.
    """
    if worker == 0 and incarnation == 0:
        return derive_rng(seed, ROLLOUT_SEED), torch.Generator().manual_seed(seed * 2 + 1)
    derived = derive_seed(seed, WORKER_SEED, worker, incarnation)
    return derive_rng(derived), torch.Generator().manual_seed(derived)


def new_rollout(
    config: TrainConfig, pool: OpponentPool, rng: np.random.Generator
) -> SelfPlayRollout | VectorSelfPlayRollout:
    """The games of one rollout, on ``config.backend``'s engine."""
    if config.backend == "vector":
        return VectorSelfPlayRollout(config, pool, rng)
    return SelfPlayRollout(config, pool, rng)


class Rollouts(Protocol):
    """Where a learner's games are played (this process, or rollout workers elsewhere)."""

    def collect(
        self, actor: PolicyNet, version: int, batch_size: int
    ) -> tuple[Batch, RolloutStats]:
        """Play until ``batch_size`` transitions are complete, acting with ``actor`` (the
        network after ``version`` updates); the batch and what the games did."""
        ...

    def set_oracle_keep(self, keep: float) -> None:
        """Oracle guiding (``config.oracle_guiding``): the probability that the policy sees an
        entry of the opponents' hands in the games of the next :meth:`collect`."""
        ...

    def snapshot_added(self, pool: OpponentPool) -> None:
        """The learner's pool just froze a snapshot (its newest): seat it in new games."""
        ...

    def save_into(self, checkpoint: dict[str, Any]) -> None:
        """Add the games in flight and the sampling generators to ``checkpoint``."""
        ...

    def load_from(self, checkpoint: dict[str, Any], pool: OpponentPool) -> str | None:
        """Continue the games of ``checkpoint`` (``pool``: the learner's, already loaded);
        a line to show when they could not be continued exactly, else ``None``."""
        ...

    def describe(self) -> str:
        """A line on where the games are played ("" for this process)."""
        ...

    def scalars(self) -> dict[str, float]:
        """TensorBoard scalars of the last :meth:`collect` beyond :class:`RolloutStats`'s."""
        ...

    def messages(self) -> list[str]:
        """Lines to show since the last call (a worker restarted); clears them."""
        ...

    def close(self) -> None:
        """Release what the rollouts hold (idempotent)."""
        ...


class LocalRollouts:
    """``config.num_games`` games in this process: the single-process :class:`Rollouts`."""

    def __init__(self, config: TrainConfig, pool: OpponentPool) -> None:
        rng, self.sample_gen = rollout_generators(config.seed)
        self.rollout = new_rollout(config, pool, rng)

    def collect(
        self, actor: PolicyNet, version: int, batch_size: int
    ) -> tuple[Batch, RolloutStats]:
        return self.rollout.collect(actor, batch_size, self.sample_gen)

    def set_oracle_keep(self, keep: float) -> None:
        if isinstance(self.rollout, SelfPlayRollout):  # oracle guiding: python backend only
            self.rollout.oracle_keep = keep

    def snapshot_added(self, pool: OpponentPool) -> None:
        pool.prune(self.rollout.in_use())

    def save_into(self, checkpoint: dict[str, Any]) -> None:
        checkpoint["rng"]["sample"] = self.sample_gen.get_state()
        checkpoint["rollout"] = bytes_to_tensor(self.rollout.state_bytes())

    def load_from(self, checkpoint: dict[str, Any], pool: OpponentPool) -> str | None:
        if "rollout" in checkpoint:
            self.sample_gen.set_state(checkpoint["rng"]["sample"])
            self.rollout.load_state_bytes(tensor_to_bytes(checkpoint["rollout"]))
            return None
        workers = checkpoint.get("workers", {}).get("states", [])  # craits train --ray's
        if len(workers) != 1:
            return (f"the games in flight were played by {len(workers)} rollout workers: new "
                    "games are dealt here (the run continues, not bit-identically)")  # fmt: skip
        state = workers[0]  # one worker's games continue here exactly
        snapshots = pool.state_dict()["snapshots"]
        pool.load_state_dict({"snapshots": snapshots, "retired": state["retired"],
                              "seated": dict(pool.seated)})  # fmt: skip
        self.sample_gen.set_state(state["sample"])
        self.rollout.load_state_bytes(tensor_to_bytes(state["rollout"]))
        return None

    def describe(self) -> str:
        return ""

    def scalars(self) -> dict[str, float]:
        return {}

    def messages(self) -> list[str]:
        return []

    def close(self) -> None:
        pass


RolloutsFactory = Callable[[TrainConfig, OpponentPool], Rollouts]


class Learner:
    """One run's learning state (see the module docstring).

    ``rollouts`` builds where the games are played from the configuration and the
    learner's pool (default: :class:`LocalRollouts`, this process).
    """

    def __init__(
        self,
        config: TrainConfig,
        device: torch.device,
        run_name: str,
        rollouts: RolloutsFactory = LocalRollouts,
    ) -> None:
        self.config = config
        self.device = device
        self.run_name = run_name
        seed = config.seed
        torch.manual_seed(seed)
        self.shuffle_gen = torch.Generator().manual_seed(seed * 2 + 2)
        probe = SelfPlayRollout.observation_size(config)
        extra = SelfPlayRollout.critic_size(config)
        hands = SelfPlayRollout.hands_size(config)
        guide = SelfPlayRollout.guide_size(config)
        self.net = PolicyNet(probe, config.hidden_sizes, config.activation, critic_extra=extra,
                             hands_out=hands, oracle_inputs=guide).to(device)  # fmt: skip
        # The rollout acts with a CPU copy when the update runs elsewhere (small batches).
        self.actor = self.net if device.type == "cpu" else PolicyNet.from_spec(self.net.spec())
        self._sync_actor()
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=config.learning_rate, eps=1e-5)
        self.pool = OpponentPool(config.opponents, self.net.spec(), config.pool_size)
        self.rollouts = rollouts(config, self.pool)
        self.resume_note: str | None = None  # set by load_state when the games start anew
        self.global_step = 0
        self.batch_start_step = 0  # global_step before the batch last collected
        self.update = 0
        self.seconds = {"env": 0.0, "encode": 0.0, "forward": 0.0, "update": 0.0}

    def init_policy(self, path: str) -> None:
        """Start from the policy (weights only) of the checkpoint at ``path`` (a file or a run
        directory); the network shape must be the config's. A fresh run's first step."""
        from craits.agents.ppo import checkpoint_file

        try:
            file = checkpoint_file(path)
            data = load_checkpoint(file)
            net = policy_from_checkpoint(data, file)
        except ValueError as e:
            raise ValueError(f"config init_policy: {e}") from None
        mine, theirs = self.net.spec(), net.spec()
        # A standard-observation policy starts a belief one (a belief one a belief_calls one):
        # the new inputs get zero weights, so the network plays exactly as before until it
        # learns to use them. A shared-critic policy starts an oracle-critic one: the critic's
        # trunk starts as a copy of the policy's trunk (the hands' inputs at zero weight), so
        # its values are as before.
        # A policy also starts a wider one (as many hidden layers, none narrower): the new
        # units start from the fresh initialisation but feed only new units, and the heads
        # read them with zero weights, so the network plays exactly as before.
        # A policy without oracle guiding starts one with it: the hands' inputs (the input's
        # end) get zero weights; one with it starts only the same (its inputs all kept).
        same = {"obs_size", "critic_extra", "hands_out", "hidden_sizes", "oracle_inputs"}
        shape = {k: v for k, v in mine.items() if k not in same}
        wider = len(mine["hidden_sizes"]) == len(theirs["hidden_sizes"]) and all(
            m >= t for m, t in zip(mine["hidden_sizes"], theirs["hidden_sizes"], strict=True)
        )
        compatible = {k: v for k, v in theirs.items() if k not in same} == shape and wider
        order = ("standard", "belief", "belief_calls")  # each one's input starts the next's
        theirs_kind = data.get("observation", "standard")
        theirs_play, mine_play = net.play_size, self.net.play_size
        widen = (
            theirs_kind in order
            and order.index(theirs_kind) < order.index(self.config.observation)
            and theirs_play < mine_play
        ) or theirs_play == mine_play
        critic = theirs.get("critic_extra", 0) == 0 or (  # an oracle critic is kept as it is
            theirs.get("critic_extra") == mine.get("critic_extra")
            and theirs["obs_size"] == mine["obs_size"]
        )
        guided = net.oracle_inputs == 0 or (
            net.oracle_inputs == self.net.oracle_inputs and theirs["obs_size"] == mine["obs_size"]
        )
        if not (compatible and widen and critic and guided):
            raise ValueError(
                f"config init_policy: {path} holds the network {theirs}, the config builds {mine}"
            )
        if data.get("num_players") != self.config.num_players:
            raise ValueError(
                f"config init_policy: {path} was trained for {data.get('num_players')} "
                f"players, the config has {self.config.num_players}"
            )
        copies = dict(net.state_dict())
        if net.hands_out != self.net.hands_out:  # the hands head: kept only if the same shape
            copies = {k: v for k, v in copies.items() if not k.startswith("hands.")}
        if self.net.critic is not None and net.critic is None:
            copies |= {f"critic.{k}": v for k, v in net.trunk.state_dict().items()}
        state = self.net.state_dict()
        with torch.no_grad():
            for name, tensor in copies.items():  # into the leading block
                target = state[name]
                # The old units' weights on new inputs are zero; new units (rows past the
                # old ones, only in a wider network) keep their fresh initialisation.
                target[: tensor.shape[0]] = 0
                target[tuple(slice(0, n) for n in tensor.shape)] = tensor.to(target.device)
            self.net.load_state_dict(state)
        self._sync_actor()

    def _sync_actor(self) -> None:
        if self.actor is not self.net:
            self.actor.load_state_dict({k: v.cpu() for k, v in self.net.state_dict().items()})
            self.actor.requires_grad_(False)

    @property
    def learning_rate(self) -> float:
        """The step size of the update of the batch just collected.

        Annealed linearly by the steps taken *before* that batch (as CleanRL's
        ``1 - (update - 1) / num_updates``), and never below the batch's share of
        ``total_steps``: the last update, even of a run that overshoots ``total_steps``,
        still learns (its rate is about ``learning_rate / number of updates``, never 0).
        """
        c = self.config
        if not c.anneal_lr:
            return c.learning_rate
        batch = max(1, self.global_step - self.batch_start_step)
        frac = max(1.0 - self.batch_start_step / c.total_steps, batch / c.total_steps)
        return c.learning_rate * min(1.0, frac)

    # -- the two steps ---------------------------------------------------------------

    def collect(self) -> tuple[Batch, RolloutStats]:
        """Play until one update's batch is complete."""
        self.net.eval()
        if self.config.oracle_guiding:  # from the steps before this batch (exact on resume)
            self.rollouts.set_oracle_keep(self.config.oracle_keep(self.global_step))
        batch, stats = self.rollouts.collect(self.actor, self.update, self.config.batch_size)
        self.batch_start_step = self.global_step
        self.global_step += stats.steps
        for k, v in stats.seconds.items():
            self.seconds[k] += v
        return batch, stats

    def learn(self, batch: Batch) -> dict[str, float]:
        """PPO epochs over ``batch``; the mean losses and diagnostics."""
        start = time.perf_counter()
        c, dev = self.config, self.device
        lr = self.learning_rate
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        obs = torch.from_numpy(batch.obs).to(dev)
        has_critic_obs = batch.critic_obs.shape[1] > 0  # critic = oracle, or hands_coef > 0
        critic_obs = torch.from_numpy(batch.critic_obs).to(dev) if has_critic_obs else None
        # The hands head's targets (hands_coef > 0): does the opponent hold (a copy of) the card.
        held = None
        if self.net.hands is not None and critic_obs is not None:
            held = critic_obs[:, : self.net.hands_out].clamp(max=1.0)  # the hands come first
        masks = torch.from_numpy(batch.masks).to(dev)
        actions = torch.from_numpy(batch.actions).to(dev)
        old_log_probs = torch.from_numpy(batch.log_probs).to(dev)
        old_values = torch.from_numpy(batch.values).to(dev)
        advantages = torch.from_numpy(batch.advantages).to(dev)
        returns = torch.from_numpy(batch.returns).to(dev)
        self.net.train()
        sums: dict[str, float] = {}
        count = 0
        stopped = False
        for _ in range(c.update_epochs):
            order = torch.randperm(len(batch), generator=self.shuffle_gen)
            for mb in order.tensor_split(c.num_minibatches):
                mb = mb.to(dev)
                extra = None if critic_obs is None else critic_obs[mb]
                hand_loss = None
                if held is not None:
                    logits, value, hand_logits = self.net.with_hands(obs[mb], extra)
                    hand_loss = nn.functional.binary_cross_entropy_with_logits(
                        hand_logits, held[mb]
                    )
                else:
                    logits, value = self.net(obs[mb], extra)
                dist = MaskedCategorical(logits, masks[mb])
                adv = normalize(advantages[mb]) if c.norm_adv else advantages[mb]
                out = ppo_loss(
                    new_log_prob=dist.log_prob(actions[mb]),
                    old_log_prob=old_log_probs[mb],
                    advantages=adv,
                    entropy=dist.entropy(),
                    new_value=value,
                    old_value=old_values[mb],
                    returns=returns[mb],
                    clip_coef=c.clip_coef,
                    clip_vloss=c.clip_vloss,
                    ent_coef=c.ent_coef,
                    vf_coef=c.vf_coef,
                )
                loss = out.loss
                if hand_loss is not None:
                    loss = loss + c.hands_coef * hand_loss
                    sums["hands_loss"] = sums.get("hands_loss", 0.0) + hand_loss.item()
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(self.net.parameters(), c.max_grad_norm)
                self.optimizer.step()
                for key in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac"):
                    sums[key] = sums.get(key, 0.0) + getattr(out, key)
                count += 1
                if c.target_kl > 0 and out.approx_kl > c.target_kl:
                    stopped = True
                    break
            if stopped:
                break
        self.net.eval()
        self._sync_actor()
        self.update += 1
        if self.update % c.snapshot_every == 0:
            self.pool.add_snapshot(self.net, self.update)
            self.rollouts.snapshot_added(self.pool)
        metrics = {k: v / count for k, v in sums.items()}
        metrics["explained_variance"] = explained_variance(batch.values, batch.returns)
        metrics["minibatches"] = float(count)
        metrics["early_stop"] = float(stopped)
        metrics["learning_rate"] = lr
        self.seconds["update"] += time.perf_counter() - start
        return metrics

    # -- checkpoints ----------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """Everything a checkpoint holds (see :mod:`craits.training.checkpoint`)."""
        state = {
            "network": self.net.spec(),
            "policy": {k: v.detach().cpu() for k, v in self.net.state_dict().items()},
            "num_players": self.config.num_players,
            "rules": self.config.rules.to_dict(),
            "observation": self.config.observation,
            "config": self.config.to_dict(),
            "run_name": self.run_name,
            "global_step": self.global_step,
            "update": self.update,
            "seconds": dict(self.seconds),
            "optimizer": self.optimizer.state_dict(),
            "pool": self.pool.state_dict(),
            "rng": {"torch": torch.get_rng_state(), "shuffle": self.shuffle_gen.get_state()},
        }
        self.rollouts.save_into(state)  # the games in flight, the sampling generators
        return state

    def load_state(self, data: dict[str, Any], path: str = "checkpoint") -> None:
        """Continue from a checkpoint's dict (``ValueError`` if it does not fit this config).

        ``resume_note`` says afterwards whether the games in flight could not be continued
        (a checkpoint of another number of rollout workers: new games are dealt).
        """
        net = policy_from_checkpoint(data, path)
        if net.spec() != self.net.spec():
            raise ValueError(
                f"checkpoint {path}: network {net.spec()} does not match the config's "
                f"{self.net.spec()}"
            )
        try:
            self.net.load_state_dict(net.state_dict())
            self.optimizer.load_state_dict(data["optimizer"])
            self.pool.load_state_dict(data["pool"])
            torch.set_rng_state(data["rng"]["torch"])
            self.shuffle_gen.set_state(data["rng"]["shuffle"])
            self.resume_note = self.rollouts.load_from(data, self.pool)
            self.global_step = self.batch_start_step = int(data["global_step"])
            self.update = int(data["update"])
            self.seconds.update(data.get("seconds", {}))
            self.run_name = str(data["run_name"])
        except (KeyError, TypeError, RuntimeError) as e:
            raise ValueError(f"checkpoint {path}: cannot resume from it ({e})") from None
        self._sync_actor()

    def close(self) -> None:
        """Release the rollouts (Ray workers); the learning state stays usable."""
        self.rollouts.close()
