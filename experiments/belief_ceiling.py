"""How much a belief must know for the search to play better: information against play.

A measuring instrument, not an agent: :class:`OracleSampler` *reads the true deal* and
draws the search's worlds with a chosen amount of information about it, so the win rate of
``champion-search`` can be read against the bits per hidden card its worlds carry — the
question the beliefs of issue 31 left open (the expert-weighted belief gains +0.064 bits
per card, the learned card-location model +0.094, and neither makes the search stronger;
the search *shown* the opponents' hands wins far more).

Worlds, per searched decision (``n`` = the search's samples):

- ``uniform``: ``champion-search`` itself (no sampler: the uniform consistent worlds);
- ``beta=B``: ``4 n`` uniform consistent candidates (at most 2,048), each weighted by
  ``exp(B * m)``, ``m`` the number of hidden cards it places where they truly are (an
  opponent or the stock), then ``n`` resampled systematically — the belief's machinery,
  with an oracle's likelihood instead of the expert's;
- ``shown``: every opponent's true hand, the stock shuffled (its order stays unknown).

At each searched decision of the oracle variants the worlds' marginals are scored as
``experiments/belief_diagnostics.py`` scores a belief's (smoothed 2% towards the hand sizes'
shares, the mean log2 probability of every hidden card's true location), against the
uniform candidates' at the same point: the information actually handed to the search.

Games: the short game (hands 8…1) or the standard one, 4 players, the searcher
(``champion-search:N``, the champion as its prior) at one seat against three ``expert``;
deal ``d`` is played once per seat rotation by every variant on the same cards and seeds, so
the variants pair deal by deal::

    python experiments/belief_ceiling.py --deals 100 --seed 3132 --short --workers 2 \\
        --out experiments/results/belief/ceiling

``--spread GAMES`` measures instead how concentrated each ``beta``'s worlds are (their
effective sample size and how many of them are distinct) on games of four ``expert``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import multiprocessing
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from craits.agents.arena import play_game
from craits.agents.belief import BeliefSample, PolicyBelief, systematic_resample
from craits.agents.champion import make_champion
from craits.agents.pimc import PIMCAgent
from craits.agents.search_sampling import compiled_samples
from craits.agents.specs import make_agent
from craits_env import Game, Rules
from craits_env.fileio import atomic_write_bytes, atomic_write_text
from craits_env.public import SeatView
from craits_env.seeding import derive_rng, derive_seed

SMOOTHING = 0.02
MAX_CANDIDATES = 2048


@dataclass
class TrueDeal:
    """The game being played, read by the oracle (set before each game)."""

    game: Game | None = None


class OracleSampler:
    """The search's worlds with a chosen share of the truth (module doc): ``beta`` (a
    float: the tempered match count) or ``"shown"`` (the opponents' true hands)."""

    def __init__(self, truth: TrueDeal, beta: float | str) -> None:
        if beta != "shown" and not (isinstance(beta, float) and beta >= 0):
            raise ValueError(f"beta: got {beta!r}, expected a number >= 0 or 'shown'")
        self.truth = truth
        self.beta = beta
        self.layout = PolicyBelief().layout  # the other seats' sizes, bounds, unseen cards
        self.bits: list[tuple[float, float]] = []  # (uniform, these worlds) per decision

    def true_row(self, view: SeatView, sizes: dict[int, int]) -> list[int]:
        game = self.truth.game
        assert game is not None, "OracleSampler: no game set"
        return [c for s in sizes for c in game.hands[s]] + game.stock

    def sample(self, view: SeatView, n: int, rng: np.random.Generator) -> BeliefSample:
        sizes, caps, unseen = self.layout(view)
        truth = self.true_row(view, sizes)
        if sorted(truth) != sorted(unseen):
            raise AssertionError("OracleSampler: the true deal is not the view's unseen cards")
        held = sum(sizes.values())
        slot_loc = slot_locations(sizes, len(unseen))
        true_loc = np.full(52, -1, np.int64)
        true_loc[np.array(truth, np.int64)] = slot_loc
        k = max(n, min(4 * n, MAX_CANDIDATES))
        pool = compiled_samples(k, unseen, sizes, caps, rng)
        if self.beta == "shown":
            rows = np.empty((n, len(unseen)), np.int64)
            for i in range(n):
                rows[i, :held] = truth[:held]
                rows[i, held:] = rng.permutation(truth[held:])
            ess = float(n)
        else:
            matches = (true_loc[pool] == slot_loc[None, :]).sum(1).astype(float)
            logw = float(self.beta) * matches
            weights = np.exp(logw - logw.max())
            weights /= weights.sum()
            rows = pool[systematic_resample(weights, n, rng)]
            ess = float(1.0 / np.sum(weights**2))
        share = np.bincount(slot_loc, minlength=len(sizes) + 1).astype(float)
        share /= share.sum()
        self.bits.append(
            (
                score(pool, slot_loc, true_loc, share, unseen),
                score(rows, slot_loc, true_loc, share, unseen),
            )
        )
        return BeliefSample(rows, np.full(n, 1.0 / n), ess, k)


def slot_locations(sizes: dict[int, int], unseen: int) -> np.ndarray:
    """Per slot of a world row, its location: 0.. the other seats in order, then the stock."""
    parts = [np.full(k, i) for i, k in enumerate(sizes.values())]
    parts.append(np.full(unseen - sum(sizes.values()), len(sizes)))
    return np.concatenate(parts).astype(np.int64)


def score(
    rows: np.ndarray,
    slot_loc: np.ndarray,
    true_loc: np.ndarray,
    share: np.ndarray,
    unseen: list[int],
) -> float:
    """The mean log2 probability the worlds' smoothed marginals give each hidden card's
    true location (``belief_diagnostics``' score)."""
    hits = np.zeros(52)
    for loc in range(len(share)):  # the share of worlds placing each card at its true place
        cols = slot_loc == loc
        cards = rows[:, cols].ravel()
        at = true_loc[cards] == loc
        np.add.at(hits, cards[at], 1.0)
    cards = np.array(unseen, np.int64)
    p = (1 - SMOOTHING) * hits[cards] / len(rows) + SMOOTHING * share[true_loc[cards]]
    return float(np.mean(np.log2(p)))


def play(args: tuple[str, int, int, int, tuple[int, ...], int]) -> dict[str, Any]:
    """One game: variant, deal, rotation (the searcher's seat), the seed, the hand sizes,
    the search's rollouts; the searcher's score, win share, and the searched decisions with
    the sums of their uniform candidates' and their worlds' scores (bits per hidden card)."""
    variant, deal, seat, seed, hand_sizes, simulations = args
    rules = Rules(hand_sizes=hand_sizes)
    seeds = [derive_seed(seed, deal, s) for s in range(4)]
    truth = TrueDeal()
    oracle = None
    if variant != "uniform":
        beta: float | str = "shown" if variant == "shown" else float(variant.split("=")[1])
        oracle = OracleSampler(truth, beta)
    # champion-search:N (make_champion_search), its worlds from the oracle where one is set.
    search = PIMCAgent(
        simulations, seed=seeds[seat], prior=make_champion("", seeds[seat]), sampler=oracle
    )
    agents = [
        search if s == seat else make_agent("expert", seed=seeds[s], num_players=4, rules=rules)
        for s in range(4)
    ]
    game = Game(4, rules, rng=derive_rng(seed, deal))
    truth.game = game
    start = time.process_time()
    play_game(game, agents, seeds)
    winners = game.winners()
    bits = oracle.bits if oracle else []
    return {
        "variant": variant,
        "deal": deal,
        "seat": seat,
        "score": game.scores[seat],
        "win": (seat in winners) / len(winners),
        "cpu_s": time.process_time() - start,
        "decisions": len(bits),
        "bits_uniform": sum(u for u, _ in bits),
        "bits_worlds": sum(w for _, w in bits),
    }


def compact(game: dict[str, Any]) -> dict[str, Any]:
    """A game's record as stored: its sums to 6 decimals, its CPU seconds to 3."""
    out = dict(game)
    for key in ("bits_uniform", "bits_worlds"):
        out[key] = round(float(game[key]), 6)
    out["cpu_s"] = round(float(game["cpu_s"]), 3)
    return out


def interval(x: np.ndarray) -> tuple[float, float, float]:
    half = 1.96 * x.std(ddof=1) / math.sqrt(len(x)) if len(x) > 1 else math.nan
    return float(x.mean()), float(x.mean() - half), float(x.mean() + half)


def ci(x: np.ndarray, spec: str) -> str:
    """``mean [low, high]`` of per-deal values, formatted with ``spec``."""
    m, lo, hi = interval(x)
    return f"{m:{spec}} [{lo:{spec}}, {hi:{spec}}]"


def report(games: list[dict[str, Any]], variants: list[str], title: str) -> str:
    """The markdown table: per variant, win rate and mean score (per-deal means, normal 95%
    intervals), the difference per deal against ``uniform``, and the worlds' bits."""
    per: dict[str, dict[int, list[dict[str, Any]]]] = {v: {} for v in variants}
    for g in games:
        per[str(g["variant"])].setdefault(int(g["deal"]), []).append(g)
    deals = sorted(set.intersection(*(set(d) for d in per.values())))

    def means(v: str, key: str) -> np.ndarray:
        return np.array([np.mean([float(g[key]) for g in per[v][d]]) for d in deals])

    lines = [
        title,
        "",
        "| worlds | bits per hidden card (these worlds − uniform) | win rate "
        "[95%] | mean game score [95%] | per deal − uniform: win rate | score | CPU s a "
        "game |",
        "|---|---|---|---|---|---|---|",
    ]
    for v in variants:
        mine = [g for g in games if g["variant"] == v]
        count = sum(int(g["decisions"]) for g in mine)
        gained = sum(float(g["bits_worlds"]) - float(g["bits_uniform"]) for g in mine)
        bits = f"{gained / count:+.3f} ({count} decisions)" if count else "0"
        dw = ds = "—"
        if v != "uniform":
            dw = ci(means(v, "win") - means("uniform", "win"), "+.3f")
            ds = ci(means(v, "score") - means("uniform", "score"), "+.1f")
        cpu = np.mean([float(g["cpu_s"]) for g in mine])
        win, points = ci(means(v, "win"), ".3f"), ci(means(v, "score"), ".1f")
        lines.append(f"| `{v}` | {bits} | {win} | {points} | {dw} | {ds} | {cpu:.1f} |")
    lines += ["", f"{len(deals)} deals, every seat rotation ({4 * len(deals)} games a variant)."]
    return "\n".join(lines)


def spread(games: int, seed: int, betas: list[float]) -> str:
    """How concentrated each ``beta``'s worlds are: at seat 0's end-of-hand decisions with a
    choice (three in ten, at random) of ``games`` standard games of four ``expert``, the
    median effective sample size over the candidates and share of distinct worlds drawn."""
    from craits.agents.heuristics import ExpertAgent
    from craits_env.public import PublicGame

    ess: dict[float, list[float]] = {b: [] for b in betas}
    distinct: dict[float, list[float]] = {b: [] for b in betas}
    pick = np.random.default_rng(seed)
    points = 0
    for g in range(games):
        game = Game(4, Rules(), seed=seed + g)
        public, agents = PublicGame(game), [ExpertAgent() for _ in range(4)]
        while not game.is_over:
            p = game.current_player
            view = public.view(p)
            if (
                p == 0
                and len(view.legal_actions) > 1
                and min(view.hand_sizes) <= 3
                and pick.random() < 0.3
            ):
                n = 2048 // len(view.legal_actions)  # champion-search's worlds
                for b in betas:
                    oracle = OracleSampler(TrueDeal(game), b)
                    out = oracle.sample(view, n, np.random.default_rng(points))
                    ess[b].append(out.ess / out.candidates)
                    distinct[b].append(len({tuple(r) for r in out.rows.tolist()}) / n)
                points += 1
            public.apply(agents[p].act(view))
    lines = [
        f"{points} end-of-hand decisions of {games} standard games (seeds {seed}…): medians",
        "",
        "| beta | effective sample size ÷ candidates | distinct worlds ÷ worlds |",
        "|---|---|---|",
    ]
    for b in betas:
        lines.append(f"| {b:g} | {np.median(ess[b]):.3f} | {np.median(distinct[b]):.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=100)
    parser.add_argument("--seed", type=int, default=3132)
    parser.add_argument("--short", action="store_true", help="the short game (hands 8…1)")
    parser.add_argument("--simulations", type=int, default=2048)
    parser.add_argument(
        "--variants", nargs="+", default=["uniform", "beta=0.25", "beta=0.5", "beta=1", "shown"]
    )
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--spread",
        type=int,
        default=0,
        metavar="GAMES",
        help="only measure how concentrated each beta's worlds are, on "
        "GAMES games of four expert (seeds --seed on): spread.md",
    )
    args = parser.parse_args(argv)
    if args.spread:
        betas = [float(v[5:]) for v in args.variants if v.startswith("beta=") and _number(v[5:])]
        text = spread(args.spread, args.seed, betas)
        args.out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(args.out / "spread.md", text + "\n")
        print(text)
        return 0
    if args.deals < 2 or args.workers < 1 or args.simulations < 1:
        parser.error("--deals >= 2, --workers >= 1 and --simulations >= 1 expected")
    for v in args.variants:
        if v not in ("uniform", "shown") and not (v.startswith("beta=") and _number(v[5:])):
            parser.error(f"--variants: got {v!r}, expected uniform, shown or beta=B (B >= 0)")
    if "uniform" not in args.variants:
        parser.error("--variants: the comparison needs 'uniform'")
    rules = Rules.short_game() if args.short else Rules()
    jobs = [
        (v, d, r, args.seed, tuple(rules.hand_sizes), args.simulations)
        for d in range(args.deals)
        for r in range(4)
        for v in args.variants
    ]
    with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
        games = list(pool.imap(play, jobs, chunksize=1))
    game_name = "short game (8…1)" if args.short else "standard game"
    command = " ".join(sys.argv[1:] if argv is None else argv)
    title = (
        f"`champion-search:{args.simulations}` against three `expert`, {game_name}, "
        f"seed {args.seed}: worlds with more of the truth (`{command}`)"
    )
    text = report(games, args.variants, title)
    args.out.mkdir(parents=True, exist_ok=True)
    stored = json.dumps([compact(g) for g in games], separators=(",", ":"))
    packed = gzip.compress((stored + "\n").encode(), mtime=0)  # every game: kept compressed
    atomic_write_bytes(args.out / "ceiling.json.gz", packed)
    atomic_write_text(args.out / "ceiling.md", text + "\n")
    print(text)
    return 0


def _number(text: str) -> bool:
    try:
        return float(text) >= 0
    except ValueError:
        return False


if __name__ == "__main__":
    sys.exit(main())
