"""How far a value function close to the players' own takes the luck-adjusted estimator.

Full games of the standard table by four ``expert`` (deterministic players: every point of
variance is the cards'), each corrected twice: by the shipped value model
(:class:`craits.agents.luck.LuckEstimator`) and by compiled rollout values
(:class:`craits.agents.luck_rollouts.RolloutLuck`: ``V`` the mean of ``R`` plays of the rest of
the hand by four compiled ``expert`` with common random numbers, each event's expectation
over ``K`` sampled outcomes). Printed and written (``experiments/results/luck/rollouts.md``):
the standard deviation of the adjusted scores over the plain ones, of one seat's score and of
the four seats' total (what a duplicate deal's mean over rotations sees for ``expert``), the
mean correction a game (zero within its interval: unbiased), and the seconds a game's
corrections take. A ``--rollouts`` entry ``R:S`` values each sampled outcome by the first ``S``
of the ``R`` rollouts only (``sample_rollouts``). Usage::

    python experiments/luck_rollouts.py --games 40 --rollouts 16 64 128 --alternatives 8
    python experiments/luck_rollouts.py --games 40 --rollouts 128:16 256:32 --alternatives 16 \
        --out experiments/results/luck/rollouts_samples.md
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from craits.agents.luck import LuckEstimator
from craits.agents.luck_rollouts import RolloutLuck
from craits.agents.specs import make_agent
from craits_env import Game, Rules
from craits_env.public import PublicGame
from craits_env.records import GameRecorder

SEED = 410_777  # the games' deals: no benchmark suite's
OUT = Path("experiments/results/luck/rollouts.md")


def record(game_number: int) -> dict:
    """A standard game of four ``expert`` (its deal from ``SEED + game_number``)."""
    game = Game(4, Rules(), seed=SEED + game_number)
    public = PublicGame(game)
    recorder = GameRecorder(game, ["expert"] * 4, apply=public.apply)
    agents = [make_agent("expert") for _ in range(4)]
    for agent in agents:
        agent.reset(game_number)
    while not game.is_over:
        seat = game.current_player
        recorder.apply(agents[seat].act(public.views[seat]))
    return recorder.record()


def ratios(points: np.ndarray, corrections: np.ndarray) -> tuple[float, float]:
    """The adjusted standard deviation over the plain one: of a seat's score, of the total."""
    adjusted = points - corrections
    seat = np.sqrt(adjusted.var(axis=0).mean() / points.var(axis=0).mean())
    total = adjusted.sum(1).std() / points.sum(1).std()
    return float(seat), float(total)


def mean_interval(corrections: np.ndarray) -> str:
    per_game = corrections.mean(axis=1)
    half = 1.96 * per_game.std(ddof=1) / np.sqrt(len(per_game))
    return f"{per_game.mean():+.1f} ± {half:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument(
        "--rollouts",
        type=_rollouts,
        nargs="+",
        default=[(16, 16), (64, 64), (128, 128)],
        help="R (rollouts a value) or R:S (S of them a sampled outcome's value)",
    )
    parser.add_argument("--alternatives", type=int, default=8, help="outcomes sampled an event")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    sizes = " ".join(str(r) if r == s else f"{r}:{s}" for r, s in args.rollouts)
    command = (
        f"python experiments/luck_rollouts.py --games {args.games} --rollouts {sizes} "
        f"--alternatives {args.alternatives}" + ("" if args.out == OUT else f" --out {args.out}")
    )
    records = [record(i) for i in range(args.games)]
    points = np.array([r["scores"] for r in records], dtype=np.float64)
    shipped = np.array([LuckEstimator().game(r).corrections for r in records])
    lines = [
        "# Rollout values for the luck-adjusted estimator: what a near-exact value removes",
        "",
        f"`{command}`",
        "",
        f"{args.games} standard games of four `expert` (deals from seed {SEED}); the "
        "standard deviation of the adjusted scores over the plain ones (1 = no gain, 0.5 = "
        "the issue's target), of one seat's score and of the four seats' total (what a "
        "duplicate deal's mean over rotations sees for `expert`); the mean correction a game "
        "with its 95% interval (0 for an unbiased estimator); the seconds a game's "
        "corrections take on one core. Plain standard deviation: "
        f"{np.sqrt(points.var(0).mean()):.0f} a seat, {points.sum(1).std():.0f} the total.",
        "",
        "| corrected by | seat | total | mean correction a game | s a game |",
        "|---|---:|---:|---|---:|",
        f"| the shipped value model | {ratios(points, shipped)[0]:.2f} | "
        f"{ratios(points, shipped)[1]:.2f} | {mean_interval(shipped)} | |",
    ]
    print(lines[-1], flush=True)
    for rollouts, per_sample in args.rollouts:
        values = RolloutLuck(
            4, Rules(), rollouts, args.alternatives, seed=SEED + 1, sample_rollouts=per_sample
        )
        start = time.perf_counter()
        rolled = np.array([values.game(r, (i,)).corrections for i, r in enumerate(records)])
        seconds = (time.perf_counter() - start) / args.games
        seat, total = ratios(points, rolled)
        lines.append(
            f"| rollouts, R = {rollouts}, K = {args.alternatives}"
            + ("" if per_sample == rollouts else f", S = {per_sample}")
            + f" | {seat:.2f} | {total:.2f} | "
            f"{mean_interval(rolled)} | {seconds:.1f} |"
        )
        print(lines[-1], flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")


def _rollouts(text: str) -> tuple[int, int]:
    """``R`` or ``R:S`` (1 <= S <= R) as ``(R, S)``."""
    r, _, s = text.partition(":")
    try:
        pair = int(r), int(s or r)
    except ValueError:
        raise argparse.ArgumentTypeError(f"got {text!r}, allowed R or R:S") from None
    if not 1 <= pair[1] <= pair[0]:
        raise argparse.ArgumentTypeError(f"got {text!r}, allowed R or R:S with 1 <= S <= R")
    return pair


if __name__ == "__main__":
    main()
