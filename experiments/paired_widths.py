"""How much the benchmark's paired estimate narrows an interval, from the committed cards.

For every opponent of an agent's card (suite v1, ``experiments/results/benchmark/v1/SPEC``),
against the reference (``expert``) on the same deals and rotations — both cards hold every
game's score in plan order (deal, rotation); where the reference's card played another deal
set (a searching agent's card meets everyone on the small sets), the reference's stored games
(``runs/benchmark-v1-games``) — the width of the 95% percentile-bootstrap
interval over deals (2,000 resamples) of:

- **plain**: the agent's mean game score, each deal's rotations together (the card's
  ``mean_score_ci``);
- **paired**: the agent's score minus the reference's in the same seat of the same deal (the
  card's ``paired``);
- **unpaired**: the same difference if the two had played independent deals
  (``sqrt(plain² + reference²)``);

and the correlation over deals of the two agents' per-deal mean scores. Writes
``experiments/results/benchmark/v1/paired_widths.md``. Usage::

    python experiments/paired_widths.py greedy [more specs]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from craits.benchmark.card import agent_seat
from craits.benchmark.evaluate import slug

CARDS = Path("experiments/results/benchmark/v1")
GAMES = Path("runs/benchmark-v1-games")  # the cards' games (``benchmark_zoo.py``), not committed
REFERENCE = "expert"
RESAMPLES = 2000


def width(values: np.ndarray, idx: np.ndarray) -> float:
    lo, hi = np.percentile(values[idx].mean(axis=1), [2.5, 97.5])
    return float(hi - lo)


def reference_scores(reference: dict, table: str, opponent: str, deal_set: str) -> list[float]:
    """The reference's score in each game (plan order) against ``opponent`` on ``deal_set``:
    from its card where the card played that deal set, else from the stored games
    (:data:`GAMES`; a searching agent's card meets every opponent on the small sets)."""
    for t in reference["tables"]:
        for o in t["opponents"] if t["name"] == table else ():
            if o["opponent"] == opponent and o["deal_set"] == deal_set:
                return o["scores"]
    path = GAMES / table / deal_set / f"{slug(REFERENCE)}-vs-{slug(opponent)}" / "games.jsonl"
    if not path.is_file():
        raise SystemExit(f"no games of {REFERENCE} vs {opponent} on {deal_set}: {path} is missing")
    games = sorted(
        (json.loads(line) for line in path.read_text().splitlines() if line),
        key=lambda g: (g["deal"], g["rotation"]),
    )
    return [float(g["scores"][agent_seat(g)]) for g in games]


def rows(spec: str, reference: dict) -> list[str]:
    card = json.loads((CARDS / slug(spec) / "card.json").read_text())
    out = []
    for table in card["tables"]:  # an agent may not play every table (a champion: 4 players)
        rotations = table["players"]
        for o in table["opponents"]:
            mine = np.array(o["scores"], dtype=float).reshape(-1, rotations).mean(axis=1)
            scores = reference_scores(reference, table["name"], o["opponent"], o["deal_set"])
            ref = np.array(scores, dtype=float).reshape(-1, rotations).mean(axis=1)
            idx = np.random.default_rng(0).integers(0, mine.size, (RESAMPLES, mine.size))
            plain, other = width(mine, idx), width(ref, idx)
            paired = width(mine - ref, idx)
            unpaired = float(np.hypot(plain, other))
            corr = float(np.corrcoef(mine, ref)[0, 1])
            out.append(
                f"| `{spec}` | {table['name']} | `{o['opponent']}` | {mine.size} | "
                f"{plain:.1f} | {paired:.1f} | {unpaired:.1f} | {paired / plain:.2f} | "
                f"{paired / unpaired:.2f} | {corr:+.2f} |"
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="+", help="agents with a committed card (not expert)")
    args = parser.parse_args()
    reference = json.loads((CARDS / REFERENCE / "card.json").read_text())
    lines = [
        "# The paired estimate's interval, against the plain and the unpaired ones",
        "",
        "Widths of 95% intervals in game points (bootstrap over deals, every rotation of a deal "
        "together); `python experiments/paired_widths.py " + " ".join(args.specs) + "`.",
        "",
        "| agent | table | opponent | deals | plain | paired | unpaired | paired ÷ plain | "
        "paired ÷ unpaired | correlation |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for spec in args.specs:
        lines += rows(spec, reference)
    text = "\n".join(lines) + "\n"
    (CARDS / "paired_widths.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
