"""Learning curves of a ``craits train`` run, drawn from its TensorBoard scalars.

    python experiments/plot_training.py RUN_DIR --out experiments/results/training/curves.png

Panels: the periodic duplicate evaluation against each opponent (win rate with
its 95% interval, against chance 1/players; mean game score), the learner's mean
hand points in training, the losses, approx_kl and clipfrac, explained variance,
and steps per second. The title names the game (standard or short, and the
players) from the run's ``config.toml``. Also writes the scalars as CSV beside the
PNG (``--csv``) so the numbers behind the figure are committed too.
"""

from __future__ import annotations

import argparse
import csv
import io
from pathlib import Path
from typing import Any

from craits.agents.report import chart_title, figure_png
from craits_env.fileio import atomic_write_bytes, atomic_write_text
from craits_env.rules import Rules


def read_scalars(run_dir: Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar of the run's event files: ``tag -> [(step, value), ...]`` (last write wins)."""
    from tensorboard.backend.event_processing.event_accumulator import (
        SCALARS,
        EventAccumulator,
    )

    acc = EventAccumulator(str(run_dir), size_guidance={SCALARS: 0})
    acc.Reload()
    out = {}
    for tag in acc.Tags()["scalars"]:
        by_step = {e.step: e.value for e in acc.Scalars(tag)}
        out[tag] = sorted(by_step.items())
    return out


def game_of(run_dir: Path) -> tuple[int, Rules]:
    """The run's number of players and rules, from its ``config.toml`` (4 players and
    the standard rules if unreadable)."""
    from craits.training.config import load_config

    try:
        config = load_config(str(run_dir / "config.toml"))
    except ValueError:
        return 4, Rules()
    return config.num_players, config.rules


def plot(
    scalars: dict[str, list[tuple[int, float]]], players: int, title: str, rules: Rules
) -> bytes:
    """The learning curves as a PNG (:func:`training_figure`)."""
    return figure_png(training_figure(scalars, players, title, rules), dpi=100)


def training_figure(
    scalars: dict[str, list[tuple[int, float]]], players: int, title: str, rules: Rules
) -> Any:
    """The panels of the module docstring, titled by ``chart_title``. A matplotlib figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def series(tag: str) -> tuple[list[float], list[float]]:
        points = scalars.get(tag, [])
        return [s / 1e6 for s, _ in points], [v for _, v in points]

    opponents = sorted({t.split("/")[1] for t in scalars if t.startswith("eval/")})
    fig, axes = plt.subplots(2, 3, figsize=(15, 8))
    ax = axes[0, 0]
    for name in opponents:
        x, y = series(f"eval/{name}/win_rate")
        _, lo = series(f"eval/{name}/win_rate_ci_lo")
        _, hi = series(f"eval/{name}/win_rate_ci_hi")
        (line,) = ax.plot(x, y, marker="o", label=f"vs {players - 1} × {name}")
        if len(lo) == len(x) == len(hi):
            ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2)
    ax.axhline(1 / players, color="grey", linestyle="--", label=f"chance (1/{players})")
    ax.set_title("evaluation: win rate, 95% CI (duplicate deals)")
    ax.set_ylabel("win rate")
    ax.legend()
    ax = axes[0, 1]
    for name in opponents:
        x, y = series(f"eval/{name}/mean_score")
        (line,) = ax.plot(x, y, marker="o", label=f"agent vs {name}")
        x, y = series(f"eval/{name}/opponent_mean_score")
        ax.plot(x, y, linestyle=":", color=line.get_color(), label=f"{name} (its opponents)")
    ax.set_title("evaluation: mean game score (lower is better)")
    ax.legend()
    ax = axes[0, 2]
    ax.plot(*series("learner/mean_hand_points"), linewidth=0.8)
    ax.set_title("training: learner's mean hand points")
    ax = axes[1, 0]
    for tag in ("losses/policy", "losses/value", "losses/entropy"):
        ax.plot(*series(tag), linewidth=0.8, label=tag.split("/")[1])
    ax.set_title("losses")
    ax.legend()
    ax = axes[1, 1]
    for tag in ("losses/approx_kl", "losses/clipfrac", "losses/explained_variance"):
        ax.plot(*series(tag), linewidth=0.8, label=tag.split("/")[1])
    ax.set_title("approx_kl, clipfrac, explained variance")
    ax.legend()
    ax = axes[1, 2]
    ax.plot(*series("charts/SPS"), label="collect + learn")
    ax.plot(*series("charts/SPS_wall"), label="wall (with evaluations)")
    ax.set_title("environment steps per second")
    ax.legend()
    for a in axes.flat:
        a.set_xlabel("environment steps (millions)")
        a.grid(alpha=0.3)
    fig.suptitle(chart_title(title, rules, players))
    return fig


def to_csv(scalars: dict[str, list[tuple[int, float]]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["tag", "step", "value"])
    for tag in sorted(scalars):
        for step, value in scalars[tag]:
            w.writerow([tag, step, value])
    return buf.getvalue()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", type=Path, help="the run directory (craits train --out)")
    p.add_argument("--out", type=Path, default=None, help="PNG (default RUN_DIR/curves.png)")
    p.add_argument("--csv", action="store_true", help="also write the scalars as CSV beside it")
    p.add_argument("--title", default=None)
    args = p.parse_args()
    scalars = read_scalars(args.run_dir)
    if not scalars:
        raise SystemExit(f"plot_training: no TensorBoard scalars in {args.run_dir}")
    out = args.out or args.run_dir / "curves.png"
    title = args.title or f"craits train: {args.run_dir.name}"
    players, rules = game_of(args.run_dir)
    atomic_write_bytes(out, plot(scalars, players, title, rules))
    if args.csv:
        atomic_write_text(out.with_suffix(".csv"), to_csv(scalars))
    print(out)


if __name__ == "__main__":
    main()
