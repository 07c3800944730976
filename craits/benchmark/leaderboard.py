"""The leaderboard: report cards side by side, one row per agent.

A row is what one card says on the suite's first table (the standard 4-player game): the
agent's OpenSkill ordinal over the zoo, its win rate against three copies of each
:data:`COLUMNS` opponent, its paired estimate against the reference averaged over the zoo
(the mean score it gains or loses, per game, over what ``expert`` scored in its seat of the
same deals; negative is better), and its time per choice. Rows are sorted by that paired
mean, best first; a smoke card (``--size smoke``) gets no row. Cards are read from a
folder (every ``card.json`` under it, as ``craits evaluate`` writes them): the committed
cards of the zoo, and any card a user drops beside them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .card import FORMAT

COLUMNS = ("random", "expert", "champion", "pimc", "champion-search")
"""The opponents whose win rates the leaderboard shows (every card holds them all)."""
CARD_FILE = "card.json"
RANKED_SIZES = ("full", "search")
"""The sizes whose cards get a row (a smoke card's few deals compare with no other card's)."""


def read_cards(folder: Path, suite: str | None = None) -> list[dict[str, Any]]:
    """Every report card under ``folder`` (of ``suite``, if given), by path."""
    found = []
    for path in sorted(folder.rglob(CARD_FILE)):
        try:
            card = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        mine = isinstance(card, dict) and card.get("format") == FORMAT
        if mine and (suite is None or card.get("suite") == suite):
            found.append(card)
    return found


def row(card: dict[str, Any]) -> dict[str, Any]:
    """The leaderboard row of one card (see the module docstring)."""
    table = card["tables"][0]
    by_opponent = {o["opponent"]: o for o in table["opponents"]}
    paired = [o["paired"]["mean"] for o in table["opponents"] if o.get("paired")]
    rating = card.get("rating") or {}
    return {
        "spec": card["agent"]["spec"],
        "identity": card["agent"]["identity"],
        "size": card["size"],
        "table": table["name"],
        "ordinal": rating.get("ordinal"),
        "paired_mean": sum(paired) / len(paired) if paired else 0.0,
        "is_reference": not paired,
        "ms_per_choice": card["compute"].get("ms_per_choice"),
        "win_rates": {name: _win_rate(by_opponent.get(name)) for name in COLUMNS},
    }


def _win_rate(entry: dict[str, Any] | None) -> dict[str, Any] | None:
    if entry is None:
        return None
    return {"win_rate": entry["win_rate"], "ci": entry["win_rate_ci"], "deals": entry["deals"]}


def rows(cards: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per card of a ranked size (:data:`RANKED_SIZES`: a smoke card is left
    out), best paired mean first (the reference at 0)."""
    ranked = (row(c) for c in cards if c.get("size") in RANKED_SIZES)
    return sorted(ranked, key=lambda r: (r["paired_mean"], r["spec"]))


def _num(v: float | None, digits: int) -> str:
    return "—" if v is None or not math.isfinite(v) else f"{v:.{digits}f}"


def to_markdown(board: list[dict[str, Any]]) -> str:
    """The leaderboard as a Markdown table."""
    head = [
        "agent",
        "identity",
        "paired − expert",
        "OpenSkill ordinal",
        *(f"vs 3 × {c}" for c in COLUMNS),
        "ms a choice",
        "deal sets",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in board:
        cells = [
            f"`{r['spec']}`",
            f"`{r['identity']}`",
            "0 (reference)" if r["is_reference"] else f"{r['paired_mean']:+.1f}",
            _num(r["ordinal"], 2),
        ]
        for name in COLUMNS:
            w = r["win_rates"][name]
            cells.append(
                "—"
                if w is None
                else f"{_num(w['win_rate'], 3)} [{_num(w['ci'][0], 3)}, {_num(w['ci'][1], 3)}]"
            )
        cells += [_num(r["ms_per_choice"], 2), r["size"]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def widths(cards: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What interval each deal set gives: per table and deal set, over every card's
    opponents there, the median width of the win-rate, mean-score and paired intervals and
    the median ratio of the paired width to the plain one."""
    held: dict[tuple[str, str], list[dict[str, Any]]] = {}
    deals: dict[tuple[str, str], int] = {}
    for card in cards:
        for table in card["tables"]:
            for o in table["opponents"]:
                held.setdefault((table["name"], o["deal_set"]), []).append(o)
                deals[table["name"], o["deal_set"]] = o["deals"]

    def median(values: list[float]) -> float | None:
        values = sorted(v for v in values if v is not None and math.isfinite(v))
        return values[len(values) // 2] if values else None

    out = []
    for (table, name), entries in sorted(held.items()):
        paired = [o["paired"] for o in entries if o.get("paired")]
        out.append(
            {
                "table": table,
                "deal_set": name,
                "deals": deals[table, name],
                "win_rate": median([o["win_rate_ci"][1] - o["win_rate_ci"][0] for o in entries]),
                "mean_score": median(
                    [o["mean_score_ci"][1] - o["mean_score_ci"][0] for o in entries]
                ),
                "paired": median([p["ci"][1] - p["ci"][0] for p in paired]),
                "ratio": median([p["width_ratio"] for p in paired]),
            }
        )
    return out


def widths_markdown(rows_: list[dict[str, Any]]) -> str:
    """:func:`widths` as a Markdown table."""
    lines = [
        "| table | deal set | deals | win rate ± | mean score ± | paired ± | paired ÷ plain |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows_:
        half = {k: None if r[k] is None else r[k] / 2 for k in ("win_rate", "mean_score", "paired")}
        lines.append(
            f"| {r['table']} | `{r['deal_set']}` | {r['deals']} | "
            f"{_num(half['win_rate'], 3)} | {_num(half['mean_score'], 1)} | "
            f"{_num(half['paired'], 1)} | {_num(r['ratio'], 2)} |"
        )
    return "\n".join(lines)
