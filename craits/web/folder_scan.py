"""The server's folders: a bounded scan of each, listing pages of what it found, and the keys
that name a file of a listing (:mod:`craits.web.library` says what is shown and the bounds).

A scan looks at most at :data:`MAX_FILES` entries per folder and for at most
:data:`SCAN_SECONDS`, by their names and ``stat`` only, and is reused for :data:`SCAN_TTL`
seconds; a key ``"ROOT:RELATIVE/PATH"`` names a file only inside its folder.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import plain
from .requests import ApiError

MAX_FILES = 100_000
"""Entries (files and folders) looked at per folder of a listing's scan."""
SCAN_SECONDS = 2.0
"""Seconds a listing's scan of one folder may take (it lists what it found by then)."""
SCAN_TTL = 2.0
"""Seconds a scan is reused for the next listings."""
PAGE_SIZE = 100
"""Entries of a listing's page by default."""
MAX_PAGE = 1000
"""Entries of a listing's page at most."""
CACHED_FILES = 100_000  # first-line verdicts and result sets kept (while unchanged)
_KEY_INDEX = re.compile(r"[0-9]{1,3}")
SKIPPED_DIRS = frozenset({".git", ".venv", "node_modules", "__pycache__"})


@dataclass(frozen=True)
class Found:
    """A file a scan found: where, and its ``stat`` (a link's: its target's, inside)."""

    path: Path
    mtime_ns: int
    size: int


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` found in one folder, and whether it looked at everything."""

    found: tuple[Found, ...]
    complete: bool


def scan(
    root: Path,
    wanted: Callable[[str], bool],
    clock: Callable[[], float] = time.monotonic,
) -> Scan:
    """The files under ``root`` whose name is ``wanted`` (see the module docstring)."""
    deadline = clock() + SCAN_SECONDS
    inside = root.resolve()
    found: list[Found] = []
    stack = [root]
    seen = 0
    while stack:
        folder = stack.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                seen += 1
                if seen > MAX_FILES or clock() > deadline:
                    return Scan(tuple(found), False)
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if not entry.name.startswith(".") and entry.name not in SKIPPED_DIRS:
                            stack.append(Path(entry.path))
                        continue
                    if not wanted(entry.name) or not entry.is_file():
                        continue
                    if entry.is_symlink() and not Path(entry.path).resolve().is_relative_to(inside):
                        continue  # a link leading outside the folder: not listed
                    st = entry.stat()
                except (OSError, ValueError, RuntimeError):  # vanished, a loop of links
                    continue
                found.append(Found(Path(entry.path), st.st_mtime_ns, st.st_size))
    return Scan(tuple(found), True)


def _newest_first(found: Found) -> tuple[int, str]:
    return -found.mtime_ns, str(found.path)


def page(offset: object, limit: object) -> tuple[int, int]:
    """``(offset, limit)`` of a listing, checked (:class:`ApiError` 400)."""
    if not isinstance(offset, int) or not 0 <= offset <= MAX_FILES * 100:
        raise ApiError(400, f"offset: got {offset!r}, allowed 0 to {MAX_FILES * 100}")
    if not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise ApiError(400, f"limit: got {limit!r}, allowed 1 to {MAX_PAGE}")
    return offset, limit


class Verdicts:
    """A bounded cache of one answer per unchanged file (path, mtime, size)."""

    def __init__(self) -> None:
        self._held: dict[tuple[str, int, int], Any] = {}
        self._lock = threading.Lock()

    def get(self, found: Found, compute: Callable[[Path], Any]) -> Any:
        key = (str(found.path), found.mtime_ns, found.size)
        with self._lock:
            if key in self._held:
                return self._held[key]
        value = compute(found.path)
        with self._lock:
            if len(self._held) >= CACHED_FILES:
                self._held.clear()
            self._held[key] = value
        return value


def shown(folder: Path) -> str:
    """A folder as a listing shows it: relative to the working directory when inside it."""
    try:
        return folder.resolve().relative_to(Path.cwd().resolve()).as_posix() or "."
    except ValueError:
        return str(folder)


class Folders:
    """The scans of a server's folders and their keys; :class:`craits.web.library.Library`
    sets ``_scans`` and ``_scans_lock``."""

    _scans: dict[tuple[str, int], tuple[float, Scan]]
    _scans_lock: threading.Lock
    _scanning: dict[tuple[str, int], Future[Scan]]

    def _scan(self, kind: str, index: int, root: Path, wanted: Callable[[str], bool]) -> Scan:
        """The scan of one folder, reused for :data:`SCAN_TTL` seconds; requests that ask
        for it while it is being made wait for that one (one scan, however many ask)."""
        key = (kind, index)
        with self._scans_lock:
            held = self._scans.get(key)
            if held is not None and time.monotonic() - held[0] < SCAN_TTL:
                return held[1]
            running = self._scanning.get(key)
            mine = running is None
            if running is None:
                running = self._scanning[key] = Future()
        if not mine:
            return running.result()
        now = time.monotonic()
        try:
            result = scan(root, wanted) if root.is_dir() else Scan((), True)
        except BaseException as e:
            with self._scans_lock:
                del self._scanning[key]
            running.set_exception(e)
            raise
        with self._scans_lock:
            self._scans[key] = (now, result)
            del self._scanning[key]
        running.set_result(result)
        return result

    def _listing(
        self,
        kind: str,
        roots: Sequence[Path],
        wanted: Callable[[str], bool],
        keep: Callable[[Found], bool],
        entry: Callable[[int, Path, str, Found], dict[str, Any]],
        offset: int,
        limit: int,
    ) -> tuple[list[dict[str, Any]], bool, bool]:
        """One page of the entries of every folder, newest first: ``(entries, more,
        complete)``; ``keep``: whether a file is shown; ``entry`` makes its entry (from the
        folder's index, the folder, the folder as shown, the file)."""
        scans = [(i, root, self._scan(kind, i, root, wanted)) for i, root in enumerate(roots)]
        complete = all(s.complete for _, _, s in scans)
        files = sorted(
            ((f, i, root) for i, root, s in scans for f in s.found),
            key=lambda t: _newest_first(t[0]),
        )
        folders = [plain(shown(root)) for root in roots]
        shown_ones: list[dict[str, Any]] = []
        skipped = 0
        deadline = time.monotonic() + SCAN_SECONDS
        for n, (found, i, root) in enumerate(files):
            if len(shown_ones) == limit:
                return shown_ones, True, complete
            if time.monotonic() > deadline:  # first lines too slow to read: a shorter page
                return shown_ones, n < len(files), False
            if not keep(found):
                continue
            if skipped < offset:
                skipped += 1
                continue
            shown_ones.append(entry(i, root, folders[i], found))
        return shown_ones, False, complete

    # ------------------------------------------------------------------ keys

    @staticmethod
    def _key(index: int, root: Path, path: Path) -> str:
        return f"{index}:{path.relative_to(root).as_posix()}"

    @staticmethod
    def _resolve(roots: Sequence[Path], key: object, what: str) -> Path:
        """The file of ``key`` inside its folder (404 otherwise: nothing outside is named)."""
        index, sep, rel = str(key).partition(":")
        missing = ApiError(404, f"no {what} {key!r} (see the listing for the keys)")
        if not sep or not _KEY_INDEX.fullmatch(index) or int(index) >= len(roots) or not rel:
            raise missing
        try:
            root = roots[int(index)].resolve()
            path = (root / rel).resolve()
            if not path.is_relative_to(root) or not path.is_file():
                raise missing
        except (OSError, ValueError, RuntimeError):  # a NUL byte, a loop of links, too long
            raise missing from None
        return path
