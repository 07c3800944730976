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

Listings walk at most :data:`MAX_FILES` entries per folder, skipping hidden folders and
virtual environments.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from craits_env.jsonl import JsonlError
from craits_env.records import FORMAT, RecordError, read_records, write_records

from ..replay_view import _one_line
from .sessions import ApiError

MAX_FILES = 5000
"""Entries (files and folders) looked at per folder of a listing."""
FIRST_LINE_LIMIT = 1 << 20  # bytes of a first line read to tell a record file
SKIPPED_DIRS = frozenset({".git", ".venv", "node_modules", "__pycache__"})
RESULTS_FILE = "results.json"
CHART_FILE = "results.png"
TITLE_FILE = "results.md"
_FORMAT_PREFIX = re.compile(rb'^\{\s*"format"\s*:\s*"' + FORMAT.encode() + rb'"')


def _walk(root: Path, name: str | None, suffix: str | None) -> Iterator[Path]:
    """Files under ``root`` called ``name`` or ending in ``suffix``, sorted, bounded."""
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        seen += len(dirs) + len(files)
        if seen > MAX_FILES:
            return
        for f in sorted(files):
            if (name is not None and f == name) or (suffix is not None and f.endswith(suffix)):
                yield Path(folder) / f


def is_record_file(path: Path) -> bool:
    """Whether the first line of ``path`` is a game record (by its ``format``)."""
    try:
        with path.open("rb") as f:
            first = f.readline(FIRST_LINE_LIMIT)
    except OSError:
        return False
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
                "seats": record["seats"],
                "num_players": record["num_players"],
                "hands": len(record["hands"]),
                "decisions": sum(len(h["decisions"]) for h in record["hands"]),
                "scores": record["scores"],
                "winners": record.get("winners"),
                "finished": record["finished"],
                "meta": record.get("meta") or {},
                "text": _one_line(i, line, record),
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

    # ------------------------------------------------------------------ keys

    @staticmethod
    def _key(index: int, root: Path, path: Path) -> str:
        return f"{index}:{path.relative_to(root).as_posix()}"

    @staticmethod
    def _resolve(roots: Sequence[Path], key: object, what: str) -> Path:
        """The file of ``key`` inside its folder (404 otherwise: nothing outside is named)."""
        index, sep, rel = str(key).partition(":")
        if not sep or not index.isdigit() or int(index) >= len(roots) or not rel:
            raise ApiError(404, f"no {what} {key!r} (see the listing for the keys)")
        root = roots[int(index)].resolve()
        path = (root / rel).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            raise ApiError(404, f"no {what} {key!r} (see the listing for the keys)")
        return path

    # ------------------------------------------------------------------ records

    def record_files(self) -> list[dict[str, Any]]:
        """Every record file of the folders: ``key``, ``folder``, ``name``, ``size``, ``saved``."""
        files = []
        for i, root in enumerate(self.record_roots):
            if not root.is_dir():
                continue
            for path in _walk(root, None, ".jsonl"):
                if is_record_file(path):
                    files.append({"key": self._key(i, root, path), "folder": shown(root),
                                  "name": path.relative_to(root).as_posix(),
                                  "size": path.stat().st_size, "saved": i == 0})  # fmt: skip
        return files

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
        return {"file": self._key(0, self.games_dir, path), "name": path.name}

    # ------------------------------------------------------------------ results

    def result_sets(self) -> list[dict[str, Any]]:
        """Every ``results.json``: ``key``, ``title``, ``folder``, ``players``, ``games``,
        ``agents`` (specs, best first), ``chart`` (whether a chart is beside it)."""
        sets = []
        for i, root in enumerate(self.result_roots):
            if not root.is_dir():
                continue
            for path in _walk(root, RESULTS_FILE, None):
                data = _read_results(path)
                if data is None:
                    continue
                name = path.parent.relative_to(root).as_posix()
                sets.append({"key": self._key(i, root, path), "folder": shown(root),
                             "name": shown(path.parent) if name == "." else name,
                             "title": _title(path), "players": data["config"].get("players"),
                             "games": data.get("games"),
                             "agents": [a["spec"] for a in data["agents"]],
                             "chart": (path.parent / CHART_FILE).is_file()})  # fmt: skip
        return sets

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
