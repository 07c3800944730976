"""The longer proof of sameness: VectorGame against the Python engine over 20,000+ games.

``tests/craits_env/test_vector_differential.py`` runs 2,000 mostly short games in CI; this runs the
same comparison (:func:`craits_env.testing.vector_differential.compare`: legal mask,
observation and snapshot at every decision, rewards and "game over" at every step, final snapshots,
Python games rebuilt from the vector's snapshots) over many more, with the full random
schedules of ``craits_env.testing.random_rules`` (one to three hands of 1–8 cards), every
``--standard_every``-th configuration on the standard 15-hand schedule, and a quarter of
the configurations with uniformly random players (who, under ``voluntary_draw``, draw half
the time: long hands, many reshuffles, shuffle pressures far beyond 64 bits).

It stops at the first difference (exit 1, the configuration and the place in the message)
or after ``--games`` games, and writes ``differential.json`` and ``differential.md``
(command, versions, what was compared) to ``--out``, atomically. Usage::

    python experiments/vector_differential.py --games 20000
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from craits_env import Game, Rules, __version__
from craits_env.fileio import atomic_write_json, atomic_write_text
from craits_env.rewards import REWARD_MODES
from craits_env.seeding import derive_rng
from craits_env.testing import vector_differential as differential
from craits_env.testing.random_rules import random_config

RESULTS = Path(__file__).resolve().parent / "results" / "vector"


@dataclass(frozen=True)
class Config:
    games: int = 20_000
    """stop after at least this many games"""
    seed: int = 0
    """seeds the configurations, the games and the random players"""
    num_envs: int = 4
    """games played side by side in one VectorGame"""
    games_per_config: int = 8
    """games of each configuration"""
    uniform_every: int = 4
    """every k-th configuration has uniformly random players (others rarely draw by choice)"""
    standard_every: int = 20
    """every k-th configuration plays the standard 15-hand schedule (4 games)"""
    out: Path = RESULTS
    """where differential.json and .md go"""


def parse_args(argv: list[str] | None) -> Config:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name, default in asdict(Config()).items():
        kind = type(default)
        ap.add_argument(f"--{name}", type=kind, default=default)
    args = ap.parse_args(argv)
    if args.games < 1 or args.num_envs < 1 or args.games_per_config < 1:
        ap.error("--games, --num_envs and --games_per_config must be >= 1")
    return Config(**vars(args))


def standard_schedule(num_players: int, rules: Rules) -> Rules:
    """``rules`` on the 15-hand schedule, with two decks if one cannot deal it (R1.5)."""
    standard = rules.replace(hand_sizes=Rules().hand_sizes)
    try:
        Game(num_players, standard, seed=0)
    except ValueError:
        standard = standard.replace(num_decks=2)
    return standard


def run(config: Config) -> dict[str, Any]:
    r = random.Random(config.seed)
    total = differential.Tally()
    modes: dict[str, int] = {}
    start = time.perf_counter()
    i = 0
    while total.games < config.games:
        n, rules = random_config(r)
        games = config.games_per_config
        if config.standard_every and i % config.standard_every == config.standard_every - 1:
            rules, games = standard_schedule(n, rules), 4
        mode = r.choice(REWARD_MODES)
        uniform = config.uniform_every and i % config.uniform_every == 0
        seed = int(derive_rng(config.seed, i).integers(1 << 62))
        where = f"config {i} (num_players={n}, reward={mode!r}, seed={seed}, rules={rules})"
        try:
            tally = differential.compare(
                n,
                rules,
                num_envs=config.num_envs,
                games=games,
                seed=seed,
                reward=mode,
                draw_chance=None if uniform else 0.1,
            )
        except differential.Mismatch as e:
            raise SystemExit(f"DIFFERENCE in {where}: {e}") from None
        total.add(tally)
        modes[mode] = modes.get(mode, 0) + tally.games
        i += 1
        if i % 100 == 0:
            print(
                f"{i} configs, {total.games:,} games, {total.decisions:,} decisions, "
                f"{time.perf_counter() - start:,.0f} s",
                flush=True,
            )
    return {
        "result": "no difference",
        "games": total.games,
        "decisions": total.decisions,
        "snapshots_compared": total.snapshots,
        "rebuilds_from_snapshots": total.rebuilds,
        "configurations": total.configs,
        "games_by_players": dict(sorted(total.players.items())),
        "games_by_decks": dict(sorted(total.decks.items())),
        "games_by_reward": dict(sorted(modes.items())),
        "seconds": round(time.perf_counter() - start, 1),
    }


def versions() -> dict[str, str]:
    return {
        "craits": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": metadata.version("numba"),
        "machine": platform.machine(),
    }


def to_markdown(result: dict[str, Any], command: str) -> str:
    by = ", ".join
    return "\n".join(
        [
            "# VectorGame against the Python engine: the longer differential run",
            "",
            f"**{result['result']}** over {result['games']:,} games "
            f"({result['configurations']:,} random configurations, {result['decisions']:,} "
            "decisions).",
            "",
            "At every decision both engines gave the same legal mask, the same observation and "
            "the same snapshot (every key); at every step the same float32 rewards and the same "
            '"game over"; every game\'s final snapshot (scores, winners) was the same; and '
            f"{result['rebuilds_from_snapshots']:,} times a Python game rebuilt from the "
            "vector's snapshot and generator state reproduced it. Configurations: the option "
            "space of `craits_env.testing.random_rules` (every option, one or two decks, one to "
            "three "
            "hands of 1-8 cards, a random decision limit in 10%), every 20th on the standard "
            "15-hand schedule, a quarter with uniformly random players (the rest choose an "
            "optional DRAW with probability 0.1).",
            "",
            f"- snapshots compared: {result['snapshots_compared']:,}",
            "- games by players: "
            + by(f"{k}: {v:,}" for k, v in result["games_by_players"].items()),
            "- games by decks: " + by(f"{k}: {v:,}" for k, v in result["games_by_decks"].items()),
            "- games by reward mode: "
            + by(f"{k}: {v:,}" for k, v in result["games_by_reward"].items()),
            f"- wall time: {result['seconds']:,} s",
            "- versions: " + by(f"{k} {v}" for k, v in result["versions"].items()),
            "",
            f"Reproduce: `{command}`",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    config = parse_args(argv)
    result = run(config)
    result["versions"] = versions()
    result["date"] = time.strftime("%Y-%m-%d")
    command = "python experiments/vector_differential.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    result["command"] = command
    atomic_write_json(config.out / "differential.json", result)
    atomic_write_text(config.out / "differential.md", to_markdown(result, command))
    print(to_markdown(result, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
