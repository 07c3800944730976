"""The files ``craits serve`` shows: game records to watch, tournament results to compare.

The server is started with folders (``--games``, ``--records DIR…``, ``--results
DIR…``); a client names a file only by a key of a listing (``"ROOT:RELATIVE/PATH"``,
``ROOT`` the folder's index), never by a path of its own: a key that leaves its folder,
or names a file the listing would not show, is refused (404).

- **Record files**: every ``*.jsonl`` under a folder whose first line is a game record
  (:mod:`craits_env.records`: ``craits play --record``, ``craits tournament --record``,
  ``craits train`` evaluations, games saved by this server). Folder 0 is the server's
  own saved games (``--games``): saving writes one record file there, atomically, named
  by the time and the game, so a restarted server lists and shows it again.
- **Result sets**: every ``results.json`` of ``craits tournament`` (or a training
  evaluation) under a folder, with the ``results.png`` chart and ``results.md`` title
  beside it when present.
- **Report cards**: every ``card.json`` of ``craits evaluate`` under a results folder, as
  one leaderboard per benchmark suite (:mod:`craits.benchmark.leaderboard`).

Listings are pages, newest first (``offset``, ``limit`` at most :data:`MAX_PAGE`), and
bounded whatever a folder holds: a scan looks at most at :data:`MAX_FILES` entries per
folder and for at most :data:`SCAN_SECONDS`, by their names and ``stat`` only (hidden
folders, virtual environments and links to folders are not entered), and is reused for
:data:`SCAN_TTL` seconds (a save starts a new one). A file's first line is read once while
the file is unchanged (to tell a record file), and only for the files of the page asked
for. A link that leads outside its folder is never listed (nor its target's size), and
its key is refused like any other outside the folder.

:class:`Library` is put together from the scans and keys (:mod:`craits.web.folder_scan`),
the record files (:mod:`craits.web.record_files`) and the result sets
(:mod:`craits.web.result_sets`).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

# The names below are also importable from here.
from .folder_scan import MAX_FILES as MAX_FILES
from .folder_scan import MAX_PAGE as MAX_PAGE
from .folder_scan import PAGE_SIZE as PAGE_SIZE
from .folder_scan import SCAN_SECONDS as SCAN_SECONDS
from .folder_scan import SCAN_TTL as SCAN_TTL
from .folder_scan import Found as Found
from .folder_scan import Scan as Scan
from .folder_scan import Verdicts
from .folder_scan import scan as scan
from .folder_scan import shown as shown
from .record_files import RecordFiles
from .record_files import is_record_file as is_record_file
from .result_sets import CHART_FILE as CHART_FILE
from .result_sets import RESULTS_FILE as RESULTS_FILE
from .result_sets import TITLE_FILE as TITLE_FILE
from .result_sets import ResultSets


class Library(RecordFiles, ResultSets):
    """The folders of one server (see the module docstring)."""

    def __init__(
        self,
        games_dir: Path,
        record_dirs: Sequence[Path] = (),
        result_dirs: Sequence[Path] = (),
    ) -> None:
        self.games_dir = Path(games_dir)
        self.record_roots = [self.games_dir, *map(Path, record_dirs)]
        self.result_roots = [Path(d) for d in result_dirs]
        self._scans: dict[tuple[str, int], tuple[float, Scan]] = {}
        self._scans_lock = threading.Lock()
        self._scanning: dict[tuple[str, int], Future[Scan]] = {}  # scans being made
        self._records = Verdicts()
        self._results = Verdicts()
        self._cards = Verdicts()


TEMPORARY_AGE = 60.0
"""Seconds a temporary file of a save must be old before :func:`clean_temporary` removes it."""


def clean_temporary(games_dir: Path, older_than: float = TEMPORARY_AGE) -> int:
    """Remove the temporary files a save killed mid-write left in ``games_dir``
    (``.NAME.XXXX.tmp``, :func:`craits_env.fileio.atomic_write_bytes`) that are older
    than ``older_than`` seconds (a save in progress is never that slow); how many."""
    removed = 0
    now = time.time()
    with contextlib.suppress(OSError):
        for path in Path(games_dir).glob(".*.tmp"):
            with contextlib.suppress(OSError):
                old = now - path.stat(follow_symlinks=False).st_mtime > older_than
                if old and path.is_file() and not path.is_symlink():
                    path.unlink()
                    removed += 1
    return removed
