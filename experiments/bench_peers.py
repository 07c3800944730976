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

Environment-level peers (``ENV_PEERS``, ``--env``)
--------------------------------------------------
The engine peers above skip everything an RL user pays on top of the rules: observation
tensors, action masks and the PettingZoo AEC bookkeeping. ``ENV_PEERS`` measures that level:

* ``pz_texas_holdem``: ``pettingzoo.classic.texas_holdem_v4.env()`` (RLCard limit hold'em,
  two players, with PettingZoo's default wrappers); mask from ``obs["action_mask"]``.
* ``pz_hanabi``: ``pettingzoo.classic.hanabi_v5.env()`` (default: two players, five colours
  and ranks); mask from ``obs["action_mask"]``. PettingZoo 1.27 runs it on OpenSpiel's
  built-in ``hanabi`` through Shimmy; ``hanabi_learning_environment`` (which older PettingZoo
  releases needed instead) is not used.
* ``shimmy_crazy_eights``: ``shimmy.OpenSpielCompatibilityV0(env=pyspiel.load_game(
  "crazy_eights"))`` (Shimmy 2.x spelling; 5 players); mask from ``info["action_mask"]``.
  The wrapper resolves chance nodes itself and computes every player's observation tensor
  after every action.
* ``openspiel_c8_obs``: OpenSpiel's crazy_eights driven directly from Python, building at every
  decision what an RL agent needs: the acting player's ``observation_tensor`` as a float32
  array and an int8 mask of size ``num_distinct_actions()`` from ``legal_actions()``; the
  action is drawn from ``np.flatnonzero(mask)`` as in the AEC loop. Chance nodes are sampled
  as in ``openspiel_crazy_eights`` and not counted as steps.

Batched peer (``bench_pgx_leduc``, for ``bench_compare.py vector``)
------------------------------------------------------------------
* ``pgx_leduc``: pgx's Leduc hold'em (``pgx.make("leduc_holdem")``), B games stepped together
  on JAX CPU with one XLA thread (``bench_pgx.py``, run in its own process because JAX reads
  its thread settings on import): ``vmap``-ed ``step`` under ``pgx.experimental.auto_reset``,
  a uniformly random legal action per game, eight steps per jitted ``lax.scan``; pgx builds
  each game's observation and legal mask in ``step``. Needs ``pip install pgx jax`` (in the
  ``bench`` extra).

The three AEC peers run exactly the standard loop::

    env.reset(seed=seed)
    for agent in env.agent_iter():
        obs, rew, term, trunc, info = env.last()
        if term or trunc:
            action = None
        else:
            legal = np.flatnonzero(mask)              # mask: obs or info "action_mask"
            action = int(legal[rng.randrange(len(legal))])
        env.step(action)

with ``rng = random.Random(seed)``. ``steps`` counts only ``env.step`` calls that took an
action (the ``None`` steps that retire finished agents are not counted, but their time is);
the env is reset with ``seed`` once, at the start; after each finished episode ``games`` is
incremented and the env is reset without a seed (its generator continues). The clock is
checked after every game and every ``CHECK_EVERY`` steps; an
episode cut off by the deadline counts its steps but not as a game. Note that these wrappers
rebuild the underlying engine on reset (``rlcard.make`` on hold'em's resets,
``pyspiel.load_game`` on every Shimmy reset), and Shimmy rebuilds every agent's Gymnasium
spaces on every step; those costs are part of what the loop measures.

Installing the peers
--------------------
The peers are optional: ``pip install -e .[bench]`` (RLCard, OpenSpiel, Shimmy and
``pygame-ce``, which PettingZoo's classic envs import). A peer that is not importable is
reported as missing (``None``), never as an error.

Usage::

    python experiments/bench_peers.py --seconds 5
    python experiments/bench_peers.py --seconds 5 --json
    python experiments/bench_peers.py --seconds 5 --env
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from craits.bench import run_aec_loop

# Check the clock once per this many engine steps.
CHECK_EVERY = 256

INSTALL_HINT = "pip install -e .[bench]"

PeerResult = dict[str, Any]


def _apply_chance(state: Any, choices: Callable[..., list[Any]]) -> None:
    """Resolve an OpenSpiel chance node by sampling its outcome distribution."""
    outcomes = state.chance_outcomes()
    actions = [action for action, _prob in outcomes]
    weights = [prob for _action, prob in outcomes]
    state.apply_action(choices(actions, weights=weights)[0])


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
                _apply_chance(state, choices)
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


# ---------------------------------------------------------------------------------------------
# Environment-level peers (AEC API, observation tensors and action masks)
# ---------------------------------------------------------------------------------------------


try:
    from gymnasium.error import DependencyNotInstalled as _DependencyNotInstalled
except ImportError:  # gymnasium is a core dependency; this only keeps the module importable

    class _DependencyNotInstalled(Exception):  # type: ignore[no-redef]
        pass


def _env_result(
    name: str, version: str | None, steps: int, games: int, elapsed: float, **extra: Any
) -> PeerResult:
    return {
        "name": name,
        "version": version,
        **extra,
        "steps": steps,
        "games": games,
        "seconds": elapsed,
        "steps_per_s": steps / elapsed,
        "games_per_s": games / elapsed,
    }


def _bench_pz_classic(
    module: str, name: str, backend: str, seconds: float, seed: int
) -> PeerResult | None:
    """A PettingZoo classic env (``pettingzoo.classic.<module>.env()``) through the AEC loop."""
    try:
        with warnings.catch_warnings():
            # The module-level "use pettingzoo.make" DeprecationWarning; the env is the same.
            warnings.simplefilter("ignore", DeprecationWarning)
            env_module = importlib.import_module(f"pettingzoo.classic.{module}")
        env = env_module.env()  # hanabi imports Shimmy and OpenSpiel here
    except (ImportError, _DependencyNotInstalled):
        return None
    players = len(env.possible_agents)
    steps, games, elapsed = run_aec_loop(env, seconds, seed, mask_in_obs=True)
    return _env_result(
        name, _dist_version("pettingzoo"), steps, games, elapsed, backend=backend, players=players
    )


def bench_pz_texas_holdem(seconds: float, seed: int = 0) -> PeerResult | None:
    """PettingZoo ``texas_holdem_v4.env()`` through the AEC loop; ``None`` if not importable."""
    backend = "rlcard " + str(_dist_version("rlcard"))
    return _bench_pz_classic("texas_holdem_v4", "pz_texas_holdem", backend, seconds, seed)


def bench_pz_hanabi(seconds: float, seed: int = 0) -> PeerResult | None:
    """PettingZoo ``hanabi_v5.env()`` through the AEC loop; ``None`` if not importable."""
    backend = "open_spiel " + str(_dist_version("open_spiel", "open-spiel"))
    return _bench_pz_classic("hanabi_v5", "pz_hanabi", backend, seconds, seed)


def bench_shimmy_crazy_eights(seconds: float, seed: int = 0) -> PeerResult | None:
    """OpenSpiel crazy_eights via Shimmy's PettingZoo wrapper; ``None`` if not importable."""
    try:
        import pyspiel
        from shimmy import OpenSpielCompatibilityV0
    except ImportError:
        return None

    env = OpenSpielCompatibilityV0(env=pyspiel.load_game("crazy_eights"))
    players = len(env.possible_agents)
    steps, games, elapsed = run_aec_loop(env, seconds, seed, mask_in_obs=False)
    return _env_result(
        "shimmy_crazy_eights",
        _dist_version("shimmy", "Shimmy"),
        steps,
        games,
        elapsed,
        backend="open_spiel " + str(_dist_version("open_spiel", "open-spiel")),
        players=players,
    )


def bench_openspiel_c8_obs(seconds: float, seed: int = 0) -> PeerResult | None:
    """OpenSpiel crazy_eights with a float32 observation and int8 mask at every decision.

    ``None`` if OpenSpiel (or NumPy) is not importable. ``steps`` counts decisions only;
    sampled chance actions are reported as ``chance_steps``.
    """
    try:
        import numpy as np
        import pyspiel
    except ImportError:
        return None

    game = pyspiel.load_game("crazy_eights")
    num_actions = game.num_distinct_actions()
    rng = random.Random(seed)
    randrange = rng.randrange
    choices = rng.choices
    new_state = game.new_initial_state
    asarray = np.asarray
    zeros = np.zeros
    flatnonzero = np.flatnonzero
    float32 = np.float32
    int8 = np.int8

    steps = 0
    chance_steps = 0
    games = 0
    obs_size = 0
    start = time.perf_counter()
    deadline = start + seconds
    state = new_state()
    while True:
        for _ in range(CHECK_EVERY):
            if state.is_chance_node():
                _apply_chance(state, choices)
                chance_steps += 1
            else:
                player = state.current_player()
                obs = asarray(state.observation_tensor(player), dtype=float32)
                mask = zeros(num_actions, dtype=int8)
                mask[state.legal_actions()] = 1
                legal = flatnonzero(mask)
                state.apply_action(int(legal[randrange(len(legal))]))
                obs_size = obs.size
                steps += 1
            if state.is_terminal():
                games += 1
                state = new_state()
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start

    return _env_result(
        "openspiel_c8_obs",
        _dist_version("open_spiel", "open-spiel"),
        steps,
        games,
        elapsed,
        players=game.num_players(),
        obs_size=obs_size,
        num_actions=num_actions,
        chance_steps=chance_steps,
    )


def bench_pgx_leduc(seconds: float, seed: int = 0, num_envs: int = 1024) -> PeerResult | None:
    """pgx's batched Leduc hold'em on JAX CPU, one thread (``bench_pgx.py``, in its own
    process, with this process's CPU affinity); ``None`` if pgx or JAX is not installed."""
    script = Path(__file__).resolve().parent / "bench_pgx.py"
    out = subprocess.run(
        [
            sys.executable,
            str(script),
            "--seconds",
            str(seconds),
            "--seed",
            str(seed),
            "--num-envs",
            str(num_envs),
        ],
        capture_output=True,
        text=True,
    )
    if out.returncode == 3:
        return None
    if out.returncode != 0:
        raise RuntimeError(f"bench_pgx.py failed: {out.stderr.strip().splitlines()[-1:]}")
    result: PeerResult = json.loads(out.stdout.strip().splitlines()[-1])
    return result


ENV_PEERS: dict[str, Callable[[float, int], PeerResult | None]] = {
    "pz_texas_holdem": bench_pz_texas_holdem,
    "pz_hanabi": bench_pz_hanabi,
    "shimmy_crazy_eights": bench_shimmy_crazy_eights,
    "openspiel_c8_obs": bench_openspiel_c8_obs,
}


def run_env_peers(seconds: float, seed: int = 0) -> dict[str, PeerResult | None]:
    """Run every environment-level peer; a missing peer maps to ``None``."""
    return {name: bench(seconds, seed) for name, bench in ENV_PEERS.items()}


def _format_table(results: dict[str, PeerResult | None], note: str) -> str:
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
    lines.append(note)
    return "\n".join(lines)


ENGINE_NOTE = "(openspiel_crazy_eights: steps = decisions only, chance steps excluded)"
ENV_NOTE = "(steps = actions taken; None steps retiring finished agents and chance steps excluded)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=5.0, help="wall time per peer (default: 5)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for engine and policy")
    parser.add_argument("--json", action="store_true", help="print results as JSON")
    parser.add_argument(
        "--env",
        action="store_true",
        help="measure the environment-level peers (ENV_PEERS) instead of the engine peers",
    )
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error("--seconds must be positive")

    if args.env:
        results = run_env_peers(args.seconds, args.seed)
        note = ENV_NOTE
    else:
        results = run_all(args.seconds, args.seed)
        note = ENGINE_NOTE
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(_format_table(results, note))
    return 0


if __name__ == "__main__":
    sys.exit(main())
