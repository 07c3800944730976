"""How much the policy-weighted belief knows about the hidden cards (issue 31 §1).

On held-out games of four ``expert`` players (standard game, seeds from ``--seed`` on, never
used elsewhere), at seat 0's decisions with a choice where PIMC searches (some player holds
``ENDGAME`` cards or fewer), it draws ``--candidates`` uniform consistent worlds
(:func:`craits.agents.search_sampling.compiled_samples`) and weighs them with
:class:`craits.agents.belief.PolicyBelief`. Both samplers' marginals — the probability that
each unseen card lies with each opponent or in the stock, the uniform one giving every
candidate the same weight — are smoothed towards the hand sizes' proportions
(``--smoothing``) and scored on the true location of every unseen card:

- **bits per hidden card**: the mean ``log2`` probability of the true location, and the
  belief's gain over the uniform sampler;
- **calibration**: the predicted probability that an opponent holds a card, in deciles,
  against how often it did;
- **cost**: milliseconds per world of the uniform sampler and of the belief (sampling and
  weighting), and the belief's effective sample size.

``python experiments/belief_diagnostics.py --games 60 --out experiments/results/belief``
writes ``diagnostics_T1.json`` and ``.md`` there (``T``: the temperature) and prints them.
``--time N`` times both searchers on the same ``N`` searched decisions instead; ``--paired A B``
compares two duplicate tournaments of one searcher against three ``expert`` on the same deals
(``craits tournament`` directories): each searcher's win rate and mean game score, and their
difference per deal (the mean over the deal's rotations), with 95% intervals.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

from craits.agents.belief import PolicyBelief
from craits.agents.heuristics import ExpertAgent
from craits.agents.pimc import ENDGAME
from craits.agents.search_sampling import compiled_samples
from craits_env import Game, Rules
from craits_env.jsonl import find_jsonl, read_jsonl
from craits_env.public import PublicGame, SeatView

DECILES = 10
SEARCHERS = ("champion-search", "belief-search")


def locations(view: SeatView, row: list[int]) -> dict[int, int]:
    """Card -> location in a world row: 0..n-2 the opponents in seat order, n-1 the stock."""
    where: dict[int, int] = {}
    at = 0
    loc = 0
    for s, k in enumerate(view.hand_sizes):
        if s == view.seat:
            continue
        for c in row[at : at + k]:
            where[c] = loc
        at += k
        loc += 1
    for c in row[at:]:
        where[c] = loc
    return where


def marginals(view: SeatView, rows: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``m[card, location]``: the weighted share of the worlds placing the card there."""
    n = view.num_players
    m = np.zeros((52, n))
    sizes = [k for s, k in enumerate(view.hand_sizes) if s != view.seat]
    loc_of_slot = np.concatenate(
        [np.full(k, i) for i, k in enumerate(sizes)] + [np.full(rows.shape[1] - sum(sizes), n - 1)]
    ).astype(np.int64)
    for r, w in zip(rows, weights, strict=True):
        m[r, loc_of_slot] += w
    return m


def measure(
    args: argparse.Namespace, learned: Callable[[SeatView], np.ndarray] | None = None
) -> dict[str, object]:
    """The diagnostics (module doc); with ``learned`` (a view's marginals ``m[card,
    location]``, e.g. ``experiments/card_locations.py``'s model) scored at the same points too
    (``"learned"``: bits, calibration, ms per point)."""
    belief = PolicyBelief("expert", temperature=args.temperature, epsilon=args.epsilon)
    rng = np.random.default_rng(args.seed)
    agents = [ExpertAgent() for _ in range(4)]
    k = args.candidates
    names = ("uniform", "belief", "learned") if learned else ("uniform", "belief")
    bits: dict[str, list[float]] = {name: [] for name in names}
    calib: dict[str, list] = {name: [] for name in names}  # (predicted, held) per opponent, card
    ess, evidence, t_uniform, t_belief, t_learned = [], [], 0.0, 0.0, 0.0
    sizes0 = {1: 8, 2: 8, 3: 8}
    compiled_samples(1, list(range(32, 52)) + list(range(24)), sizes0, {}, rng)  # compile first
    for g in range(args.games):
        game = Game(4, Rules(), seed=args.seed + g)
        public = PublicGame(game)
        while not game.is_over:
            p = game.current_player
            view = public.view(p)
            if (
                p == 0
                and len(view.legal_actions) > 1
                and min(view.hand_sizes) <= ENDGAME
                and rng.random() < args.every
            ):
                sizes, caps, unseen = belief.layout(view)
                t0 = time.perf_counter()
                compiled_samples(k, unseen, sizes, caps, np.random.default_rng(0))
                t1 = time.perf_counter()
                pool = belief.candidates(view, k, rng)
                t2 = time.perf_counter()
                t_uniform += t1 - t0
                t_belief += t2 - t1
                ess.append(pool.ess)
                steps = view.tracker.steps or []
                evidence.append(len(belief.evidence(view, steps)))
                true_row = [c for s in sizes for c in game.hands[s]] + game.stock
                true = locations(view, true_row)
                n = view.num_players
                share = np.array([len(game.hands[s]) for s in sizes] + [game.stock_size], float)
                share /= share.sum()
                found = {
                    "uniform": marginals(view, pool.rows, np.full(k, 1.0 / k)),
                    "belief": marginals(view, pool.rows, pool.weights),
                }
                if learned is not None:
                    t3 = time.perf_counter()
                    found["learned"] = learned(view)
                    t_learned += time.perf_counter() - t3
                for name, m in found.items():
                    smooth = (1 - args.smoothing) * m + args.smoothing * share
                    bits[name].append(np.mean([np.log2(smooth[c, loc]) for c, loc in true.items()]))
                    for c in unseen:
                        for loc in range(n - 1):
                            calib[name].append((m[c, loc], true[c] == loc))
            public.apply(agents[p].act(view))
    points = len(ess)
    table = {}
    for name, pairs in calib.items():
        pred = np.array([a for a, _ in pairs])
        held = np.array([b for _, b in pairs], float)
        rows = []
        for d in range(DECILES):
            lo, hi = d / DECILES, (d + 1) / DECILES
            sel = (pred >= lo) & ((pred < hi) if d < DECILES - 1 else (pred <= hi))
            rows.append(
                [
                    lo,
                    hi,
                    int(sel.sum()),
                    float(pred[sel].mean()) if sel.any() else None,
                    float(held[sel].mean()) if sel.any() else None,
                ]
            )
        table[name] = rows
    gain = np.array(bits["belief"]) - np.array(bits["uniform"])
    extra: dict[str, object] = {}
    if learned is not None:
        learned_gain = np.array(bits["learned"]) - np.array(bits["uniform"])
        extra = {
            "learned_gain_bits_per_card": float(learned_gain.mean()),
            "learned_gain_stderr": float(learned_gain.std(ddof=1) / np.sqrt(points)),
            "learned_ms_per_point": 1e3 * t_learned / points,
        }
    return {
        "games": args.games,
        "seed": args.seed,
        "candidates": k,
        "points": points,
        "belief": belief.identity,
        "smoothing": args.smoothing,
        "bits_per_card": {name: float(np.mean(v)) for name, v in bits.items()},
        "gain_bits_per_card": float(gain.mean()),
        "gain_stderr": float(gain.std(ddof=1) / np.sqrt(points)),
        "ess_mean": float(np.mean(ess)),
        "ess_median": float(np.median(ess)),
        "evidence_mean": float(np.mean(evidence)),
        "ms_per_world": {
            "uniform": 1e3 * t_uniform / (points * k),
            "belief": 1e3 * t_belief / (points * k),
        },
        "calibration": table,
        **extra,
    }


def time_decisions(count: int, seed: int) -> dict[str, float]:
    """Milliseconds per searched decision of ``belief-search`` and ``champion-search`` at the
    first ``count`` of seat 0's searched decisions in 4 x expert standard games from ``seed``
    (each searcher first acts once, untimed, at the first)."""
    from craits.agents.specs import make_agent

    searchers = {s: make_agent(s, seed=1, num_players=4) for s in SEARCHERS}
    spent = dict.fromkeys(SEARCHERS, 0.0)
    agents = [ExpertAgent() for _ in range(4)]
    done, g = 0, 0
    while done < count:
        game = Game(4, Rules(), seed=seed + g)
        public = PublicGame(game)
        g += 1
        while not game.is_over and done < count:
            p = game.current_player
            view = public.view(p)
            if p == 0 and len(view.legal_actions) > 1 and min(view.hand_sizes) <= ENDGAME:
                for spec, agent in searchers.items():
                    if not done:  # untimed: the compiled rollouts are prepared on first use
                        agent.act(view)
                    t0 = time.perf_counter()
                    agent.act(view)
                    spent[spec] += time.perf_counter() - t0
                done += 1
            public.apply(agents[p].act(view))
    return {spec: 1e3 * t / count for spec, t in spent.items()}


def searcher_games(directory: Path) -> dict[str, tuple[int, float, float]]:
    """Game key -> (deal, the non-expert seat's game score, its win: 1 shared among the
    winners, as the tournament counts it) of a tournament."""
    out = {}
    for _, game in read_jsonl(find_jsonl(directory / "games.jsonl")):
        seat = next(i for i, spec in enumerate(game["specs"]) if spec != "expert")
        won = seat in game["winners"]
        out[game["key"]] = (game["deal"], float(game["scores"][seat]), won / len(game["winners"]))
    return out


def interval(values: np.ndarray) -> tuple[float, float, float]:
    """The mean of per-deal ``values`` and its normal 95% interval."""
    half = 1.96 * values.std(ddof=1) / np.sqrt(len(values))
    return float(values.mean()), float(values.mean() - half), float(values.mean() + half)


def paired(first: Path, second: Path) -> str:
    """The per-deal comparison of two tournaments on the games both hold (module doc)."""
    a, b = searcher_games(first), searcher_games(second)
    shared = sorted(set(a) & set(b))
    count = Counter(a[k][0] for k in shared)
    rotations = max(count.values())  # a deal still being played is left out
    keys = [k for k in shared if count[a[k][0]] == rotations]
    deals = sorted({a[k][0] for k in keys})
    per: dict[str, dict[int, list[tuple[float, float]]]] = {"a": {}, "b": {}}
    for k in keys:
        per["a"].setdefault(a[k][0], []).append(a[k][1:])
        per["b"].setdefault(b[k][0], []).append(b[k][1:])
    score = {x: np.array([np.mean([s for s, _ in per[x][d]]) for d in deals]) for x in per}
    wins = {x: np.array([np.mean([w for _, w in per[x][d]]) for d in deals]) for x in per}
    names = {"a": first.name, "b": second.name}
    out = [
        f"{len(keys)} games on {len(deals)} whole deals held by both; 95% normal intervals over "
        "deals (each deal: the mean of its rotations).",
        "",
        "| | win rate | mean game score |",
        "|---|---|---|",
    ]
    for x in ("a", "b"):
        w, s = interval(wins[x]), interval(score[x])
        out.append(
            f"| `{names[x]}` | {w[0]:.3f} [{w[1]:.3f}, {w[2]:.3f}] | "
            f"{s[0]:.1f} [{s[1]:.1f}, {s[2]:.1f}] |"
        )
    w, s = interval(wins["a"] - wins["b"]), interval(score["a"] - score["b"])
    same = sum(a[k][1] == b[k][1] for k in keys)
    out.append(
        f"| difference per deal (first − second) | {w[0]:+.3f} [{w[1]:+.3f}, {w[2]:+.3f}] "
        f"| {s[0]:+.1f} [{s[1]:+.1f}, {s[2]:+.1f}] |"
    )
    out += ["", f"{same} of the {len(keys)} games ended with the same score for the searcher."]
    return "\n".join(out)


def markdown(r: dict) -> str:
    b, ms = r["bits_per_card"], r["ms_per_world"]
    out = [
        f"{r['points']} decision points of seat 0 in {r['games']} standard games of 4 x expert "
        f"(seeds {r['seed']}…{r['seed'] + r['games'] - 1}), {r['candidates']} candidate worlds "
        f"each, {r['belief']}, smoothing {r['smoothing']}.",
        "",
        "| sampler | log2 P(true location) per hidden card | ms per world |",
        "|---|---|---|",
        f"| uniform consistent | {b['uniform']:.3f} | {ms['uniform']:.4f} |",
        f"| belief | {b['belief']:.3f} | {ms['belief']:.4f} |",
    ]
    if "learned" in b:
        out.append(
            f"| learned card locations | {b['learned']:.3f} | "
            f"{r['learned_ms_per_point']:.4f} per point |"
        )
    out += [
        "",
        f"Gain: **{r['gain_bits_per_card']:+.4f} ± {r['gain_stderr']:.4f} bits per hidden card**; "
        f"effective sample size {r['ess_mean']:.1f} mean, {r['ess_median']:.1f} median of "
        f"{r['candidates']}; {r['evidence_mean']:.1f} opponent decisions read per point.",
    ]
    if "learned" in b:
        gain, err = r["learned_gain_bits_per_card"], r["learned_gain_stderr"]
        out.append(
            f"Learned card locations: **{gain:+.4f} ± {err:.4f} bits per hidden card** "
            "over uniform."
        )
    names = list(r["calibration"])
    out += [
        "",
        "| predicted P(opponent holds card) | "
        + " | ".join(f"pairs ({name}) | mean predicted | held" for name in names)
        + " |",
        "|---|" + "---|---|---|" * len(names),
    ]

    def cell(x: float | None) -> str:
        return "–" if x is None else f"{x:.3f}"

    for rows in zip(*(r["calibration"][name] for name in names), strict=True):
        lo, hi = rows[0][0], rows[0][1]
        cells = " | ".join(f"{v[2]} | {cell(v[3])} | {cell(v[4])}" for v in rows)
        out.append(f"| {lo:.1f}–{hi:.1f} | {cells} |")
    return "\n".join(out)


def parser() -> argparse.ArgumentParser:
    """The command line (module doc)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--seed", type=int, default=31_310_000, help="first game's seed")
    parser.add_argument("--candidates", type=int, default=512)
    parser.add_argument("--every", type=float, default=0.5, help="share of points measured")
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--epsilon", type=float, default=0.1)
    parser.add_argument("--smoothing", type=float, default=0.02)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--time", type=int, default=0, help="only time N searched decisions")
    parser.add_argument(
        "--paired",
        type=Path,
        nargs=2,
        default=None,
        metavar="DIR",
        help="only compare two tournaments on their shared deals",
    )
    return parser


def main() -> None:
    args = parser().parse_args()
    if args.paired:
        print(paired(*args.paired))
        return
    if args.time:
        for spec, ms in time_decisions(args.time, args.seed).items():
            print(f"{spec}: {ms:.1f} ms per searched decision ({args.time} decisions)")
        return
    result = measure(args)
    text = markdown(result)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        name = f"diagnostics_T{args.temperature:g}"
        (args.out / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n")
        (args.out / f"{name}.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
