"""A run's learning state: the network, the optimiser, the opponent pool, the generators.

:class:`TrainingState` is everything a checkpoint holds and :func:`craits.training.train.update`
changes: :meth:`TrainingState.checkpoint` and :meth:`TrainingState.load_checkpoint` turn all
of it into a checkpoint and back, so a resumed run continues exactly where it stopped (same
games in flight, same generators: the same parameters as an uninterrupted run, on the same
device). :meth:`TrainingState.init_policy` starts a fresh run from another run's policy.

Seeding: ``torch.manual_seed(seed)`` initialises the network; the minibatches are shuffled
with ``torch.Generator().manual_seed(seed * 2 + 2)``; the games, seats, bots' seeds and the
action sampling are the rollouts' (:func:`craits.training.rollouts.rollout_generators`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from craits.agents.checkpoint import load_checkpoint, policy_from_checkpoint
from craits.agents.network import PolicyNet, frozen_network

from .config import TrainConfig
from .pool import OpponentPool
from .rollouts import LocalRollouts, RolloutsFactory
from .selfplay import SelfPlayRollout

OBSERVATIONS = ("standard", "belief")  # each one's input starts the next one's


def resolve_device(name: str) -> torch.device:
    """``auto``: CUDA when available, else the CPU."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("device cuda: CUDA is not available on this machine")
    return torch.device(name)


class TrainingState:
    """One run's learning state (see the module docstring).

    ``rollouts`` builds where the games are played from the configuration and the
    run's pool (default: :class:`~craits.training.rollouts.LocalRollouts`, this process).
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
        obs_size = SelfPlayRollout.observation_size(config)
        hands = SelfPlayRollout.hands_targets_size(config)
        self.net = PolicyNet(obs_size, config.hidden_sizes, hands_out=hands).to(device)
        # The rollout acts with a CPU copy when the update runs elsewhere (small batches).
        self.actor = self.net if device.type == "cpu" else frozen_network(self.net.spec())
        self.sync_actor()
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=config.learning_rate, eps=1e-5)
        self.pool = OpponentPool(config.opponents, self.net.spec(), config.pool_size)
        self.rollouts = rollouts(config, self.pool)
        self.resume_note: str | None = None  # set by load_checkpoint when the games start anew
        self.global_step = 0
        self.batch_start_step = 0  # global_step before the batch last collected
        self.update = 0
        self.seconds = {"env": 0.0, "encode": 0.0, "forward": 0.0, "update": 0.0}

    def sync_actor(self) -> None:
        """Copy the network's weights into the rollouts' CPU copy (when it is one)."""
        if self.actor is not self.net:
            self.actor.load_state_dict(self.net.state_dict())  # copied onto the CPU

    def init_policy(self, path: str) -> None:
        """Start from the policy (weights only) of the checkpoint at ``path`` (a file or a run
        directory). A fresh run's first step.

        The network may be the config's, or grow from it: a standard-observation policy starts
        a belief one (the new inputs get zero weights); a policy starts a wider one (as many
        hidden layers, none narrower: the new units start from the fresh initialisation but
        feed only new units, and the heads read them with zero weights). Either way the
        network plays exactly as before until it learns to use what is new.
        """
        from craits.agents.checkpoint_agent import checkpoint_file

        if not Path(path).exists():
            raise ValueError(
                f"config init_policy: {path}: no such file (a path from where craits train runs; "
                "the champion configs fine-tune checkpoints of a source checkout: run them from "
                "its root, or pass --set init_policy=PATH, or --set init_policy= to start fresh)"
            )
        try:
            file = checkpoint_file(path)
            data = load_checkpoint(file)
            net = policy_from_checkpoint(data, file)
        except ValueError as e:
            raise ValueError(f"config init_policy: {e}") from None
        mine, theirs = self.net.spec(), net.spec()
        same = {"obs_size", "hands_out", "hidden_sizes"}
        shape = {k: v for k, v in mine.items() if k not in same}
        wider = len(mine["hidden_sizes"]) == len(theirs["hidden_sizes"]) and all(
            m >= t for m, t in zip(mine["hidden_sizes"], theirs["hidden_sizes"], strict=True)
        )
        compatible = {k: v for k, v in theirs.items() if k not in same} == shape and wider
        theirs_kind = data.get("observation", "standard")
        widen = theirs["obs_size"] == mine["obs_size"] or (
            theirs_kind in OBSERVATIONS
            and OBSERVATIONS.index(theirs_kind) < OBSERVATIONS.index(self.config.observation)
            and theirs["obs_size"] < mine["obs_size"]
        )
        if not (compatible and widen):
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
        state = self.net.state_dict()
        with torch.no_grad():
            for name, tensor in copies.items():  # into the leading block
                target = state[name]
                # The old units' weights on new inputs are zero; new units (rows past the
                # old ones, only in a wider network) keep their fresh initialisation.
                target[: tensor.shape[0]] = 0
                target[tuple(slice(0, n) for n in tensor.shape)] = tensor.to(target.device)
            self.net.load_state_dict(state)
        self.sync_actor()

    # -- checkpoints ----------------------------------------------------------------

    def checkpoint(self) -> dict[str, Any]:
        """Everything a checkpoint holds (see :mod:`craits.agents.checkpoint`)."""
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

    def load_checkpoint(self, data: dict[str, Any], path: str = "checkpoint") -> None:
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
        except (KeyError, TypeError, RuntimeError, ValueError) as e:
            raise ValueError(f"checkpoint {path}: cannot resume from it ({e})") from None
        self.sync_actor()

    def close(self) -> list[str]:
        """Release the rollouts (Ray workers); the lines they had not shown yet. The learning
        state stays usable."""
        return self.rollouts.close()
