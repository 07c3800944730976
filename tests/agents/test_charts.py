"""The charts: tournament results (:mod:`craits.agents.stats`) and training curves
(``experiments.plot_training``) — titles that name the game, no Markdown backticks, and
chance (1/players) drawn on the win-rate panels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from craits.agents.report import chart_title, game_label, tournament_figure, write_outputs
from craits.agents.stats import summarize
from craits_env.rules import Rules
from experiments.plot_training import game_of, training_figure


def figure_texts(fig: Any) -> list[str]:
    from matplotlib.text import Text

    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


def chance_lines(ax: Any, players: int) -> list[Any]:
    """The dashed lines of ``ax`` at 1/players (upright or level), labelled as chance."""
    at = 1 / players
    return [
        line
        for line in ax.get_lines()
        if line.get_linestyle() == "--"
        and line.get_label() == f"chance (1/{players})"
        and (set(line.get_xdata()) == {at} or set(line.get_ydata()) == {at})
    ]


def test_game_label_names_the_schedule_and_the_players() -> None:
    assert game_label(Rules(), 4) == "standard game, 4 players"
    assert game_label(Rules.short_game(face_cards=True), 3) == "short game, 3 players"
    assert game_label(Rules(hand_sizes=(5, 2, 1, 3)), 2) == "4-hand game (5-2-1-3), 2 players"
    title = chart_title("`ppo` against 3 × `greedy`", Rules(), 4)
    assert title == "ppo against 3 × greedy — standard game, 4 players"


def small_summary() -> dict[str, Any]:
    games = [
        {
            "deal": d,
            "specs": ["a", "b", "c"],
            "scores": [10, 20, 30],
            "winners": [d % 2],
            "hand_points": [[10, 20, 30]],
            "decisions": 1,
        }
        for d in range(10)
    ]
    return summarize(games, ["a", "b", "c"], 0)


def test_tournament_chart_title_and_chance_line() -> None:
    import matplotlib.pyplot as plt

    fig = tournament_figure(small_summary(), "`a` against 2 × `b`", 3, Rules.short_game())
    try:
        assert fig._suptitle.get_text() == "a against 2 × b — short game, 3 players"
        assert not any("`" in t for t in figure_texts(fig))
        score_ax, win_ax = fig.axes[:2]
        assert len(chance_lines(win_ax, 3)) == 1 and not chance_lines(score_ax, 3)
        assert "chance (1/3)" in [t.get_text() for t in win_ax.get_legend().get_texts()]
    finally:
        plt.close(fig)


@pytest.mark.slow
def test_tournament_outputs_take_players_and_rules_from_the_config(tmp_path: Path) -> None:
    config = {
        "specs": ["a", "b", "c"],
        "players": 3,
        "deals": 10,
        "seed": 0,
        "rules": Rules.short_game().to_dict(),
    }
    write_outputs(small_summary(), config, tmp_path, "`a` and friends", "craits tournament")
    assert (tmp_path / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "# `a` and friends" in (tmp_path / "results.md").read_text()  # Markdown keeps them


@pytest.mark.slow
def test_training_chart_title_and_chance_line() -> None:
    import matplotlib.pyplot as plt

    steps = [1_000_000, 2_000_000]
    scalars = {
        "eval/greedy/win_rate": list(zip(steps, [0.2, 0.3], strict=True)),
        "eval/greedy/win_rate_ci_lo": list(zip(steps, [0.1, 0.2], strict=True)),
        "eval/greedy/win_rate_ci_hi": list(zip(steps, [0.3, 0.4], strict=True)),
        "eval/greedy/mean_score": list(zip(steps, [80.0, 70.0], strict=True)),
        "losses/policy": list(zip(steps, [0.1, 0.05], strict=True)),
    }
    fig = training_figure(scalars, 4, "craits train: `ppo_4p`", Rules())
    try:
        assert fig._suptitle.get_text() == "craits train: ppo_4p — standard game, 4 players"
        assert not any("`" in t for t in figure_texts(fig))
        win_ax, score_ax = fig.axes[:2]
        assert len(chance_lines(win_ax, 4)) == 1 and not chance_lines(score_ax, 4)
        assert "chance (1/4)" in [t.get_text() for t in win_ax.get_legend().get_texts()]
    finally:
        plt.close(fig)


def test_training_chart_reads_the_game_from_the_runs_config(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        'name = "short_3p"\nnum_players = 3\n\n[rules]\nhand_sizes = [8, 7, 6, 5, 4, 3, 2, 1]\n'
    )
    players, rules = game_of(tmp_path)
    assert players == 3 and rules == Rules.short_game()
    assert game_label(rules, players) == "short game, 3 players"
    assert game_of(tmp_path / "missing") == (4, Rules())
