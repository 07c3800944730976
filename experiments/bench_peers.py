"""Throughput of peer ("anchor") card-game engines, measured in the same run as Craits.

Our own benchmark reports Craits' speed as a ratio to these peers, measured on the same
machine in the same process run, so that the ratio means something across machines.

What is measured
----------------
* ``rlcard_uno``: RLCard's UNO (``rlcard.make("uno", config={"seed": seed})``, its default
  two players). Loop: ``state, pid = env.reset()``; then repeatedly pick a uniformly random
  legal action from ``state["legal_actions"]`` (with ``random.Random(seed)``), call
  ``state, pid = env.step(action)``, and when ``env.is_over()`` count a game and reset.
  ``steps`` counts every ``env.step`` call (every step is a player decision; RLCard has no
  separate chance nodes); ``games`` counts finished games only.
* ``openspiel_crazy_eights``: OpenSpiel's ``pyspiel.load_game("crazy_eights")`` with its
  default parameters (5 players, ``max_turns=100``). Chance nodes are resolved by sampling
  from ``state.chance_outcomes()``; decision nodes take a uniformly random legal action.
  ``decisions`` counts decision-node actions only; chance actions (the deal) are counted
  separately as ``chance_steps`` and are not part of ``decisions_per_s``.

Both loops run single-threaded for ``seconds`` of wall time (``time.perf_counter``); the
clock is checked every ``CHECK_EVERY`` steps, so the measured time overshoots the target by
at most one such batch. The time includes the random policy's own cost (Python ``random``)
and game resets, which is what a user of the engine pays as well.

Installing the peers
--------------------
The peers are optional: ``pip install -e .[bench]`` (RLCard and OpenSpiel). A peer that is
not importable is reported as missing (``None``), never as an error.

Usage::

    python experiments/bench_peers.py --seconds 5
    python experiments/bench_peers.py --seconds 5 --json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from importlib import metadata
from typing import Any

# Check the clock once per this many engine steps.
CHECK_EVERY = 256

INSTALL_HINT = "pip install -e .[bench]"

PeerResult = dict[str, Any]


def _dist_version(*names: str) -> str | None:
    """Installed version of the first distribution found among ``names``."""
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def bench_rlcard_uno(seconds: float, seed: int = 0) -> PeerResult | None:
    """Random-policy self-play throughput of RLCard's UNO; ``None`` if RLCard is missing."""
    try:
        import rlcard
    except ImportError:
        return None

    env = rlcard.make("uno", config={"seed": seed})
    rng = random.Random(seed)
    choice = rng.choice
    step = env.step
    is_over = env.is_over

    steps = 0
    games = 0
    start = time.perf_counter()
    deadline = start + seconds
    state, _pid = env.reset()
    while True:
        for _ in range(CHECK_EVERY):
            action = choice(list(state["legal_actions"]))
            state, _pid = step(action)
            steps += 1
            if is_over():
                games += 1
                state, _pid = env.reset()
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start

    return {
        "name": "rlcard_uno",
        "version": getattr(rlcard, "__version__", None) or _dist_version("rlcard"),
        "steps": steps,
        "games": games,
        "seconds": elapsed,
        "steps_per_s": steps / elapsed,
        "games_per_s": games / elapsed,
    }


def bench_openspiel_crazy_eights(seconds: float, seed: int = 0) -> PeerResult | None:
    """Random-policy self-play throughput of OpenSpiel's crazy_eights; ``None`` if missing."""
    try:
        import pyspiel
    except ImportError:
        return None

    game = pyspiel.load_game("crazy_eights")
    rng = random.Random(seed)
    choice = rng.choice
    choices = rng.choices
    new_state = game.new_initial_state

    decisions = 0
    chance_steps = 0
    games = 0
    start = time.perf_counter()
    deadline = start + seconds
    state = new_state()
    while True:
        for _ in range(CHECK_EVERY):
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                actions = [action for action, _prob in outcomes]
                weights = [prob for _action, prob in outcomes]
                state.apply_action(choices(actions, weights=weights)[0])
                chance_steps += 1
            else:
                state.apply_action(choice(state.legal_actions()))
                decisions += 1
            if state.is_terminal():
                games += 1
                state = new_state()
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start

    return {
        "name": "openspiel_crazy_eights",
        "version": _dist_version("open_spiel", "open-spiel"),
        "players": game.num_players(),
        "decisions": decisions,
        "chance_steps": chance_steps,
        "games": games,
        "seconds": elapsed,
        "decisions_per_s": decisions / elapsed,
        "games_per_s": games / elapsed,
    }


PEERS: dict[str, Callable[[float, int], PeerResult | None]] = {
    "rlcard_uno": bench_rlcard_uno,
    "openspiel_crazy_eights": bench_openspiel_crazy_eights,
}


def run_all(seconds: float, seed: int = 0) -> dict[str, PeerResult | None]:
    """Run every peer benchmark; a missing peer maps to ``None``."""
    return {name: bench(seconds, seed) for name, bench in PEERS.items()}


def _format_table(results: dict[str, PeerResult | None]) -> str:
    header = (
        f"{'peer':<24} {'version':<9} {'steps':>10} {'games':>8} {'steps/s':>12} {'games/s':>10}"
    )
    lines = [header, "-" * len(header)]
    for name, res in results.items():
        if res is None:
            lines.append(f"{name:<24} not installed ({INSTALL_HINT})")
            continue
        steps = res.get("steps", res.get("decisions", 0))
        rate = res.get("steps_per_s", res.get("decisions_per_s", 0.0))
        lines.append(
            f"{name:<24} {res.get('version')!s:<9} {steps:>10d} {res['games']:>8d} "
            f"{rate:>12,.0f} {res['games_per_s']:>10,.1f}"
        )
    lines.append("(openspiel_crazy_eights: steps = decisions only, chance steps excluded)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=5.0, help="wall time per peer (default: 5)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for engine and policy")
    parser.add_argument("--json", action="store_true", help="print results as JSON")
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error("--seconds must be positive")

    results = run_all(args.seconds, args.seed)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(_format_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
