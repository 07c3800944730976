"""JSON Lines files: one object a line, appended durably, read with one torn-tail rule.

Every JSON Lines file of the project — game records, a tournament's games — is
written and read here. **The torn-tail rule**: a crash can cut only the last
write short, so a last line that has no newline after it and is not valid JSON
is *torn*: reading skips it (and says so), appending drops it first. Any other
line that is not valid JSON is corruption: :class:`JsonlError` names the file
and the line.

A file may be kept compressed (``games.jsonl.gz``, as the committed results are): reading a
path that ends in ``.gz`` decompresses it, and :func:`find_jsonl` finds the compressed copy of a
file that is absent.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from .fileio import atomic_write_text


class JsonlError(ValueError):
    """A line that is not a JSON value (and not a torn last line): ``"FILE line N: …"``."""


def encode(obj: Any) -> str:
    """One object as one compact JSON line (no newline; NaN and infinities refused)."""
    return json.dumps(obj, separators=(",", ":"), allow_nan=False)


def read_jsonl(
    path: str | os.PathLike[str], on_torn: Callable[[int], None] | None = None
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, object)`` for every line (1-based; blank lines skipped).

    A torn last line is skipped and reported to ``on_torn(line number)``; an unreadable
    file raises ``OSError``; another bad line :class:`JsonlError`.
    """
    data = Path(path).read_bytes()
    if str(path).endswith(".gz"):
        data = gzip.decompress(data)
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError as e:
            if number == len(lines):  # no newline after it: a write cut short
                if on_torn is not None:
                    on_torn(number)
                continue
            raise JsonlError(f"{path} line {number}: not valid JSON ({reason(e)})") from None
        yield number, obj


def find_jsonl(path: str | os.PathLike[str]) -> Path:
    """``path`` itself, or its compressed copy ``path.gz`` where only that exists."""
    plain = Path(path)
    packed = plain.with_name(plain.name + ".gz")
    return packed if not plain.exists() and packed.exists() else plain


def reason(e: ValueError) -> str:
    """A JSON error in a few words."""
    if isinstance(e, json.JSONDecodeError):
        return f"{e.msg} at column {e.colno}"
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def append_jsonl(path: str | os.PathLike[str], objs: Iterable[Any]) -> None:
    """Append ``objs``, one a line, and flush them to disk (``fsync``).

    A torn last line is dropped first and a whole last line without its newline gets
    one, so the new lines start on a line of their own.
    """
    data = "".join(encode(o) + "\n" for o in objs).encode("utf-8")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a+b") as f:
        _repair_tail(f)
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def write_jsonl(path: str | os.PathLike[str], objs: Iterable[Any]) -> None:
    """Write a whole file at once, atomically (the old file or the whole new one)."""
    atomic_write_text(path, "".join(encode(o) + "\n" for o in objs))


def _repair_tail(f: Any) -> None:
    size = f.seek(0, os.SEEK_END)
    if size == 0:
        return
    f.seek(size - 1)
    if f.read(1) == b"\n":
        return
    f.seek(0)
    data = f.read()
    cut = data.rfind(b"\n") + 1
    try:
        json.loads(data[cut:])
    except ValueError:
        f.truncate(cut)  # a torn line: never readable, dropped
    else:
        f.write(b"\n")  # a whole last line without its newline
