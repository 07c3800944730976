"""What a behavioural fingerprint costs (:mod:`craits.agents.fingerprint`), in one run.

For each spec, the median over ``--rounds`` of :func:`fingerprints` of that agent alone (the
probe games, 48 positions, the agent asked twice at each), and of :func:`identify` on a
tournament of the zoo's policy members (each spec probed once, the probe games played once)
against the same without probes. Usage::

    python experiments/bench_fingerprint.py --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import time

from craits.agents.duplicate_tournament import TournamentConfig, identify
from craits.agents.fingerprint import AGENT_SEED, fingerprints
from craits.agents.specs import make_agent
from craits_env import Rules

SPECS = ("random", "greedy", "tactician", "expert", "champion")


def median_ms(fn, rounds: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rules = Rules()
    for spec in SPECS:
        agent = make_agent(spec, AGENT_SEED, num_players=4, rules=rules)
        ms = median_ms(lambda a=agent: fingerprints({"a": a}, 4, rules), args.rounds)
        print(f"fingerprint {spec:10} {ms:7.1f} ms")
    config = TournamentConfig(SPECS, 4, 1, 0, rules)
    probed = median_ms(lambda: identify(config), args.rounds)
    plain = median_ms(lambda: identify(config, probe=False), args.rounds)
    print(
        f"identify, {len(SPECS)} specs: {probed:.1f} ms with fingerprints, {plain:.1f} ms "
        f"without (+{probed - plain:.1f} ms)"
    )


if __name__ == "__main__":
    main()
