"""``craits train``: masked PPO self-play."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from .. import arguments as a


def add_parser(sub: Any) -> None:
    """The ``craits train`` parser."""
    train = sub.add_parser(
        "train",
        help="train a masked PPO agent by self-play; TensorBoard logs, checkpoints, final table",
        description="Masked PPO self-play against an opponent pool (the current network, frozen "
        "past snapshots, heuristic bots). Writes TensorBoard event files, DIR/checkpoints/*.pt "
        "and DIR/final.pt (play it as ppo:DIR), then prints the trained agent's "
        "duplicate tournament table against each evaluation opponent. Named configurations "
        "live in training/configs (default ppo_4p: 45M steps, about 25-40 minutes on a "
        "2-core CPU). Ctrl-C saves a checkpoint at the end of the current update and stops; "
        "--resume DIR continues exactly. With --ray the games are played by --workers rollout "
        "workers on a Ray cluster (synchronous PPO: the same seed and worker count give the "
        "same parameters; a worker that dies is replaced and the run goes on); the run "
        "directory is the same.",
        epilog="A quick run (about a minute): craits train --total-steps 300000 --set "
        "final_eval_deals=20 --set eval_every=0 --out runs/quick. The rules: -r NAME=VALUE and "
        "--short as in craits play and craits tournament, on top of the config's [rules] table "
        "(-r face_cards=true is --set rules.face_cards=true; --short trains and evaluates on "
        "the short game). Extend a finished run: "
        "craits train --resume runs/quick --total-steps 600000 (its evaluation is played "
        "again for the new agent). On a local Ray instance with 2 rollout workers: craits train "
        "--ray --workers 2 --out runs/ray; on a running cluster: --ray auto (or --ray "
        "HOST:PORT). Exit status: 0 done; 1 failed while running (an evaluation game, or a "
        "rollout worker that kept dying; the checkpoints are kept); 2 bad arguments or a "
        "refusal (a Ray cluster unreachable, refusing the token, short of CPUs or with a node "
        "that cannot run a worker; nothing written); 130 interrupted by Ctrl-C or SIGTERM (a "
        "checkpoint is saved: the message gives the --resume command).",
    )
    train.add_argument(
        "--config",
        "-c",
        default=None,
        metavar="NAME",
        help="a configuration name (ppo_4p, ppo_2p, ...) or a .toml file (default ppo_4p)",
    )
    train.add_argument(
        "--total-steps",
        type=a.positive_int,
        default=None,
        metavar="N",
        help="environment steps to train for (every seat's decisions)",
    )
    train.add_argument("--seed", type=int, default=None, help="seed of the run")
    train.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="run directory (default runs/<run name>)",
    )
    train.add_argument(
        "--resume",
        type=Path,
        default=None,
        metavar="PATH",
        help="continue a run exactly from a checkpoint or a run directory (its latest checkpoint)",
    )
    train.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda"),
        default=None,
        help="where the update runs (default: the config's, auto)",
    )
    train.add_argument(
        "--set",
        "-s",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key (a TOML value), e.g. --set "
        "learning_rate=3e-4 --set opponents.greedy=0.5 --set "
        "rules.face_cards=true",
    )
    a.add_rule_args(train)  # -r NAME=VALUE, --short: the rules, as every command spells them
    a.add_ray_arg(train, "play the games on rollout workers")
    train.add_argument(
        "--workers",
        type=a.positive_int,
        default=None,
        metavar="K",
        help="rollout workers with --ray, one CPU each (default 2); each steps "
        "num_games games and collects its share of every batch",
    )
    train.add_argument("--no-progress", action="store_true", help=a.NO_PROGRESS_HELP)
    train.set_defaults(run=run)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Train (or resume) a run and print its final tables."""
    from craits_env.extras import require

    require("train", "craits train")
    if args.workers is not None and args.ray is None:
        parser.error("--workers counts Ray rollout workers: it goes with --ray [ADDRESS]")
    if args.ray is not None:
        require("ray", "craits train --ray")
    a.terminate_as_interrupt()  # SIGTERM: as Ctrl-C (in the loop: a checkpoint, then stop)
    from craits.agents.duplicate_tournament import TournamentError
    from craits.localray import ClusterError
    from craits.training.config import DEFAULT_CONFIG, load_config
    from craits.training.distributed import DEFAULT_WORKERS, RayOptions, WorkersFailed
    from craits.training.train import RunExists, train

    config = None
    if args.resume is not None:
        if args.config is not None or args.seed is not None or args.set or args.rule or args.short:
            parser.error(
                "--resume continues a run with its own configuration: only "
                "--total-steps, --out, --device, --ray, --workers, --no-progress go "
                "with it"
            )
    else:
        overrides = list(args.set)
        if args.seed is not None:
            overrides.append(f"seed={args.seed}")
        try:
            config = load_config(args.config or DEFAULT_CONFIG, overrides)
            config = _with_rule_args(config, args)
        except ValueError as e:
            parser.error(str(e))
    rollouts = None
    if args.ray is not None:
        rollouts = RayOptions(workers=args.workers or DEFAULT_WORKERS, address=args.ray or None)
    try:
        result = train(
            config,
            out=args.out,
            resume=args.resume,
            total_steps=args.total_steps,
            device=args.device,
            rollouts=rollouts,
            progress=not args.no_progress,
        )
    except RunExists as e:
        q = shlex.quote(str(e.out))
        parser.error(
            f"{e.out} already holds a run: continue it with --resume {q}, or choose another --out"
        )
    except ClusterError as e:  # before the first update: nothing written
        a.fail(parser.prog, str(e))
        return 2
    except ValueError as e:
        parser.error(str(e))
    except (TournamentError, WorkersFailed) as e:  # an evaluation game failed (a bot's
        # illegal move), or a rollout worker kept dying
        a.fail(parser.prog, f"{e}; the checkpoints are kept in {args.out or args.resume}")
        return 1
    except KeyboardInterrupt as e:  # a second Ctrl-C, or one before the loop began
        return _train_interrupted(getattr(e, "run_dir", None) or args.resume or args.out)
    if result.interrupted == "training":
        print(
            f"craits train: interrupted at step {result.global_step:,}; checkpoint saved: "
            f"{result.final_checkpoint}; continue with: craits train --resume "
            f"{shlex.quote(str(result.run_dir))}",
            file=sys.stderr,
        )
        return 130
    if result.interrupted == "evaluation":
        print(
            f"craits train: interrupted in the final evaluation; the trained agent is "
            f"{result.final_checkpoint}; finish the evaluation (played games are kept) with: "
            f"craits train --resume {shlex.quote(str(result.run_dir))}",
            file=sys.stderr,
        )
        return 130
    for evaluation in result.evaluations.values():
        print()
        print(evaluation["markdown"].rstrip())
    print(
        f"\n{result.global_step:,} steps in {result.updates} updates, {result.sps:,.0f} steps/s; "
        f"agent: ppo:{result.run_dir}; TensorBoard: tensorboard --logdir "
        f"{result.run_dir}"
    )
    return 0


def _with_rule_args(config: Any, args: argparse.Namespace) -> Any:
    """``config`` with ``-r NAME=VALUE`` and ``--short`` applied to its rules (as
    :func:`craits.arguments.rules_from` reads them: ``--short`` leaves an ``-r hand_sizes``)."""
    from craits_env.rules import Rules

    options = dict(args.rule)
    if args.short and "hand_sizes" not in options:
        options["hand_sizes"] = Rules.short_game().hand_sizes
    if not options:
        return config
    return config.replace(rules={**config.rules.to_dict(), **options})


def _train_interrupted(where: Path | None) -> int:
    """The message for a ``craits train`` interrupted outside the loop's own handling."""
    from craits.training.train import find_checkpoint

    try:
        found = find_checkpoint(where) if where is not None else None
    except ValueError:
        found = None
    if found is not None:
        print(
            f"craits train: interrupted; continue from {found} with: craits train --resume "
            f"{shlex.quote(str(where))}",
            file=sys.stderr,
        )
    else:
        print(
            "craits train: interrupted before the first checkpoint; nothing to resume",
            file=sys.stderr,
        )
    return 130
