"""A Ray cluster of several nodes on one machine, in a network namespace of its own, for tests
and measurements: each node a ``ray start`` process on its own loopback address (the head
127.0.0.2, the others 127.0.0.3, 127.0.0.4, ...), with the CPUs it declares, as a user
starts nodes on machines of their own (docs/cluster.md).

It refuses to run on the machine's own network (no node may listen beyond this namespace):
run it under ``unshare -n`` (as root; ``unshare -rn`` otherwise), which gives a namespace whose
only interface is a loopback that is down; :meth:`LocalCluster.start` brings it up.

    unshare -n python -m experiments.ray_test_cluster --cpus 1 1 1 -- \\
        craits tournament greedy expert -n 2 --deals 4 --out /tmp/t --ray {address}

runs the command (``{address}`` replaced by the head's ``HOST:PORT``) against a running
three-node cluster, then stops it. ``--python`` gives another interpreter to the nodes after
the head (a venv without craits: the driver ships it). In Python::

    with LocalCluster([1, 1, 1]) as cluster:
        ...  # cluster.address; cluster.kill(2): node 2 (127.0.0.4) lost, as a machine is
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HEAD_PORT = 6390
START_SECONDS = 90.0  # at most this long for the nodes to register
NODE_PORTS = 40  # ports of each node's own range (servers, then its workers')


def own_network_namespace() -> bool:
    """Whether this process's network has no interface but the loopback (a namespace of its
    own, as ``unshare -n`` makes: nothing started here is reachable from elsewhere)."""
    import socket

    return [name for _, name in socket.if_nameindex()] == ["lo"]


def bring_up_loopback() -> None:
    """``ip link set lo up`` (a new namespace's loopback is down)."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)


def block_interface(address: str) -> None:
    """Give this namespace an interface address (``address``, on the loopback device, the
    source of the default route: what Ray takes for the machine's address) that refuses TCP
    connections, as a sandboxed machine's own address may."""
    for command in (
        f"ip addr add {address}/32 dev lo",
        f"ip route add default dev lo src {address}",
        f"ip rule add to {address} ipproto tcp prohibit pref 1",
        "ip rule add pref 100 lookup local",  # the local table after the prohibition
        "ip rule del pref 0",
    ):
        subprocess.run(command.split(), check=True)


@dataclass
class Node:
    """One ``ray start --block`` process (and everything it starts: its own process group)."""

    index: int
    ip: str
    cpus: float
    python: str
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class LocalCluster:
    """Nodes on 127.0.0.2, .3, ... of this network namespace; ``cpus[i]`` CPUs on node ``i``
    (node 0 the head); ``pythons[i]`` its interpreter (default this one)."""

    cpus: list[float]
    pythons: list[str] = field(default_factory=list)
    port: int = HEAD_PORT
    token: bool = True  # token authentication (Ray 2.60's default), with a token of its own
    ips: list[str] = field(default_factory=list)  # default 127.0.0.2, 127.0.0.3, ...
    head_env: dict[str, str] = field(default_factory=dict)  # extra environment of the head
    blocked_interface: str | None = None  # see start()
    env: dict[str, str] = field(default_factory=dict)  # the environment of every node
    nodes: list[Node] = field(default_factory=list)
    folder: Path | None = None

    @property
    def address(self) -> str:
        return f"{self.nodes[0].ip}:{self.port}"

    @property
    def home(self) -> Path:
        """The nodes' home folder: the cluster's token is ``HOME/.ray/auth_token``."""
        assert self.folder is not None
        return self.folder / "home"

    def client_env(self) -> dict[str, str]:
        """An environment for a driver on this machine, as a user's: the cluster's token in
        its home folder (Ray's standard place), no ``RAY_`` variable."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        return {**env, "HOME": str(self.home)}

    def __enter__(self) -> LocalCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        if not own_network_namespace():
            raise SystemExit(
                "ray_test_cluster: refusing to start nodes on this machine's network: run "
                "under unshare -n (as root) or unshare -rn"
            )
        bring_up_loopback()
        if self.blocked_interface:  # as a machine whose own interface address refuses its
            block_interface(self.blocked_interface)  # connections (a sandbox, a firewall)
        self.folder = Path(tempfile.mkdtemp(prefix="craits-cluster-"))
        home = self.folder / "home"
        (home / ".ray").mkdir(parents=True)
        if self.token:  # where ray get-auth-token --generate puts one
            (home / ".ray" / "auth_token").write_text(secrets.token_hex(32))
        # Every node reads the token from HOME; the nodes that join need the mode said.
        self.env = {"HOME": str(home), "RAY_AUTH_MODE": "token" if self.token else "disabled"}
        for i, cpus in enumerate(self.cpus):
            python = self.pythons[i] if i < len(self.pythons) else sys.executable
            ip = self.ips[i] if i < len(self.ips) else f"127.0.0.{i + 2}"
            self.nodes.append(Node(i, ip, cpus, python))
        try:
            for node in self.nodes:  # one after another: nodes of one machine share a
                self._launch(node)  # temporary folder, whose socket names they pick in turn
                self.wait_for(node.index + 1)
        except BaseException:
            self.stop()
            raise

    def _launch(self, node: Node) -> None:
        assert self.folder is not None
        base = 20000 + 100 * node.index
        ports = {
            "--node-manager-port": base,
            "--object-manager-port": base + 1,
            "--runtime-env-agent-port": base + 2,
            "--dashboard-agent-grpc-port": base + 3,
            "--dashboard-agent-listen-port": base + 4,
            "--metrics-export-port": base + 5,
            "--min-worker-port": base + 10,
            "--max-worker-port": base + NODE_PORTS + 10,
        }
        command = [
            node.python, "-m", "ray.scripts.scripts", "start", "--block",
            f"--node-ip-address={node.ip}", f"--num-cpus={node.cpus:g}", "--num-gpus=0",
            "--disable-usage-stats", f"--temp-dir={self.folder / 'ray'}",
            "--object-store-memory=200000000",
            *(f"{k}={v}" for k, v in ports.items()),
        ]  # fmt: skip
        if node.index == 0:
            command += ["--head", f"--port={self.port}", "--include-dashboard=false"]
        else:
            command += [f"--address={self.address}"]
        node.log = self.folder / f"node{node.index}.log"
        env = {**os.environ, **self.env, **(self.head_env if node.index == 0 else {})}
        for name in ("RAY_ADDRESS", "PYTHONPATH"):  # a node's Python path is its own
            env.pop(name, None)
        with node.log.open("wb") as log:
            node.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, cwd="/", env=env,
                start_new_session=True,  # its own process group: killed as one machine
            )  # fmt: skip
        if node.index == 0:
            self._wait_port(node)

    def _wait_port(self, node: Node) -> None:
        import socket

        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if not node.alive:
                raise RuntimeError(f"node {node.index} exited: {self.tail(node)}")
            try:
                socket.create_connection((node.ip, self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"the head did not listen within {START_SECONDS:g} s")

    def wait_for(self, count: int) -> None:
        """Until ``count`` nodes are alive in the cluster (asked of the GCS by ``ray status``'s
        own client)."""
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            for node in self.nodes:
                if node.process is not None and not node.alive and node.index == 0:
                    raise RuntimeError(f"the head exited: {self.tail(node)}")
            if self.alive_nodes() >= count:
                return
            time.sleep(0.5)
        logs = "; ".join(f"node {n.index}: {self.tail(n, 3)}" for n in self.nodes)
        raise RuntimeError(f"{count} nodes did not register within {START_SECONDS:g} s: {logs}")

    def alive_nodes(self) -> int:
        code = (
            "import ray._raylet as r\n"
            "from ray._private.authentication import authentication_token_setup as a\n"
            "a.maybe_enable_token_auth_if_token_available(warn_if_disabled=False)\n"
            f"g = r.GcsClient(address={self.address!r})\n"
            "print(sum(1 for n in g.get_all_node_info(timeout=5).values() if n.state == 0))\n"
        )  # the nodes' own way to the GCS, with the token they read
        env = {**os.environ, **self.env}
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
        )
        try:
            return int(out.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return 0

    def kill(self, index: int) -> None:
        """Node ``index`` lost at once, as a machine is (SIGKILL to its whole process group)."""
        node = self.nodes[index]
        if node.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(node.process.pid, signal.SIGKILL)
            node.process.wait()

    def restart(self, index: int) -> None:
        """Node ``index`` started again (a machine back), registered before this returns."""
        self._launch(self.nodes[index])
        self.wait_for(sum(1 for n in self.nodes if n.alive))

    def stop(self) -> None:
        for node in reversed(self.nodes):
            if node.alive:
                assert node.process is not None
                try:
                    os.killpg(node.process.pid, signal.SIGTERM)
                except ProcessLookupError:
                    continue
        for node in self.nodes:
            if node.process is None:
                continue
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.process.wait(timeout=20)
            with contextlib.suppress(ProcessLookupError):  # what the node left (workers)
                os.killpg(node.process.pid, signal.SIGKILL)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def tail(self, node: Node, lines: int = 5) -> str:
        if node.log is None or not node.log.exists():
            return "(no log)"
        return " | ".join(node.log.read_text(errors="replace").strip().splitlines()[-lines:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpus", type=float, nargs="+", default=[1, 1, 1], help="per node")
    parser.add_argument("--python", default=None, help="the interpreter of the non-head nodes")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ({address})")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    pythons = [sys.executable] + [args.python or sys.executable] * (len(args.cpus) - 1)
    with LocalCluster(args.cpus, pythons) as cluster:
        print(f"cluster: {len(args.cpus)} nodes, head at {cluster.address}", flush=True)
        if not command:
            return 0
        line = [part.replace("{address}", cluster.address) for part in command]
        print("$ " + shlex.join(line), flush=True)
        return subprocess.run(line, env=cluster.client_env()).returncode


if __name__ == "__main__":
    sys.exit(main())
