"""``docs/luck.md``'s tables of width ratios are the committed tables' figures
(``experiments/results/luck/widths*.json``, written by ``experiments/luck_widths.py``), row for
row: a run on more deals that leaves the page behind fails here, not in a reader's hands."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "luck.md"
RESULTS = ROOT / "experiments" / "results" / "luck"


def tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every markdown table of ``text`` whose rows name agents: (header cells, rows' cells)."""
    found: list[tuple[list[str], list[list[str]]]] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("| agent |") and i + 1 < len(lines) and lines[i + 1].startswith("|--"):
            rows = []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append(cells(row))
            found.append((cells(line), rows))
    return found


def cells(line: str) -> list[str]:
    return [c.strip().replace("**", "") for c in line.strip().strip("|").split("|")]


def minus(text: str) -> str:
    return text.replace("-", "−")


def interval(figure: list, sign: bool = False) -> str:
    mean, (lo, hi) = figure
    return minus(f"{mean:+.1f}" if sign else f"{mean:.1f}") + minus(f" [{lo:.1f}, {hi:.1f}]")


def ratio(x: float) -> str:
    return "—" if x != x else f"{x:.2f}"  # NaN: no paired estimate (the reference)


def deals_of(summary: dict) -> int:
    found = re.search(r"--deals (\d+)", summary["command"])
    assert found, summary["command"]
    return int(found.group(1))


def summary_of(header: list[str], row: list[str]) -> dict:
    """The committed table a docs row comes from: its estimator and set, by its columns."""
    if "estimator" in header:
        by = row[header.index("estimator")].strip("`")
        name = "widths-" + by.replace(":", "-")
    elif "paired plain [95%]" in header:
        name = "widths-rollouts-128-16-32-search"  # the searching members' table
    else:
        name = "widths"  # the shipped value model's
    return json.loads((RESULTS / f"{name}.json").read_text())


def expected(summary: dict, agent: str) -> dict[str, str]:
    f = summary["agents"][agent]
    reference = agent == "expert"
    return {
        "deals": str(deals_of(summary)),
        "plain mean score [95%]": interval(f["plain"]),
        "adjusted [95%]": interval(f["adjusted"]),
        "width ratio": ratio(f["width_ratio"]),
        "paired ratio": "—" if reference else ratio(f["paired_width_ratio"]),
        "paired plain [95%]": "—" if reference else interval(f["paired_plain"]),
        "paired adjusted [95%]": "—" if reference else interval(f["paired_adjusted"]),
        "correction a game [95%]": interval(f["correction"], sign=True),
    }


def width_tables() -> list[tuple[list[str], list[list[str]]]]:
    return [(h, rows) for h, rows in tables(PAGE.read_text()) if "width ratio" in h]


def test_the_page_has_its_three_width_tables() -> None:
    assert len(width_tables()) == 3  # the model's, the rollouts' on the cards, the searchers'


ROWS = [(h, r) for h, rows in width_tables() for r in rows]


@pytest.mark.parametrize(
    ("header", "row"), ROWS, ids=[f"{r[0].strip('`')}-{i}" for i, (_, r) in enumerate(ROWS)]
)
def test_every_row_of_the_width_tables_is_the_committed_tables_figures(
    header: list[str], row: list[str]
) -> None:
    agent = row[0].strip("`")
    want = expected(summary_of(header, row), agent)
    got = {column: row[k] for k, column in enumerate(header) if column in want}
    assert got == {column: want[column] for column in got}, agent


def test_the_figures_are_read_as_written() -> None:
    """The reading itself: a figure the page rounds otherwise, or a sign it drops, differs."""
    f = {"plain": [536.46, [532.2, 541.14]], "correction": [-0.449, [-2.7, 1.9]]}
    assert interval(f["plain"]) == "536.5 [532.2, 541.1]"
    assert interval(f["correction"], sign=True) == "−0.4 [−2.7, 1.9]"
    assert interval([0.449, [-2.7, 1.9]], sign=True) == "+0.4 [−2.7, 1.9]"
    assert ratio(float("nan")) == "—" and ratio(0.404) == "0.40"
    assert cells("| `expert` | 1000 | **0.40** |") == ["`expert`", "1000", "0.40"]
