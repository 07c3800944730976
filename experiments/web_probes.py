"""Hostile clients against a real ``craits serve`` (issue 28, finding 6): slow uploads.

Starts ``craits serve`` in its own process on 127.0.0.1 with a low descriptor limit
(``--nofile``, set in the child before it starts), opens ``--uploads`` connections that
each send the headers of a ``POST /api/games`` with a ``Content-Length`` and never the
body, then, while they are held open:

* **probe** — ``GET /api/specs`` from another loopback address (127.0.1.2, a client that
  is not the attacker) and from the attacker's own (127.0.0.1), again and again until one
  is answered 200 or ``--seconds`` pass: when the first answer (any status) and the first
  200 came;
* **uploads** — how many of the slow connections the server answered or closed, and with
  which statuses, by the end;
* **log** — the bytes the server wrote to stderr in those ``--seconds``.

Prints one JSON object (and writes it to ``--out`` if given). The same script measures the
tree before the fix: run it from the folder of an export of the old tree (``git archive
COMMIT | tar -x -C DIR``; ``python -m craits`` then imports that tree). The numbers before
and after the fix: ``experiments/results/web/web_probes.md``. Usage::

    python experiments/web_probes.py --uploads 300 --nofile 256 --seconds 20
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import selectors
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

URL_LINE = re.compile(r"serving http://127\.0\.0\.1:(\d+)/ ")
START_TIMEOUT = 60.0
UPLOAD = (
    b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: 1000\r\n\r\n"
)
PROBE = b"GET /api/specs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


def _limit_descriptors(nofile: int) -> Any:
    def set_limit() -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))

    return set_limit


def start_server(games: Path, nofile: int, stderr: Any, extra: list[str]) -> tuple[Any, int]:
    """``craits serve`` on a free port with at most ``nofile`` descriptors; (process, port)."""
    cmd = [sys.executable, "-m", "craits", "serve", "--port", "0", "--games", str(games), *extra]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=stderr, text=True, preexec_fn=_limit_descriptors(nofile)
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"craits serve exited with status {proc.wait()}")
        m = URL_LINE.search(line)
        if m:
            return proc, int(m.group(1))
    proc.kill()
    raise RuntimeError("craits serve did not print its address in time")


def probe(port: int, source: str, timeout: float) -> int | None:
    """The status of one ``GET /api/specs`` from ``source``, or ``None`` (no answer)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout, (source, 0)) as sock:
            sock.sendall(PROBE)
            head = sock.recv(64)
    except OSError:
        return None
    m = re.match(rb"HTTP/1\.1 (\d{3})", head)
    return int(m.group(1)) if m else None


def run(uploads: int, nofile: int, seconds: float, extra: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, open(Path(tmp) / "stderr", "w+b") as err:
        proc, port = start_server(Path(tmp) / "games", nofile, err, extra)
        slow: list[socket.socket] = []
        sel = selectors.DefaultSelector()
        try:
            started = time.monotonic()
            for _ in range(uploads):
                s = socket.socket()
                s.setblocking(False)
                s.connect_ex(("127.0.0.1", port))
                slow.append(s)
            time.sleep(0.2)
            for s in slow:
                with contextlib.suppress(OSError):
                    s.send(UPLOAD)
                sel.register(s, selectors.EVENT_READ)
            answers: dict[str, int] = {}
            closed = 0
            first: dict[str, dict[str, float | int | None]] = {}
            deadline = started + seconds
            while time.monotonic() < deadline:
                for key, _ in sel.select(timeout=0.05):
                    s = key.fileobj  # type: ignore[assignment]
                    try:
                        data = s.recv(256)
                    except OSError:
                        data = b""
                    m = re.match(rb"HTTP/1\.1 (\d{3})", data)
                    if m:
                        answers[m.group(1).decode()] = answers.get(m.group(1).decode(), 0) + 1
                    else:
                        closed += 1
                    sel.unregister(s)
                for source in ("127.0.1.2", "127.0.0.1"):
                    got = first.setdefault(source, {"answer_s": None, "status": None, "ok_s": None})
                    if got["ok_s"] is not None:
                        continue
                    status = probe(port, source, timeout=1.0)
                    now = round(time.monotonic() - started, 2)
                    if status is not None and got["answer_s"] is None:
                        got["answer_s"], got["status"] = now, status
                    if status == 200:
                        got["ok_s"] = now
                if all(v["ok_s"] is not None for v in first.values()) and not sel.get_map():
                    break
            time.sleep(max(0.0, deadline - time.monotonic()))
            alive = proc.poll() is None
        finally:
            for s in slow:
                s.close()
            proc.kill()
            proc.wait()
        err.flush()
        size = os.path.getsize(err.name)
        err.seek(0)
        head = err.read(300).decode("utf-8", "replace")
    return {
        "uploads": uploads,
        "nofile": nofile,
        "seconds": seconds,
        "server_args": extra,
        "probe": first,
        "uploads_answered": answers,
        "uploads_closed_silently": closed,
        "uploads_still_open": uploads - sum(answers.values()) - closed,
        "server_alive": alive,
        "stderr_bytes": size,
        "stderr_head": head,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--uploads", type=int, default=300)
    p.add_argument("--nofile", type=int, default=256)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("server_args", nargs="*", help="more arguments of craits serve (after --)")
    args = p.parse_args(argv)
    out = run(args.uploads, args.nofile, args.seconds, args.server_args)
    text = json.dumps(out, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
