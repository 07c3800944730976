"""Even timing of the bots' moves: an answer's latency says nothing of a bot's hidden hand.

A searching bot (``pimc:N``, ``champion-search``, ``openspiel-ismcts`` …) answers at once
when its decision has no real choice (one legal action, or declaring) and searches
otherwise, so without care the time a move takes tells a client whether the bot had more
than one option — something about its hand the view hides (issue 43: 98.9% right against a
67% base rate, from the latency of ``POST …/actions`` against ``pimc:2048``).

Here every move of a bot that is not quick (:func:`craits.web.bots.is_quick`) is answered
no sooner than a **floor** after it was asked: :data:`QUANTILE` of the recent moves of the
same spec at the same table (the number of players, the hand size dealt: both public),
times :data:`MARGIN`, whether that move searched or not. A move that answers sooner waits
(on the event loop: it holds no thinker and no thread); so a move without a choice takes
as long as a typical search, and only a search slower than nearly all recent ones is later
than the floor. The floor is learnt from the moves themselves, before they wait: the
first :data:`MIN_SAMPLES` moves of a kind take the slowest seen so far times
:data:`COLD_MARGIN`. It never exceeds ``cap`` (the server's ``move_seconds``).

Quick bots (the heuristics, the champion's forward pass: about a millisecond whatever the
hand) are not delayed.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable

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
MAX_KINDS = 1000
"""Kinds of moves remembered; beyond, the least recently used forgotten."""


class MoveFloors:
    """The floors of the module docstring, per kind of move (any hashable key)."""

    def __init__(self, cap: float, clock: Callable[[], float] = time.monotonic) -> None:
        if not cap > 0:
            raise ValueError(f"cap: got {cap!r}, allowed a number > 0")
        self.cap = cap
        self.clock = clock
        self._recent: OrderedDict[Hashable, deque[float]] = OrderedDict()

    def floor(self, kind: Hashable) -> float:
        """Seconds a move of ``kind`` takes at least, from what the recent ones took."""
        recent = self._recent.get(kind)
        if not recent:
            return 0.0
        if len(recent) < MIN_SAMPLES:
            return min(self.cap, max(recent) * COLD_MARGIN)
        ordered = sorted(recent)
        at = min(len(ordered) - 1, int(QUANTILE * len(ordered)))
        return min(self.cap, ordered[at] * MARGIN)

    def add(self, kind: Hashable, seconds: float) -> None:
        """A move of ``kind`` took ``seconds`` (before any wait)."""
        recent = self._recent.pop(kind, None)
        if recent is None:
            recent = deque(maxlen=SAMPLES)
        recent.append(seconds)
        self._recent[kind] = recent
        while len(self._recent) > MAX_KINDS:
            self._recent.popitem(last=False)

    async def wait(self, kind: Hashable, started: float) -> float:
        """Count the move of ``kind`` asked at ``started`` (``clock`` time) and answered
        now, then wait until its floor; the seconds waited."""
        took = self.clock() - started
        floor = self.floor(kind)
        self.add(kind, took)
        if took >= floor:
            return 0.0
        await asyncio.sleep(floor - took)
        return floor - took
