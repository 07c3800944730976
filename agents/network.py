"""The policy-value network: an MLP trunk shared by a policy head and a value head.

One network plays every seat (the observation is always from the acting
seat's point of view). With ``critic_extra > 0`` the value head has a trunk of its
own that reads the observation *and* ``critic_extra`` more inputs — privileged
information that only training has, such as the opponents' hands
(:mod:`craits_env.oracle`; PerfectDou's perfect-information critic): the policy
never sees them, so the network plays exactly as one with a shared trunk does.

With ``hands_out > 0`` a third head on the policy's trunk predicts the opponents' hands
(one logit per opponent and card, :meth:`PolicyNet.with_hands`): an auxiliary task of
training (``hands_coef``) that shapes what the trunk computes; playing never uses it.

With ``oracle_inputs > 0`` (Suphx's oracle guiding, ``oracle_guiding`` in training) the
last ``oracle_inputs`` of the ``obs_size`` inputs are the opponents' hands, which training
shows the policy for a while and playing never does: a player's input is the first
:attr:`PolicyNet.play_size` inputs, and the network reads the rest as 0
(:meth:`PolicyNet.numpy_policy` drops their weights).

Its architecture is a small JSON-serialisable dict (:meth:`PolicyNet.spec`) stored
in every checkpoint, so that a checkpoint rebuilds its own network
(:meth:`PolicyNet.from_spec`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import torch
from torch import nn

from craits_env.actions import NUM_ACTIONS

Activation = Literal["tanh", "relu"]
ACTIVATIONS: dict[str, type[nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU}  # by Activation


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

    ``critic_extra > 0``: a separate critic trunk (the same hidden sizes) reads
    ``obs`` followed by ``critic_obs (batch, critic_extra)``; ``forward(obs)`` without
    it (an opponent's or a player's forward pass, where only the logits matter) gives
    the value with those inputs at zero.
    """

    def __init__(
        self,
        obs_size: int,
        hidden_sizes: Sequence[int] = (256, 256),
        activation: str = "tanh",
        num_actions: int = NUM_ACTIONS,
        *,
        critic_extra: int = 0,
        hands_out: int = 0,
        oracle_inputs: int = 0,
        init: bool = True,
    ) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation: got {activation!r}, allowed {sorted(ACTIVATIONS)}")
        self.obs_size = int(obs_size)
        self.hidden_sizes = tuple(int(h) for h in hidden_sizes)
        self.activation = activation
        self.num_actions = int(num_actions)
        if critic_extra < 0:
            raise ValueError(f"critic_extra: got {critic_extra}, allowed 0 or more")
        self.critic_extra = int(critic_extra)
        if hands_out < 0:
            raise ValueError(f"hands_out: got {hands_out}, allowed 0 or more")
        self.hands_out = int(hands_out)
        if not 0 <= oracle_inputs < max(1, self.obs_size):
            raise ValueError(
                f"oracle_inputs: got {oracle_inputs}, allowed 0 to {self.obs_size - 1} "
                "(fewer than obs_size)"
            )
        self.oracle_inputs = int(oracle_inputs)
        self.trunk = self._mlp(self.obs_size)
        width = self.hidden_sizes[-1] if self.hidden_sizes else self.obs_size
        self.critic = self._mlp(self.obs_size + self.critic_extra) if self.critic_extra else None
        self.policy = nn.Linear(width, self.num_actions)
        self.value = nn.Linear(width, 1)
        self.hands = nn.Linear(width, self.hands_out) if self.hands_out else None
        if init:
            for trunk in (self.trunk, self.critic):
                for layer in trunk or ():
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

    @property
    def play_size(self) -> int:
        """The length of a player's input: ``obs_size`` less the oracle guiding's inputs."""
        return self.obs_size - self.oracle_inputs

    def _full(self, obs: torch.Tensor) -> torch.Tensor:
        """``obs`` with the oracle guiding's inputs at 0 appended when it has only the
        player's part (:attr:`play_size` columns)."""
        if self.oracle_inputs and obs.shape[-1] == self.play_size:
            return torch.cat([obs, obs.new_zeros((*obs.shape[:-1], self.oracle_inputs))], -1)
        return obs

    def forward(
        self, obs: torch.Tensor, critic_obs: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        obs = self._full(obs)
        x = self.trunk(obs)
        return self.policy(x), self._value(obs, x, critic_obs)

    def _value(
        self, obs: torch.Tensor, x: torch.Tensor, critic_obs: torch.Tensor | None
    ) -> torch.Tensor:
        """The value from the policy's trunk output ``x``, or the critic's own trunk."""
        if self.critic is None:
            return self.value(x).squeeze(-1)
        if critic_obs is None:
            critic_obs = obs.new_zeros((*obs.shape[:-1], self.critic_extra))
        return self.value(self.critic(torch.cat([obs, critic_obs], dim=-1))).squeeze(-1)

    def with_hands(
        self, obs: torch.Tensor, critic_obs: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``forward`` and the hands head's logits ``(batch, hands_out)`` from one trunk pass
        (a network built with ``hands_out > 0``)."""
        if self.hands is None:
            raise ValueError("with_hands: this network has no hands head (hands_out = 0)")
        obs = self._full(obs)
        x = self.trunk(obs)
        return self.policy(x), self._value(obs, x, critic_obs), self.hands(x)

    def logits(self, obs: torch.Tensor) -> torch.Tensor:
        """The policy head alone (no value, no critic trunk): for acting and imitation."""
        return self.policy(self.trunk(self._full(obs)))

    def numpy_policy(self) -> Callable[[np.ndarray], np.ndarray]:
        """The policy head as a numpy function ``obs (play_size,) -> logits (59,)``.

        For acting one decision at a time (agents, tournaments): a few matrix-vector
        products in numpy cost a fraction of a batch-of-one torch call. The oracle
        guiding's inputs (``oracle_inputs``) are 0 when playing: their weights are dropped.
        """
        layers = [(m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy())
                  for m in self.trunk if isinstance(m, nn.Linear)]  # fmt: skip
        head_w = self.policy.weight.detach().cpu().numpy().copy()
        play = self.play_size
        if layers:
            layers[0] = (np.ascontiguousarray(layers[0][0][:, :play]), layers[0][1])
        else:
            head_w = np.ascontiguousarray(head_w[:, :play])
        head_b = self.policy.bias.detach().cpu().numpy().copy()
        relu = self.activation == "relu"

        def logits(obs: np.ndarray) -> np.ndarray:
            x = obs
            for w, b in layers:
                x = w @ x + b
                x = np.maximum(x, 0, out=x) if relu else np.tanh(x, out=x)
            return head_w @ x + head_b

        return logits

    def spec(self) -> dict[str, Any]:
        """The architecture, JSON-serialisable (stored in checkpoints; ``critic_extra``
        only when there is a separate critic, ``hands_out`` only with a hands head,
        ``oracle_inputs`` only with oracle guiding, so older specs read as before)."""
        spec: dict[str, Any] = {
            "obs_size": self.obs_size,
            "hidden_sizes": list(self.hidden_sizes),
            "activation": self.activation,
            "num_actions": self.num_actions,
        }
        if self.critic_extra:
            spec["critic_extra"] = self.critic_extra
        if self.hands_out:
            spec["hands_out"] = self.hands_out
        if self.oracle_inputs:
            spec["oracle_inputs"] = self.oracle_inputs
        return spec

    @classmethod
    def from_spec(cls, spec: dict[str, Any], *, init: bool = False) -> PolicyNet:
        """A network of this architecture; uninitialised unless ``init`` (weights load next)."""
        return cls(
            obs_size=spec["obs_size"],
            hidden_sizes=spec["hidden_sizes"],
            activation=spec["activation"],
            num_actions=spec["num_actions"],
            critic_extra=spec.get("critic_extra", 0),
            hands_out=spec.get("hands_out", 0),
            oracle_inputs=spec.get("oracle_inputs", 0),
            init=init,
        )
