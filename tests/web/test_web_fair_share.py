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

from craits.web import connections, sessions
from craits.web.app import Settings, create_app
from craits.web.clients import client_group
from craits.web.limits import ClientLimits
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


def test_an_operator_sets_the_networks_of_a_client() -> None:
    """``craits serve --client-network V4,V6``: wider or narrower networks, or each alone."""
    assert client_group("10.1.2.3", 16, 48) == client_group("10.1.200.9", 16, 48) == "10.1.0.0/16"
    assert client_group("2001:db8:1:2::1", 16, 48) == "2001:db8:1::/48"
    assert client_group("::ffff:10.1.2.3", 16, 48) == "10.1.0.0/16"
    assert client_group("127.0.0.1", 32, 128) != client_group("127.0.0.2", 32, 128)
    assert client_group("::1", 32, 128) == "::1/128"
    with pytest.raises(ValueError, match=r"^client network prefixes: got /33 and /64, allowed"):
        ClientLimits(v4_prefix=33)
    with pytest.raises(ValueError, match=r"^client network prefixes: got /24 and /129, allowed"):
        connections.protocol_class(networks=(24, 129))


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


def test_with_each_address_its_own_network_26_addresses_are_26_clients(tmp_path: Path) -> None:
    """The same 26 addresses under ``--client-network 32,128``: each holds its own games."""
    networks = ClientLimits(requests_per_second=0, games_per_minute=0, v4_prefix=32)
    app = create_app(
        Settings(games_dir=tmp_path, store=":memory:", client_games=1, client_limits=networks)
    )

    async def main() -> list[int]:
        statuses = []
        for i in range(1, 27):
            transport = httpx.ASGITransport(app=app, client=(f"10.9.8.{i}", 40000 + i))
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
                for seed in (i, i + 100):  # the second one is over this address's own cap
                    r = await http.post("/api/games", json={"opponents": ["random"], "seed": seed})
                    statuses.append(r.status_code)
        return statuses

    assert asyncio.run(main()) == [201, 429] * 26


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


def test_the_nearly_full_threshold_and_the_share_are_the_operators() -> None:
    """``craits serve --nearly-full 0.5 --full-share 0.2`` with 10 games at most: from 5 in
    play a client holding 2 may start no more."""
    store = make_store(
        max_games=10, client_games=0, idle_seconds=60, nearly_full=0.5, full_share=0.2
    )
    for client in "AAAAA":
        run(store.create(new(), client))  # 5 in play: A alone before the threshold
    with pytest.raises(ApiError) as refused:
        run(store.create(new(), "A"))
    assert refused.value.status == 429 and "at most 2 each" in refused.value.message
    run(store.create(new(), "B"))
    run(store.create(new(), "B"))  # B holds its 2
    with pytest.raises(ApiError, match="nearly full"):
        run(store.create(new(), "B"))
    for name, value in (("nearly_full", 0.0), ("full_share", 1.5)):
        with pytest.raises(ValueError, match=rf"^{name}: got {value}, allowed 0 < x <= 1$"):
            sessions.StoreLimits(**{name: value})


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


@pytest.mark.slow
@pytest.mark.parametrize("networks", [(24, 64), (32, 128)])
def test_the_connection_cap_counts_by_the_operators_networks(networks: tuple[int, int]) -> None:
    """One connection per client: 127.0.0.9's second connection is refused as one of
    127.0.0.1's client under /24, and served as its own client under /32."""
    with guarded(connections_per_client=1, header_timeout=30, networks=networks) as port:
        first = socket.create_connection(("127.0.0.1", port), 5)
        first.sendall(b"GET /echo HTTP/1.1\r\nHost: x\r\n")  # held open
        time.sleep(0.2)
        with socket.create_connection(("127.0.0.1", port), 5, ("127.0.0.9", 0)) as other:
            other.sendall(b"GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answer = _read_all(other, 5)
        first.close()
    if networks == (24, 64):
        assert answer.startswith(b"HTTP/1.1 503 ") and b"/24 or /64 network" in answer, answer
    else:
        assert answer.startswith(b"HTTP/1.1 200 "), answer
