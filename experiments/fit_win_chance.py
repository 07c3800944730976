"""Fit and check the spread of craits_env.rewards' win-chance model on tournament records.

Reads ``games.jsonl`` files of standard-rule tournaments, prints each hand's standard
deviation of one seat's points, the least-squares line over the hand sizes (what
``HAND_SD_BASE`` and ``HAND_SD_PER_CARD`` hold), and the model's log-loss and Brier score of
the realised wins after every hand, with the spread scaled by 0.6-1.4 (the committed line is
calibrated when 1.0 scores best). Usage::

    python experiments/fit_win_chance.py experiments/results/champion/vs_expert/games.jsonl \\
        experiments/results/champion/vs_pimc/games.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

from craits_env.rewards import HAND_SD_BASE, HAND_SD_PER_CARD, win_chances
from craits_env.rules import STANDARD_HAND_SIZES


def read_games(paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    """(games × hands × seats) hand points and (games × seats) win shares of standard games."""
    points, shares = [], []
    for path in paths:
        for line in path.read_text().splitlines():
            game = json.loads(line)
            if len(game["hand_points"]) != len(STANDARD_HAND_SIZES):
                raise SystemExit(f"{path}: a game of {len(game['hand_points'])} hands, not 15")
            points.append(game["hand_points"])
            share = np.zeros(len(game["scores"]))
            share[game["winners"]] = 1 / len(game["winners"])
            shares.append(share)
    return np.array(points, np.float64), np.array(shares)


def scores(points: np.ndarray, shares: np.ndarray, spreads: np.ndarray) -> tuple[float, float]:
    """Mean log-loss and Brier score of the win chances after hands 1 … 14 of every game."""
    loss = brier = 0.0
    count = 0
    for g in range(len(points)):
        totals = np.cumsum(points[g], axis=0)
        for k in range(1, len(STANDARD_HAND_SIZES)):
            spread = math.sqrt(float((spreads[k:] ** 2).sum()))
            chance = np.clip(win_chances(list(totals[k - 1]), spread), 1e-4, 1.0)
            loss -= float((shares[g] * np.log(chance)).sum())
            brier += float(((chance - shares[g]) ** 2).sum())
            count += 1
    return loss / count, brier / count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="+", type=Path, help="games.jsonl files")
    args = parser.parse_args(argv)
    points, shares = read_games(args.games)
    sizes = np.array(STANDARD_HAND_SIZES, np.float64)
    sd = points.std(axis=(0, 2))
    per_card, base = np.polyfit(sizes, sd, 1)
    print(f"{len(points)} games; standard deviation per hand (size: points):")
    print("  " + ", ".join(f"{int(s)}: {v:.1f}" for s, v in zip(sizes, sd, strict=True)))
    print(f"least squares: {base:.2f} + {per_card:.3f} x size "
          f"(committed: {HAND_SD_BASE} + {HAND_SD_PER_CARD} x size)")  # fmt: skip
    line = HAND_SD_BASE + HAND_SD_PER_CARD * sizes
    for scale in (0.6, 0.8, 1.0, 1.2, 1.4):
        loss, brier = scores(points, shares, scale * line)
        print(f"spread x {scale:.1f}: log-loss {loss:.4f}, Brier {brier:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
