"""Even timing of the bots' moves: an answer's latency says nothing of a bot's hidden hand.

A searching bot (``pimc:N``, ``champion-search``, ``openspiel-ismcts`` …) answers at once
when its decision has no real choice (one legal action, or declaring) and searches
otherwise, so without care the time a move takes tells a client whether the bot had more
than one option — something about its hand the view hides (issue 43: 98.9% right against a
67% base rate, from the latency of ``POST …/actions`` against ``pimc:2048``).

Here every move of a bot that is not quick (:func:`craits.web.bots.is_quick`) is padded to
a **floor**: the time its agent spent in ``act`` (measured by the thinker, apart from
rebuilding the table, which depends on public facts only) is topped up by a wait, on the
event loop (it holds no thinker and no thread), to :data:`QUANTILE` of the recent ``act``
times of the same spec at the same table (the number of players, the hand size dealt:
both public), times :data:`MARGIN` — whether that move searched or not. So a move without
a choice takes as long as a typical search, and only a search slower than nearly all
recent ones is later than the floor. The floor is learnt from the moves themselves: the
first :data:`WARM_UP` moves of a kind are not counted (a fresh thinker's first search
loads and compiles: an outlier), and until :data:`MIN_SAMPLES` are, the floor is the
slowest seen times :data:`COLD_MARGIN`, and at least what a search of that spec is
expected to take at that table (:func:`craits.web.costs.expected_seconds`, the measured
costs) times :data:`MARGIN` — so the very first moves of a kind are padded as well. It
never exceeds ``cap`` (the server's ``move_seconds``).

Quick bots (the heuristics: about a millisecond of plain Python whatever the hand) are not
padded; ``champion``'s forward pass, the same work at every decision, is padded to about
its own time.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import Hashable

QUANTILE = 0.98
"""The recent moves' duration a move waits for (their 98th percentile: most moves of a
searching bot may have no choice, so a lower one would be below many searches)."""
MARGIN = 1.25
"""The floor is the quantile times this."""
SAMPLES = 128
"""Recent moves kept per kind (spec and table)."""
MIN_SAMPLES = 8
"""Moves of a kind before the quantile is used (until then the slowest, times
:data:`COLD_MARGIN`)."""
COLD_MARGIN = 1.5
WARM_UP = 2
"""Moves of each kind not counted at first (loading, compiling: not the search's time)."""
MAX_KINDS = 1000
"""Kinds of moves remembered; beyond, the least recently used forgotten."""


class MoveFloors:
    """The floors of the module docstring, per kind of move (any hashable key)."""

    def __init__(self, cap: float) -> None:
        if not cap > 0:
            raise ValueError(f"cap: got {cap!r}, allowed a number > 0")
        self.cap = cap
        self._recent: OrderedDict[Hashable, deque[float]] = OrderedDict()
        self._seen: dict[Hashable, int] = {}  # moves of each kind (the first WARM_UP not kept)

    def floor(self, kind: Hashable, prior: float = 0.0) -> float:
        """Seconds a move of ``kind`` takes at least, from what the recent ones took; until
        :data:`MIN_SAMPLES` are known, at least ``prior`` (what such a search is expected
        to take: :func:`craits.web.costs.expected_seconds`) times :data:`MARGIN`, so the
        first moves of a kind are padded too."""
        recent = self._recent.get(kind) or ()
        if len(recent) < MIN_SAMPLES:
            seen = max(recent) * COLD_MARGIN if recent else 0.0
            return min(self.cap, max(seen, prior * MARGIN))
        ordered = sorted(recent)
        at = min(len(ordered) - 1, int(QUANTILE * len(ordered)))
        return min(self.cap, ordered[at] * MARGIN)

    def add(self, kind: Hashable, seconds: float) -> None:
        """A move of ``kind`` took ``seconds`` (before any wait)."""
        seen = self._seen.pop(kind, 0) + 1
        self._seen[kind] = seen
        while len(self._seen) > MAX_KINDS:
            self._seen.pop(next(iter(self._seen)))
        if seen <= WARM_UP:
            return
        recent = self._recent.pop(kind, None)
        if recent is None:
            recent = deque(maxlen=SAMPLES)
        recent.append(seconds)
        self._recent[kind] = recent
        while len(self._recent) > MAX_KINDS:
            self._recent.popitem(last=False)

    async def pad(self, kind: Hashable, took: float, prior: float = 0.0) -> float:
        """Count a move of ``kind`` whose agent took ``took`` seconds, then wait until its
        floor (measured from the agent's answer: the wait is the floor minus ``took``;
        ``prior`` as in :meth:`floor`); the seconds waited."""
        floor = self.floor(kind, prior)
        self.add(kind, took)
        if took >= floor:
            return 0.0
        await asyncio.sleep(floor - took)
        return floor - took
