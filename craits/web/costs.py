"""What a searching bot's move may cost on ``craits serve``: its budget ``N`` capped by the
table it plays at, from measured costs (issue 43, A: ``openspiel-ismcts:32`` in the largest
game allowed took 128–152 s a move).

A searched decision's seconds grow with ``N``, times a fixed part and a part per unit of
the table's **work** (:func:`work_units`): for ``pimc:N``, ``champion-search:N`` and
``belief-search:N`` (rollouts to the end of the hand) the players times the largest hand
dealt; for ``openspiel-ismcts:N`` (simulations to the end of the game) the players times
every card dealt in the game. :data:`COSTS` holds both parts per spec, from the 90th
percentile measured by ``experiments/bench_web_costs.py`` (rounded up); a spec whose move
would take more than :data:`MOVE_BUDGET` seconds at the table asked for is refused in one
line naming the largest ``N`` allowed there. A move still over its time stops its thinker
(``move_seconds``; ``share_seconds`` while other clients' bots wait:
:mod:`craits.web.bots`).
"""

from __future__ import annotations

import math

from craits_env.rules import Rules

MOVE_BUDGET = 10.0
"""Seconds a searched decision of a bot a web client picks may be expected to take at most."""
COSTS = {
    "pimc": (5.0e-5, 0.0),
    "champion-search": (1.0e-4, 0.0),
    "belief-search": (1.0e-3, 0.0),
    "openspiel-ismcts": (0.08, 3.5e-3),
}
"""Per spec, the seconds of a searched decision per ``N``: a fixed part and a part per unit
of work (the 90th percentile measured, rounded up; ``pimc``'s search at the end of a hand
costs the same at every table)."""
DEFAULT_N = {"pimc": 128, "champion-search": 2048, "belief-search": 2048, "openspiel-ismcts": 100}
"""The ``N`` of a spec written without one (the agents' defaults)."""
TO_GAME_END = frozenset({"openspiel-ismcts"})
"""Specs whose search plays every simulation to the end of the game (not of the hand)."""


def work_units(name: str, players: int, rules: Rules) -> int:
    """The work of a searched decision of spec ``name`` at this table (see the module
    docstring)."""
    if name in TO_GAME_END:
        return players * sum(rules.hand_sizes)
    return players * max(rules.hand_sizes)


def seconds_per_n(name: str, players: int, rules: Rules) -> float | None:
    """The expected seconds of a searched decision of ``name:1`` here (``None``: not costed)."""
    cost = COSTS.get(name)
    if cost is None:
        return None
    fixed, per_unit = cost
    return fixed + per_unit * work_units(name, players, rules)


def largest_n(name: str, players: int, rules: Rules, budget: float = MOVE_BUDGET) -> int | None:
    """The largest ``N`` of ``name:N`` whose move fits ``budget`` here (``None``: not a
    costed spec; 0: none fits)."""
    per = seconds_per_n(name, players, rules)
    return None if per is None else math.floor(budget / per)


def expected_seconds(spec: str, players: int, rules: Rules) -> float:
    """The expected seconds of a searched decision of ``spec`` at this table, from the
    measured costs (0.0: not a costed spec, or a malformed ``N``)."""
    name, sep, arg = spec.partition(":")
    per = seconds_per_n(name, players, rules)
    if per is None or (sep and not (arg.isascii() and arg.isdigit() and len(arg) <= 9)):
        return 0.0
    return per * (int(arg) if sep else DEFAULT_N[name])


def check_cost(spec: str, players: int, rules: Rules, budget: float = MOVE_BUDGET) -> str | None:
    """Why ``spec`` may not be seated at this table (one line), or ``None``."""
    name, sep, arg = spec.partition(":")
    per = seconds_per_n(name, players, rules)
    if per is None or (sep and not (arg.isascii() and arg.isdigit())):
        return None
    n = int(arg) if sep else DEFAULT_N[name]
    most = math.floor(budget / per)
    if n <= most:
        return None
    allowed = f"at most {name}:{most} here" if most else f"no {name} at this table"
    return (
        f"opponent {spec!r}: a move would take about {n * per:.0f} s at this table "
        f"({players} players, {len(rules.hand_sizes)} hands), over the {budget:g} s a move "
        f"may cost; {allowed}"
    )
