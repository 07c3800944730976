"""Running the application under uvicorn: in the foreground (``craits serve``) or in a
background thread (tests, the load benchmark) on a socket bound beforehand, so that a busy
port is a one-line error before anything starts and port 0 gives a free port."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from .clients import V4_PREFIX, V6_PREFIX
from .connections import (
    CONNECTIONS_PER_CLIENT,
    KEEP_ALIVE,
    MAX_HEADER_BYTES,
    protocol_class,
    quiet_logs,
)

__all__ = ["KEEP_ALIVE", "is_loopback", "listen", "make_server", "running", "serve"]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")
BACKLOG = 2048  # pending connections: a load test opens hundreds at once
ACCEPT_BATCH = 64  # accept() calls per wake-up (asyncio tries this many, logging each failure)
START_TIMEOUT = 15.0  # seconds a background server may take to start
STOP_TIMEOUT = 10.0


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine only (127.0.0.0/8, ::1, localhost)."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening (``OSError`` if it cannot be)."""
    address = host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP
    # (without it a kept-alive connection waits ~40 ms for delayed ACKs on every response)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def make_server(
    app: Any,
    log: bool = False,
    connections_per_client: int = CONNECTIONS_PER_CLIENT,
    trusted_proxy: str | None = None,
    networks: tuple[int, int] = (V4_PREFIX, V6_PREFIX),
) -> uvicorn.Server:
    """A uvicorn server for ``app`` guarded as :mod:`craits.web.connections` says;
    ``log``: uvicorn's request log (tokens redacted); ``connections_per_client`` 0: no
    per-client cap; ``trusted_proxy``: an address without one; ``networks``: the IPv4 and
    IPv6 prefixes of a client's network."""
    http = protocol_class(
        connections_per_client=connections_per_client, exempt=trusted_proxy, networks=networks
    )
    config = uvicorn.Config(
        app,
        http=http,
        log_level="info" if log else "warning",
        access_log=log,
        timeout_keep_alive=KEEP_ALIVE,
        backlog=ACCEPT_BATCH,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        timeout_graceful_shutdown=5,
    )
    quiet_logs()
    return _Server(config)


class _Server(uvicorn.Server):
    """uvicorn's server with the kernel's queue of pending connections :data:`BACKLOG` long
    again once serving (asyncio set it to ``backlog``, its accept batch)."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        for sock in sockets or ():
            sock.listen(BACKLOG)


def serve(
    app: Any,
    sock: socket.socket,
    log: bool = False,
    connections_per_client: int = CONNECTIONS_PER_CLIENT,
    trusted_proxy: str | None = None,
    networks: tuple[int, int] = (V4_PREFIX, V6_PREFIX),
) -> None:
    """Serve ``app`` on ``sock`` until Ctrl-C (then close the socket); the limits as in
    :func:`make_server`."""
    try:
        server = make_server(app, log, connections_per_client, trusted_proxy, networks)
        server.run(sockets=[sock])
    finally:
        sock.close()


@contextmanager
def running(app: Any, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve ``app`` in a background thread; yields its base URL (``http://HOST:PORT``)."""
    sock = listen(host, port)
    server = make_server(app)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="craits-serve"
    )
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError(f"the web server did not start on {host}:{port}")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(STOP_TIMEOUT)
        sock.close()
