"""The reward definitions: what a seat is paid for a hand and for the game.

The environment (:mod:`craits_env.craits_v0`, ``reward=``) and the trainer's
self-play (:mod:`craits.training.selfplay`) both pay these. Hand points include
shuffle-pressure penalties (R8.5).

- ``"relative"`` (default): per hand, (mean of the opponents' hand points − own
  hand points) / 100 — zero-sum;
- ``"bounded"``: per hand, ``tanh`` of the relative points / 200 — the same sign and
  order as ``"relative"``, but in (−1, 1): one catastrophic hand (a reshuffle spiral,
  an 8 left in hand) cannot dominate a batch;
- ``"score"``: per hand, −own hand points / 100;
- ``"win"``: nothing per hand; at the game's end the winners (lowest total, ties
  share) get +1/|winners| each and the others −1/|others| each; zero-sum, all 0
  if everyone ties.

Ranges per reward: ``"relative"`` and ``"score"`` are unbounded (a hand's points
have no cap: R8.5, R10.1; typical hands give −1 to +1, single steps of ~−800 seen);
``"bounded"`` lies in (−1, 1) per hand; ``"win"`` in [−1, 1], once per game.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Literal, get_args

import numpy as np

from .engine import Game

RewardMode = Literal["relative", "bounded", "score", "win"]
BOUNDED_SCALE = 200.0  # "bounded": tanh(relative points / BOUNDED_SCALE)
REWARD_MODES: tuple[str, ...] = get_args(RewardMode)


def check_reward_mode(mode: object) -> None:
    """``ValueError`` naming the allowed modes unless ``mode`` is one of :data:`REWARD_MODES`."""
    if mode not in REWARD_MODES:
        allowed = ", ".join(map(repr, REWARD_MODES))
        raise ValueError(f"reward: got {mode!r}, allowed {allowed}")


def hand_rewards(points: Sequence[int], mode: str) -> list[float]:
    """Every seat's reward for one finished hand (``points``: per seat, penalties included).

    ``"relative"``: (mean of the opponents' points − own points) / 100; ``"bounded"``:
    ``tanh`` of that difference / 200; ``"score"``:
    −own points / 100; ``"win"`` pays nothing per hand (see :func:`game_rewards`).
    """
    n = len(points)
    if mode in ("relative", "bounded"):
        total = sum(points)
        relative = [(total - own) / (n - 1) - own for own in points]
        if mode == "bounded":
            return [math.tanh(x / BOUNDED_SCALE) for x in relative]
        return [x / 100 for x in relative]
    if mode == "score":
        return [-own / 100 for own in points]
    return [0.0] * n


def win_rewards(game: Game) -> list[float]:
    """Every seat's ``"win"`` reward at the end of ``game``: the winners share +1, the others −1.

    All zero when every seat ties.
    """
    return win_shares(game.winners(), game.num_players)


def win_shares(winners: Collection[int], num_players: int) -> list[float]:
    """The ``"win"`` rewards of ``num_players`` seats of which ``winners`` won: each winner
    ``+1 / len(winners)``, each other seat ``-1 / (num_players - len(winners))``; all zero
    when every seat won (the compiled engine's twin: ``vector.step_rewards.add_win_rewards``).
    """
    won = set(winners)
    n_win = len(won)
    if n_win == num_players:
        return [0.0] * num_players
    return [1.0 / n_win if s in won else -1.0 / (num_players - n_win) for s in range(num_players)]


def game_rewards(game: Game, mode: str) -> list[float]:
    """Every seat's reward at the end of ``game``, beyond its last hand's: the ``"win"``
    rewards in that mode, zero otherwise."""
    return win_rewards(game) if mode == "win" else [0.0] * game.num_players


# The win-chance model (:func:`win_chances`): the spread of one seat's points in a hand
# of ``size`` cards, HAND_SD_BASE + HAND_SD_PER_CARD * size points — a least-squares line
# through the standard deviations per hand of 2,400 standard-rule 4-player games
# (experiments/results/champion/vs_expert and vs_pimc, games.jsonl: 27 points at one card,
# 55-68 at eight). With it the model's chances are calibrated on those games: scaling the
# spread by 0.8 or 1.2 makes their log-loss worse (experiments/fit_win_chance.py).
HAND_SD_BASE = 25.0
HAND_SD_PER_CARD = 4.2
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(40)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def spread_left(hand_sizes: Sequence[int], hands_done: int) -> float:
    """The spread (points, one seat) of the total still to come after ``hands_done`` hands:
    the root of the summed variances of the hands left (0 when none is left)."""
    left = hand_sizes[hands_done:]
    return math.sqrt(sum((HAND_SD_BASE + HAND_SD_PER_CARD * size) ** 2 for size in left))


def win_chances(scores: Sequence[int], spread: float) -> list[float]:
    """Every seat's chance to win the game (lowest total, ties share: R8.6) from its
    ``scores`` so far, when each seat's points still to come are independent normals of
    standard deviation ``spread`` (:func:`spread_left`): seat i wins when, for a standard
    normal Z_i, Z_j > Z_i + (s_i - s_j) / spread for every other seat j — integrated over
    Z_i by 40-node Gauss-Hermite quadrature. Sums to 1; with ``spread == 0``, the
    realised shares (each winner 1/|winners|, the others 0)."""
    s = np.asarray(scores, np.float64)
    n = len(s)
    if spread <= 0:
        won = (s == s.min()).astype(np.float64)
        return [float(w) for w in won / won.sum()]
    gaps = (s[:, None] - s[None, :]) / spread  # gaps[i, j] = (s_i - s_j) / spread
    # P(Z_j > z + gap) for every i, j and node z; the seat itself excluded by a factor 1.
    beat = _norm_sf(_NODES[None, None, :] + gaps[:, :, None])
    beat[np.arange(n), np.arange(n), :] = 1.0
    chance = (beat.prod(axis=1) * _WEIGHTS).sum(axis=1)
    return [float(c) for c in chance / chance.sum()]


def _norm_sf(x: np.ndarray) -> np.ndarray:
    """The standard normal's upper tail, elementwise: erfc(x / sqrt 2) / 2 by Abramowitz and
    Stegun 7.1.26 (absolute error below 1.5e-7)."""
    u = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * u)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    upper = 0.5 * poly * np.exp(-u * u)  # the tail beyond |x|
    return np.where(x >= 0, upper, 1.0 - upper)
