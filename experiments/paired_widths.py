"""How much the benchmark's paired estimate narrows an interval, from the committed cards.

For every opponent of an agent's card (suite v1, ``experiments/results/benchmark/v1/SPEC``),
against the reference's card (``expert``) on the same deals and rotations — both cards hold
every game's score in plan order (deal, rotation) — the width of the 95% percentile-bootstrap
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

from craits.benchmark.evaluate import slug

CARDS = Path("experiments/results/benchmark/v1")
RESAMPLES = 2000


def width(values: np.ndarray, idx: np.ndarray) -> float:
    lo, hi = np.percentile(values[idx].mean(axis=1), [2.5, 97.5])
    return float(hi - lo)


def rows(spec: str, reference: dict) -> list[str]:
    card = json.loads((CARDS / slug(spec) / "card.json").read_text())
    out = []
    by_name = {t["name"]: t for t in reference["tables"]}
    for table in card["tables"]:  # an agent may not play every table (a champion: 4 players)
        theirs = {o["opponent"]: o for o in by_name[table["name"]]["opponents"]}
        rotations = table["players"]
        for o in table["opponents"]:
            mine = np.array(o["scores"], dtype=float).reshape(-1, rotations).mean(axis=1)
            ref = np.array(theirs[o["opponent"]]["scores"], dtype=float)
            ref = ref.reshape(-1, rotations).mean(axis=1)
            idx = np.random.default_rng(0).integers(0, mine.size, (RESAMPLES, mine.size))
            plain, other = width(mine, idx), width(ref, idx)
            paired = width(mine - ref, idx)
            unpaired = float(np.hypot(plain, other))
            corr = float(np.corrcoef(mine, ref)[0, 1])
            out.append(f"| `{spec}` | {table['name']} | `{o['opponent']}` | {mine.size} | "
                       f"{plain:.1f} | {paired:.1f} | {unpaired:.1f} | {paired / plain:.2f} | "
                       f"{paired / unpaired:.2f} | {corr:+.2f} |")  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="+", help="agents with a committed card (not expert)")
    args = parser.parse_args()
    reference = json.loads((CARDS / "expert" / "card.json").read_text())
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
