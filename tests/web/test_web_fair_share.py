"""Capacity that one party cannot hold (issue 43, C and D): the addresses of one /24 (or
/64) network count as one client everywhere, a client holding its share may start no more
games once the server is nearly full (the last fifth kept for others), and a newcomer to a
server holding its maximum of connections takes the place of an idle connection of the
client holding the most."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import httpx
import pytest

from craits.web import sessions
from craits.web.app import Settings, create_app
from craits.web.clients import client_group
from craits.web.requests import ApiError

from .test_web_hostile import _read_all, guarded
from .test_web_store import Clock, make_store, new, run


def test_the_addresses_of_one_network_are_one_client() -> None:
    assert client_group("127.0.0.1") == client_group("127.0.0.250") == "127.0.0.0/24"
    assert client_group("127.0.1.2") == "127.0.1.0/24"
    assert client_group("2001:db8:1:2:aaaa::1") == client_group("2001:db8:1:2::ffff")
    assert client_group("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert client_group("2001:db8:1:3::1") != client_group("2001:db8:1:2::1")
    assert client_group("::ffff:10.1.2.3") == "10.1.2.0/24"
    assert client_group("[::1]") == "::/64"
    assert client_group("testclient") == "testclient"


def test_26_addresses_of_one_network_hold_one_clients_games(tmp_path: Path) -> None:
    """Issue 43, C: 26 loopback addresses filled the 500-game cap in 3.8 s."""
    app = create_app(Settings(games_dir=tmp_path, store=":memory:", client_games=5))

    async def main() -> list[int]:
        statuses = []
        for i in range(1, 27):
            transport = httpx.ASGITransport(app=app, client=(f"10.9.8.{i}", 40000 + i))
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
                r = await http.post("/api/games", json={"opponents": ["random"], "seed": i})
                statuses.append(r.status_code)
        transport = httpx.ASGITransport(app=app, client=("10.9.9.1", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            r = await http.post("/api/games", json={"opponents": ["random"], "seed": 1})
            statuses.append(r.status_code)  # another network
        return statuses

    statuses = asyncio.run(main())
    assert statuses[:5] == [201] * 5 and set(statuses[5:26]) == {429} and statuses[26] == 201


def test_a_client_holding_its_share_is_refused_once_the_server_is_nearly_full() -> None:
    clock = Clock()
    store = make_store(clock=clock, max_games=10, client_games=0, idle_seconds=60)
    share = max(1, round(10 * sessions.FULL_SHARE))
    for _ in range(int(10 * sessions.NEARLY_FULL)):
        run(store.create(new(), "A"))  # A alone, before the server is nearly full
    with pytest.raises(ApiError) as refused:
        run(store.create(new(), "A"))
    assert refused.value.status == 429 and "the server is nearly full" in refused.value.message
    assert f"at most {share} each" in refused.value.message
    run(store.create(new(), "B"))  # a client holding fewer still gets in
    run(store.create(new(), "C"))
    with pytest.raises(ApiError) as full:
        run(store.create(new(), "D"))
    assert full.value.status == 503  # full: nobody (no game dropped)
    clock.now += 61  # idle games stop counting
    run(store.create(new(), "A"))


@pytest.mark.slow
def test_a_newcomer_takes_the_place_of_an_idle_connection_of_the_client_holding_most() -> None:
    """Issue 43, D: 16-32 addresses holding slow-header connections had 35% of another
    user's requests refused."""
    with guarded(max_connections=6, connections_per_client=0, header_timeout=30) as port:
        held = [socket.create_connection(("127.0.0.1", port), 5) for _ in range(6)]
        for s in held:
            s.sendall(b"GET /echo HTTP/1.1\r\nHost: x\r\n")  # headers that never end
        time.sleep(0.3)
        answers = []
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", port), 5, ("127.0.1.2", 0)) as other:
                other.sendall(b"GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                answers.append(_read_all(other, 5))
        assert all(a.startswith(b"HTTP/1.1 200 ") for a in answers), answers
        closed = [s for s in held if _read_all(s, 0.5).startswith(b"HTTP/1.1 503 ")]
        assert closed == held[:1]  # the holder's oldest idle one (the others found room)
        held.append(socket.create_connection(("127.0.0.1", port), 5))  # full again
        time.sleep(0.2)
        with socket.create_connection(("127.0.0.1", port), 5, ("127.0.0.9", 0)) as same:
            same.sendall(b"GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert _read_all(same, 5).startswith(b"HTTP/1.1 503 ")  # its own client: no
        for s in held:
            s.close()
