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
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from craits_env.jsonl import JsonlError
from craits_env.records import FORMAT, RecordError, read_records, write_records

from ..benchmark.card import FORMAT as CARD_FORMAT
from ..benchmark.leaderboard import CARD_FILE, row, rows
from ..replay_view import record_line as _one_line
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
FIRST_LINE_LIMIT = 1 << 20  # bytes of a first line read to tell a record file
SKIPPED_DIRS = frozenset({".git", ".venv", "node_modules", "__pycache__"})
RESULTS_FILE = "results.json"
CHART_FILE = "results.png"
TITLE_FILE = "results.md"
_FORMAT_PREFIX = re.compile(rb'^\{\s*"format"\s*:\s*"' + FORMAT.encode() + rb'"')


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


def scan(root: Path, wanted: Callable[[str], bool], clock: Callable[[], float] = time.monotonic,
         ) -> Scan:  # fmt: skip
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


def _page(offset: object, limit: object) -> tuple[int, int]:
    """``(offset, limit)`` of a listing, checked (:class:`ApiError` 400)."""
    if not isinstance(offset, int) or not 0 <= offset <= MAX_FILES * 100:
        raise ApiError(400, f"offset: got {offset!r}, allowed 0 to {MAX_FILES * 100}")
    if not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise ApiError(400, f"limit: got {limit!r}, allowed 1 to {MAX_PAGE}")
    return offset, limit


class _Verdicts:
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


def is_record_file(path: Path) -> bool:
    """Whether the first line of ``path`` is a game record (by its ``format``): its first
    bytes when they say so (a record's line may be long), else the whole line parsed."""
    try:
        with path.open("rb") as f:
            head = f.read(len(FORMAT) + 64)
            if _FORMAT_PREFIX.match(head):
                return True
            first = head + f.readline(FIRST_LINE_LIMIT) if b"\n" not in head else head
    except OSError:
        return False
    first = first.partition(b"\n")[0]
    try:
        obj = json.loads(first)
    except ValueError:
        return bool(_FORMAT_PREFIX.match(first))  # a first line longer than the limit
    return isinstance(obj, dict) and obj.get("format") == FORMAT


@functools.lru_cache(maxsize=32)
def _summaries(path: str, mtime_ns: int, size: int) -> tuple[dict[str, Any], ...]:
    """Every game of a record file in one line each (cached while the file is unchanged)."""
    out = []
    for i, (line, record) in enumerate(read_records(path, verify=False), 1):
        out.append(
            {
                "game": i,
                "line": line,
                "seats": [plain(str(seat)) for seat in record["seats"]],
                "num_players": record["num_players"],
                "hands": len(record["hands"]),
                "decisions": sum(len(h["decisions"]) for h in record["hands"]),
                "scores": record["scores"],
                "winners": record.get("winners"),
                "finished": record["finished"],
                "meta": record.get("meta") or {},
                "text": plain(_one_line(i, line, record)),
            }
        )
    return tuple(out)


def shown(folder: Path) -> str:
    """A folder as a listing shows it: relative to the working directory when inside it."""
    try:
        return folder.resolve().relative_to(Path.cwd().resolve()).as_posix() or "."
    except ValueError:
        return str(folder)


def _stamp(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return str(path), st.st_mtime_ns, st.st_size


class Library:
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
        self._records = _Verdicts()
        self._results = _Verdicts()
        self._cards = _Verdicts()

    def _scan(self, kind: str, index: int, root: Path, wanted: Callable[[str], bool]) -> Scan:
        """The scan of one folder, reused for :data:`SCAN_TTL` seconds."""
        now = time.monotonic()
        with self._scans_lock:
            held = self._scans.get((kind, index))
            if held is not None and now - held[0] < SCAN_TTL:
                return held[1]
        result = scan(root, wanted) if root.is_dir() else Scan((), True)
        with self._scans_lock:
            self._scans[(kind, index)] = (now, result)
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
        files = sorted(((f, i, root) for i, root, s in scans for f in s.found),
                       key=lambda t: _newest_first(t[0]))  # fmt: skip
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

    # ------------------------------------------------------------------ records

    def record_files(self, offset: object = 0, limit: object = PAGE_SIZE) -> dict[str, Any]:
        """A page of the record files of the folders, newest first: ``files`` (each ``key``,
        ``folder``, ``name``, ``size``, ``saved``), ``offset``, ``limit``, ``more`` (a next
        page may hold more), ``complete`` (every file of the folders was looked at)."""
        offset, limit = _page(offset, limit)

        def keep(found: Found) -> bool:
            return bool(self._records.get(found, is_record_file))

        def entry(i: int, root: Path, folder: str, found: Found) -> dict[str, Any]:
            return {"key": self._key(i, root, found.path), "folder": folder,
                    "name": plain(found.path.relative_to(root).as_posix()),
                    "size": found.size, "saved": i == 0}  # fmt: skip

        files, more, complete = self._listing("records", self.record_roots, _is_jsonl, keep,
                                              entry, offset, limit)  # fmt: skip
        return {"files": files, "offset": offset, "limit": limit, "more": more,
                "complete": complete}  # fmt: skip

    def _record_path(self, key: object) -> Path:
        path = self._resolve(self.record_roots, key, "record file")
        if path.suffix != ".jsonl" or not is_record_file(path):
            raise ApiError(404, f"no record file {key!r} (see the listing for the keys)")
        return path

    def games(self, key: object) -> list[dict[str, Any]]:
        """One summary per game of the record file ``key`` (400 for a corrupt file)."""
        path = self._record_path(key)
        try:
            return list(_summaries(*_stamp(path)))
        except (RecordError, JsonlError) as e:
            raise ApiError(400, str(e)) from None

    def record(self, key: object, game: int) -> dict[str, Any]:
        """Game ``game`` (from 1) of the record file ``key``."""
        path = self._record_path(key)
        i = 0
        try:
            for i, (_, record) in enumerate(read_records(path, verify=False), 1):
                if i == game:
                    return record
        except (RecordError, JsonlError) as e:
            raise ApiError(400, str(e)) from None
        raise ApiError(404, f"{key}: there is no game {game} (the file holds {i} games)")

    def save(self, record: dict[str, Any], game_id: str) -> dict[str, str]:
        """Write ``record`` as a new record file of the saved games (atomically)."""
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        path = self.games_dir / f"{stamp}-{game_id[:8]}.jsonl"
        write_records(path, [record])
        with self._scans_lock:
            self._scans.pop(("records", 0), None)  # the next listing shows it
        return {"file": self._key(0, self.games_dir, path), "name": path.name}

    # ------------------------------------------------------------------ results

    def result_sets(self, offset: object = 0, limit: object = PAGE_SIZE) -> dict[str, Any]:
        """A page of the ``results.json`` of the folders, newest first: ``results`` (each
        ``key``, ``title``, ``folder``, ``name``, ``players``, ``games``, ``agents`` — specs,
        best first —, ``chart`` — whether a chart is beside it), ``offset``, ``limit``,
        ``more``, ``complete`` (as :meth:`record_files`)."""
        offset, limit = _page(offset, limit)

        def keep(found: Found) -> bool:
            return self._results.get(found, _result_summary) is not None

        def entry(i: int, root: Path, folder: str, found: Found) -> dict[str, Any]:
            name = found.path.parent.relative_to(root).as_posix()
            return {"key": self._key(i, root, found.path), "folder": folder,
                    "name": plain(shown(found.path.parent) if name == "." else name),
                    **self._results.get(found, _result_summary),
                    "chart": (found.path.parent / CHART_FILE).is_file()}  # fmt: skip

        sets, more, complete = self._listing("results", self.result_roots,
                                             lambda name: name == RESULTS_FILE, keep, entry,
                                             offset, limit)  # fmt: skip
        return {"results": sets, "offset": offset, "limit": limit, "more": more,
                "complete": complete}  # fmt: skip

    def leaderboard(self, suite: object = "v1") -> dict[str, Any]:
        """The benchmark's leaderboard (:mod:`craits.benchmark.leaderboard`) from every report
        card (``card.json``) under the results folders: ``suite``, ``rows`` (best first),
        ``complete`` (as :meth:`record_files`)."""
        name = str(suite)

        def keep(found: Found) -> bool:
            card = self._cards.get(found, _read_card)
            return card is not None and card.get("suite") == name

        def entry(i: int, root: Path, folder: str, found: Found) -> dict[str, Any]:
            card: dict[str, Any] = self._cards.get(found, _read_card)
            return card

        cards, _, complete = self._listing("cards", self.result_roots,
                                           lambda n: n == CARD_FILE, keep, entry, 0,
                                           MAX_PAGE)  # fmt: skip
        board = [{**r, "spec": plain(r["spec"]), "identity": plain(r["identity"])}
                 for r in rows(cards)]  # fmt: skip
        return {"suite": name, "rows": _finite(board), "complete": complete}

    def results(self, key: object) -> dict[str, Any]:
        """The ``results.json`` of ``key`` with its ``title`` and ``chart`` flag."""
        path = self._resolve(self.result_roots, key, "result set")
        data = _read_results(path) if path.name == RESULTS_FILE else None
        if data is None:
            raise ApiError(404, f"no result set {key!r} (see the listing for the keys)")
        return {"key": str(key), "title": _title(path),
                "chart": (path.parent / CHART_FILE).is_file(), **_finite(data)}  # fmt: skip

    def chart(self, key: object) -> Path:
        """The chart beside the ``results.json`` of ``key``."""
        path = self._resolve(self.result_roots, key, "result set")
        chart = path.parent / CHART_FILE
        if path.name != RESULTS_FILE or not chart.is_file():
            raise ApiError(404, f"result set {key!r} has no chart")
        return chart


def _is_jsonl(name: str) -> bool:
    return name.endswith(".jsonl")


def _result_summary(path: Path) -> dict[str, Any] | None:
    """What a listing shows of a ``results.json`` (``title``, ``players``, ``games``,
    ``agents``), or ``None`` (not a tournament's results)."""
    data = _read_results(path)
    if data is None:
        return None
    try:
        agents = [plain(str(a["spec"])) for a in data["agents"]]
    except (TypeError, KeyError):
        return None
    return {"title": plain(_title(path)), "players": data["config"].get("players"),
            "games": data.get("games"), "agents": agents}  # fmt: skip


def _read_card(path: Path) -> dict[str, Any] | None:
    """A benchmark report card, or ``None`` (not one, or not one this craits reads)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("format") == CARD_FORMAT:
            row(data)  # a card the leaderboard can show
            return data
    except (OSError, ValueError, KeyError, TypeError, IndexError, ZeroDivisionError):
        pass
    return None


def _read_results(path: Path) -> dict[str, Any] | None:
    """A tournament's results (``config``, ``agents``, ``head_to_head`` …), or ``None``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("agents"), list):
        return None
    if not isinstance(data.get("config"), dict):
        return None
    return data


def _finite(obj: Any) -> Any:
    """``obj`` with every NaN or infinity as ``None`` (JSON has neither; an interval over
    no game is NaN in ``results.json``)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def _title(path: Path) -> str:
    """The Markdown title beside a ``results.json`` (its first ``# `` line), else the folder."""
    try:
        for line in (path.parent / TITLE_FILE).read_text(encoding="utf-8").splitlines():
            if line.startswith("# "):
                return line[2:].replace("`", "").strip()
    except OSError:
        pass
    return path.parent.name
