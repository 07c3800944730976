"""pgx's batched Leduc hold'em on JAX CPU, one thread: a peer of ``craits bench vector``.

Runs in its own process (``bench_peers.bench_pgx_leduc`` starts it) because JAX reads its
thread settings when it loads: XLA gets one intra-op thread and no Eigen thread pool, and
the process inherits the caller's CPU affinity (``bench_compare.py vector`` pins itself to
one core), so pgx runs on one core like the other contenders.

The loop is pgx's own way of stepping many games: ``jax.vmap`` of ``env.step`` wrapped in
``pgx.experimental.auto_reset`` (a finished game is replaced at once), a uniformly random
legal action per game from ``state.legal_action_mask`` (``jax.random.categorical``), and
``--scan`` steps fused into one jitted ``jax.lax.scan`` per dispatch (fewer Python round
trips than one call per step: pgx at its fastest). pgx computes every game's observation
and legal mask inside ``step``; the scan sums the observations so that they are kept.
Decisions per second = games x steps / seconds; the compile is excluded.

Prints one JSON object; exit status 3 (and nothing on stdout) if pgx or JAX is missing.
Usage::

    python experiments/bench_pgx.py --seconds 5 --num-envs 1024
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from importlib import metadata

os.environ.setdefault(
    "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--num-envs", type=int, default=1024)
    ap.add_argument("--scan", type=int, default=8, help="steps per jitted call")
    args = ap.parse_args(argv)
    try:
        import jax
        import jax.numpy as jnp
        import pgx
        from pgx.experimental import auto_reset
    except ImportError:
        return 3
    batch, scan = args.num_envs, args.scan
    env = pgx.make("leduc_holdem")
    step = jax.vmap(auto_reset(env.step, env.init))

    def body(carry: tuple, _: object) -> tuple:
        state, key = carry
        key, pick, reset = jax.random.split(key, 3)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(pick, logits, axis=-1)
        state = step(state, action, jax.random.split(reset, batch))
        return (state, key), state.observation.sum()

    @jax.jit
    def run(state: object, key: object) -> tuple:
        (state, key), seen = jax.lax.scan(body, (state, key), None, length=scan)
        return state, key, seen

    key = jax.random.PRNGKey(args.seed)
    state = jax.jit(jax.vmap(env.init))(jax.random.split(key, batch))
    start = time.perf_counter()
    state, key, seen = run(state, key)
    jax.block_until_ready(seen)
    compile_s = time.perf_counter() - start
    calls = 0
    start = time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        state, key, seen = run(state, key)
        calls += 1
        if calls % 8 == 0:
            jax.block_until_ready(seen)
    jax.block_until_ready(seen)
    elapsed = time.perf_counter() - start
    decisions = calls * scan * batch
    print(
        json.dumps(
            {
                "name": "pgx_leduc",
                "version": metadata.version("pgx"),
                "jax": metadata.version("jax"),
                "num_envs": batch,
                "scan": scan,
                "obs_size": int(state.observation.shape[-1]),
                "steps": decisions,
                "games": None,
                "seconds": elapsed,
                "steps_per_s": decisions / elapsed,
                "compile_s": compile_s,
                "cpus": sorted(os.sched_getaffinity(0)),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
