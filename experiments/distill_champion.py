"""One round of expert iteration: ``champion-search``'s moves distilled into its policy.

Collects games with the search (``craits.training.distill``: the policy ``--checkpoint`` as the
search's prior, ``--simulations`` rollouts per end-of-hand decision) at one seat against
three ``expert`` or three ``pimc`` (alternating; ``--opponents``), its worlds drawn uniformly
(``champion-search``) or from the belief (``--sampler belief``: ``belief-search``), fine-tunes
the policy on its moves and writes ``OUT/final.pt`` (play it as ``ppo:OUT/final.pt``),
``OUT/samples.npz`` and ``OUT/report.json``. ``--temperature T`` trains every searched
decision towards the softmax of the search's mean values / T points (default: the search's
move where it replaced the policy's). ``--data`` adds samples of earlier rounds; ``--games 0``
only trains on them::

    python experiments/distill_champion.py --checkpoint experiments/results/champion/final.pt \\
        --games 2000 --seed 1001 --workers 2 --out runs/distill_r1

Games are numbered from ``--first`` (collect a round in parts with disjoint numbers, then
``--games 0 --data part1.npz part2.npz``); the samples are the same for any ``--workers``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from dataclasses import asdict
from pathlib import Path

from craits.training.distill import (
    SAMPLERS,
    CollectConfig,
    DistillConfig,
    Samples,
    collect,
    distill,
    save_distilled,
)
from craits_env.fileio import atomic_write_text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", required=True, help="the policy (a craits train .pt)")
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    parser.add_argument("--games", type=int, default=2000, help="games to collect (0: none)")
    parser.add_argument("--first", type=int, default=0, help="the first game's number")
    parser.add_argument("--seed", type=int, default=1001, help="the collection's seed")
    parser.add_argument(
        "--simulations",
        type=int,
        default=2048,
        help="rollouts per searched decision (champion-search: 2048)",
    )
    parser.add_argument(
        "--opponents",
        nargs="+",
        default=["expert", "pimc"],
        help="game i is against three of opponents[i %% len]",
    )
    parser.add_argument(
        "--sampler",
        choices=SAMPLERS,
        default="uniform",
        help="the search's worlds: uniform (champion-search) or belief "
        "(belief-search's expert-weighted belief)",
    )
    parser.add_argument("--workers", type=int, default=1, help="collecting processes")
    parser.add_argument(
        "--data",
        type=Path,
        nargs="*",
        default=[],
        help="samples (.npz) of earlier collections to train on too",
    )
    parser.add_argument("--epochs", type=int, default=DistillConfig.epochs)
    parser.add_argument("--lr", type=float, default=DistillConfig.learning_rate)
    parser.add_argument("--batch-size", type=int, default=DistillConfig.batch_size)
    parser.add_argument(
        "--keep-weight",
        type=float,
        default=DistillConfig.keep_weight,
        help="weight of the decisions where the label is the policy's own",
    )
    parser.add_argument(
        "--temperature",
        type=float,
        default=None,
        help="train searched decisions on softmax(search values / T points)",
    )
    parser.add_argument("--train-seed", type=int, default=DistillConfig.seed)
    args = parser.parse_args(argv)
    if args.games < 0 or args.workers < 1 or args.first < 0:
        parser.error("--games and --first must be >= 0, --workers >= 1")
    try:
        config = DistillConfig(
            epochs=args.epochs,
            batch_size=args.batch_size,
            learning_rate=args.lr,
            keep_weight=args.keep_weight,
            temperature=args.temperature,
            seed=args.train_seed,
        )
        parts = [Samples.load(p) for p in args.data]
        args.out.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        collected = None
        if args.games > 0:
            collect_config = CollectConfig(
                args.checkpoint,
                games=args.games,
                seed=args.seed,
                opponents=tuple(args.opponents),
                simulations=args.simulations,
                first=args.first,
                sampler=args.sampler,
            )
            collected = collect(collect_config, workers=args.workers, progress=True)
            collected.save(args.out / "samples.npz")
            parts.append(collected)
        collect_s = time.perf_counter() - start
        if not parts:
            raise ValueError("nothing to train on: --games 0 and no --data")
        payload, result = distill(args.checkpoint, Samples.concatenate(parts), config)
    except ValueError as e:
        print(f"distill_champion: {e}", file=sys.stderr)
        return 2
    save_distilled(args.out / "final.pt", payload)
    record = {
        "command": "python experiments/distill_champion.py " + shlex.join(argv or sys.argv[1:]),
        "collect_seconds": collect_s,
        "collected": len(collected) if collected is not None else 0,
        "config": asdict(config),
        "report": asdict(result),
    }
    atomic_write_text(args.out / "report.json", json.dumps(record, indent=2) + "\n")
    print(json.dumps({k: v for k, v in asdict(result).items() if k != "epochs"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
