"""A policy network's forward pass in numpy: trunk and policy head, one input at a time.

For acting one decision at a time (agents, tournaments): a few matrix-vector products in
numpy cost a fraction of a batch-of-one torch call, and need no torch. The playing weights
(:mod:`craits.agents.playing_weights`) play through it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

ACTIVATIONS = ("tanh", "relu")  # after every hidden layer
Layer = tuple[np.ndarray, np.ndarray]  # (weight (out, in), bias (out,)), float32


def mlp_policy(
    hidden: Sequence[Layer], policy: Layer, activation: str
) -> Callable[[np.ndarray], np.ndarray]:
    """``input (n,) -> logits`` through the ``hidden`` layers (each followed by
    ``activation``) and the ``policy`` head (:meth:`craits.agents.network.PolicyNet.numpy_policy`
    plays through it too). A batch ``(rows, n) -> (rows, logits)`` goes through one matrix
    product a layer: the same values up to float32 rounding (a batch's sums run in another
    order), so a caller that must match the one-input moves exactly checks near ties."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation: got {activation!r}, allowed {list(ACTIVATIONS)}")
    layers = list(hidden)
    head_w, head_b = policy
    relu = activation == "relu"

    def logits(obs: np.ndarray) -> np.ndarray:
        x = obs
        if x.ndim == 2:
            for w, b in layers:
                x = x @ w.T + b
                x = np.maximum(x, 0, out=x) if relu else np.tanh(x, out=x)
            return x @ head_w.T + head_b
        for w, b in layers:
            x = w @ x + b
            x = np.maximum(x, 0, out=x) if relu else np.tanh(x, out=x)
        return head_w @ x + head_b

    return logits
