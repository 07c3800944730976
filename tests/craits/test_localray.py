"""A local Ray instance started by the project listens on 127.0.0.1 and nowhere else
(craits.localray): every listening TCP socket of the instance's processes — this
process and everything it started (GCS, raylet, workers) — is on a loopback address."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

import pytest
import ray

from craits import localray

pytestmark = pytest.mark.slow  # Ray

LISTEN = "0A"  # /proc/net/tcp state of a listening socket


def _address(hex_address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return ipaddress.IPv4Address(raw[::-1])
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))  # four little-endian words
    v6 = ipaddress.IPv6Address(words)
    return v6.ipv4_mapped or v6


def listening_sockets() -> dict[int, str]:
    """Inode → address of every listening TCP socket of this machine."""
    found = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], int(fields[9])
            if state == LISTEN:
                found[inode] = str(_address(local.rsplit(":", 1)[0]))
    return found


def process_tree(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    return tree


def socket_inodes(pid: int) -> set[int]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").glob("*"):
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return inodes


def test_a_local_instance_listens_on_loopback_only() -> None:
    assert localray.is_local(None) and localray.is_local("local")
    assert not localray.is_local("10.0.0.1:6379")
    localray.init(num_cpus=1, log_to_driver=False)
    try:
        assert ray.get(ray.remote(lambda: 1).remote()) == 1  # a worker process too
        listening = listening_sockets()
        ours = {
            inode: listening[inode]
            for pid in process_tree(os.getpid())
            for inode in socket_inodes(pid)
            if inode in listening
        }
        assert len(ours) >= 3  # the GCS, the raylet, this driver's and the worker's servers
        beyond = sorted(a for a in ours.values() if not ipaddress.ip_address(a).is_loopback)
        assert beyond == [], f"Ray listens beyond 127.0.0.1 on {beyond}"
    finally:
        ray.shutdown()
    assert localray._SWITCH not in os.environ  # the switch is this instance's only
