"""Speed of the engine, of the environment and of the batched engine, state size and clone
cost (``craits bench engine``, ``craits bench env``, ``craits bench vector``).

The loops are the ones a user runs, in one process: full games of the standard
schedule, each decision a uniformly random legal action, on the engine
(:func:`bench_engine`), through the wrapped ``craits_v0`` AEC loop
(:func:`bench_env`, whose :func:`run_aec_loop` also drives the peers), or on B games of
:class:`craits_env.vector.VectorGame` at once (:func:`bench_vector`: every decision's
legal mask and observation produced, finished games reset automatically). Timings
are wall clock and noisy on shared machines; compare ratios measured in the
same run (``experiments/bench_compare.py`` measures the peers beside Craits).
"""

from __future__ import annotations

import gc
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

from craits_env.actions import NUM_ACTIONS, PHASE_GAME_OVER
from craits_env.engine import Game
from craits_env.rules import Rules


def bench_engine(
    seconds: float, num_players: int = 4, rules: Rules | None = None, seed: int = 0
) -> dict[str, Any]:
    """Play random full games for about ``seconds``; decisions/s and games/s."""
    rules = Rules() if rules is None else rules
    policy = random.Random(seed)
    decisions = games = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        g = Game(num_players, rules, seed=seed + games)
        legal_actions, apply, randrange = g.legal_actions, g.apply, policy.randrange
        while g.phase != PHASE_GAME_OVER:
            legal = legal_actions()
            apply(legal[randrange(len(legal))])
            decisions += 1
        games += 1
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start
    return {
        "bench": "engine",
        "num_players": num_players,
        "seconds": round(elapsed, 3),
        "games": games,
        "decisions": decisions,
        "decisions_per_s": round(decisions / elapsed, 1),
        "games_per_s": round(games / elapsed, 3),
        "decisions_per_game": round(decisions / games, 1),
    }


CHECK_EVERY = 256  # steps between clock checks in run_aec_loop


def run_aec_loop(
    env: Any, seconds: float, seed: int, *, mask_in_obs: bool = True
) -> tuple[int, int, float]:
    """The standard AEC loop with a uniformly random masked policy; ``(steps, games, seconds)``.

    ``last()``; a uniformly random action among the mask's legal ones (``obs["action_mask"]``,
    or ``info["action_mask"]`` with ``mask_in_obs=False``); ``step()``. The env is reset with
    ``seed`` once, then without a seed after each episode. ``steps`` counts the steps that took
    an action; the clock is checked after every game and every ``CHECK_EVERY`` steps, and a game
    cut by the deadline counts its steps but not as a game. Used for Craits and for every peer.
    """
    import numpy as np

    flatnonzero = np.flatnonzero
    randrange = random.Random(seed).randrange
    steps = games = 0
    start = time.perf_counter()
    deadline = start + seconds
    out_of_time = False
    env.reset(seed=seed)
    while True:
        for _agent in env.agent_iter():
            obs, _reward, termination, truncation, info = env.last()
            if termination or truncation:
                action = None
            else:
                mask = obs["action_mask"] if mask_in_obs else info["action_mask"]
                legal = flatnonzero(mask)
                action = int(legal[randrange(len(legal))])
            env.step(action)
            if action is not None:
                steps += 1
                if steps % CHECK_EVERY == 0 and time.perf_counter() >= deadline:
                    out_of_time = True
                    break
        if out_of_time:
            break
        games += 1
        if time.perf_counter() >= deadline:
            break
        env.reset()  # seeded once; later episodes continue the env's generator
    elapsed = time.perf_counter() - start
    env.close()
    return steps, games, elapsed


def bench_env(
    seconds: float, num_players: int = 4, rules: Rules | None = None, seed: int = 0
) -> dict[str, Any]:
    """:func:`run_aec_loop` over full games of ``craits_v0.env()`` (the wrapped environment)."""
    from craits_env import craits_v0

    env = craits_v0.env(num_players=num_players, rules=rules)
    steps, games, elapsed = run_aec_loop(env, seconds, seed)
    return {
        "bench": "env",
        "num_players": num_players,
        "seconds": round(elapsed, 3),
        "games": games,
        "steps": steps,
        "steps_per_s": round(steps / elapsed, 1),
        "games_per_s": round(games / elapsed, 3),
        "steps_per_game": round(steps / games, 1) if games else None,
    }


def deep_size(obj: object) -> int:
    """Bytes of ``obj`` and all it references (each object once; types and modules excluded)."""
    seen: set[int] = set()
    stack = [obj]
    total = 0
    skip = (type, type(sys), type(deep_size))
    while stack:
        o = stack.pop()
        if id(o) in seen or isinstance(o, skip):
            continue
        seen.add(id(o))
        total += sys.getsizeof(o)
        stack.extend(gc.get_referents(o))
    return total


def bench_state(
    num_players: int = 4, seed: int = 0, samples: int = 200, clones: int = 20000
) -> dict[str, Any]:
    """Deep size of one live game state (its generator and rules included), sampled along random
    games (mean and max), and the time of ``clone()`` on those states."""
    policy = random.Random(seed)
    states: list[Game] = []
    sizes: list[int] = []
    game_seed = seed
    while len(sizes) < samples:
        g = Game(num_players, seed=game_seed)
        game_seed += 1
        while not g.is_over and len(sizes) < samples:
            legal = g.legal_actions()
            g.apply(legal[policy.randrange(len(legal))])
            if policy.random() < 0.01:
                sizes.append(deep_size(g))
                states.append(g.clone())
    start = time.perf_counter()
    for i in range(clones):
        states[i % len(states)].clone()
    clone_us = (time.perf_counter() - start) / clones * 1e6
    return {
        "state_bytes_mean": round(sum(sizes) / len(sizes)),
        "state_bytes_max": max(sizes),
        "clone_us": round(clone_us, 2),
    }


VECTOR_NUM_ENVS = 1024  # craits bench vector's default batch: the state stays in the caches


def bench_vector(
    seconds: float,
    num_players: int = 4,
    rules: Rules | None = None,
    seed: int = 0,
    num_envs: int = VECTOR_NUM_ENVS,
) -> dict[str, Any]:
    """B = ``num_envs`` games of :class:`~craits_env.vector.VectorGame` for about ``seconds``:
    each step draws a uniformly random legal action per game from the current masks
    (compiled, :class:`~craits_env.vector.RandomPolicy`) and steps them all, writing every
    game's next legal mask and observation (``step(..., observe_into=, mask_into=)``),
    finished games resetting automatically. ``decisions_per_s`` counts one decision per game
    and step; ``compile_s`` is this process's first use (importing numba, loading the cached
    kernels or compiling them, and the first full step)."""
    start = time.perf_counter()
    from craits_env.vector import RandomPolicy, VectorGame

    vg = VectorGame(num_envs, num_players, rules, seed=seed)
    policy = RandomPolicy(seed)
    mask = np.empty((num_envs, NUM_ACTIONS), np.int8)
    obs = np.empty((num_envs, vg.obs_size), np.float32)
    actions = np.empty(num_envs, np.int64)

    def one_step() -> int:
        policy.actions(mask, actions)
        return int(vg.step(actions, observe_into=obs, mask_into=mask)[1].sum())

    vg.legal_mask(mask)
    vg.observe(obs)
    one_step()
    compile_s = time.perf_counter() - start
    steps = games = 0
    start, cpu = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        games += one_step()
        steps += 1
        if steps % 16 == 0 and time.perf_counter() >= deadline:
            break
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    decisions = steps * num_envs
    return {
        "bench": "vector",
        "num_players": num_players,
        "num_envs": num_envs,
        "seconds": round(elapsed, 3),
        "cpu_seconds": round(cpu, 3),
        "decisions": decisions,
        "decisions_per_s": round(decisions / elapsed, 1),
        "games": games,
        "games_per_s": round(games / elapsed, 3),
        "obs_size": vg.obs_size,
        "compile_s": round(compile_s, 3),
        "memory_bytes_per_game": vg.memory_bytes() // num_envs,
    }


def _first_use_in_subprocess(num_players: int, rules: Rules, cache_dir: str) -> float:
    """Seconds a fresh interpreter takes from ``import craits_env.vector`` to its first full
    step, with numba's cache in ``cache_dir``."""
    code = (
        "import json, sys, time\n"
        "from craits_env.rules import Rules\n"
        "from craits.bench import bench_vector\n"
        "rules = Rules.from_dict(json.loads(sys.argv[2]))\n"
        "print(bench_vector(0.0, int(sys.argv[1]), rules, num_envs=64)['compile_s'])\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    out = subprocess.run(
        [sys.executable, "-c", code, str(num_players), json.dumps(rules.to_dict())],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def bench_vector_compile(num_players: int = 4, rules: Rules | None = None) -> dict[str, Any]:
    """The cold compile (a fresh interpreter, an empty numba cache directory) and the cached
    one (a second interpreter, the same directory): seconds from ``import craits_env.vector``
    to the first full step."""
    rules = Rules() if rules is None else rules
    with tempfile.TemporaryDirectory(prefix="craits-numba-") as cache_dir:
        cold = _first_use_in_subprocess(num_players, rules, cache_dir)
        cached = _first_use_in_subprocess(num_players, rules, cache_dir)
    return {"compile_cold_s": round(cold, 2), "compile_cached_s": round(cached, 2)}
