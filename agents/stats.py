"""A tournament's table: per-agent statistics with bootstrap CIs, OpenSkill ratings and
the head-to-head matrix (its files: :mod:`craits.agents.report`).

Definitions (per distinct spec, over every seat it held in every game):

- ``win_rate``: a game won alone counts 1, a win shared by k players 1/k (R8.6);
- ``mean_score``: the final game score (lower is better);
- ``mean_hand_points``: points per hand;
- 95% confidence intervals: percentile bootstrap over *deals* (every rotation
  and line-up of a resampled deal comes with it), 2,000 resamples, seeded;
- ``rating_mu`` / ``rating_sigma``: OpenSkill Plackett–Luce, games processed in
  plan order, every seat a team ranked by final score (ties share a rank); a
  spec seated more than once in a game gets the mean of its seats' updates;
- head-to-head: over games where A and B both sat, the share in which A's
  score was lower than B's (ties count one half);
- ``adjusted_mean_score`` (given each game's luck corrections, :mod:`craits.agents.luck`):
  the mean of the final game score less the seat's corrections — the same expectation as
  ``mean_score``, as narrow an interval as the value model makes it; from the same resamples as
  ``mean_score_ci``.

The agents are ranked by ``mean_score``, lowest first (ties by spec): the game's own
criterion (R8.6), which can put an agent above one with a higher win rate.
"""

from __future__ import annotations

import copy
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from craits_env.seeding import derive_rng

BOOTSTRAP = 2000


def _per_deal(
    games: list[dict[str, Any]], specs: list[str], luck: Mapping[str, Sequence[float]] | None = None
) -> dict[str, dict[int, np.ndarray]]:
    """Per spec and deal: sums of [appearances, wins, score, hand points, hands, adjusted
    score] (the last one with ``luck``: each game's corrections by key, per seat)."""
    acc: dict[str, dict[int, np.ndarray]] = {s: defaultdict(lambda: np.zeros(6)) for s in specs}
    for g in games:
        winners = g["winners"]
        corrections = luck[g["key"]] if luck is not None else None
        for seat, spec in enumerate(g["specs"]):
            row = acc[spec][g["deal"]]
            row[0] += 1
            row[1] += 1 / len(winners) if seat in winners else 0.0
            row[2] += g["scores"][seat]
            row[3] += sum(h[seat] for h in g["hand_points"])
            row[4] += len(g["hand_points"])
            if corrections is not None:
                row[5] += g["scores"][seat] - corrections[seat]
    return acc


def _bootstrap_ci(rows: np.ndarray, num: int, den: int, rng: np.random.Generator) -> list[float]:
    """95% percentile interval of sum(rows[:, num]) / sum(rows[:, den]) over resampled deals."""
    k = len(rows)
    if k == 0:
        return [float("nan"), float("nan")]
    idx = rng.integers(0, k, size=(BOOTSTRAP, k))
    sums = rows[idx].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        stats = sums[:, num] / sums[:, den]
    lo, hi = np.nanpercentile(stats, [2.5, 97.5])
    return [float(lo), float(hi)]


def ratings(
    games: list[dict[str, Any]], specs: list[str], tau: float | None = None
) -> dict[str, tuple[float, float]]:
    """OpenSkill Plackett–Luce (mu, sigma) per spec, games in the given order; ``tau`` the
    model's dynamics (``None``: OpenSkill's default, skills that drift; 0: fixed skills)."""
    from openskill.models import PlackettLuce

    model = PlackettLuce() if tau is None else PlackettLuce(tau=tau)
    current = {s: model.rating(name=s) for s in specs}
    for g in games:
        seats = g["specs"]
        scores = g["scores"]
        order = sorted(set(scores))
        ranks = [float(order.index(v) + 1) for v in scores]
        teams = [[current[s]] for s in seats]
        new = model.rate(teams, ranks=ranks)
        updates: dict[str, list[Any]] = defaultdict(list)
        for s, team in zip(seats, new, strict=True):
            updates[s].append(team[0])
        for s, rs in updates.items():
            current[s] = model.rating(
                mu=float(np.mean([r.mu for r in rs])),
                sigma=float(np.mean([r.sigma for r in rs])),
                name=s,
            )
    return {s: (float(r.mu), float(r.sigma)) for s, r in current.items()}


def head_to_head(games: list[dict[str, Any]], specs: list[str]) -> dict[str, dict[str, float]]:
    """For each pair, the share of shared games in which the row spec scored lower."""
    wins: dict[tuple[str, str], float] = defaultdict(float)
    meets: dict[tuple[str, str], int] = defaultdict(int)
    for g in games:
        seats, scores = g["specs"], g["scores"]
        for i, a in enumerate(seats):
            for j, b in enumerate(seats):
                if i == j or a == b:
                    continue
                meets[a, b] += 1
                wins[a, b] += 1.0 if scores[i] < scores[j] else 0.5 if scores[i] == scores[j] else 0
    return {
        a: {b: round(wins[a, b] / meets[a, b], 4) for b in specs if (a, b) in meets} for a in specs
    }


def summarize(
    games: list[dict[str, Any]],
    specs: list[str],
    seed: int,
    luck: Mapping[str, Sequence[float]] | None = None,
) -> dict[str, Any]:
    """The table of a tournament from its games (in plan order); with ``luck`` (every game's
    corrections by key, :func:`craits.agents.luck_tournament.tournament_luck`) each agent's
    row also has ``adjusted_mean_score`` and ``adjusted_mean_score_ci``."""
    distinct = list(dict.fromkeys(specs))
    acc = _per_deal(games, distinct, luck)
    rng = derive_rng(seed, 0xB007)
    mu_sigma = ratings(games, distinct)
    agents = []
    for spec in distinct:
        per_deal = acc[spec]
        rows = np.array([per_deal[d] for d in sorted(per_deal)]) if per_deal else np.zeros((0, 6))
        total = rows.sum(axis=0) if len(rows) else np.zeros(6)
        n = total[0]
        win_rate_ci = _bootstrap_ci(rows, 1, 0, rng)
        resamples = copy.deepcopy(rng.bit_generator.state)  # the adjusted score's: the same
        mean_score_ci = _bootstrap_ci(rows, 2, 0, rng)
        row: dict[str, Any] = {
            "spec": spec,
            "games": int(n),
            "deals": len(rows),
            "win_rate": float(total[1] / n) if n else float("nan"),
            "win_rate_ci": win_rate_ci,
            "mean_score": float(total[2] / n) if n else float("nan"),
            "mean_score_ci": mean_score_ci,
            "mean_hand_points": float(total[3] / total[4]) if n else float("nan"),
            "mean_hand_points_ci": _bootstrap_ci(rows, 3, 4, rng),
            "rating_mu": mu_sigma[spec][0],
            "rating_sigma": mu_sigma[spec][1],
        }
        if luck is not None:
            twin = np.random.default_rng()
            twin.bit_generator.state = resamples
            row["adjusted_mean_score"] = float(total[5] / n) if n else float("nan")
            row["adjusted_mean_score_ci"] = _bootstrap_ci(rows, 5, 0, twin)
        agents.append(row)
    agents.sort(key=lambda a: (a["mean_score"], a["spec"]))
    return {
        "agents": agents,
        "head_to_head": head_to_head(games, distinct),
        "games": len(games),
        "decisions": int(sum(g["decisions"] for g in games)),
    }


def wilson_interval(successes: float, n: int, z: float = 1.96) -> list[float]:
    """The Wilson score interval of a proportion (95% by default); ``[0, 1]`` for ``n == 0``.

    >>> [round(x, 3) for x in wilson_interval(50, 100)]
    [0.404, 0.596]
    """
    if n == 0:
        return [0.0, 1.0]
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [centre - half, centre + half]
