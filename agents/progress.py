"""Progress of a long run (a tournament, a benchmark card, training), readable wherever it goes.

On a terminal, a live bar (tqdm) redrawn in place. Anywhere else — a pipe, a file, a CI log —
plain lines, never a carriage return: one when the run starts (if it has anything left to
do), one every :data:`EVERY_S` seconds, and one when it ends::

    standard_4p: greedy vs pimc: 0/400 games (0%)
    standard_4p: greedy vs pimc: 120/400 games (30%), 1m30s elapsed, ETA 3m30s
    standard_4p: greedy vs pimc: 400/400 games, done in 5m02s

The estimate divides what is left by the rate of this session (what an earlier, resumed
session did is not counted in the rate).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

EVERY_S = 30.0
"""Seconds between two progress lines when the output is not a terminal."""


def duration(seconds: float) -> str:
    """``45s``, ``1m30s``, ``2h05m``.

    >>> [duration(s) for s in (0.4, 59.6, 90, 3600 + 5 * 60 + 20)]
    ['0s', '1m00s', '1m30s', '1h05m']
    """
    s = round(max(0.0, seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def is_terminal(stream: object) -> bool:
    """Whether ``stream`` is a terminal (anything without ``isatty`` is not)."""
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


class Progress:
    """``done`` of ``total`` units of one run (see the module docstring).

    Args:
        total: units of the whole run.
        what: what is running (the start of each line, the bar's label).
        unit: the unit's name in the singular (``game``, ``step``).
        done: units already done when the run starts (a resumed run).
        stream: where the progress goes (default ``sys.stderr``).
        live: a live bar (default: only if ``stream`` is a terminal).
        every: seconds between two plain lines.
        clock: the clock (seconds; a test passes its own).
        enabled: ``False``: shows nothing (``--no-progress``).
    """

    def __init__(
        self,
        total: int,
        what: str,
        unit: str = "game",
        *,
        done: int = 0,
        stream: TextIO | None = None,
        live: bool | None = None,
        every: float = EVERY_S,
        clock: Callable[[], float] = time.monotonic,
        enabled: bool = True,
    ) -> None:
        self.total, self.what, self.every, self.clock = total, what, every, clock
        self.enabled = enabled
        self.units = unit if total == 1 else unit + "s"
        self.stream = stream if stream is not None else sys.stderr
        self.live = enabled and (is_terminal(self.stream) if live is None else live)
        self.start = clock()
        self.initial = self.done = min(done, total)
        self.note = ""
        self.finished = False
        self._said_at: float | None = None
        self._bar: Any = None
        if self.live:
            from tqdm import tqdm

            self._bar = tqdm(
                total=total,
                initial=self.done,
                unit=unit,
                desc=what or None,
                dynamic_ncols=True,
                file=self.stream,
            )
        elif enabled and self.done < total:
            self._say(self.line())

    def update(self, done: int, note: str = "") -> None:
        """``done`` units are done now (a count, not an increment); ``note``: what else to say
        (``SPS 4,000``)."""
        self.done, self.note = min(done, self.total), note
        if self._bar is not None:
            self._bar.update(self.done - self._bar.n)
            if note:
                self._bar.set_postfix_str(note, refresh=False)
        elif self.enabled and (
            not self.finished
            if self.done >= self.total
            else self._said_at is None or self.clock() - self._said_at >= self.every
        ):
            self._say(self.line())
        self.finished = self.done >= self.total

    def line(self) -> str:
        """The progress as one line (what a plain line says now)."""
        head = f"{self.what}: " if self.what else ""
        count = f"{self.done:,}/{self.total:,} {self.units}"
        note = f"; {self.note}" if self.note else ""
        elapsed = self.clock() - self.start
        if self.done >= self.total:
            if self.initial >= self.total:
                return f"{head}{count}, all done before (kept){note}"
            return f"{head}{count}, done in {duration(elapsed)}{note}"
        percent = f"{head}{count} ({100 * self.done // max(1, self.total)}%)"
        if self.done == self.initial:
            return percent + (f", {duration(elapsed)} elapsed" if elapsed >= 1 else "") + note
        left = elapsed / (self.done - self.initial) * (self.total - self.done)
        return f"{percent}, {duration(elapsed)} elapsed, ETA {duration(left)}{note}"

    def close(self) -> None:
        """Stop the bar (a plain run says nothing more: its last line stands)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def _say(self, line: str) -> None:
        self._said_at = self.clock()
        print(line, file=self.stream, flush=True)


class Ticks:
    """A ``progress(done, total)`` callback (the tournaments' kind) that shows a
    :class:`Progress`, made at its first call; ``enabled=False``: shows nothing. A context
    manager: leaving it closes the bar."""

    def __init__(
        self, what: str, unit: str = "game", *, enabled: bool = True, **options: Any
    ) -> None:
        self.what, self.unit, self.enabled, self.options = what, unit, enabled, options
        self.progress: Progress | None = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.progress is None or self.progress.total != total:
            self.close()
            self.progress = Progress(total, self.what, self.unit, done=done, **self.options)
        self.progress.update(done)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.close()

    def __enter__(self) -> Ticks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
