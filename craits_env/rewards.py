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
