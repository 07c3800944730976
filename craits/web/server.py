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

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")
BACKLOG = 2048  # pending connections: a load test opens hundreds at once
START_TIMEOUT = 15.0  # seconds a background server may take to start
STOP_TIMEOUT = 10.0
KEEP_ALIVE = 30  # seconds an idle connection stays open (clients should reuse theirs less long)


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


def make_server(app: Any, log: bool = False) -> uvicorn.Server:
    """A uvicorn server for ``app``; ``log``: uvicorn's request log."""
    config = uvicorn.Config(app, log_level="info" if log else "warning", access_log=log,
                            timeout_keep_alive=KEEP_ALIVE, timeout_graceful_shutdown=5)  # fmt: skip
    return uvicorn.Server(config)


def serve(app: Any, sock: socket.socket, log: bool = False) -> None:
    """Serve ``app`` on ``sock`` until Ctrl-C (then close the socket)."""
    try:
        make_server(app, log).run(sockets=[sock])
    finally:
        sock.close()


@contextmanager
def running(app: Any, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve ``app`` in a background thread; yields its base URL (``http://HOST:PORT``)."""
    sock = listen(host, port)
    server = make_server(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True,
                              name="craits-serve")  # fmt: skip
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
