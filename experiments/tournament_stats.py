"""A tournament's table: per-agent statistics with bootstrap CIs, OpenSkill ratings,
the head-to-head matrix, and the JSON / CSV / Markdown / PNG outputs.

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
  score was lower than B's (ties count one half).

The PNG's title is the Markdown title without its backticks, followed by the game
(:func:`game_label`); its win-rate panel marks chance, 1/players.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from craits_env.fileio import atomic_write_bytes, atomic_write_json, atomic_write_text
from craits_env.rules import SHORT_HAND_SIZES, STANDARD_HAND_SIZES, Rules

BOOTSTRAP = 2000


def _per_deal(games: list[dict[str, Any]], specs: list[str]) -> dict[str, dict[int, np.ndarray]]:
    """Per spec and deal: sums of [appearances, wins, score, hand points, hands]."""
    acc: dict[str, dict[int, np.ndarray]] = {s: defaultdict(lambda: np.zeros(5)) for s in specs}
    for g in games:
        winners = g["winners"]
        for seat, spec in enumerate(g["specs"]):
            row = acc[spec][g["deal"]]
            row[0] += 1
            row[1] += 1 / len(winners) if seat in winners else 0.0
            row[2] += g["scores"][seat]
            row[3] += sum(h[seat] for h in g["hand_points"])
            row[4] += len(g["hand_points"])
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


def ratings(games: list[dict[str, Any]], specs: list[str]) -> dict[str, tuple[float, float]]:
    """OpenSkill Plackett–Luce (mu, sigma) per spec, games in the given order."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
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


def summarize(games: list[dict[str, Any]], specs: list[str], seed: int) -> dict[str, Any]:
    """The table of a tournament from its games (in plan order)."""
    distinct = list(dict.fromkeys(specs))
    acc = _per_deal(games, distinct)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0xB007]))
    mu_sigma = ratings(games, distinct)
    agents = []
    for spec in distinct:
        per_deal = acc[spec]
        rows = np.array([per_deal[d] for d in sorted(per_deal)]) if per_deal else np.zeros((0, 5))
        total = rows.sum(axis=0) if len(rows) else np.zeros(5)
        n = total[0]
        agents.append(
            {
                "spec": spec,
                "games": int(n),
                "deals": len(rows),
                "win_rate": float(total[1] / n) if n else float("nan"),
                "win_rate_ci": _bootstrap_ci(rows, 1, 0, rng),
                "mean_score": float(total[2] / n) if n else float("nan"),
                "mean_score_ci": _bootstrap_ci(rows, 2, 0, rng),
                "mean_hand_points": float(total[3] / total[4]) if n else float("nan"),
                "mean_hand_points_ci": _bootstrap_ci(rows, 3, 4, rng),
                "rating_mu": mu_sigma[spec][0],
                "rating_sigma": mu_sigma[spec][1],
            }
        )
    agents.sort(key=lambda a: (a["mean_score"], a["spec"]))
    return {
        "agents": agents,
        "head_to_head": head_to_head(games, distinct),
        "games": len(games),
        "decisions": int(sum(g["decisions"] for g in games)),
    }


# ----------------------------------------------------------------------------- outputs


def to_markdown(summary: dict[str, Any], title: str, command: str | None = None) -> str:
    lines = [
        f"# {title}",
        "",
        f"{summary['games']:,} games. Lower score is better; 95% bootstrap intervals over deals; "
        "ratings are OpenSkill Plackett–Luce (μ ± σ).",
        "",
        "| rank | agent | games | win rate [95% CI] | mean game score [95% CI] "
        "| mean hand points [95% CI] | rating μ | σ |",
        "|---:|---|---:|---|---|---|---:|---:|",
    ]
    for i, a in enumerate(summary["agents"], 1):
        wr, (wlo, whi) = a["win_rate"], a["win_rate_ci"]
        ms, (mlo, mhi) = a["mean_score"], a["mean_score_ci"]
        hp, (hlo, hhi) = a["mean_hand_points"], a["mean_hand_points_ci"]
        lines.append(
            f"| {i} | `{a['spec']}` | {a['games']:,} | {wr:.3f} [{wlo:.3f}, {whi:.3f}] "
            f"| {ms:.1f} [{mlo:.1f}, {mhi:.1f}] | {hp:.2f} [{hlo:.2f}, {hhi:.2f}] "
            f"| {a['rating_mu']:.2f} | {a['rating_sigma']:.2f} |"
        )
    specs = [a["spec"] for a in summary["agents"]]
    h2h = summary["head_to_head"]
    if len(specs) > 1:
        lines += [
            "",
            "Head to head: share of shared games in which the row agent scored lower than the "
            "column agent (ties count ½).",
            "",
            "| | " + " | ".join(f"`{s}`" for s in specs) + " |",
            "|---|" + "---:|" * len(specs),
        ]
        for a in specs:
            cells = [f"{h2h.get(a, {}).get(b, float('nan')):.3f}" if a != b else "—" for b in specs]
            lines.append(f"| `{a}` | " + " | ".join(cells) + " |")
    if command:
        lines += ["", f"Reproduce: `{command}`"]
    return "\n".join(lines) + "\n"


def to_csv(summary: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["spec", "games", "win_rate", "win_rate_lo", "win_rate_hi", "mean_score",
                "mean_score_lo", "mean_score_hi", "mean_hand_points", "mean_hand_points_lo",
                "mean_hand_points_hi", "rating_mu", "rating_sigma"])  # fmt: skip
    for a in summary["agents"]:
        w.writerow([a["spec"], a["games"], a["win_rate"], *a["win_rate_ci"], a["mean_score"],
                    *a["mean_score_ci"], a["mean_hand_points"], *a["mean_hand_points_ci"],
                    a["rating_mu"], a["rating_sigma"]])  # fmt: skip
    return buf.getvalue()


def game_label(rules: Rules, players: int) -> str:
    """Which game a chart shows: ``standard game, 4 players``, ``short game, 3 players``,
    or another schedule by its hands (``4-hand game (5-2-1-3), 2 players``) (R2.2)."""
    sizes = rules.hand_sizes
    if sizes == STANDARD_HAND_SIZES:
        game = "standard game"
    elif sizes == SHORT_HAND_SIZES:
        game = "short game"
    else:
        game = f"{len(sizes)}-hand game ({'-'.join(map(str, sizes))})"
    return f"{game}, {players} players"


def chart_title(title: str, rules: Rules, players: int) -> str:
    """A chart's title: ``title`` without Markdown backticks, then the game."""
    return f"{title.replace('`', '')} — {game_label(rules, players)}"


def to_png(summary: dict[str, Any], title: str, players: int, rules: Rules) -> bytes:
    """The table as a PNG (:func:`tournament_figure`)."""
    return figure_png(tournament_figure(summary, title, players, rules), dpi=110)


def tournament_figure(summary: dict[str, Any], title: str, players: int, rules: Rules) -> Any:
    """Mean game score and win rate per agent with their 95% intervals, chance (1/players)
    marked on the win rates; titled by :func:`chart_title`. A matplotlib figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agents = summary["agents"]
    names = [a["spec"] for a in agents]
    y = np.arange(len(agents))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 1.2 + 0.5 * len(agents)), sharey=True)
    for ax, key, label in ((ax1, "mean_score", "mean game score (lower is better)"),
                           (ax2, "win_rate", "win rate")):  # fmt: skip
        values = np.array([a[key] for a in agents])
        ci = np.array([a[f"{key}_ci"] for a in agents])
        err = np.abs(ci.T - values)
        ax.barh(y, values, xerr=err, color="#4477aa", capsize=4)
        ax.set_xlabel(label + " — 95% CI")
        ax.grid(axis="x", alpha=0.3)
    # The bars lie along x, so chance is an upright line at x = 1/players.
    ax2.axvline(1 / players, color="grey", linestyle="--", label=f"chance (1/{players})")
    ax2.legend(loc="lower right")
    ax1.set_yticks(y, names)
    ax1.invert_yaxis()
    fig.suptitle(chart_title(title, rules, players))
    return fig


def figure_png(fig: Any, dpi: int) -> bytes:
    """A matplotlib figure, laid out, as PNG bytes (then closed), for an atomic write."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    return buf.getvalue()


def write_outputs(
    summary: dict[str, Any], config: dict[str, Any], out: Path, title: str, command: str
) -> None:
    """``results.json``, ``results.csv``, ``results.md`` and ``results.png``, each atomically;
    ``config`` is the tournament's (``TournamentConfig.to_dict()``: players and rules)."""
    rules = Rules.from_dict(config.get("rules", {}))
    atomic_write_json(out / "results.json", {"config": config, "command": command, **summary})
    atomic_write_text(out / "results.csv", to_csv(summary))
    atomic_write_text(out / "results.md", to_markdown(summary, title, command))
    atomic_write_bytes(out / "results.png", to_png(summary, title, config["players"], rules))
