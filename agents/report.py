"""A tournament's files: ``results.json``, ``.csv``, ``.md`` and ``.png``, written atomically.

The agents are ranked by mean game score, lowest first (the game's own criterion, R8.6;
:func:`craits.agents.stats.summarize` sorts them), and the table's caption and rank column
say so: an agent can rank above one with a higher win rate.

The PNG's title is the Markdown title without its backticks, followed by the game
(:func:`game_label`); its win-rate panel marks chance, 1/players.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import numpy as np

from craits_env.fileio import atomic_write_bytes, atomic_write_json, atomic_write_text
from craits_env.rules import SHORT_HAND_SIZES, STANDARD_HAND_SIZES, Rules


def adjusted(summary: dict[str, Any]) -> bool:
    """Whether the table has the luck-adjusted mean scores (:mod:`craits.agents.luck`)."""
    return bool(summary["agents"]) and all("adjusted_mean_score" in a for a in summary["agents"])


def to_markdown(summary: dict[str, Any], title: str, command: str | None = None) -> str:
    luck = adjusted(summary)
    lines = [
        f"# {title}",
        "",
        f"{summary['games']:,} games, ranked by mean game score (lower is better; R8.6); 95% "
        "bootstrap intervals over deals; ratings are OpenSkill Plackett–Luce (μ ± σ)."
        + (
            " Adjusted: the mean score less what the cards did (the luck-adjusted estimate, "
            "docs/luck.md): the same expectation, as narrow an interval as its estimator "
            + (f"(`{summary['luck_estimator']}`) " if summary.get("luck_estimator") else "")
            + "makes it."
            if luck
            else ""
        ),
        "",
        "| rank (mean score) | agent | games | win rate [95% CI] | mean game score [95% CI] "
        + ("| adjusted mean score [95% CI] " if luck else "")
        + "| mean hand points [95% CI] | rating μ | σ |",
        "|---:|---|---:|---|---|" + ("---|" if luck else "") + "---|---:|---:|",
    ]
    for i, a in enumerate(summary["agents"], 1):
        wr, (wlo, whi) = a["win_rate"], a["win_rate_ci"]
        ms, (mlo, mhi) = a["mean_score"], a["mean_score_ci"]
        hp, (hlo, hhi) = a["mean_hand_points"], a["mean_hand_points_ci"]
        adj = ""
        if luck:
            am, (alo, ahi) = a["adjusted_mean_score"], a["adjusted_mean_score_ci"]
            adj = f"| {am:.1f} [{alo:.1f}, {ahi:.1f}] "
        lines.append(
            f"| {i} | `{a['spec']}` | {a['games']:,} | {wr:.3f} [{wlo:.3f}, {whi:.3f}] "
            f"| {ms:.1f} [{mlo:.1f}, {mhi:.1f}] {adj}| {hp:.2f} [{hlo:.2f}, {hhi:.2f}] "
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
    luck = adjusted(summary)
    extra = ["adjusted_mean_score", "adjusted_mean_score_lo", "adjusted_mean_score_hi"]
    w.writerow(
        [
            "spec",
            "games",
            "win_rate",
            "win_rate_lo",
            "win_rate_hi",
            "mean_score",
            "mean_score_lo",
            "mean_score_hi",
            "mean_hand_points",
            "mean_hand_points_lo",
            "mean_hand_points_hi",
            "rating_mu",
            "rating_sigma",
            *(extra if luck else []),
        ]
    )
    for a in summary["agents"]:
        w.writerow(
            [
                a["spec"],
                a["games"],
                a["win_rate"],
                *a["win_rate_ci"],
                a["mean_score"],
                *a["mean_score_ci"],
                a["mean_hand_points"],
                *a["mean_hand_points_ci"],
                a["rating_mu"],
                a["rating_sigma"],
                *([a["adjusted_mean_score"], *a["adjusted_mean_score_ci"]] if luck else []),
            ]
        )
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
    for ax, key, label in (
        (ax1, "mean_score", "mean game score (lower is better)"),
        (ax2, "win_rate", "win rate"),
    ):
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


def learning_table(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Markdown rows: a policy's held-out win rate (with its interval) and mean game score,
    untrained and trained (``{"episodes", "win_rate", "win_rate_ci", "mean_score"}`` each)."""
    rows = [
        "| policy | held-out games | win rate [95% CI] | mean game score |",
        "|---|---:|---|---:|",
    ]
    for label, r, bold in (("untrained", before, ""), ("trained", after, "**")):
        lo, hi = r["win_rate_ci"]
        rows.append(
            f"| {label} | {r['episodes']} | {bold}{r['win_rate']:.3f} [{lo:.3f}, "
            f"{hi:.3f}]{bold} | {r['mean_score']:.1f} |"
        )
    return rows
