"""Record files of the server's folders: telling one by its first line, a page of them, the
games of one (a line each), one game, and saving a game as a new one (``--games``).
"""

from __future__ import annotations

import functools
import json
import re
import time
from pathlib import Path
from typing import Any

from craits_env.jsonl import JsonlError
from craits_env.records import FORMAT, RecordError, read_records, write_records

from ..replay_view import record_line as _one_line
from .errors import plain, plain_json
from .folder_scan import PAGE_SIZE, Folders, Found, Verdicts, page
from .requests import ApiError

FIRST_LINE_LIMIT = 1 << 20  # bytes of a first line read to tell a record file
_FORMAT_PREFIX = re.compile(rb'^\{\s*"format"\s*:\s*"' + FORMAT.encode() + rb'"')


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


def summaries(path: str | Path) -> list[dict[str, Any]]:
    """Every game of the record file at ``path`` in one line each (``RecordError`` or
    ``JsonlError`` for a corrupt file)."""
    return list(_summaries(*_stamp(Path(path))))


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
                "meta": plain_json(record.get("meta") or {}),
                "text": plain(_one_line(i, line, record)),
            }
        )
    return tuple(out)


def _stamp(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return str(path), st.st_mtime_ns, st.st_size


def _is_jsonl(name: str) -> bool:
    return name.endswith(".jsonl")


class RecordFiles(Folders):
    """The record files of :class:`craits.web.library.Library` (which sets the attributes
    below): folder 0 is the saved games'."""

    games_dir: Path
    record_roots: list[Path]
    _records: Verdicts

    # ------------------------------------------------------------------ records

    def record_files(self, offset: object = 0, limit: object = PAGE_SIZE) -> dict[str, Any]:
        """A page of the record files of the folders, newest first: ``files`` (each ``key``,
        ``folder``, ``name``, ``size``, ``saved``), ``offset``, ``limit``, ``more`` (a next
        page may hold more), ``complete`` (every file of the folders was looked at)."""
        offset, limit = page(offset, limit)

        def keep(found: Found) -> bool:
            return bool(self._records.get(found, is_record_file))

        def entry(i: int, root: Path, folder: str, found: Found) -> dict[str, Any]:
            return {
                "key": self._key(i, root, found.path),
                "folder": folder,
                "name": plain(found.path.relative_to(root).as_posix()),
                "size": found.size,
                "saved": i == 0,
            }

        files, more, complete = self._listing(
            "records", self.record_roots, _is_jsonl, keep, entry, offset, limit
        )
        return {
            "files": files,
            "offset": offset,
            "limit": limit,
            "more": more,
            "complete": complete,
        }

    def record_path(self, key: object) -> Path:
        """The record file of ``key`` (404 unless it is one, inside its folder)."""
        return self._record_path(key)

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
        return game_record(self._record_path(key), game, str(key))

    def save(self, record: dict[str, Any], game_id: str) -> dict[str, str]:
        """Write ``record`` as a new record file of the saved games (atomically)."""
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        path = self.games_dir / f"{stamp}-{game_id[:8]}.jsonl"
        write_records(path, [record])
        with self._scans_lock:
            self._scans.pop(("records", 0), None)  # the next listing shows it
        return {"file": self._key(0, self.games_dir, path), "name": path.name}


def game_record(path: str | Path, game: int, key: str) -> dict[str, Any]:
    """Game ``game`` (from 1) of the record file at ``path`` (``key``: its name in
    messages); :class:`ApiError` 400 for a file that does not read, 404 for no such game."""
    i = 0
    try:
        for i, (_, record) in enumerate(read_records(path, verify=False), 1):
            if i == game:
                return record
    except (RecordError, JsonlError) as e:
        raise ApiError(400, str(e)) from None
    raise ApiError(404, f"{key}: there is no game {game} (the file holds {i} games)")
