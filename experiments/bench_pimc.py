"""PIMC on the compiled engine against the Python one, on the same searched decisions.

In one run, over a fixed set of searched decisions (the end of a hand: some player holds
``craits.agents.pimc.ENDGAME`` cards or fewer, several legal actions, no declaration) from real
4-player games of four ``expert`` bots — the short game (hands 8 … 1) and the standard
game — measured in ``--rounds`` interleaved rounds (medians reported):

* **rollouts per second**: the same samples' rollouts (every legal action of each of the
  ``128 // len(legal)`` samples of a decision, from the same generator state) played by the
  Python engine (``Game.clone`` + ``rollout_value``) and by
  :class:`craits.agents.search_rollouts.Rollouts` (one compiled call per decision); their
  values are checked equal;
* **milliseconds per searched decision** of ``PIMCAgent(128)`` with ``engine="python"``
  and ``engine="compiled"`` (sampling, checks and rollouts: the whole ``act``), checked to
  choose the same actions;
* the **equal-time budget**: compiled ``pimc:N`` for a few N, the N whose time per searched
  decision matches Python ``pimc:128`` (interpolated, rounded to a multiple of 32), and
  that N timed again against Python ``pimc:128`` in interleaved rounds (if it is more than
  5% off, N is rescaled by the ratio once and timed again; the closer one is reported).

Writes ``experiments/results/pimc/bench_pimc.json`` and ``.md`` atomically. With
``--ladder RESULTS``, instead writes ``experiments/results/pimc/ladder_equal_time.md`` from
the equal-time tournament's ``results.json`` (and its ``games.jsonl``): the ladder table,
and the paired per-deal differences of mean game score with bootstrap intervals. Usage::

    python experiments/bench_pimc.py --positions 150 --rounds 3
    craits tournament expert pimc pimc:N tactician --players 4 --deals 600 --schedule cycle \
        --short --workers 1 --seed 0 --out experiments/results/pimc/ladder
    python experiments/bench_pimc.py --ladder experiments/results/pimc/ladder/results.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from craits.agents.hidden_cards import sample_hidden, seat_caps
from craits.agents.pimc import ENDGAME, PIMCAgent
from craits.agents.rollout_policy import rollout_value
from craits.agents.search_rollouts import Rollouts
from craits.agents.specs import make_agent
from craits_env import Game, Phase, Rules
from craits_env.fileio import atomic_write_json, atomic_write_text
from craits_env.jsonl import find_jsonl, read_jsonl
from craits_env.public import PublicGame, SeatView

RESULTS = Path(__file__).resolve().parent / "results" / "pimc"
SHORT = Rules(hand_sizes=(8, 7, 6, 5, 4, 3, 2, 1))
GAMES = {"short": SHORT, "standard": Rules()}
PLAYERS = 4
BUDGET = 128  # pimc's default: the Python anchor
GRID = (128, 256, 512, 1024, 2048)
ROUND_TO = 32
CHECKS = 2  # equal-time candidates timed against Python pimc:128 (the closest is kept)
TOLERANCE = 0.05  # a candidate within 5% of Python's time is kept at once
BOOTSTRAP = 10_000  # resamples of the paired differences' intervals


def searched_decisions(rules: Rules, count: int, seed: int, every: int = 3) -> list[SeatView]:
    """``count`` searched decisions (every ``every``-th one met) of 4-expert games, each
    frozen: a clone of the game with a copy of the public record."""
    out: list[SeatView] = []
    game_seed = seed
    met = 0
    while len(out) < count:
        game = Game(PLAYERS, rules, seed=game_seed)
        bots = [make_agent("expert", game_seed * 10 + s) for s in range(PLAYERS)]
        game_seed += 1
        pub = PublicGame(game)
        while not game.is_over and len(out) < count:
            seat = game.current_player
            searched = (
                len(game.legal_actions()) > 1
                and game.phase != Phase.DECLARE
                and min(len(h) for h in game.hands) <= ENDGAME
            )
            if searched:
                met += 1
                if met % every == 0:
                    frozen = PublicGame(game.clone())
                    frozen.tracker.restore(pub.tracker.state())
                    out.append(frozen.view(seat))
            pub.apply(bots[seat].act(pub.view(seat)))
    return out


def _samples(view: SeatView, seed: int) -> tuple[list[Game], list[list[int]], dict[int, int]]:
    """The samples of a ``pimc:128`` decision (roots and their hidden cards, seat by seat)."""
    seat = view.seat
    sizes = {s: k for s, k in enumerate(view.hand_sizes) if s != seat}
    caps = {s: seat_caps(view.tracker, s) for s in sizes}
    r = np.random.default_rng(seed)
    roots, rows = [], []
    for _ in range(max(1, BUDGET // len(view.legal_actions))):
        hands, stock = sample_hidden(view.unseen_cards(), sizes, caps, r)
        roots.append(view.determinize(hands, stock, None))
        rows.append([c for s in sizes for c in hands[s]] + stock)
    return roots, rows, sizes


def time_rollouts(views: list[SeatView], prepared: list[Any], engine: str) -> tuple[float, int]:
    """Seconds and rollouts of playing every prepared decision's rollouts on ``engine``."""
    tables: dict[tuple[int, Rules], Rollouts] = {}
    total, count = 0.0, 0
    for i, (view, (roots, rows, sizes, expected)) in enumerate(zip(views, prepared, strict=True)):
        legal = list(view.legal_actions)
        rng = np.random.default_rng(i)
        hand = view.hand_index
        if engine == "python":
            start = time.perf_counter()
            values = []
            for root in roots:
                row = []
                for action in legal:
                    g = root.clone(rng=rng)
                    g.apply(action)
                    row.append(rollout_value(g, view.seat, hand))
                values.append(row)
            total += time.perf_counter() - start
        else:
            key = (view.num_players, view.rules)
            if key not in tables:
                tables[key] = Rollouts(*key)
            owners = [s for s in sizes for _ in range(sizes[s])]
            owners += [-1] * (len(rows[0]) - len(owners))
            cards, own = np.array(rows, np.int64), np.array(owners, np.int64)
            start = time.perf_counter()
            tables[key].load(roots[0])
            out, _ = tables[key].values(cards, own, legal, view.seat, rng.bit_generator.state)
            total += time.perf_counter() - start
            assert out is not None
            values = out.tolist()
        if expected:
            assert values == expected[0], f"decision {i}: the engines' rollout values differ"
        else:
            expected.append(values)
        count += len(roots) * len(legal)
    return total, count


def time_decisions(views: list[SeatView], agent: PIMCAgent) -> tuple[float, list[int]]:
    """Mean seconds per searched decision of ``agent`` (reseeded per decision), its actions."""
    actions = []
    start = time.perf_counter()
    for i, view in enumerate(views):
        agent.reset(i)
        actions.append(agent.act(view))
    return (time.perf_counter() - start) / len(views), actions


def equal_time_budget(python_ms: float, grid_ms: dict[int, float]) -> int:
    """The N at which the compiled time per decision (linear between the grid's points,
    extrapolated from the last two) equals ``python_ms``; a multiple of ROUND_TO."""
    ns = sorted(grid_ms)
    for lo, hi in itertools.pairwise(ns):
        if grid_ms[hi] >= python_ms or hi == ns[-1]:
            slope = (grid_ms[hi] - grid_ms[lo]) / (hi - lo)
            n = lo + (python_ms - grid_ms[lo]) / slope
            return max(ROUND_TO, round(n / ROUND_TO) * ROUND_TO)
    return ns[0]


def paired_differences(games_path: Path, a: str, b: str, seed: int = 0) -> dict[str, Any]:
    """Per deal, the mean over its games of ``a``'s game score minus ``b``'s (both at the
    table); their mean with a 95% percentile bootstrap interval over deals."""
    per_deal: dict[int, list[int]] = {}
    for _, game in read_jsonl(find_jsonl(games_path)):
        specs = game["specs"]
        if a in specs and b in specs:
            diff = game["scores"][specs.index(a)] - game["scores"][specs.index(b)]
            per_deal.setdefault(game["deal"], []).append(diff)
    means = np.array([statistics.mean(v) for v in per_deal.values()])
    rng = np.random.default_rng(seed)
    boot = rng.choice(means, (BOOTSTRAP, means.size)).mean(axis=1)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return {
        "a": a,
        "b": b,
        "deals": int(means.size),
        "mean": float(means.mean()),
        "ci": [float(lo), float(hi)],
    }


def ladder_markdown(results_path: Path, bench: dict[str, Any] | None) -> str:
    """``ladder_equal_time.md``: the equal-time tournament's table and paired differences."""
    from ladder_report import report  # experiments/ladder_report.py (run as a script)

    results = json.loads(results_path.read_text(encoding="utf-8"))
    agents = {x["spec"]: x for x in results["agents"]}
    wide = [s for s in agents if s.startswith("pimc:")]
    if "pimc" not in agents or len(wide) != 1:
        raise ValueError(f"{results_path}: expected pimc and one pimc:N, got {sorted(agents)}")
    wide_spec = wide[0]
    order = tuple(s for s in ("random", "greedy", "tactician", "expert") if s in agents)
    order += ("pimc", wide_spec)
    table, holds = report(results, order)
    games = results_path.parent / "games.jsonl"
    pairs = [
        paired_differences(games, wide_spec, "pimc"),
        paired_differences(games, "pimc", "expert"),
        paired_differences(games, wide_spec, "expert"),
    ]
    cfg = results["config"]
    w, p = agents[wide_spec], agents["pimc"]
    above = w["mean_score"] < p["mean_score"]
    separated = w["mean_score_ci"][1] < p["mean_score_ci"][0]
    paired = pairs[0]
    paired_sep = paired["ci"][1] < 0 or paired["ci"][0] > 0
    timing = ""
    if bench is not None:
        check = bench["equal_time_check_ms"]
        timing = (
            f" `{wide_spec}` is the budget at which the compiled engine spends the time Python "
            f"`pimc` (128) spends per searched decision ({check['compiled']:.1f} ms against "
            f"{check['python']:.1f} ms in [bench_pimc.md](bench_pimc.md)); `pimc` itself now "
            f"runs compiled too ({bench['ms_per_searched_decision']['compiled:128']:.1f} ms)."
        )
    verdict_marginal = (
        f"`{wide_spec}` scores {'lower (better)' if above else 'higher (worse)'} than `pimc`: "
        f"{w['mean_score']:.1f} {list_ci(w['mean_score_ci'], 1)} against "
        f"{p['mean_score']:.1f} {list_ci(p['mean_score_ci'], 1)}; the two intervals "
        f"{'do not overlap' if separated else '**overlap**'}."
    )
    verdict_paired = (
        f"Paired by deal (both sit at every table of this tournament, so the cards' luck "
        f"cancels): `{wide_spec}` minus `pimc` = {paired['mean']:+.2f} "
        f"{list_ci(paired['ci'])} game points per game over {paired['deals']} deals — "
        + ("an interval that excludes 0." if paired_sep else "an interval that **includes 0**.")
    )
    lines = [
        f"# PIMC at equal time per decision: `{wide_spec}` (compiled) against `pimc` (128)",
        "",
        f"A {cfg['players']}-player duplicate tournament of {cfg['deals']:,} deals (seed "
        f"{cfg['seed']}, schedule `{cfg.get('schedule', 'all')}`, {results['games']:,} "
        f"games, every agent at every table); the short game (hands "
        f"{', '.join(map(str, cfg['rules']['hand_sizes']))}), default rules otherwise." + timing,
        "",
        "Mean game score: lower is better; 95% intervals: percentile bootstrap over deals.",
        "",
        table,
        "",
        (
            "Every neighbour is ordered with separated intervals."
            if holds
            else "Not every neighbour is ordered with separated intervals (see the last column)."
        ),
        "",
        verdict_marginal,
        "",
        verdict_paired,
        "",
        "| paired difference of mean game score (per game) | deals | mean [95% CI] |",
        "|---|---:|---|",
    ]
    for d in pairs:
        lines.append(
            f"| `{d['a']}` − `{d['b']}` | {d['deals']} | {d['mean']:+.2f} {list_ci(d['ci'])} |"
        )
    full = (results_path.parent / "results.md").read_text(encoding="utf-8")
    lines += [
        "",
        "Reproduce:",
        "",
        "```bash",
        results["command"],
        f"python experiments/bench_pimc.py --ladder {results_path.as_posix()}",
        "```",
        "",
        "## The full table",
        "",
        full.split("\n", 1)[1] if full.startswith("# ") else full,
    ]
    return "\n".join(lines)


def list_ci(ci: list[float], digits: int = 2) -> str:
    return f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--positions", type=int, default=150, help="searched decisions per game kind")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (medians)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument(
        "--ladder",
        type=Path,
        metavar="RESULTS",
        help="write ladder_equal_time.md from this tournament's results.json",
    )
    args = ap.parse_args(argv)
    if args.ladder is not None:
        bench_path = args.out / "bench_pimc.json"
        bench = json.loads(bench_path.read_text(encoding="utf-8")) if bench_path.exists() else None
        text = ladder_markdown(args.ladder, bench)
        atomic_write_text(args.out / "ladder_equal_time.md", text)
        print(text)
        return 0
    views: list[SeatView] = []
    kinds: dict[str, int] = {}
    for k, (kind, rules) in enumerate(GAMES.items()):
        found = searched_decisions(rules, args.positions, args.seed + 1000 * k)
        views += found
        kinds[kind] = len(found)
    legal_mean = statistics.mean(len(v.legal_actions) for v in views)
    print(f"{len(views)} searched decisions, {legal_mean:.2f} legal actions on average")
    prepared: list[Any] = [(*_samples(v, i), []) for i, v in enumerate(views)]
    bots = {"python": PIMCAgent(BUDGET, engine="python")}
    bots |= {f"compiled:{n}": PIMCAgent(n, engine="compiled") for n in GRID}
    time_decisions(views[:3], bots[f"compiled:{GRID[-1]}"])  # load the compiled code
    time_rollouts(views[:3], prepared[:3], "compiled")
    rollouts: dict[str, list[float]] = {"python": [], "compiled": []}
    decision_ms: dict[str, list[float]] = {name: [] for name in bots}
    reference: list[int] | None = None
    for k in range(args.rounds):
        for engine in rollouts:
            seconds, count = time_rollouts(views, prepared, engine)
            rollouts[engine].append(count / seconds)
        for name, bot in bots.items():
            seconds, actions = time_decisions(views, bot)
            decision_ms[name].append(1000 * seconds)
            if name in ("python", f"compiled:{BUDGET}"):
                reference = reference or actions
                assert actions == reference, f"{name} chose other actions than the Python pimc"
        print(f"round {k + 1}: " + ", ".join(f"{n} {v[-1]:.2f} ms" for n, v in decision_ms.items()))
    per_s = {e: statistics.median(v) for e, v in rollouts.items()}
    ms = {n: statistics.median(v) for n, v in decision_ms.items()}
    grid = {n: ms[f"compiled:{n}"] for n in GRID}
    n_equal = equal_time_budget(ms["python"], grid)
    checks: list[dict[str, Any]] = []
    for _ in range(CHECKS):  # measure N against Python pimc:128; rescale N once if it is off
        print(f"equal-time budget: pimc:{n_equal}? timing it against python pimc:{BUDGET}")
        check = {"python": PIMCAgent(BUDGET, engine="python"), "compiled": PIMCAgent(n_equal)}
        check_ms: dict[str, list[float]] = {"python": [], "compiled": []}
        for _ in range(args.rounds):
            for name, bot in check.items():
                check_ms[name].append(1000 * time_decisions(views, bot)[0])
        med = {n: statistics.median(v) for n, v in check_ms.items()}
        checks.append(
            {"n": n_equal, "ms": med, "raw": check_ms, "ratio": med["compiled"] / med["python"]}
        )
        if abs(checks[-1]["ratio"] - 1) <= TOLERANCE:
            break
        n_equal = max(ROUND_TO, round(n_equal / checks[-1]["ratio"] / ROUND_TO) * ROUND_TO)
    best = min(checks, key=lambda c: abs(c["ratio"] - 1))
    n_equal, check_med, check_ms = best["n"], best["ms"], best["raw"]
    command = "python experiments/bench_pimc.py " + shlex.join(
        sys.argv[1:] if argv is None else argv
    )
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, one process",
        "decisions": kinds,
        "players": PLAYERS,
        "mean_legal_actions": round(legal_mean, 2),
        "rounds": args.rounds,
        "rollouts_per_s": {e: round(v) for e, v in per_s.items()},
        "rollout_speedup": round(per_s["compiled"] / per_s["python"], 1),
        "ms_per_searched_decision": {n: round(v, 3) for n, v in ms.items()},
        "decision_speedup_at_128": round(ms["python"] / ms[f"compiled:{BUDGET}"], 2),
        "equal_time_budget": n_equal,
        "equal_time_check_ms": {n: round(v, 3) for n, v in check_med.items()},
        "equal_time_ratio": round(check_med["compiled"] / check_med["python"], 3),
        "equal_time_checks": [{"n": c["n"], "ratio": round(c["ratio"], 3)} for c in checks],
        "raw": {"rollouts_per_s": rollouts, "decision_ms": decision_ms, "check_ms": check_ms},
        "command": command,
    }
    atomic_write_json(args.out / "bench_pimc.json", result)
    atomic_write_text(args.out / "bench_pimc.md", to_markdown(result))
    print(to_markdown(result))
    return 0


def to_markdown(result: dict[str, Any]) -> str:
    ms = result["ms_per_searched_decision"]
    per_s = result["rollouts_per_s"]
    kinds = ", ".join(f"{k} {v}" for k, v in result["decisions"].items())
    rollout_ms_128 = 1000 * BUDGET / per_s["compiled"]
    lines = [
        "# PIMC: compiled rollouts against the Python engine (same run, same decisions)",
        "",
        f"{result['date']}; {result['machine']}; {sum(result['decisions'].values())} searched "
        f"decisions of {result['players']}-player games of four `expert` bots ({kinds}; "
        f"{result['mean_legal_actions']} legal actions on average); medians of "
        f"{result['rounds']} interleaved rounds.",
        "",
        "| | Python engine | compiled | ratio |",
        "|---|---:|---:|---:|",
        f"| rollouts per second (the same samples, same values) | {per_s['python']:,} | "
        f"{per_s['compiled']:,} | **{result['rollout_speedup']}x** |",
        f"| ms per searched decision, `pimc` (128 rollouts) | {ms['python']:.2f} | "
        f"{ms[f'compiled:{BUDGET}']:.2f} | **{result['decision_speedup_at_128']}x** |",
        "",
        "The compiled `pimc` chose the same action as the Python one at every decision (and "
        "the rollouts gave the same values, bit for bit). At 128 rollouts its decision spends "
        f"about {rollout_ms_128:.2f} ms in the rollouts themselves; the rest is drawing the "
        "samples (compiled too), checking each one (`SeatView.determinize`, Python) and the "
        "expert prior's move.",
        "",
        "Compiled `pimc:N`, ms per searched decision:",
        "",
        "| N | " + " | ".join(str(n) for n in GRID) + " |",
        "|---|" + "---:|" * len(GRID),
        "| ms | " + " | ".join(f"{ms[f'compiled:{n}']:.2f}" for n in GRID) + " |",
        "",
        f"**Equal time per searched decision: compiled `pimc:{result['equal_time_budget']}` "
        f"≈ Python `pimc:{BUDGET}`** — measured again in interleaved rounds: "
        f"{result['equal_time_check_ms']['compiled']:.2f} ms against "
        f"{result['equal_time_check_ms']['python']:.2f} ms (ratio "
        f"{result['equal_time_ratio']:.2f}; candidates timed: "
        + ", ".join(f"pimc:{c['n']} {c['ratio']:.2f}" for c in result["equal_time_checks"])
        + ").",
        "",
        f"Reproduce: `{result['command']}`",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
