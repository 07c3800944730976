"""The policy-value network: an MLP trunk shared by a policy head and a value head.

One network plays every seat (the observation is always from the acting
seat's point of view).

With ``hands_out > 0`` a third head on the trunk predicts the opponents' hands
(one logit per opponent and card, :meth:`PolicyNet.with_hands`): an auxiliary task of
training (``hands_coef``) that shapes what the trunk computes; playing never uses it.

Its architecture is a small JSON-serialisable dict (:meth:`PolicyNet.spec`) stored
in every checkpoint, so that a checkpoint rebuilds its own network
(:meth:`PolicyNet.from_spec`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import torch
from torch import nn

from craits_env.actions import NUM_ACTIONS

from .mlp_numpy import mlp_policy

Activation = Literal["tanh", "relu"]
ACTIVATIONS: dict[str, type[nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU}  # by Activation
# Spec keys of network parts removed in 0.3.0 (a critic trunk of its own; oracle guiding's
# inputs): the research code that used them last lived at this commit.
REMOVED_PARTS = ("critic_extra", "oracle_inputs")
LAST_COMMIT = "9f11649"


def _init(layer: nn.Linear, gain: float) -> nn.Linear:
    """Orthogonal weights with ``gain``, zero bias (the PPO implementation details' choice)."""
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


class PolicyNet(nn.Module):
    """``obs (batch, obs_size) -> (logits (batch, 59), value (batch,))``.

    Hidden layers ``hidden_sizes`` with ``activation`` (orthogonal init, gain
    √2); the policy head's gain is 0.01 (a near-uniform first policy), the value
    head's 1. ``init=False`` skips the (QR-costly) orthogonal init, for a network
    whose weights are loaded next.
    """

    def __init__(
        self,
        obs_size: int,
        hidden_sizes: Sequence[int] = (256, 256),
        activation: str = "tanh",
        num_actions: int = NUM_ACTIONS,
        *,
        hands_out: int = 0,
        init: bool = True,
    ) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation: got {activation!r}, allowed {sorted(ACTIVATIONS)}")
        self.obs_size = int(obs_size)
        self.hidden_sizes = tuple(int(h) for h in hidden_sizes)
        self.activation = activation
        self.num_actions = int(num_actions)
        if hands_out < 0:
            raise ValueError(f"hands_out: got {hands_out}, allowed 0 or more")
        self.hands_out = int(hands_out)
        self.trunk = self._mlp(self.obs_size)
        width = self.hidden_sizes[-1] if self.hidden_sizes else self.obs_size
        self.policy = nn.Linear(width, self.num_actions)
        self.value = nn.Linear(width, 1)
        self.hands = nn.Linear(width, self.hands_out) if self.hands_out else None
        if init:
            for layer in self.trunk:
                if isinstance(layer, nn.Linear):
                    _init(layer, math.sqrt(2))
            _init(self.policy, 0.01)
            _init(self.value, 1.0)
            if self.hands is not None:  # near-zero logits: every card at 1/2 to start
                _init(self.hands, 0.01)

    def _mlp(self, width: int) -> nn.Sequential:
        layers: list[nn.Module] = []
        for h in self.hidden_sizes:
            layers += [nn.Linear(width, h), ACTIVATIONS[self.activation]()]
            width = h
        return nn.Sequential(*layers)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.trunk(obs)
        return self.policy(x), self.value(x).squeeze(-1)

    def with_hands(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``forward`` and the hands head's logits ``(batch, hands_out)`` from one trunk pass
        (a network built with ``hands_out > 0``)."""
        if self.hands is None:
            raise ValueError("with_hands: this network has no hands head (hands_out = 0)")
        x = self.trunk(obs)
        return self.policy(x), self.value(x).squeeze(-1), self.hands(x)

    def logits(self, obs: torch.Tensor) -> torch.Tensor:
        """The policy head alone (no value): for acting and imitation."""
        return self.policy(self.trunk(obs))

    def numpy_policy(self) -> Callable[[np.ndarray], np.ndarray]:
        """The policy head as a numpy function ``obs (obs_size,) -> logits (59,)``.

        For acting one decision at a time (agents, tournaments): a few matrix-vector
        products in numpy cost a fraction of a batch-of-one torch call.
        """
        layers = [
            (m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy())
            for m in self.trunk
            if isinstance(m, nn.Linear)
        ]
        head = (
            self.policy.weight.detach().cpu().numpy().copy(),
            self.policy.bias.detach().cpu().numpy().copy(),
        )
        return mlp_policy(layers, head, self.activation)

    def spec(self) -> dict[str, Any]:
        """The architecture, JSON-serialisable (stored in checkpoints; ``hands_out`` only
        with a hands head, so older specs read as before)."""
        spec: dict[str, Any] = {
            "obs_size": self.obs_size,
            "hidden_sizes": list(self.hidden_sizes),
            "activation": self.activation,
            "num_actions": self.num_actions,
        }
        if self.hands_out:
            spec["hands_out"] = self.hands_out
        return spec

    @classmethod
    def from_spec(cls, spec: dict[str, Any], *, init: bool = False) -> PolicyNet:
        """A network of this architecture; uninitialised unless ``init`` (weights load next).

        ``ValueError`` (one line) for a spec of a network part removed in 0.3.0 (an oracle or
        perfect critic's ``critic_extra``, oracle guiding's ``oracle_inputs``)."""
        for key in REMOVED_PARTS:
            if spec.get(key):
                raise ValueError(
                    f"network {key}={spec[key]}: this part was removed in craits 0.3.0 (the "
                    f"code that trains and plays it last lived at commit {LAST_COMMIT})"
                )
        return cls(
            obs_size=spec["obs_size"],
            hidden_sizes=spec["hidden_sizes"],
            activation=spec["activation"],
            num_actions=spec["num_actions"],
            hands_out=spec.get("hands_out", 0),
            init=init,
        )


def frozen_network(
    spec: dict[str, Any], weights: Mapping[str, torch.Tensor] | None = None
) -> PolicyNet:
    """A network of ``spec`` for acting only — on the CPU, no gradients, in eval mode — holding
    a copy of ``weights`` (a ``state_dict``, on any device; ``None``: loaded later with
    ``load_state_dict``). Every frozen copy of the network is made here: a checkpoint's policy,
    the opponent pool's snapshots, the rollouts' actor.

    ``load_state_dict``'s errors (``RuntimeError``, ``KeyError``) when ``weights`` do not fit."""
    net = PolicyNet.from_spec(spec)
    if weights is not None:
        net.load_state_dict(weights)
    return net.requires_grad_(False).eval()
