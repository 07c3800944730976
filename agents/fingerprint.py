"""Behavioural fingerprints: what an agent *does*, hashed, beside what it says it is.

An agent's identity (:func:`craits.agents.specs.agent_identity`) is what it declares: its
``version``, a checkpoint's weight hash, its source file's hash. A thin wrapper that reads
its weights from a file of its own declares the same identity whatever the file holds. Its
**fingerprint** sees the difference: the agent's moves on a fixed set of probe positions,
hashed (``fp-`` and 16 hex digits).

**The probe positions.** :data:`PROBE_GAMES` games of the table the agent is identified
for (its number of players and rules: the table its stored games are played on) are dealt
from :data:`PROBE_SEED` and played by seeded uniformly random moves; every
:data:`PROBE_STRIDE`-th decision with a choice (two legal actions or more) is a probe, for
whichever seat acts there (every seat in turn, hands of every size the games reach, the
phases as they come), :data:`PROBES_PER_GAME` of them a game: 48 positions. At each probe
the agent is reset with a seed of its own (:data:`AGENT_SEED` plus the probe's number: a
stochastic agent is fingerprinted under fixed seeds) and asked to act on that seat's view,
twice; its answers are hashed. An action it raises on counts as the exception's name.

**When there is none** (``None``, and :func:`fingerprint` says why): a built-in agent that
searches (``searches`` in the spec table: pimc, champion-search, belief-search,
openspiel-ismcts — seconds a decision; their identity already names their budget, and
their prior's weight hash); an agent slower than :data:`TIME_LIMIT` seconds over the probes
(it stops there); an agent whose two answers at a probe differ (it draws from a generator
that ``reset(seed)`` does not seed: its moves are not reproducible, so no fingerprint can
hold it). Such an agent is identified by its declared identity alone, as before.

Stored tournament games (:mod:`craits.agents.tournament_store`) keep each agent's
fingerprint beside its identity; a rerun whose agent has another fingerprint is refused.
The probes cost milliseconds for the quick bots (``experiments/bench_fingerprint.py``).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from craits_env import Game, Rules
from craits_env.public import PublicGame, SeatView

from .base import Agent

PROBE_SEED = 0xF19E_2026
"""seeds the probe games' deals and their random moves (not a seed of any deal set)"""
AGENT_SEED = 41_000
"""probe ``i`` resets the agent with seed ``AGENT_SEED + i``"""
PROBE_GAMES = 4
PROBES_PER_GAME = 12
PROBE_STRIDE = 17
"""every 17th decision with a choice is a probe (a prime: the seats and phases vary)"""
TIME_LIMIT = 2.0
"""seconds an agent may take over all its probes before it is called too slow"""
FORMAT = 1
"""bumped if the probes change (every fingerprint then changes with it)"""


@dataclass(frozen=True)
class Fingerprint:
    """An agent's fingerprint (``value``), or ``None`` and why there is none (``reason``)."""

    value: str | None
    reason: str = ""
    seconds: float = 0.0


def _probe_games(num_players: int, rules: Rules) -> Iterator[tuple[int, SeatView]]:
    """Yield ``(probe number, seat view)`` at every probe position (module docstring)."""
    number = 0
    for g in range(PROBE_GAMES):
        rng = np.random.default_rng([PROBE_SEED, g])
        game = Game(num_players, rules, rng=rng)
        public = PublicGame(game)
        moves = np.random.default_rng([PROBE_SEED, g, 1])
        choices = taken = 0
        while not game.is_over and taken < PROBES_PER_GAME:
            legal = game.legal_actions()
            if len(legal) > 1:
                choices += 1
                if choices % PROBE_STRIDE == 0:
                    yield number, public.views[game.current_player]
                    number += 1
                    taken += 1
            public.apply(int(legal[int(moves.integers(len(legal)))]))


def _answer(agent: Agent, seed: int, view: Mapping[str, np.ndarray]) -> str:
    try:
        agent.reset(seed)
        return str(int(agent.act(view)))
    except Exception as e:  # an agent that raises here would raise in a game too
        return f"!{type(e).__name__}"


def fingerprints(
    agents: Mapping[str, Agent],
    num_players: int,
    rules: Rules,
    *,
    time_limit: float = TIME_LIMIT,
) -> dict[str, Fingerprint]:
    """The fingerprint of each agent (by any key) at the table ``num_players``, ``rules``.

    The probe games are played once for all of them. Each agent should be a fresh one, used
    for nothing else (it is reset at every probe).
    """
    digests = {k: hashlib.sha256(f"craits-fingerprint/{FORMAT}".encode()) for k in agents}
    spent = dict.fromkeys(agents, 0.0)
    failed: dict[str, str] = {}
    for number, view in _probe_games(num_players, rules):
        for key, agent in agents.items():
            if key in failed:
                continue
            start = time.perf_counter()
            first = _answer(agent, AGENT_SEED + number, view)
            second = _answer(agent, AGENT_SEED + number, view)
            spent[key] += time.perf_counter() - start
            if first != second:
                failed[key] = (
                    f"its moves are not reproducible under a fixed seed (probe {number}: "
                    f"{first}, then {second})"
                )
            elif spent[key] > time_limit:
                failed[key] = f"too slow to fingerprint (over {time_limit:g} s on the probes)"
            digests[key].update(f"{number}:{first};".encode())
    return {
        key: Fingerprint(None, failed[key], spent[key])
        if key in failed
        else Fingerprint("fp-" + digests[key].hexdigest()[:16], "", spent[key])
        for key in agents
    }


def fingerprint(agent: Agent, num_players: int = 4, rules: Rules | None = None) -> Fingerprint:
    """One agent's fingerprint (see :func:`fingerprints`)."""
    return fingerprints({"agent": agent}, num_players, rules or Rules())["agent"]
