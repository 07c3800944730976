"""The request layer of ``craits serve``: what a request may cost before the application sees it.

Three ASGI middlewares, each refusing with ``{"error": "one line"}`` (:mod:`craits.web.errors`):

- :class:`ClientRateLimit` — per client (its address's /24 or /64 network by default,
  :func:`client_group`; behind ``--trusted-proxy ADDR``, of the address that proxy puts
  last in ``X-Forwarded-For``): at most ``requests_per_second``
  requests a second (a token bucket holding ``burst``), and at most ``games_per_minute``
  new games (``POST /api/games``, counted from the request and kept when it succeeds)
  in any 60 seconds; beyond them **429** with ``Retry-After`` (whole seconds), the
  connection closed;
- :class:`JsonHostCheck` — only the ``Host`` names served (the loopback names when bound
  to loopback: a page of another site cannot reach the server through a name of its own,
  DNS rebinding); any other **400**;
- :class:`BodyLimits` — a request body at most :data:`MAX_BODY_BYTES`: a larger
  ``Content-Length`` gets **413** before anything is read, and a body without one
  (chunked) is counted as it streams and refused the same way the moment it passes the
  limit; a body not complete within :data:`BODY_TIMEOUT` seconds of its headers gets
  **408**. Both close the connection.

- :class:`RequestText` — every text of a request decodable and bounded: the request line
  and headers at most :data:`~craits.web.connections.MAX_HEADER_BYTES` however their bytes
  arrived (h11's own limit holds only for headers still incomplete, so 100 KB sent in one
  write passed it); the path, every key and value of the query string (percent-decoded),
  every header value and a request body strict UTF-8 (no lone UTF-16 surrogate, which
  UTF-8 cannot hold, no undecodable byte); and no string of a JSON body — a key or a
  value, at any depth — holding a lone surrogate (``"\\ud800"`` is valid JSON, and would
  reach the game code). Any other **400**, naming the field.

The connection side (how many at once, headers that never end, idle connections, a log
that stays small when descriptors run out) is :mod:`craits.web.connections`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import math
import re
import time
from collections import deque
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_to_bytes

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .clients import V4_PREFIX, V6_PREFIX, check_prefixes, client_group
from .connections import MAX_HEADER_BYTES
from .errors import send_error

MAX_BODY_BYTES = 8 * 1024
"""Bytes of a request body at most (every body of the API is a small JSON object)."""
BODY_TIMEOUT = 10.0
"""Seconds a request body may take to arrive, from the end of its headers."""
REQUESTS_PER_SECOND = 100.0
"""Requests a second one client may make, sustained (``craits serve --client-rate``)."""
REQUEST_BURST = 200
"""Requests one client may make at once, above the sustained rate."""
GAMES_PER_MINUTE = 30
"""New games one client may start in any 60 seconds (``craits serve --client-games``)."""
MAX_CLIENTS = 10_000
"""Clients whose counts are kept; beyond them the longest quiet are forgotten."""
GAMES_ROUTE = "/api/games"
_CONTENT_LENGTH = re.compile(rb"[0-9]{1,18}")
_CLOSE = {"Connection": "close"}


@dataclass(frozen=True)
class ClientLimits:
    """What one client may ask of the server (0: no limit)."""

    requests_per_second: float = REQUESTS_PER_SECOND
    burst: int = REQUEST_BURST
    games_per_minute: int = GAMES_PER_MINUTE
    trusted_proxy: str | None = None
    """the address of a reverse proxy whose ``X-Forwarded-For`` names the client"""
    v4_prefix: int = V4_PREFIX
    """IPv4 addresses of one /v4_prefix network are one client"""
    v6_prefix: int = V6_PREFIX
    """IPv6 addresses of one /v6_prefix network are one client"""

    def __post_init__(self) -> None:
        check_prefixes(self.v4_prefix, self.v6_prefix)
        if not self.requests_per_second >= 0 or not math.isfinite(self.requests_per_second):
            raise ValueError(
                f"requests_per_second: got {self.requests_per_second!r}, allowed "
                "a number >= 0 (0: no limit)"
            )
        if self.burst < 1:
            raise ValueError(f"burst: got {self.burst!r}, allowed an int >= 1")
        if self.games_per_minute < 0:
            raise ValueError(
                f"games_per_minute: got {self.games_per_minute!r}, allowed an "
                "int >= 0 (0: no limit)"
            )


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value)
    return None


def client_of(scope: Scope, limits: ClientLimits | None = None) -> str:
    """The client of a request: :func:`client_group` of :func:`client_address`, as
    ``limits`` (its trusted proxy, its networks' prefixes; default :class:`ClientLimits`)
    says."""
    limits = limits or ClientLimits()
    address = client_address(scope, limits.trusted_proxy)
    return client_group(address, limits.v4_prefix, limits.v6_prefix)


def client_address(scope: Scope, trusted_proxy: str | None = None) -> str:
    """The address a request comes from: the peer's, or — when the peer is
    ``trusted_proxy`` — the last valid address of its ``X-Forwarded-For`` (the one that
    proxy added; earlier ones are the client's own word)."""
    peer = scope.get("client")
    host = str(peer[0]) if peer else "unknown"
    if trusted_proxy is None or host != trusted_proxy:
        return host
    forwarded = _header(scope, b"x-forwarded-for")
    if forwarded is None:
        return host
    last = forwarded.decode("latin-1").split(",")[-1].strip()
    try:
        return str(ipaddress.ip_address(last))
    except ValueError:
        return host


# ----------------------------------------------------------------------------- rates


class _Bucket:
    """Token buckets by client: ``take`` returns 0 (served) or the seconds to wait."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float]) -> None:
        self.rate, self.burst, self.clock = rate, float(burst), clock
        self._held: dict[str, tuple[float, float]] = {}  # client -> (tokens, when)

    def take(self, client: str) -> float:
        now = self.clock()
        tokens, when = self._held.pop(client, (self.burst, now))
        tokens = min(self.burst, tokens + (now - when) * self.rate)
        wait = 0.0 if tokens >= 1 else (1 - tokens) / self.rate
        self._held[client] = (tokens - 1 if wait == 0 else tokens, now)  # the newest last
        while len(self._held) > MAX_CLIENTS:
            del self._held[next(iter(self._held))]
        return wait


class _Window:
    """Events by client in the last ``seconds``: ``wait`` is 0 while fewer than ``limit``."""

    def __init__(self, limit: int, seconds: float, clock: Callable[[], float]) -> None:
        self.limit, self.seconds, self.clock = limit, seconds, clock
        self._held: dict[str, deque[float]] = {}

    def _recent(self, client: str) -> deque[float]:
        times = self._held.pop(client, None) or deque()
        while times and times[0] <= self.clock() - self.seconds:
            times.popleft()
        self._held[client] = times
        while len(self._held) > MAX_CLIENTS:
            del self._held[next(iter(self._held))]
        return times

    def wait(self, client: str) -> float:
        times = self._recent(client)
        return 0.0 if len(times) < self.limit else times[0] + self.seconds - self.clock()

    def add(self, client: str) -> float:
        stamp = self.clock()
        self._recent(client).append(stamp)
        return stamp

    def remove(self, client: str, stamp: float) -> None:
        times = self._held.get(client)
        if times is not None and stamp in times:
            times.remove(stamp)


def _retry_after(seconds: float) -> dict[str, str]:
    """The headers of a 429: when to retry, and the connection closed (a body it came with
    is never read, and a client over its rate holds no connection meanwhile)."""
    return {"Retry-After": str(max(1, math.ceil(seconds))), **_CLOSE}


class ClientRateLimit:
    """Requests and new games per client (see the module docstring)."""

    def __init__(
        self, app: ASGIApp, limits: ClientLimits, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.app = app
        self.limits = limits
        self._requests = _Bucket(limits.requests_per_second, limits.burst, clock)
        self._games = _Window(limits.games_per_minute, 60.0, clock)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limits = self.limits
        client = client_of(scope, limits)
        if limits.requests_per_second > 0:
            wait = self._requests.take(client)
            if wait > 0:
                await send_error(
                    send,
                    429,
                    f"too many requests from {client}: at most "
                    f"{limits.requests_per_second:g} a second (bursts of "
                    f"{limits.burst}); retry in {math.ceil(wait)} s",
                    _retry_after(wait),
                )
                return
        if not (
            limits.games_per_minute > 0
            and scope["method"] == "POST"
            and scope["path"] == GAMES_ROUTE
        ):
            await self.app(scope, receive, send)
            return
        wait = self._games.wait(client)
        if wait > 0:
            await send_error(
                send,
                429,
                f"too many new games from {client}: at most "
                f"{limits.games_per_minute} a minute; retry in {math.ceil(wait)} s",
                _retry_after(wait),
            )
            return
        stamp = self._games.add(client)  # counted now: games started at once count too
        kept = False

        async def counting_send(message: Message) -> None:
            nonlocal kept
            if message["type"] == "http.response.start":
                kept = message["status"] == 201
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            if not kept:
                self._games.remove(client, stamp)


# ----------------------------------------------------------------------------- hosts


def host_name(header: bytes | None) -> str:
    """The name of a ``Host`` header, without its port, lower case (``[::1]`` kept whole)."""
    host = (header or b"").decode("latin-1").strip().lower()
    if host.startswith("["):
        return host.partition("]")[0] + "]"
    return host.partition(":")[0]


class JsonHostCheck:
    """Only the ``Host`` names of ``allowed_hosts`` are served (see the module docstring)."""

    def __init__(self, app: ASGIApp, allowed_hosts: Collection[str]) -> None:
        self.app = app
        self.allowed = frozenset(h.lower() for h in allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            name = host_name(_header(scope, b"host"))
            if name not in self.allowed and name.strip("[]") not in self.allowed:
                if scope["type"] == "http":
                    await send_error(
                        send,
                        400,
                        f"Host {name!r} is not served here; allowed: "
                        f"{', '.join(sorted(self.allowed))}",
                    )
                return
        await self.app(scope, receive, send)


# ----------------------------------------------------------------------------- bodies


class _Refused(Exception):
    """Raised from ``receive`` to stop the application reading a refused body."""


def _only_refused(exc: BaseException) -> bool:
    """Whether ``exc`` is :class:`_Refused`, or a group (Python 3.11's ``ExceptionGroup``,
    anyio's on 3.10) of nothing else."""
    inner = getattr(exc, "exceptions", None)
    if isinstance(inner, tuple) and inner:
        return all(_only_refused(e) for e in inner)
    return isinstance(exc, _Refused)


class BodyLimits:
    """At most ``max_bytes`` of body, within ``timeout`` seconds (see the module docstring)."""

    def __init__(
        self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES, timeout: float = BODY_TIMEOUT
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout = timeout

    def _too_large(self) -> str:
        return f"request body too large: at most {self.max_bytes} bytes"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = _header(scope, b"content-length")
        if length is not None and not _CONTENT_LENGTH.fullmatch(length.strip()):
            await send_error(
                send, 400, f"Content-Length: got {length!r}, expected a number of bytes", _CLOSE
            )
            return
        if length is not None and int(length) > self.max_bytes:
            await send_error(send, 413, self._too_large(), _CLOSE)
            return
        deadline = asyncio.get_running_loop().time() + self.timeout
        received = 0
        complete = False
        refused: tuple[int, str] | None = None
        answered = False

        async def limited_receive() -> Message:
            nonlocal received, complete, refused
            if complete:
                return await receive()
            if refused is not None:
                raise _Refused
            remaining = deadline - asyncio.get_running_loop().time()
            try:
                message = await asyncio.wait_for(receive(), max(remaining, 0.0))
            except TimeoutError:
                refused = (408, f"request body not received within {self.timeout:g} s")
                raise _Refused from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    refused = (413, self._too_large())
                    raise _Refused
                complete = not message.get("more_body", False)
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal answered
            if refused is None:
                answered = answered or message["type"] == "http.response.start"
                await send(message)
            elif not answered and message["type"] == "http.response.start":
                answered = True  # the application's answer to a refused body: ours instead
                await send_error(send, *refused, _CLOSE)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except Exception as e:  # _Refused, alone or in a task group's exception group
            if not _only_refused(e):
                raise
        if refused is not None and not answered:
            await send_error(send, *refused, _CLOSE)


# ----------------------------------------------------------------------------- texts


BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
"""Methods whose body is read (and checked) here; the API reads no other body."""
MAX_JSON_STRINGS = 20_000
"""Strings of a JSON body looked at, at most (a body is at most ``max_body_bytes``)."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def undecodable(raw: bytes) -> str | None:
    """Why ``raw`` is not strict UTF-8 (a lone surrogate, encoded, is not), or ``None``."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"byte {e.start} is not UTF-8 ({raw[e.start : e.start + 3]!r})"
    return None


def _query_fields(query: bytes) -> Iterator[tuple[str, bytes]]:
    """``(what, decoded bytes)`` of every key and value of a query string."""
    for n, part in enumerate(query.split(b"&")):
        key, _, value = part.partition(b"=")
        name = key.decode("latin-1")[:20]
        yield f"query key {n + 1}", unquote_to_bytes(key.replace(b"+", b" "))
        yield f"query parameter {name!r}", unquote_to_bytes(value.replace(b"+", b" "))


def _strings(value: Any) -> Iterator[tuple[str, str]]:
    """``(where, text)`` of every key and string of a parsed JSON value (no recursion)."""
    stack: list[tuple[str, Any]] = [("body", value)]
    seen = 0
    while stack and seen < MAX_JSON_STRINGS:
        where, item = stack.pop()
        if isinstance(item, str):
            seen += 1
            yield where, item
        elif isinstance(item, dict):
            for key, inner in item.items():
                seen += 1
                yield f"{where} key", str(key)
                stack.append((f"{where}.{key!s:.30}", inner))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", inner) for i, inner in enumerate(item))


def lone_surrogate(value: Any) -> str | None:
    """Where a parsed JSON value holds a lone UTF-16 surrogate (why, in words), or ``None``."""
    for where, text in _strings(value):
        found = _SURROGATE.search(text)
        if found:
            shown = where.encode("utf-8", "backslashreplace").decode("utf-8")
            return (
                f"{shown}: holds a lone UTF-16 surrogate (U+{ord(found.group()):04X}); "
                "allowed Unicode text"
            )
    return None


def request_head_bytes(scope: Scope) -> int:
    """The bytes of a request's line and headers (their separators counted)."""
    line = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"") + 16
    return line + sum(len(k) + len(v) + 4 for k, v in scope.get("headers", ()))


class RequestText:
    """Decodable, bounded text in every field of a request (see the module docstring)."""

    def __init__(self, app: ASGIApp, max_header_bytes: int = MAX_HEADER_BYTES) -> None:
        self.app = app
        self.max_header_bytes = max_header_bytes

    def _head_fault(self, scope: Scope) -> str | None:
        size = request_head_bytes(scope)
        if size > self.max_header_bytes:
            return (
                f"request line and headers: {size} bytes, allowed at most {self.max_header_bytes}"
            )
        raw_path = scope.get("raw_path") or scope.get("path", "").encode("utf-8", "replace")
        why = undecodable(unquote_to_bytes(raw_path))
        if why:
            return f"path: {why}; allowed UTF-8 text"
        for what, raw in _query_fields(scope.get("query_string") or b""):
            why = undecodable(raw)
            if why:
                return f"{what}: {why}; allowed UTF-8 text, percent-encoded"
        for key, value in scope.get("headers", ()):
            why = undecodable(bytes(value))
            if why:
                name = bytes(key).decode("latin-1")[:40]
                return f"header {name!r}: {why}; allowed UTF-8 text"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        fault = self._head_fault(scope)
        if fault is not None:
            await send_error(send, 400, fault, _CLOSE)
            return
        if scope["method"] not in BODY_METHODS:
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        while True:  # (its size and time bounded by BodyLimits, outside this one)
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")
        why = undecodable(body)
        if why is not None:
            why = f"request body: {why}; allowed JSON in UTF-8"
        elif body.lstrip()[:1] in (b"{", b"["):
            try:
                parsed = json.loads(body)
            except (ValueError, RecursionError):  # malformed: the application says so
                parsed = None
            why = lone_surrogate(parsed)
        if why is not None:
            await send_error(send, 400, why, _CLOSE)
            return
        await self.app(scope, _replay(messages, receive), send)


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A ``receive`` that gives ``messages`` again, then the real one's."""
    queued = list(messages)

    async def replay() -> Message:
        if queued:
            return queued.pop(0)
        return await receive()

    return replay
