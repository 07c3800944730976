"""A report card: what one agent scored on a benchmark suite, in one JSON file.

Per table of the suite and per opponent of the zoo (the agent in one seat, the opponent in
every other, every seat rotation of every deal of the deal set):

- ``win_rate``: a game won alone counts 1, a win shared by k players 1/k (R8.6);
- ``mean_score``: the agent's final game score (lower is better, R8.6);
- ``paired``: the agent's score minus the score the reference agent (``expert``) got in the
  same seat of the same deal against the same opponents (seeded alike), in points a game;
  ``width_ratio`` is its interval's width over the plain ``mean_score`` interval's (the same
  resamples; on the committed cards 0.79–2.29, below 1 only for agents that play mostly the
  reference's moves: the duplicate rotations already cancel most of the cards' luck,
  docs/benchmark.md);
- ``adjusted`` (where every game's luck corrections are known, :mod:`craits.agents.luck`):
  the mean score less what the cards did, with its interval and ``width_ratio`` (its width
  over the plain interval's); the ``paired`` estimate gains ``adjusted_mean``,
  ``adjusted_ci`` and ``adjusted_width_ratio`` (over the plain paired interval): the same
  expectations, intervals as narrow as the value model makes them (docs/luck.md);
- 95% intervals: percentile bootstrap over *deals* (a deal's rotations come with it), 2,000
  resamples, seeded from the deal set's seed: the same games give the same card.

Over the standard table, ``rating``: OpenSkill Plackett–Luce (mu, sigma) of the agent against
the zoo held at fixed ratings (:func:`anchors`: one fit over the reference's games against
every zoo member on the small deal set, the same for every card), from the games of the first
:data:`RATED_DEALS` deals against each opponent (every card reads as many games, whatever its
size), interleaved over opponents; skills do not drift (``tau = 0``: a frozen zoo), so the
rating is the whole evidence's, not its last games'. The cards' ratings compare.
``compute``: wall seconds of the evaluation, the agent's milliseconds per decision and
per choice (a decision with more than one legal action), timed on the first deals of the
standard table, and the seconds spent on each opponent's tournaments. A card of size
``smoke`` says so (:data:`SMOKE_NOTE`): its few deals compare with no other card's. The
card's shape is ``card.schema.json`` beside this module (:data:`SCHEMA`);
:func:`to_markdown` and :func:`to_png` render it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from craits.agents.stats import BOOTSTRAP, ratings
from craits_env.seeding import derive_rng

SCHEMA = Path(__file__).resolve().parent / "card.schema.json"
RATED_DEALS = 100
"""Deals of each opponent's games the rating reads (the small deal sets' size)."""
TAU = 0.0
"""OpenSkill's dynamics in the ratings: none, the zoo is frozen."""
FORMAT = "craits-report-card/1"
ADJUSTED_NOTE = (
    "Adjusted: the score less what the cards did, by the luck-adjusted estimator "
    "(docs/luck.md: the same expectation); (width ×): its interval's "
    "width over the plain one's, from the same resamples."
)
SMOKE_NOTE = (
    "**A smoke card** (`--size smoke`): the first few deals of each small deal set, every "
    "table and opponent, to check that the agent runs through the benchmark. Its numbers are "
    "not comparable with full or search cards, nor its rating (anchored on its own few deals); "
    "the leaderboard leaves it out."
)


@dataclass(frozen=True)
class Matchup:
    """The games of the agent against one opponent on one deal set, and the reference's."""

    opponent: str
    identity: str
    games: Sequence[dict[str, Any]]
    """the agent's games in plan order (line-up ``(agent, opponent, …)``)"""
    reference: Sequence[dict[str, Any]] | None
    """the reference's games on the same tasks (``None``: the agent is the reference)"""


def agent_seat(game: dict[str, Any]) -> int:
    """The seat of line-up position 0 (the agent) in a game of rotation ``r``."""
    n = len(game["scores"])
    return (-int(game["rotation"])) % n


def _rows(games: Sequence[dict[str, Any]]) -> dict[tuple[int, int], tuple[float, float]]:
    """(deal, rotation) -> (agent's win share, agent's score)."""
    rows = {}
    for g in games:
        seat = agent_seat(g)
        winners = g["winners"]
        win = 1 / len(winners) if seat in winners else 0.0
        rows[g["deal"], g["rotation"]] = (win, float(g["scores"][seat]))
    return rows


def _interval(per_deal: np.ndarray, idx: np.ndarray) -> list[float]:
    if len(per_deal) == 0:
        return [math.nan, math.nan]
    means = per_deal[idx].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return [float(lo), float(hi)]


def matchup_entry(m: Matchup, seed: int) -> dict[str, Any]:
    """The card's entry for one opponent (see the module docstring)."""
    mine = _rows(m.games)
    deals = sorted({d for d, _ in mine})
    by_deal = {d: [v for (dd, _), v in mine.items() if dd == d] for d in deals}
    wins = np.array([np.mean([w for w, _ in by_deal[d]]) for d in deals])
    scores = np.array([np.mean([s for _, s in by_deal[d]]) for d in deals])
    rng = derive_rng(seed, 0xCA4D)
    idx = rng.integers(0, max(1, len(deals)), size=(BOOTSTRAP, len(deals)))
    score_ci = _interval(scores, idx)
    entry: dict[str, Any] = {
        "opponent": m.opponent,
        "identity": m.identity,
        "games": len(mine),
        "deals": len(deals),
        "win_rate": float(np.mean([w for w, _ in mine.values()])) if mine else math.nan,
        "win_rate_ci": _interval(wins, idx),
        "mean_score": float(np.mean([s for _, s in mine.values()])) if mine else math.nan,
        "mean_score_ci": score_ci,
        "paired": None,
    }
    if m.reference is not None:
        theirs = _rows(m.reference)
        missing = sorted(set(mine) - set(theirs))
        if missing:
            raise ValueError(
                f"paired estimate vs {m.opponent}: the reference has no game "
                f"for deal {missing[0][0]} rotation {missing[0][1]}"
            )
        diff = np.array(
            [np.mean([mine[d, r][1] - theirs[d, r][1] for dd, r in mine if dd == d]) for d in deals]
        )
        ci = _interval(diff, idx)
        plain = score_ci[1] - score_ci[0]
        ratio = (ci[1] - ci[0]) / plain if plain > 0 else math.nan
        entry["paired"] = {"mean": float(diff.mean()), "ci": ci, "width_ratio": ratio}
    luck = _adjusted(m, deals, idx)
    if luck is not None:
        adjusted, paired = luck
        entry["adjusted"] = adjusted
        if entry["paired"] is not None and paired is not None:
            entry["paired"].update(paired)
    entry["scores"] = [mine[k][1] for k in sorted(mine)]
    return entry


def _adjusted(
    m: Matchup, deals: list[int], idx: np.ndarray
) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """The luck-adjusted mean score and paired estimate (each game's ``luck``: its corrections
    per seat, :mod:`craits.agents.luck`), from the same resamples as the plain ones, with
    each one's width over the plain one's; ``None`` unless every game has its corrections."""
    games = [*m.games, *(m.reference or ())]
    if not games or any("luck" not in g for g in games):
        return None

    def per_deal(games: Sequence[dict[str, Any]]) -> dict[tuple[int, int], tuple[float, float]]:
        out = {}
        for g in games:
            seat = agent_seat(g)
            out[g["deal"], g["rotation"]] = (
                float(g["scores"][seat]),
                float(g["scores"][seat]) - float(g["luck"][seat]),
            )
        return out

    def means(rows: dict[tuple[int, int], tuple[float, float]], k: int) -> np.ndarray:
        return np.array(
            [np.mean([v[k] for (d, _), v in rows.items() if d == deal]) for deal in deals]
        )

    def width(ci: list[float]) -> float:
        return ci[1] - ci[0]

    mine = per_deal(m.games)
    plain_ci, adjusted_ci = _interval(means(mine, 0), idx), _interval(means(mine, 1), idx)
    adjusted: dict[str, Any] = {
        "mean_score": float(np.mean([v[1] for v in mine.values()])),
        "mean_score_ci": adjusted_ci,
        "width_ratio": width(adjusted_ci) / width(plain_ci) if width(plain_ci) > 0 else math.nan,
    }
    by = {g.get("luck_by") for g in games}
    if len(by) == 1 and None not in by:  # every game's corrections by one named estimator
        adjusted["estimator"] = by.pop()
    if m.reference is None:
        return adjusted, None
    theirs = per_deal(m.reference)
    diff = {k: (v[0] - theirs[k][0], v[1] - theirs[k][1]) for k, v in mine.items()}
    plain_ci, paired_ci = _interval(means(diff, 0), idx), _interval(means(diff, 1), idx)
    paired = {
        "adjusted_mean": float(np.mean([v[1] for v in diff.values()])),
        "adjusted_ci": paired_ci,
        "adjusted_width_ratio": width(paired_ci) / width(plain_ci)
        if width(plain_ci) > 0
        else math.nan,
    }
    return adjusted, paired


def interleaved(matchups: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The games of every matchup in turn (the first game of each, then the second…), so a
    sequential rating weighs no opponent by its place in the zoo's order."""
    out = []
    for k in range(max((len(m) for m in matchups), default=0)):
        out += [m[k] for m in matchups if k < len(m)]
    return out


def anchors(reference: Sequence[Sequence[dict[str, Any]]]) -> dict[str, tuple[float, float]]:
    """The zoo's OpenSkill ratings: one fit over the reference's games against every zoo
    member (one list of games per opponent, interleaved; the evaluation passes those of the
    small deal set, so every card gets the same anchors)."""
    games = interleaved(reference)
    return ratings(games, sorted({s for g in games for s in g["specs"]}), tau=TAU)


def rating(
    matchups: Sequence[Sequence[dict[str, Any]]], zoo: dict[str, tuple[float, float]]
) -> dict[str, float]:
    """The agent's OpenSkill Plackett–Luce (mu, sigma) over its games of the first
    :data:`RATED_DEALS` deals (one list per opponent, interleaved), each rated against
    opponents held at their :func:`anchors`: the zoo never moves, so every card's rating is
    on the same scale."""
    from openskill.models import PlackettLuce

    model = PlackettLuce(tau=TAU)
    me = model.rating()
    fixed = {s: model.rating(mu=mu, sigma=sigma) for s, (mu, sigma) in zoo.items()}
    rated = [[g for g in games if g["deal"] < RATED_DEALS] for games in matchups]
    for g in interleaved(rated):
        seat, scores = agent_seat(g), g["scores"]
        order = sorted(set(scores))
        teams = [[me] if i == seat else [fixed[s]] for i, s in enumerate(g["specs"])]
        new = model.rate(teams, ranks=[float(order.index(v) + 1) for v in scores])
        me = model.rating(mu=new[seat][0].mu, sigma=new[seat][0].sigma)
    return {"mu": float(me.mu), "sigma": float(me.sigma), "ordinal": float(me.mu - 3 * me.sigma)}


def to_json(card: dict[str, Any]) -> str:
    """The card as JSON (NaN as ``null``)."""

    def clean(v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v

    # compact: a card holds every game's score (thousands of numbers); card.md is for reading
    return json.dumps(clean(card), separators=(",", ":")) + "\n"


def _fmt(v: float | None, digits: int) -> str:
    return (
        "—" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.{digits}f}"
    )


def _ci(ci: Sequence[float | None], digits: int) -> str:
    return f"[{_fmt(ci[0], digits)}, {_fmt(ci[1], digits)}]"


def to_markdown(card: dict[str, Any]) -> str:
    """The card as a Markdown page: one table per table of the suite."""
    agent = card["agent"]
    engine, reference = card["engine"], card["reference"]["identity"]
    lines = [
        f"# Report card: `{agent['spec']}` on Craits benchmark {card['suite']}",
        "",
        f"Agent identity `{agent['identity']}`; reference `{reference}`; craits "
        f"{engine['craits']}, rules revision {engine['rules_revision']}; size "
        f"`{card['size']}`; {card['created']}.",
    ]
    if card["size"] == "smoke":
        lines += ["", SMOKE_NOTE]
    if card.get("rating"):
        r = card["rating"]
        lines += [
            "",
            f"OpenSkill against the anchored zoo (standard table): mu {r['mu']:.2f}, "
            f"sigma {r['sigma']:.2f}, ordinal {r['ordinal']:.2f}.",
        ]
    c = card["compute"]
    lines += [
        "",
        f"Compute: the run that wrote this card took {c['seconds']:.0f} s (a resumed "
        "run counts its own games only); "
        f"{_fmt(c.get('ms_per_decision'), 2)} ms a decision, "
        f"{_fmt(c.get('ms_per_choice'), 2)} ms a choice.",
    ]
    by_opponent = c.get("seconds_by_opponent")
    if by_opponent:
        lines += [
            "",
            "Seconds by opponent (its tournaments in that run: the agent's, the "
            "reference's, the anchors'): " + seconds_shares(by_opponent) + ".",
        ]
    luck = any("adjusted" in o for t in card["tables"] for o in t["opponents"])
    if luck:
        lines += ["", ADJUSTED_NOTE]
        by = sorted(
            {o["adjusted"]["estimator"] for t in card["tables"] for o in t["opponents"]
             if "estimator" in o.get("adjusted", {})}
        )  # fmt: skip
        if by:
            lines[-1] += " Estimator: " + ", ".join(f"`{b}`" for b in by) + "."
    for table in card["tables"]:
        lines += [
            "",
            f"## {table['title']}",
            "",
            "| opponent (×{}) | deals | games | win rate [95%] | mean score [95%] | "
            "paired − expert [95%] | width ratio |".format(table["players"] - 1)
            + (
                " adjusted score [95%] (width ×) | adjusted paired [95%] (width ×) |"
                if luck
                else ""
            )
            + " deal set |",
            "|---|---:|---:|---|---|---|---:|" + ("---|---|" if luck else "") + "---|",
        ]
        for o in table["opponents"]:
            p = o["paired"]
            paired = f"{_fmt(p['mean'], 1)} {_ci(p['ci'], 1)}" if p else "(the reference)"
            ratio = _fmt(p["width_ratio"], 2) if p else "—"
            adjusted = ""
            if luck:
                a = o.get("adjusted")
                adjusted = (
                    f" {_fmt(a['mean_score'], 1)} {_ci(a['mean_score_ci'], 1)} "
                    f"(×{_fmt(a['width_ratio'], 2)}) |"
                    if a
                    else " — |"
                )
                adjusted += (
                    f" {_fmt(p['adjusted_mean'], 1)} {_ci(p['adjusted_ci'], 1)} "
                    f"(×{_fmt(p['adjusted_width_ratio'], 2)}) |"
                    if p and "adjusted_mean" in p
                    else " — |"
                )
            lines.append(
                f"| `{o['opponent']}` | {o['deals']} | {o['games']} | "
                f"{_fmt(o['win_rate'], 3)} {_ci(o['win_rate_ci'], 3)} | "
                f"{_fmt(o['mean_score'], 1)} {_ci(o['mean_score_ci'], 1)} | {paired} | "
                f"{ratio} |{adjusted} {o['deal_set']} |"
            )
        for s in table.get("skipped", []):
            lines.append(f"\n`{s['opponent']}` not played here: {s['why']}")
    lines += exploitability_lines(card.get("exploitability"))
    lines += ["", f"Reproduce: `{card['command']}`"]
    return "\n".join(lines) + "\n"


def exploitability_lines(e: dict[str, Any] | None) -> list[str]:
    """The card's exploitability section (``craits exploit``, docs/exploit.md), if it has one."""
    if not e:
        return []

    def cell(side: dict[str, Any], key: str, digits: int, sign: str = "") -> str:
        v, (lo, hi) = side[key], side[key + "_ci"]
        return f"{v:{sign}.{digits}f} [{lo:{sign}.{digits}f}, {hi:{sign}.{digits}f}]"

    b, c, g = e["best_response"], e["control"], e["gain"]
    return [
        "",
        "## Exploitability",
        "",
        f"A best response trained for {e['budget']:,} decisions against three copies of the "
        f"agent, and a control trained alike against three `expert`, on {e['games']:,} held-out "
        "games against three copies of the agent (docs/exploit.md):",
        "",
        "| | win rate [95%] | mean score [95%] |",
        "|---|---|---|",
        f"| best response | {cell(b, 'win_rate', 3)} | {cell(b, 'mean_score', 1)} |",
        f"| control | {cell(c, 'win_rate', 3)} | {cell(c, 'mean_score', 1)} |",
        f"| gain | {cell(g, 'win_rate', 3, '+')} | {cell(g, 'mean_score', 1, '+')} points saved |",
        "",
        f"Reproduce: `{e['command']}`",
    ]


def seconds_shares(seconds: dict[str, float]) -> str:
    """``random 3 s (1%), …, pimc 120 s (40%)``: each opponent's seconds and share."""
    total = sum(seconds.values())
    return ", ".join(
        f"{name} {s:.0f} s ({100 * s / total:.0f}%)" if total > 0 else f"{name} {s:.0f} s"
        for name, s in seconds.items()
    )


def to_png(card: dict[str, Any]) -> bytes:
    """A chart of the card: win rate per opponent with its interval, one panel per table."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from craits.agents.report import figure_png

    tables = card["tables"]
    fig, axes = plt.subplots(1, len(tables), figsize=(4.2 * len(tables), 3.6), squeeze=False)
    for ax, table in zip(axes[0], tables, strict=True):
        names = [o["opponent"] for o in table["opponents"]]
        rates = [o["win_rate"] or 0.0 for o in table["opponents"]]
        lo = [
            r - (o["win_rate_ci"][0] or r) for r, o in zip(rates, table["opponents"], strict=True)
        ]
        hi = [
            (o["win_rate_ci"][1] or r) - r for r, o in zip(rates, table["opponents"], strict=True)
        ]
        ax.barh(names, rates, xerr=[lo, hi], color="#4c72b0", capsize=3)
        ax.axvline(1 / table["players"], color="grey", lw=0.8, ls="--")
        ax.set_xlim(0, 1)
        ax.invert_yaxis()
        ax.set_title(table["title"], fontsize=9)
        ax.set_xlabel("win rate (95% interval); dashed: 1 / players", fontsize=8)
    fig.suptitle(f"{card['agent']['spec']} — Craits benchmark {card['suite']}", fontsize=10)
    fig.tight_layout()
    return figure_png(fig, 110)
