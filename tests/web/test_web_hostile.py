"""``craits serve`` against hostile clients (issue 28, the request layer): bodies too large or
too slow, floods of requests and of new games, slow uploads under a low descriptor limit,
every bad input to every route a one-line JSON 4xx, tokens kept out of the access log,
bidirectional-text controls out of what is shown, listings bounded whatever a folder holds.

Each middleware is tested in process (a small ASGI app, a fake clock); each probe of the
issue against a real ``craits serve`` process on 127.0.0.1, killed at the end."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from craits.commands import serve as serve_command
from craits.web import (
    app,
    bots,
    clients,
    connections,
    errors,
    folder_scan,
    library,
    limits,
    record_files,
    sessions,
)
from craits.web.connections import QuietRepeats, RedactTokens, redact
from craits.web.errors import MAX_ERROR_CHARS, one_line
from craits.web.inputs import MAX_HANDS, MAX_SEED_DIGITS, bearer_token
from craits.web.limits import (
    MAX_BODY_BYTES,
    BodyLimits,
    ClientLimits,
    ClientRateLimit,
    JsonHostCheck,
    client_address,
)
from craits.web.server import listen, running
from craits_env.records import read_records, write_records
from craits_env.rules import Rules
from experiments.web_probes import run as slow_uploads

from ..webclient import TOURNAMENT, client, new_game, serve_process

RLO = "\u202e"
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"
START_TIMEOUT = 60.0


def one_line_error(r: Any, status: int, fragment: str = "") -> str:
    assert r.status_code == status, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json"), r.headers
    body = r.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert "\n" not in error and len(error) <= MAX_ERROR_CHARS and fragment in error, error
    return str(error)


@pytest.fixture
def c(tmp_path: Path) -> Any:
    c = client(tmp_path / "games", record_dirs=[TOURNAMENT], result_dirs=[TOURNAMENT])
    c.raise_server_exceptions = False  # a fault must come back as an answer, not raise here
    return c


# ----------------------------------------------------------------------------- in process: ASGI


async def _echo(request: Request) -> JSONResponse:
    body = await request.body()
    return JSONResponse({"bytes": len(body)})


def _asgi_client(app: Any, **kw: Any) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=kw.pop("client", ("10.0.0.1", 5000)))
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", **kw)


ECHO = Starlette(
    routes=[
        Route("/api/games", _echo, methods=["POST", "GET"]),
        Route("/echo", _echo, methods=["POST", "GET"]),
    ]
)


def test_a_body_over_the_limit_is_413_before_it_is_read() -> None:
    async def main() -> None:
        async with _asgi_client(BodyLimits(ECHO, max_bytes=100)) as http:
            ok = await http.post("/echo", content=b"x" * 100)
            assert ok.status_code == 200 and ok.json() == {"bytes": 100}
            r = await http.post("/echo", content=b"x" * 101)
            one_line_error(r, 413, "request body too large: at most 100 bytes")
            assert r.headers["connection"] == "close"

            async def chunks() -> Any:  # no Content-Length: counted as it streams
                for _ in range(50):
                    yield b"y" * 10

            r = await http.post("/echo", content=chunks())
            assert "content-length" not in r.request.headers
            one_line_error(r, 413, "at most 100 bytes")
            r = await http.post("/echo", content=b"1", headers=[(b"content-length", "²".encode())])
            one_line_error(r, 400, "Content-Length")

    asyncio.run(main())


def test_a_body_that_does_not_arrive_in_time_is_408() -> None:
    messages: list[dict[str, Any]] = []

    async def never(*_: Any) -> dict[str, Any]:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    async def send(message: Any) -> None:
        messages.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/echo",
        "headers": [],
        "query_string": b"",
        "client": ("10.0.0.1", 1),
        "server": ("127.0.0.1", 80),
        "scheme": "http",
        "root_path": "",
        "http_version": "1.1",
    }
    start = time.monotonic()
    asyncio.run(asyncio.wait_for(BodyLimits(ECHO, timeout=0.2)(scope, never, send), 10))
    assert time.monotonic() - start < 5
    assert messages[0]["status"] == 408
    assert json.loads(messages[1]["body"]) == {"error": "request body not received within 0.2 s"}
    assert (b"connection", b"close") in messages[0]["headers"]


def test_a_refusal_inside_a_task_group_does_not_escape() -> None:
    """A response that listens for the client while it streams (Starlette's file and
    streaming responses, in a task group) and meets the body timeout: nothing escapes."""
    import anyio

    sent: list[dict[str, Any]] = []

    async def streaming(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        async with anyio.create_task_group() as group:
            group.start_soon(receive)  # never answered: the timeout raises in the group
            await anyio.sleep(0.5)

    async def never() -> dict[str, Any]:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/", "headers": [(b"content-length", b"5")]}
    asyncio.run(BodyLimits(streaming, timeout=0.1)(scope, never, send))
    assert [m["type"] for m in sent] == ["http.response.start"]  # the rest dropped, no raise


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_requests_per_client_beyond_the_rate_get_429_with_retry_after() -> None:
    clock = Clock()
    app = ClientRateLimit(
        ECHO, ClientLimits(requests_per_second=2, burst=3, games_per_minute=0), clock
    )

    async def main() -> None:
        async with _asgi_client(app) as a, _asgi_client(app, client=("10.0.1.2", 1)) as b:
            assert [(await a.get("/echo")).status_code for _ in range(3)] == [200] * 3
            r = await a.get("/echo")
            one_line_error(r, 429, "too many requests from 10.0.0.0/24: at most 2 a second")
            assert r.headers["retry-after"] == "1" and r.headers["connection"] == "close"
            assert (await b.get("/echo")).status_code == 200  # another client (its /24)
            clock.now += 0.5  # one request's worth of tokens back
            assert (await a.get("/echo")).status_code == 200
            assert (await a.get("/echo")).status_code == 429

    asyncio.run(main())


def test_new_games_per_client_beyond_the_minute_get_429_and_failures_do_not_count() -> None:
    clock = Clock()
    statuses = iter([201, 400, 201, 201])

    async def create(request: Request) -> JSONResponse:
        return JSONResponse({}, status_code=next(statuses))

    games = Starlette(routes=[Route("/api/games", create, methods=["POST"])])
    app = ClientRateLimit(games, ClientLimits(requests_per_second=0, games_per_minute=2), clock)

    async def main() -> None:
        async with _asgi_client(app) as http:
            assert (await http.post("/api/games")).status_code == 201
            assert (await http.post("/api/games")).status_code == 400  # not counted
            assert (await http.post("/api/games")).status_code == 201
            r = await http.post("/api/games")
            one_line_error(r, 429, "too many new games from 10.0.0.0/24: at most 2 a minute")
            assert r.headers["retry-after"] == "60"
            clock.now += 60.5
            assert (await http.post("/api/games")).status_code == 201

    asyncio.run(main())


def test_a_forwarded_address_counts_only_behind_the_trusted_proxy() -> None:
    def scope(peer: str, forwarded: str | None) -> dict[str, Any]:
        headers = [] if forwarded is None else [(b"x-forwarded-for", forwarded.encode())]
        return {"client": (peer, 1), "headers": headers}

    assert client_address(scope("10.0.0.9", "1.2.3.4")) == "10.0.0.9"  # no proxy: ignored
    assert client_address(scope("10.0.0.9", "1.2.3.4"), "10.0.0.1") == "10.0.0.9"  # not it
    assert client_address(scope("10.0.0.1", "6.6.6.6, 1.2.3.4"), "10.0.0.1") == "1.2.3.4"
    assert client_address(scope("10.0.0.1", "1.2.3.4, nonsense"), "10.0.0.1") == "10.0.0.1"
    assert client_address(scope("10.0.0.1", None), "10.0.0.1") == "10.0.0.1"
    with pytest.raises(ValueError, match="requests_per_second: got -1"):
        ClientLimits(requests_per_second=-1)


def test_the_host_check_answers_in_json() -> None:
    app = JsonHostCheck(ECHO, ["127.0.0.1", "localhost", "::1"])

    async def main() -> None:
        async with _asgi_client(app) as http:
            assert (await http.get("/echo", headers={"host": "localhost:8000"})).status_code == 200
            assert (await http.get("/echo", headers={"host": "[::1]:8000"})).status_code == 200
            r = await http.get("/echo", headers={"host": "evil.example:8000"})
            one_line_error(r, 400, "Host 'evil.example' is not served here; allowed:")

    asyncio.run(main())


# ----------------------------------------------------------------------------- in process: the app


def test_the_app_refuses_large_bodies_and_caps_every_error_line(c: Any) -> None:
    huge = {"opponents": ["x" * (2 * MAX_BODY_BYTES)]}
    one_line_error(c.post("/api/games", json=huge), 413, f"at most {MAX_BODY_BYTES} bytes")
    long_spec = "nobody" + "x" * 4000  # under the body limit: refused, and quoted bounded
    error = one_line_error(
        c.post("/api/games", json={"opponents": [long_spec]}), 400, "unknown agent spec"
    )
    assert error.endswith("…") and len(error) == MAX_ERROR_CHARS
    assert len(c.app.state.store) == 0
    assert one_line(f"a{RLO}b\n\n c") == "ab c" and one_line("") == "error"


@pytest.mark.parametrize(
    ("opponent", "fragment"),
    [
        ("pimc:²", "N of pimc:N is written in digits 0-9"),  # "²".isdigit(), int("²") fails
        ("pimc:٣", "N of pimc:N is written in digits 0-9"),  # int("٣") == 3
        ("pimc:+3", "digits 0-9"),
        ("pimc: 3", "digits 0-9"),
        ("champion-search:²", "N of champion-search:N"),
        ("pimc:99999999999999999999", "the number is at most 2048"),
        ("belief-search:٣", "N of belief-search:N"),
        ("openspiel-ismcts:33", "the number is at most 32"),  # ~10 ms a simulation
    ],
)
def test_a_spec_number_is_ascii_digits_and_bounded(c: Any, opponent: str, fragment: str) -> None:
    one_line_error(c.post("/api/games", json={"opponents": [opponent]}), 400, fragment)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        ({"rules": {"hand_sizes": [1] * (MAX_HANDS + 1)}}, 400, f"allowed 1 to {MAX_HANDS}"),
        ({"rules": {"hand_sizes": ",".join(["1"] * (MAX_HANDS + 1))}}, 400, "hands, allowed"),
        ({"rules": {"hand_sizes": "1," * 100_000 + "1"}}, 413, "too large"),  # 100,000 hands
        ({"rules": {"three_points": 1001}}, 400, "three_points: got 1001, allowed at most 1000"),
        ({"rules": {"three_points": "٣"}}, 400, "allowed ASCII text"),
        ({"rules": {"hand_decision_limit": 10**6}}, 400, "hand_decision_limit: got 1000000"),
        ({"seed": 10**MAX_SEED_DIGITS}, 400, f"more than {MAX_SEED_DIGITS} digits"),
    ],
)
def test_the_sizes_a_client_may_ask_for_are_bounded(
    c: Any, body: dict[str, Any], status: int, fragment: str
) -> None:
    one_line_error(c.post("/api/games", json={"opponents": ["random"], **body}), status, fragment)
    assert len(c.app.state.store) == 0


def test_the_bounds_themselves_are_allowed(c: Any) -> None:
    new_game(
        c,
        opponents=["random"],
        seed=10**MAX_SEED_DIGITS - 1,
        rules={"hand_sizes": [1] * MAX_HANDS, "three_points": 1000},
    )


BAD_TEXT = [
    "²",
    "٣",
    "\x00",
    "1\x00",
    "%FF",
    "9" * 50,
    "-1",
    str(10**30),
    "1.5",
    "true",
    "",
    RLO + "x",
    "a" * 3000,
    "0:\x00",
    "²:x",
    "0:../x",
]
RAW_QUERIES = ["%ff%fe", "%ed%a0%80", "%00", "%", "%zz", "1%00", "a=b=c"]  # bytes as sent
BAD_JSON: list[Any] = [
    "²",
    "٣",
    "\x00",
    "9" * 50,
    -1,
    10**30,
    -(10**30),
    1.5,
    True,
    None,
    [],
    {},
    RLO + "x",
    "a" * 3000,
    [[["x"]]],
    "pimc:²",
    "pimc:٣",
]


@pytest.mark.slow
def test_every_bad_input_to_every_route_is_a_json_4xx(c: Any) -> None:
    """Unicode digits, NUL bytes, odd encodings, huge numbers, wrong types, to every
    parameter of every route: never a 500, always one JSON line."""
    game_id, token = new_game(c, opponents=["random"], seed=1)
    record = c.get("/api/records").json()["files"][0]["key"]
    result = c.get("/api/results").json()["results"][0]["key"]
    answers: list[tuple[Any, int]] = []

    def check(r: httpx.Response, what: Any) -> None:
        answers.append((what, r.status_code))
        assert r.status_code < 500, (what, r.status_code, r.text[:200])
        if r.status_code >= 400:
            one_line_error(r, r.status_code)

    queries = {
        "/api/records": {"offset": 0, "limit": 5},
        "/api/results": {"offset": 0},
        "/api/records/games": {"file": record},
        "/api/records/replay": {"file": record, "game": 1, "seat": 0},
        "/api/results/table": {"key": result},
        "/api/results/chart": {"key": result},
        f"/api/games/{game_id}": {"token": token, "since": 0},
        "/api/specs": {"x": 1},
        "/api/rules": {"x": 1},
    }
    for path, params in queries.items():
        for name in params:
            for text in BAD_TEXT:
                check(c.get(path, params={**params, name: text}), (path, name, text[:9]))
            for raw in RAW_QUERIES:
                others = "&".join(f"{k}={quote(str(v))}" for k, v in params.items() if k != name)
                check(c.get(f"{path}?{others}&{name}={raw}"), (path, name, raw))
    for text in BAD_TEXT:
        check(c.get("/api/games/" + quote(text, safe=""), params={"token": token}), text[:9])
    base = {"opponents": ["random"], "seat": 0, "seed": 1, "players": 2, "rules": {}}
    for name in base:
        for value in BAD_JSON:
            check(c.post("/api/games", json={**base, name: value}), (name, repr(value)[:9]))
    for value in BAD_JSON:
        check(c.post("/api/games", json={**base, "opponents": [value]}), repr(value)[:9])
    for field in dataclasses.fields(Rules):
        for value in [*BAD_JSON, *BAD_TEXT]:
            rules = {field.name: value}
            check(c.post("/api/games", json={**base, "rules": rules}), (field.name, repr(value)))
    for route in ("actions", "resign", "save"):
        for name in ("token", "action"):
            for value in BAD_JSON:
                body = {"token": token, "action": 52, name: value}
                check(c.post(f"/api/games/{game_id}/{route}", json=body), (route, name))
    odd = [
        b"\xff\xfe",
        b'{"a": "\xff"}',
        b"[" * 4000,
        b"\x00",
        b"",
        b'{"seed": 1e999}',
        '{"opponents": ["random"]}'.encode("utf-16"),
    ]
    for raw_body in odd:
        for path in ("/api/games", f"/api/games/{game_id}/actions"):
            for kind in ("application/json", "text/plain; charset=utf-7"):
                r = c.post(path, content=raw_body, headers={"content-type": kind})
                check(r, (path, raw_body[:9], kind))
    assert len(answers) > 1000 and any(status == 400 for _, status in answers)


def test_an_action_in_other_digits_is_refused(c: Any) -> None:
    game_id, token = new_game(c, opponents=["random"], seed=9)
    r = c.post(f"/api/games/{game_id}/actions", json={"token": token, "action": "٣"})
    one_line_error(r, 400, "action: got '٣', allowed an action id 0-58")


def test_the_token_may_be_a_bearer_header(c: Any) -> None:
    game_id, token = new_game(c, opponents=["random"], seed=9)
    bearer = {"authorization": f"Bearer {token}"}
    v = c.get(f"/api/games/{game_id}", headers=bearer).json()
    assert v["seat"] == 0 and v["legal"]
    r = c.post(
        f"/api/games/{game_id}/actions", json={"action": v["legal"][0]["action"]}, headers=bearer
    )
    assert r.status_code == 200, r.text
    wrong = {"authorization": "Bearer " + "x" * 32}
    one_line_error(c.get(f"/api/games/{game_id}", headers=wrong), 403, "wrong token")
    one_line_error(c.post(f"/api/games/{game_id}/resign", headers=wrong), 403, "wrong token")
    assert c.post(f"/api/games/{game_id}/resign", headers=bearer).json()["resigned"]
    assert c.post(f"/api/games/{game_id}/save", headers=bearer).status_code == 200
    assert bearer_token({"authorization": "Basic abc"}) is None
    assert bearer_token({"authorization": "bearer  T1"}) == "T1"


def test_tokens_are_redacted_in_the_access_log() -> None:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5", "GET", "/api/games/g?since=2&token=SECRET&x=1", "1.1", 200),
        None,
    )
    assert RedactTokens().filter(record)
    assert "SECRET" not in record.getMessage() and "token=[redacted]&x=1" in record.getMessage()
    assert redact("/a?TOKEN=abc") == "/a?TOKEN=[redacted]"


def test_repeated_log_records_are_quiet_and_one_line() -> None:
    quiet = QuietRepeats(seconds=60)
    try:
        raise OSError(24, "Too many open files")
    except OSError:
        exc_info = sys.exc_info()
    records = [
        logging.LogRecord(
            "asyncio",
            logging.ERROR,
            __file__,
            1,
            "socket.accept() out of system resource",
            (),
            exc_info,
        )
        for _ in range(1000)
    ]
    passed = [r for r in records if quiet.filter(r)]
    assert len(passed) == 1 and quiet.dropped == 999
    assert passed[0].exc_info is None
    assert passed[0].getMessage() == (
        "socket.accept() out of system resource (OSError: [Errno 24] Too many open files)"
    )
    faults = QuietRepeats(seconds=60, shorten=False)  # uvicorn.error's: the traceback kept
    kept = [
        r
        for r in (
            logging.LogRecord(
                "uvicorn.error",
                logging.ERROR,
                __file__,
                1,
                "Exception in ASGI application",
                (),
                exc_info,
            )
            for _ in range(3)
        )
        if faults.filter(r)
    ]
    assert len(kept) == 1 and kept[0].exc_info == exc_info
    other = logging.LogRecord(
        "uvicorn.error", logging.ERROR, __file__, 1, "Exception in ASGI application", (), None
    )
    assert faults.filter(other)  # another kind (no exception): let through


def test_the_defaults_of_craits_serve_are_those_of_the_limits() -> None:
    assert serve_command.DEFAULT_CLIENT_RATE == limits.REQUESTS_PER_SECOND
    assert serve_command.DEFAULT_CLIENT_GAMES == limits.GAMES_PER_MINUTE
    assert serve_command.DEFAULT_CLIENT_CONNECTIONS == connections.CONNECTIONS_PER_CLIENT
    assert serve_command.DEFAULT_CLIENT_HELD == sessions.CLIENT_GAMES
    assert serve_command.DEFAULT_CLIENT_NETWORK == (clients.V4_PREFIX, clients.V6_PREFIX)
    assert serve_command.DEFAULT_NEARLY_FULL == sessions.NEARLY_FULL
    assert serve_command.DEFAULT_FULL_SHARE == sessions.FULL_SHARE
    assert serve_command.DEFAULT_CLIENT_THINK == sessions.CLIENT_THINK
    assert serve_command.DEFAULT_KEEP_DAYS * 86400 == sessions.KEEP_SECONDS
    assert serve_command.DEFAULT_MOVE_SECONDS == bots.MOVE_SECONDS
    assert serve_command.STORE_FILE == app.STORE_FILE
    assert 2 * limits.REQUESTS_PER_SECOND == limits.REQUEST_BURST


# ----------------------------------------------------------------------------- connections


@contextmanager
def guarded(**kw: Any) -> Iterator[int]:
    """:data:`ECHO` under uvicorn with :func:`connections.protocol_class` ``(**kw)`` in a
    thread on a free port of 127.0.0.1; yields the port."""
    import threading

    import uvicorn

    sock = listen("127.0.0.1", 0)
    config = uvicorn.Config(
        ECHO,
        http=connections.protocol_class(**kw),
        log_level="critical",
        h11_max_incomplete_event_size=connections.MAX_HEADER_BYTES,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def _read_all(sock: socket.socket, timeout: float) -> bytes:
    sock.settimeout(timeout)
    data = b""
    with contextlib.suppress(OSError):
        while chunk := sock.recv(4096):
            data += chunk
    return data


@pytest.mark.slow
def test_connections_beyond_the_cap_per_address_get_503_json_at_once() -> None:
    with guarded(connections_per_client=2) as port:
        held = [socket.create_connection(("127.0.0.1", port), 5) for _ in range(2)]
        time.sleep(0.2)
        with socket.create_connection(("127.0.0.1", port), 5) as third:
            answer = _read_all(third, 5)
        assert answer.startswith(b"HTTP/1.1 503 ") and b"connection: close" in answer
        assert json.loads(answer.partition(b"\r\n\r\n")[2]) == {
            "error": "at most 2 connections at once from one client (an address's /24 or /64 "
            "network): reuse one (keep-alive)"
        }
        with socket.create_connection(("127.0.0.1", port), 5, ("127.0.1.2", 0)) as other:
            other.sendall(b"GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert _read_all(other, 5).startswith(b"HTTP/1.1 200 ")  # another address
        held[0].close()
        time.sleep(0.2)
        with socket.create_connection(("127.0.0.1", port), 5) as again:  # room again
            again.sendall(b"GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert _read_all(again, 5).startswith(b"HTTP/1.1 200 ")
        held[1].close()


@pytest.mark.slow
def test_headers_that_never_end_are_closed_and_oversized_ones_get_400_json() -> None:
    with guarded(header_timeout=0.5) as port:
        with socket.create_connection(("127.0.0.1", port), 5) as slow:
            slow.sendall(b"GET /echo HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
            start = time.monotonic()
            assert _read_all(slow, 5) == b""  # closed
            assert time.monotonic() - start < 3
        with socket.create_connection(("127.0.0.1", port), 5) as big:
            big.sendall(b"GET /echo HTTP/1.1\r\nHost: x\r\nX: " + b"a" * (20 * 1024))  # no end
            answer = _read_all(big, 5)
        assert answer.startswith(b"HTTP/1.1 400 ")
        error = json.loads(answer.partition(b"\r\n\r\n")[2])["error"]
        assert error.startswith("invalid HTTP request") and "16384 bytes" in error
        assert connections.connection_limit(10**6) <= resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# ----------------------------------------------------------------------------- listings


def _record_file(tmp: Path, seat_name: str | None = None) -> str:
    source = next(TOURNAMENT.glob("**/records.jsonl"))
    (_, record), *_ = read_records(source, verify=False)
    if seat_name is not None:
        record["seats"][1] = seat_name
    path = tmp / "one.jsonl"
    write_records(path, [record])
    return path.read_text()


def test_bidi_controls_are_out_of_names_listed_and_shown(tmp_path: Path) -> None:
    records = tmp_path / "records"
    records.mkdir()
    (records / f"a{RLO}b.jsonl").write_text(_record_file(tmp_path, f"ev{BIDI}il"))
    c = client(tmp_path / "games", record_dirs=[records])
    (entry,) = c.get("/api/records").json()["files"]
    assert entry["name"] == "ab.jsonl"
    (game,) = c.get("/api/records/games", params={"file": entry["key"]}).json()["games"]
    assert game["seats"][1] == "evil" and RLO not in game["text"]
    common = (Path(library.__file__).parent / "static" / "common.js").read_text()
    js = "/[\\u061c\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u2069\\ufeff]/g;"
    assert f"const BIDI_CONTROLS = {js}" in common
    assert common.count("plainText(") >= 5  # text, attributes, children, fill, the banner
    assert all(not errors.BIDI_CONTROLS.sub("", ch) for ch in BIDI + ZERO_WIDTH)  # the same


def test_bidi_and_zero_width_characters_are_out_of_every_field_shown(tmp_path: Path) -> None:
    """Issue 43: a record's seats and meta, in the listing of its games, its replay and its
    standings; a results table's every string (keys too)."""
    hidden = BIDI + ZERO_WIDTH
    source = next(TOURNAMENT.glob("**/records.jsonl"))
    (_, record), *_ = read_records(source, verify=False)
    record["seats"][1] = f"ev{hidden}il"
    record["meta"] = {f"no{hidden}te": [f"x{hidden}y", {"deep": f"a{hidden}b"}], "n": 3}
    records = tmp_path / "records"
    records.mkdir()
    write_records(records / "one.jsonl", [record])
    results = tmp_path / "results" / "t"
    results.mkdir(parents=True)
    table = json.loads(next(TOURNAMENT.glob("**/results.json")).read_text())
    table["agents"][0]["spec"] = f"ran{hidden}dom"
    table[f"ex{hidden}tra"] = {f"k{ZERO_WIDTH}": [f"v{BIDI}"]}
    (results / "results.json").write_text(json.dumps(table))
    c = client(tmp_path / "games", record_dirs=[records], result_dirs=[tmp_path / "results"])
    (entry,) = c.get("/api/records").json()["files"]
    answers = [c.get("/api/records/games", params={"file": entry["key"]}).text]
    for seat in (None, 0, 1):
        params = {"file": entry["key"], "game": 1, **({} if seat is None else {"seat": seat})}
        r = c.get("/api/records/replay", params=params)
        assert r.status_code == 200, r.text
        answers.append(r.text)
    (listed,) = c.get("/api/results").json()["results"]
    answers.append(c.get("/api/results/table", params={"key": listed["key"]}).text)
    for text in answers:
        shown = json.loads(text)
        assert not any(ch in json.dumps(shown, ensure_ascii=False) for ch in hidden), text[:300]
    replay = json.loads(answers[1])
    assert replay["seats"][1] == "evil"
    assert replay["meta"] == {"note": ["xy", {"deep": "ab"}], "n": 3}
    assert any("player_1 (evil)" in line for line in replay["standings"])
    assert json.loads(answers[-1])["extra"] == {"k": ["v"]}


@pytest.mark.slow
def test_a_listing_is_paged_newest_first_and_bounded_whatever_a_folder_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = tmp_path / "records"
    records.mkdir()
    text = _record_file(tmp_path)
    for i in range(6000):  # more than the 5,000 entries the old listing gave up at
        path = records / f"g{i:05d}.{'jsonl' if i % 2 == 0 else 'txt'}"
        path.write_text(text if i % 4 == 0 else "{}\n")
        os.utime(path, ns=(10**18 + i * 10**9, 10**18 + i * 10**9))
    reads: list[Path] = []
    real = record_files.is_record_file

    def counted(path: Path) -> bool:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(record_files, "is_record_file", counted)
    c = client(tmp_path / "games", record_dirs=[records])
    start = time.monotonic()
    page = c.get("/api/records", params={"limit": 10}).json()
    assert time.monotonic() - start < 10
    assert [f["name"] for f in page["files"]] == [f"g{i:05d}.jsonl" for i in range(5996, 5956, -4)]
    assert page["more"] and page["complete"] and page["offset"] == 0 and page["limit"] == 10
    assert len(reads) <= 25  # the page's first lines only, not every file's
    nxt = c.get("/api/records", params={"offset": 10, "limit": 10}).json()["files"]
    assert nxt[0]["name"] == "g05956.jsonl"
    c.get("/api/records", params={"limit": 10})
    assert len(reads) <= 50  # the verdicts of unchanged files are kept
    last = c.get("/api/records", params={"offset": 1490, "limit": 1000}).json()
    assert len(last["files"]) == 10 and not last["more"]  # 1500 record files in all
    one_line_error(c.get("/api/records", params={"limit": 1001}), 400, "limit: got 1001")
    one_line_error(c.get("/api/records", params={"offset": -1}), 400, "offset: got -1")


def test_a_scan_stops_at_its_bound_and_still_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(50):
        (tmp_path / f"{i}.jsonl").write_text("{}\n")
    monkeypatch.setattr(folder_scan, "MAX_FILES", 20)
    result = folder_scan.scan(tmp_path, lambda name: name.endswith(".jsonl"))
    assert not result.complete and len(result.found) == 20


def test_links_leading_outside_a_folder_are_not_listed(tmp_path: Path) -> None:
    records, outside = tmp_path / "records", tmp_path / "outside"
    records.mkdir()
    outside.mkdir()
    text = _record_file(tmp_path)
    (outside / "secret.jsonl").write_text(text)
    (records / "inside.jsonl").write_text(text)
    (records / "leak.jsonl").symlink_to(outside / "secret.jsonl")
    (records / "alias.jsonl").symlink_to(records / "inside.jsonl")  # inside: listed
    (records / "dir").symlink_to(outside, target_is_directory=True)  # not entered
    (records / f"evil{RLO}lsonj.jsonl").write_text(text)
    c = client(tmp_path / "games", record_dirs=[records])
    files = c.get("/api/records").json()["files"]
    assert sorted(f["name"] for f in files) == ["alias.jsonl", "evillsonj.jsonl", "inside.jsonl"]
    for key in ("1:leak.jsonl", "1:dir/secret.jsonl"):
        one_line_error(c.get("/api/records/games", params={"file": key}), 404, "no record file")


# ----------------------------------------------------------------------------- a real server


@contextmanager
def craits_serve(tmp: Path, *args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``craits serve`` in its own process on a free port of 127.0.0.1; killed at the end."""
    with serve_process(tmp / "games", *args) as served:
        yield served


@pytest.mark.slow
def test_a_real_server_refuses_floods_bodies_and_hosts_in_json(tmp_path: Path) -> None:
    with (
        craits_serve(tmp_path, "--client-rate", "20", "--client-games", "3") as (url, _),
        httpx.Client(base_url=url, timeout=20) as http,
    ):
        r = http.post(
            "/api/games",
            content=b"x" * (10 * MAX_BODY_BYTES),
            headers={"content-type": "application/json"},
        )
        one_line_error(r, 413, "too large")
        one_line_error(http.get("/api/specs", headers={"host": "evil.example"}), 400, "Host")
        for seed in range(3):
            http.post("/api/games", json={"opponents": ["random"], "seed": seed})
        one_line_error(
            http.post("/api/games", json={"opponents": ["random"]}), 429, "too many new games"
        )
        assert http.get("/api/specs").status_code == 200
        # Past 20 a second: four at a time, so that a loaded machine's slow answers still
        # outrun the limit (one at a time, 60 requests once took over 3 s and met no 429).
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda _: http.get("/api/specs"), range(200)))
        assert {a.status_code for a in answers} == {200, 429}
        r = next(a for a in answers if a.status_code == 429)
        one_line_error(r, 429, "too many requests from 127.0.0.0/24: at most 20 a second")
        assert int(r.headers["retry-after"]) >= 1


@pytest.mark.slow
def test_a_real_server_keeps_tokens_out_of_its_log(tmp_path: Path) -> None:
    with craits_serve(tmp_path, "--log") as (url, proc):
        game = httpx.post(f"{url}/api/games", json={"opponents": ["random"], "seed": 1}).json()
        r = httpx.get(f"{url}/api/games/{game['game_id']}", params={"token": game["token"]})
        assert r.status_code == 200
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert game["token"] not in out + err
    assert f"/api/games/{game['game_id']}?token=[redacted]" in out + err


@pytest.mark.slow
def test_300_slow_uploads_under_256_descriptors_lock_nobody_out() -> None:
    """Finding 6 (Linux: 127.0.1.2 is another client's address): the probe of another
    client is answered at once, the uploads' own address
    once the body timeout has closed them; every upload is answered; stderr stays small."""
    out = slow_uploads(uploads=300, nofile=256, seconds=limits.BODY_TIMEOUT + 4, extra=[])
    assert out["server_alive"]
    other, same = out["probe"]["127.0.1.2"], out["probe"]["127.0.0.1"]
    assert other["ok_s"] is not None and other["ok_s"] < 5, out
    assert same["answer_s"] is not None and same["ok_s"] is not None, out
    assert out["uploads_still_open"] == 0 and out["uploads_closed_silently"] == 0, out
    assert set(out["uploads_answered"]) <= {"408", "429", "503"}, out
    assert out["stderr_bytes"] < 4000, out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--trusted-proxy", "proxy.example"], "invalid address 'proxy.example': expected an IP"),
        (["--client-rate", "-1"], "invalid value '-1': expected a number >= 0"),
        (["--client-rate", "nan"], "invalid value 'nan'"),
        (["--client-games", "٣"], "invalid value '٣': expected an int >= 0"),
        (["--client-connections", "1.5"], "invalid value '1.5'"),
        (["--client-network", "33,64"], "invalid networks '33,64': expected V4,V6 prefixes, 0 to"),
        (["--client-network", "24"], "invalid networks '24'"),
        (["--nearly-full", "0"], "invalid value '0': expected a number in (0, 1]"),
        (["--full-share", "1.5"], "invalid value '1.5': expected a number in (0, 1]"),
    ],
)
@pytest.mark.slow
def test_bad_limits_of_craits_serve_give_one_line_and_status_2(
    args: list[str], fragment: str
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "craits", "serve", *args], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert fragment in proc.stderr, proc.stderr


# ----------------------------------------------------------------------------- text (issue 43, H)

SURROGATE = '"\\ud800"'  # a lone UTF-16 surrogate, as JSON writes it


def _raw_post(c: Any, path: str, body: str) -> Any:
    return c.post(path, content=body.encode(), headers={"content-type": "application/json"})


def test_a_lone_surrogate_in_any_field_of_a_body_is_400_json(c: Any) -> None:
    game_id, token = new_game(c, opponents=["random"], seed=1)
    act, resign, save = (f"/api/games/{game_id}/{r}" for r in ("actions", "resign", "save"))
    cases = [
        ("/api/games", '{"opponents": ["random"], "rules": {%s: 1}}', "body.rules key"),
        ("/api/games", '{"opponents": ["random"], %s: 1}', "body key"),
        ("/api/games", '{"opponents": [%s]}', "body.opponents[0]"),
        ("/api/games", '{"opponents": ["random"], "rules": {"face_cards": %s}}', "face_cards"),
        ("/api/games", '{"opponents": ["random"], "rules": {"hand_sizes": [[%s]]}}', "[0][0]"),
        (act, '{"token": %s, "action": 1}', "body.token"),
        (act, '{"token": "' + token + '", "action": %s}', "body.action"),
        (act, '{"token": "' + token + '", "action": 1, %s: 2}', "body key"),
        (resign, '{"token": %s}', "body.token"),
        (save, '{"token": "a\\udfffb"}', "body.token"),
    ]
    for path, template, where in cases:
        body = template % SURROGATE if "%s" in template else template
        error = one_line_error(_raw_post(c, path, body), 400, "lone UTF-16 surrogate")
        assert error.startswith(where) or where in error, error
    for raw in (b'{"opponents": ["r\xed\xa0\x80"]}', b'{"opponents": ["\xff"]}', b"\xfe\xff"):
        r = c.post("/api/games", content=raw, headers={"content-type": "application/json"})
        one_line_error(r, 400, "is not UTF-8")
    assert len(c.app.state.store) == 1  # nothing made or changed
    assert c.get(f"/api/games/{game_id}", params={"token": token}).json()["resigned"] is False


@pytest.mark.parametrize(
    "query",
    ["token=%ED%A0%80", "since=%ED%A0%80", "token=%FF", "%FF=1", "x=%ED%A0%80", "tok%C0en=1"],
)
def test_undecodable_text_in_a_query_is_400_json(c: Any, query: str) -> None:
    game_id, token = new_game(c, opponents=["random"], seed=1)
    for path in (f"/api/games/{game_id}", "/api/records/games", "/api/specs", "/api/cards"):
        one_line_error(c.get(f"{path}?{query}"), 400, "is not UTF-8")
    one_line_error(c.get(f"/api/games/%ED%A0%80?token={token}"), 400, "path: byte 11")


def test_an_error_line_holding_a_surrogate_is_escaped() -> None:
    assert one_line("rules: unknown option(s) \ud800") == "rules: unknown option(s) \\ud800"
    assert errors.error_response(400, "x\udfff").body == b'{"error":"x\\\\udfff"}'


def test_query_keys_are_decoded_before_the_token_is_redacted() -> None:
    assert redact("/api/games/g?%74oken=SECRET") == "/api/games/g?%74oken=[redacted]"
    assert redact("/g?x=1&TOK%45N=S&y=2") == "/g?x=1&TOK%45N=[redacted]&y=2"
    assert redact("/g?tokens=kept&xtoken=kept") == "/g?tokens=kept&xtoken=kept"


@pytest.mark.slow
def test_a_real_server_refuses_oversized_and_undecodable_headers_however_they_arrive(
    tmp_path: Path,
) -> None:
    """100 KB of headers in one write (h11's limit counts only incomplete ones), a header
    value that is not UTF-8, a lone surrogate in a body: each 400 JSON, never a 500; and a
    ``?%74oken=`` redacted in the log."""
    settings = app.Settings(games_dir=tmp_path / "games", store=":memory:")
    with running(app.create_app(settings)) as url:
        port = int(url.rsplit(":", 1)[1])
        answers = []
        for head in (
            b"X-Big: " + b"a" * 100_000 + b"\r\n",
            b"".join(b"X-%d: %s\r\n" % (i, b"b" * 1000) for i in range(100)),
            b"X-Odd: \xff\xfe\r\n",
            b"Authorization: Bearer \xed\xa0\x80\r\n",
        ):
            with socket.create_connection(("127.0.0.1", port), 5) as s:
                s.sendall(b"GET /api/specs HTTP/1.1\r\nHost: 127.0.0.1\r\n" + head + b"\r\n")
                answers.append(_read_all(s, 5))
        for answer in answers:
            assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
            error = json.loads(answer.partition(b"\r\n\r\n")[2])["error"]
            assert "\n" not in error and ("16384" in error or "is not UTF-8" in error), error
        assert b"16384" in answers[0] and b"16384" in answers[1]
        r = httpx.post(
            f"{url}/api/games",
            content=b'{"opponents": [' + SURROGATE.encode() + b"]}",
            headers={"content-type": "application/json"},
        )
        one_line_error(r, 400, "lone UTF-16 surrogate")


# ----------------------------------------------------------------------------- bot costs (A)

LARGEST = {"num_decks": 2, "hand_sizes": [8] * MAX_HANDS}


@pytest.mark.parametrize(
    ("opponents", "rules", "fragment"),
    [
        (["openspiel-ismcts:32"] * 9, LARGEST, "no openspiel-ismcts at this table"),
        (["openspiel-ismcts:32"] * 3, {}, "about 34 s at this table (4 players, 15 hands)"),
        (["random", "random", "openspiel-ismcts"], {}, "at most openspiel-ismcts:9 here"),
        (["openspiel-ismcts:2", "random"], LARGEST, "about 17 s at this table (3 players, 100 "),
    ],
)
def test_a_search_too_costly_for_its_table_is_refused_in_one_line(
    c: Any, opponents: list[str], rules: dict[str, Any], fragment: str
) -> None:
    r = c.post("/api/games", json={"opponents": opponents, "rules": rules})
    one_line_error(r, 400, fragment)
    assert "over the 10 s a move may cost" in r.json()["error"]
    assert len(c.app.state.store) == 0


def test_the_cost_model_allows_the_cheap_searches_everywhere() -> None:
    from craits.web.costs import check_cost, largest_n

    largest = Rules(num_decks=2, hand_sizes=(8,) * MAX_HANDS)
    for spec in ("pimc:2048", "pimc", "random", "expert", "ppo:x", "pimc:²"):
        assert check_cost(spec, 10, largest) is None, spec
    assert check_cost("belief-search", 4, Rules()) is None
    assert check_cost("openspiel-ismcts:2", 2, Rules(hand_sizes=(5, 4))) is None
    assert largest_n("openspiel-ismcts", 4, Rules()) == 9
    assert largest_n("openspiel-ismcts", 10, largest) == 0
    assert largest_n("expert", 4, Rules()) is None
