"""Speed of the engine and of the environment, state size and clone cost
(``craits bench engine``, ``craits bench env``).

The loops are the ones a user runs, in one process: full games of the standard
schedule, each decision a uniformly random legal action, on the engine
(:func:`bench_engine`) or through the wrapped ``craits_v0`` AEC loop
(:func:`bench_env`, whose :func:`run_aec_loop` also drives the peers). Timings
are wall clock and noisy on shared machines; compare ratios measured in the
same run (``experiments/bench_compare.py`` measures the peers beside Craits).
"""

from __future__ import annotations

import gc
import random
import sys
import time
from typing import Any

from .actions import PHASE_GAME_OVER
from .engine import Game
from .rules import Rules


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
    from . import craits_v0

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
