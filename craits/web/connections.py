"""The connection side of ``craits serve``: how many connections, for how long, and a log
that stays small when something runs out.

uvicorn alone keeps a connection whose request headers never end, and accepts connections
until the process runs out of file descriptors; asyncio then logs a traceback for every
failed ``accept()`` (thousands a second). Here:

- :func:`protocol_class` — uvicorn's h11 protocol with a cap on connections held at once
  (:func:`connection_limit`: :data:`MAX_CONNECTIONS`, and never within
  :data:`DESCRIPTOR_RESERVE` of the descriptor limit, so that descriptors stay for files
  and answers; a burst of connections may still exhaust them for a moment, and asyncio's
  failed ``accept()`` is then logged once per :data:`QUIET_SECONDS`) and per client — its
  address's /24 or /64 network by default, :func:`craits.web.clients.client_group` —
  (``connections_per_client``); a connection beyond either is answered **503**
  ``{"error": …}`` and closed at once, freeing its descriptor. When the server holds its
  maximum, a newcomer first takes the place of the oldest idle connection of the client
  holding the most, if that one holds more than the newcomer's would: a few clients
  holding every connection do not lock the others out.
  A connection whose request headers are not complete within :data:`HEADER_TIMEOUT`
  seconds is closed; a malformed request (or headers over :data:`MAX_HEADER_BYTES`) gets
  **400** ``{"error": …}`` (uvicorn's own is plain text);
- :class:`QuietRepeats` — a logging filter that lets one record of a kind through per
  :data:`QUIET_SECONDS` (on ``asyncio``, its traceback shortened to one line; on
  ``uvicorn.error``, the first of a kind whole);
- :class:`RedactTokens` — a logging filter of ``uvicorn.access`` that writes
  ``token=…`` of a query string as ``token=[redacted]`` (its key percent-decoded first).

The request side (body size and time, rates, the ``Host`` check) is :mod:`craits.web.limits`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import resource
import time
from typing import Any
from urllib.parse import unquote_plus

from uvicorn.protocols.http.h11_impl import H11Protocol

from .clients import V4_PREFIX, V6_PREFIX, check_prefixes, client_group
from .errors import one_line

MAX_CONNECTIONS = 1000
"""Connections held at once at most (fewer when the descriptor limit is low)."""
DESCRIPTOR_RESERVE = 64
"""Descriptors kept free for everything but connections (files, the listening socket)."""
MIN_CONNECTIONS = 8
CONNECTIONS_PER_CLIENT = 64
"""Connections one client address may hold at once (``craits serve --client-connections``)."""
HEADER_TIMEOUT = 10.0
"""Seconds a request's headers may take to arrive (from the connection, or the last answer)."""
KEEP_ALIVE = 5
"""Seconds an idle connection stays open (clients should reuse theirs less long)."""
MAX_HEADER_BYTES = 16 * 1024
"""Bytes of a request line and headers at most (h11's incomplete-event limit)."""
QUIET_SECONDS = 10.0
_QUERY_FIELD = re.compile(r"([?&;])([^=&#\s]*)=([^&#\s]*)")


def connection_limit(requested: int = MAX_CONNECTIONS) -> int:
    """``requested``, or fewer so that every connection finds a descriptor."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return requested
    return max(MIN_CONNECTIONS, min(requested, soft - DESCRIPTOR_RESERVE))


def _canned(status: int, reason: str, message: str) -> bytes:
    body = json.dumps({"error": one_line(message)}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


def protocol_class(
    max_connections: int | None = None,
    connections_per_client: int = CONNECTIONS_PER_CLIENT,
    header_timeout: float = HEADER_TIMEOUT,
    exempt: str | None = None,
    networks: tuple[int, int] = (V4_PREFIX, V6_PREFIX),
) -> type[H11Protocol]:
    """An h11 protocol class for one server (see the module docstring); ``0`` connections
    per client: no per-client cap; ``exempt``: an address without one (a trusted proxy);
    ``networks``: the IPv4 and IPv6 prefixes of a client's network."""
    check_prefixes(*networks)
    limit = connection_limit() if max_connections is None else max_connections
    held: dict[str, int] = {}  # connections by client (its network), of this server
    members: dict[str, dict[Any, None]] = {}  # the connections of each client, oldest first
    full = _canned(
        503,
        "Service Unavailable",
        f"the server holds {limit} connections, its limit: try again later",
    )
    malformed = _canned(
        400,
        "Bad Request",
        f"invalid HTTP request: malformed, or its line and headers over {MAX_HEADER_BYTES} bytes",
    )
    crowded = _canned(
        503,
        "Service Unavailable",
        f"at most {connections_per_client} "
        f"connections at once from one client (an address's /{networks[0]} or /{networks[1]} "
        "network): reuse one "
        "(keep-alive)",
    )

    class GuardedH11Protocol(H11Protocol):
        _address: str | None = None
        _timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            address = str(self.client[0]) if self.client else "unknown"
            per_client = connections_per_client > 0 and address != exempt
            group = address if address == exempt else client_group(address, *networks)
            if len(self.connections) > limit and not self._make_room(group):
                self._refuse(full)
            elif per_client and held.get(group, 0) >= connections_per_client:
                self._refuse(crowded)
            else:
                self._address = group
                held[group] = held.get(group, 0) + 1
                members.setdefault(group, {})[self] = None
                self._arm()

        def _make_room(self, group: str) -> bool:
            """When the server holds its connections: close the oldest idle one (between
            requests, or its headers still coming) of the client holding the most, if that
            client holds more than this one will — so that a few clients holding every
            connection cannot lock the others out; whether room was made."""
            if not held:
                return False
            most = max(held, key=held.__getitem__)
            if most == group or held[most] <= held.get(group, 0) + 1:
                return False
            for other in members.get(most, ()):
                if other.cycle is None or other.cycle.response_complete:
                    other._refuse(full)  # (its descriptor freed once closed)
                    other.connections.discard(other)  # counted out now
                    other._count_out()
                    return True
            return False

        def send_400_response(self, msg: str) -> None:  # uvicorn's is plain text
            self._refuse(malformed)

        def _refuse(self, answer: bytes) -> None:
            self.transport.write(answer)
            self.transport.close()

        def _arm(self) -> None:
            """Close the connection unless a request starts within ``header_timeout``."""
            if self._timer is not None:
                self._timer.cancel()
            waiting_after = self.cycle
            self._timer = self.loop.call_later(header_timeout, self._headers_late, waiting_after)

        def _headers_late(self, waiting_after: object) -> None:
            self._timer = None
            if self.cycle is waiting_after and not self.transport.is_closing():
                self.transport.close()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            super().connection_lost(exc)
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._count_out()

        def _count_out(self) -> None:
            if self._address is not None:
                left = held.get(self._address, 1) - 1
                group = members.get(self._address, {})
                group.pop(self, None)
                if left > 0:
                    held[self._address] = left
                else:
                    held.pop(self._address, None)
                    members.pop(self._address, None)
                self._address = None

    GuardedH11Protocol.limit = limit  # type: ignore[attr-defined]
    return GuardedH11Protocol


class QuietRepeats(logging.Filter):
    """One record per logger, message and exception type per ``seconds``; ``shorten``: its
    traceback as one line (else kept: the first of a kind shows where a fault is)."""

    def __init__(self, seconds: float = QUIET_SECONDS, shorten: bool = True) -> None:
        super().__init__()
        self.seconds = seconds
        self.shorten = shorten
        self._last: dict[tuple[str, str, str], float] = {}
        self.dropped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        key = (record.name, str(record.msg), type(exc).__name__)
        now = time.monotonic()
        if now - self._last.get(key, -self.seconds) < self.seconds:
            self.dropped += 1
            return False
        if len(self._last) > 1000:
            self._last.clear()
        self._last[key] = now
        if self.shorten and exc is not None:
            record.msg = f"{record.getMessage()} ({type(exc).__name__}: {exc})"
            record.args = ()
            record.exc_info = None
            record.exc_text = None
        return True


class RedactTokens(logging.Filter):
    """``token=…`` of a logged request line as ``token=[redacted]``."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str):
            record.msg = redact(record.msg)
        return True


def redact(text: str) -> str:
    """``text`` with the value of every ``token=`` query parameter hidden, its key read as
    the server reads it (percent-decoded, ``+`` a space; any case): ``?%74oken=T`` is
    ``?token=T`` to the application, so it is hidden too."""

    def hide(match: re.Match[str]) -> str:
        key = unquote_plus(match.group(2))
        if key.strip().lower() != "token":
            return match.group(0)
        return f"{match.group(1)}{match.group(2)}=[redacted]"

    return _QUERY_FIELD.sub(hide, text)


def quiet_logs() -> None:
    """Install (once) :class:`QuietRepeats` on ``asyncio`` (one line each: a failed
    ``accept()``) and on ``uvicorn.error`` (tracebacks kept: a fault of the application),
    and :class:`RedactTokens` on ``uvicorn.access``."""
    filters: list[tuple[str, logging.Filter]] = [
        ("asyncio", QuietRepeats()),
        ("uvicorn.error", QuietRepeats(shorten=False)),
        ("uvicorn.access", RedactTokens()),
    ]
    for name, made in filters:
        logger = logging.getLogger(name)
        if not any(type(f) is type(made) for f in logger.filters):
            logger.addFilter(made)
