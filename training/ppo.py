"""The mathematics of masked PPO: the masked distribution, GAE and the clipped loss.

Everything here is a small pure function (or a tiny class) that the tests
import; the update in :func:`craits.training.train.update` only calls them.

* :func:`masked_logits` / :class:`MaskedCategorical` — invalid-action masking
  as in Huang & Ontañón, "A Closer Look at Invalid Action Masking in Policy
  Gradient Algorithms" (2022): illegal logits are replaced by the most negative
  float before the softmax, so an illegal action has probability exactly 0, is
  never sampled, and gets no gradient; the entropy sums over legal actions only.
* :func:`gae` — generalized advantage estimation on one time-major stream;
  :func:`gae_linked` — the same on a flat buffer in which several streams are
  interleaved and linked by ``next_index`` (the self-play rollout's layout).
* :func:`ppo_loss` — the clipped surrogate, the (optionally clipped) value
  loss, the entropy bonus, and the diagnostics ``approx_kl`` and ``clipfrac``;
* :func:`annealed_learning_rate` — the step size, annealed linearly to 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits`` with every illegal entry (``mask`` false or 0) set to the dtype's minimum.

    The minimum, unlike ``-inf``, keeps every softmax and log-softmax finite
    (a row is never all ``-inf``), while ``exp`` of it relative to any legal
    logit underflows to exactly 0.
    """
    return logits.masked_fill(~mask.bool(), torch.finfo(logits.dtype).min)


class MaskedCategorical:
    """A categorical distribution over the legal actions of each row.

    ``logits``: ``(batch, actions)``; ``mask``: the same shape, true (or 1) for
    a legal action; every row needs at least one legal action.
    """

    def __init__(self, logits: torch.Tensor, mask: torch.Tensor) -> None:
        self.mask = mask.bool()
        self.logits = masked_logits(logits, self.mask)
        self.log_probs = torch.log_softmax(self.logits, dim=-1)
        self._probs: torch.Tensor | None = None

    @property
    def probs(self) -> torch.Tensor:
        """Probabilities; exactly 0 for illegal actions."""
        if self._probs is None:
            self._probs = torch.where(self.mask, torch.softmax(self.logits, dim=-1), 0.0)
        return self._probs

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        """One action per row, drawn with ``generator``; an illegal action never comes out.

        Inverse CDF: the first action whose cumulative probability reaches
        ``u ∈ (0, total]``. An action of probability 0 adds nothing to the
        cumulative sum, so it is never the first to reach ``u > 0``. (Several
        times faster than ``torch.multinomial`` on small rows.)
        """
        cdf = self.probs.cumsum(dim=-1)
        u = torch.rand((*cdf.shape[:-1], 1), generator=generator, dtype=cdf.dtype)
        u = (1.0 - u.to(cdf.device)) * cdf[..., -1:]
        return torch.searchsorted(cdf, u).squeeze(-1)

    def mode(self) -> torch.Tensor:
        """The most probable legal action of each row (ties: the lowest id)."""
        return self.logits.argmax(dim=-1)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        """Log-probability of ``actions`` (one id per row)."""
        return self.log_probs.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        """Entropy of each row over its legal actions only (illegal terms are 0, not 0·min)."""
        terms = torch.where(self.mask, self.probs * self.log_probs, 0.0)
        return -terms.sum(dim=-1)


def gae(
    rewards: np.ndarray,
    values: np.ndarray,
    dones: np.ndarray,
    last_value: np.ndarray | float,
    gamma: float,
    lam: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Advantages and returns of a time-major rollout ``(T,)`` or ``(T, envs)``.

    ``rewards[t]`` is paid after the action at step ``t``; ``dones[t]`` is true
    when the episode ended after step ``t`` (then nothing is bootstrapped across
    it); ``last_value`` is the value of the state after the last step::

        delta[t] = rewards[t] + gamma * (1 - dones[t]) * V[t + 1] - V[t]
        A[t]     = delta[t] + gamma * lam * (1 - dones[t]) * A[t + 1]

    with ``V[T] = last_value`` and ``A[T] = 0``. Returns ``(A, A + V)``.
    """
    rewards = np.asarray(rewards, np.float64)
    values = np.asarray(values, np.float64)
    not_done = 1.0 - np.asarray(dones, np.float64)
    adv = np.zeros_like(rewards)
    next_value = np.asarray(last_value, np.float64) * np.ones_like(rewards[0])
    next_adv = np.zeros_like(rewards[0])
    for t in range(len(rewards) - 1, -1, -1):
        delta = rewards[t] + gamma * not_done[t] * next_value - values[t]
        next_adv = delta + gamma * lam * not_done[t] * next_adv
        adv[t] = next_adv
        next_value = values[t]
    return adv.astype(np.float32), (adv + values).astype(np.float32)


def gae_linked(
    rewards: np.ndarray,
    values: np.ndarray,
    dones: np.ndarray,
    next_index: np.ndarray,
    gamma: float,
    lam: float,
    bootstrap_only: np.ndarray | None = None,
) -> np.ndarray:
    """Advantages on a flat buffer of interleaved streams (each seat of each game is one).

    ``next_index[i]`` is the index of the same stream's next transition
    (always greater than ``i``), or -1 when there is none (then ``dones[i]``
    must be true: the game ended after it). A transition marked
    ``bootstrap_only`` is the horizon of its stream: its value bootstraps its
    predecessor, its own advantage is not computed (0) and not propagated — the
    truncation :func:`gae` applies at ``T``. On a single stream this is exactly
    :func:`gae` with ``last_value`` the value of the bootstrap transition.
    """
    n = len(rewards)
    rewards = np.asarray(rewards, np.float64)
    values = np.asarray(values, np.float64)
    adv = np.zeros(n, np.float64)
    stop = np.zeros(n, bool) if bootstrap_only is None else np.asarray(bootstrap_only, bool)
    g, gl = gamma, gamma * lam
    # Lists: scalar indexing of Python lists is several times faster than of arrays.
    r, v, d, nx, st = rewards.tolist(), values.tolist(), dones.tolist(), next_index.tolist(), stop
    a = [0.0] * n
    for i in range(n - 1, -1, -1):
        if st[i]:
            continue
        j = nx[i]
        if d[i]:
            a[i] = r[i] - v[i]
        elif j < 0:
            raise ValueError(f"transition {i} has no successor and is not done")
        else:
            a[i] = r[i] + g * v[j] - v[i] + (0.0 if st[j] else gl * a[j])
    adv[:] = a
    return adv.astype(np.float32)


def explained_variance(predicted: np.ndarray, target: np.ndarray) -> float:
    """``1 - Var(target - predicted) / Var(target)``; NaN when the target is constant."""
    var = float(np.var(target))
    return float("nan") if var == 0 else 1.0 - float(np.var(target - predicted)) / var


def normalize(x: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """``(x - mean) / (std + eps)``; a single element becomes 0."""
    if x.numel() < 2:
        return torch.zeros_like(x)
    return (x - x.mean()) / (x.std() + eps)


@dataclass
class PPOLoss:
    """The total loss to minimise and its parts (detached diagnostics as floats)."""

    loss: torch.Tensor
    policy_loss: float
    value_loss: float
    entropy: float
    approx_kl: float
    clipfrac: float


def ppo_loss(
    *,
    new_log_prob: torch.Tensor,
    old_log_prob: torch.Tensor,
    advantages: torch.Tensor,
    entropy: torch.Tensor,
    new_value: torch.Tensor,
    old_value: torch.Tensor,
    returns: torch.Tensor,
    clip_coef: float,
    clip_vloss: bool,
    ent_coef: float,
    vf_coef: float,
) -> PPOLoss:
    """PPO's clipped objective (Schulman et al. 2017) as CleanRL computes it.

    * policy: ``mean(max(-A·ratio, -A·clip(ratio, 1 ± clip_coef)))``;
    * value: ``0.5·mean((V - R)²)``, or with ``clip_vloss`` the larger of that and
      the error of ``V_old + clip(V - V_old, ± clip_coef)``;
    * ``loss = policy - ent_coef·entropy + vf_coef·value``;
    * ``approx_kl = mean((ratio - 1) - log ratio)`` (Schulman's low-variance
      estimator), ``clipfrac`` = share of ratios outside ``1 ± clip_coef``.
    """
    log_ratio = new_log_prob - old_log_prob
    ratio = log_ratio.exp()
    pg1 = -advantages * ratio
    pg2 = -advantages * ratio.clamp(1 - clip_coef, 1 + clip_coef)
    policy_loss = torch.max(pg1, pg2).mean()
    if clip_vloss:
        unclipped = (new_value - returns) ** 2
        clipped_value = old_value + (new_value - old_value).clamp(-clip_coef, clip_coef)
        value_loss = 0.5 * torch.max(unclipped, (clipped_value - returns) ** 2).mean()
    else:
        value_loss = 0.5 * ((new_value - returns) ** 2).mean()
    entropy_mean = entropy.mean()
    loss = policy_loss - ent_coef * entropy_mean + vf_coef * value_loss
    with torch.no_grad():
        approx_kl = ((ratio - 1) - log_ratio).mean().item()
        clipfrac = ((ratio - 1).abs() > clip_coef).float().mean().item()
    return PPOLoss(
        loss=loss,
        policy_loss=policy_loss.item(),
        value_loss=value_loss.item(),
        entropy=entropy_mean.item(),
        approx_kl=approx_kl,
        clipfrac=clipfrac,
    )


def annealed_learning_rate(
    learning_rate: float, start_step: int, end_step: int, total_steps: int
) -> float:
    """The step size of the update of the batch collected from ``start_step`` to ``end_step``.

    Annealed linearly by the steps taken *before* that batch (as CleanRL's
    ``1 - (update - 1) / num_updates``), and never below the batch's share of
    ``total_steps``: the last update, even of a run that overshoots ``total_steps``,
    still learns (its rate is about ``learning_rate / number of updates``, never 0).
    """
    batch = max(1, end_step - start_step)
    frac = max(1.0 - start_step / total_steps, batch / total_steps)
    return learning_rate * min(1.0, frac)
