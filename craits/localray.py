"""Ray for craits: a local instance on 127.0.0.1 only, or an existing cluster as Ray 2.60 expects.

**A local instance** (no address): by default Ray binds its servers (GCS, raylet, object
manager, workers) on every network interface, so a ``craits tournament --ray`` on a laptop
would be reachable from its network. Ray binds to the node's address, and takes the loopback
address as the node's only where it believes clusters are unsupported (its
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` switch): :func:`init` sets that switch while it starts a
new local instance, so every server of it listens on 127.0.0.1 alone
(``tests/craits/test_localray.py`` lists the listening sockets of the instance's processes).

**An existing cluster** (``HOST:PORT``, ``auto``; :func:`connect`), started with ``ray start
--head``, is reached with nothing set in the environment (docs/cluster.md):

* *the address as given*: Ray rewrites a loopback host (``127.0.0.1``, ``localhost``, ``::1``)
  to this machine's interface address, where a head started on loopback does not listen;
  :func:`connect` first asks the GCS at the address as given, and connects there (Ray's own
  switch held off while it connects, so no rewrite);
* *token authentication* (Ray 2.60's default once a token exists): the GCS is asked without a
  token; if it requires one, the token is read where Ray reads it (``RAY_AUTH_TOKEN``,
  ``RAY_AUTH_TOKEN_PATH``, else ``~/.ray/auth_token``), checked against the GCS, and Ray's token
  mode is switched on in this process (an explicit ``RAY_AUTH_MODE`` is left as it is);
* *failures* are one line and come within about :data:`PROBE_SECONDS`: an unreachable address,
  a cluster that wants a token this machine lacks or refuses the one it has, one with fewer
  CPUs than asked, a node that cannot import what the work needs (:func:`check_nodes`) —
  :class:`ClusterError`, raised before any work starts (the commands exit 2);
* *code*: the driver ships craits itself, as this process imports it (an installed wheel or
  the working tree), to every node through Ray's ``runtime_env`` (``py_modules``,
  :func:`shipped_modules`): a node needs Python, Ray and craits's dependencies, not craits.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

LOOPBACK = "127.0.0.1"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")  # the hosts Ray rewrites (is_localhost)
_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # "0": Ray takes the loopback address as the node's
_AUTH_MODE = "RAY_AUTH_MODE"  # Ray's token authentication switch ("token" or "disabled")
PROBE_SECONDS = 10.0  # at most this long asking a cluster's GCS whether (and how) it answers
CHECK_SECONDS = 120.0  # at most this long for every node to show it can run the work
MAX_PORT = 65535
SHIPPED = ("craits", "craits_env")  # the packages the driver ships to the nodes
ADDRESS_FORMS = "auto, HOST:PORT or ray://HOST:PORT"


class ClusterError(ValueError):
    """A Ray cluster that cannot be used — unreachable, a token refused or missing, too few
    resources, a node lacking what the work needs — in one line, before any work starts."""


def is_local(address: str | None) -> bool:
    """Whether ``ray.init(address)`` would start a new instance here (no address anywhere)."""
    return address in (None, "local") and not (address is None and os.environ.get("RAY_ADDRESS"))


@contextlib.contextmanager
def _loopback_only() -> Iterator[None]:
    from ray._private import ray_constants

    saved_env, saved_flag = os.environ.get(_SWITCH), ray_constants.ENABLE_RAY_CLUSTER
    os.environ[_SWITCH] = "0"  # read by the processes the instance starts
    ray_constants.ENABLE_RAY_CLUSTER = False  # read by this one (imported before we ran)
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = saved_flag
        if saved_env is None:
            os.environ.pop(_SWITCH, None)
        else:
            os.environ[_SWITCH] = saved_env


def init(address: str | None = None, *, cpus: float = 0, ship: bool = True, **options: Any) -> Any:
    """``ray.init(address, **options)``; a new local instance (``address`` None or
    ``"local"``, no ``RAY_ADDRESS``) listens on 127.0.0.1 only and has no dashboard; an
    address is :func:`connect`'s (``cpus``, ``ship``; ``ClusterError`` in one line if the
    cluster cannot be used)."""
    import ray

    if not is_local(address):
        return connect(address, cpus=cpus, ship=ship, **options)
    options.setdefault("include_dashboard", False)
    with _loopback_only(), _own_signal_handlers():
        return ray.init(address="local", _node_ip_address=LOOPBACK, **options)


# ----------------------------------------------------------------------------- addresses


def parse_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of ``HOST:PORT`` or ``ray://HOST:PORT``; None for ``auto``; else a
    one-line ``ClusterError``. The port is ASCII digits (``"٣".isdigit()`` is true)."""
    if address == "auto":
        return None
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ClusterError(f"Ray address {address!r:.80}: expected {ADDRESS_FORMS}")
    if not (port.isascii() and len(port) <= len(str(MAX_PORT)) and 1 <= int(port) <= MAX_PORT):
        raise ClusterError(
            f"Ray address {address!r:.80}: the port is a number 1 to {MAX_PORT} in digits 0-9"
        )
    return host.strip("[]"), int(port)


def _auto_address() -> str:
    """The cluster ``auto`` names (``RAY_ADDRESS``, else the one ``ray start`` last started
    here), as ``HOST:PORT``."""
    from ray._private import services

    found = services.get_ray_address_from_environment("auto", None)
    if found in (None, "auto", "local"):
        raise ClusterError(
            "Ray address auto: no running cluster found on this machine (start one with "
            "ray start --head, or give its HOST:PORT)"
        )
    return str(found)


# ----------------------------------------------------------------------------- the GCS asked


def probe(host: str, port: int, token: str | None, seconds: float = PROBE_SECONDS) -> bool:
    """Ask the GCS at ``host:port`` for its cluster id (with ``token`` if given): True if it
    answers, False if it refuses for want of a (right) token; ``ClusterError`` if nothing
    listens there or nothing answers within ``seconds``. Interruptible (Ctrl-C, SIGTERM)."""
    import grpc
    from ray.core.generated import gcs_service_pb2, gcs_service_pb2_grpc

    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    where = f"Ray cluster at {host}:{port}"
    metadata = [("authorization", f"Bearer {token}")] if token else []
    channel = grpc.insecure_channel(target)
    try:
        stub = gcs_service_pb2_grpc.NodeInfoGcsServiceStub(channel)
        call = stub.GetClusterId.future(
            gcs_service_pb2.GetClusterIdRequest(),  # type: ignore[attr-defined]
            timeout=seconds,
            metadata=metadata,
        )
        try:
            while True:
                try:
                    call.result(timeout=0.2)  # short waits: a signal acts between them
                    return True
                except grpc.FutureTimeoutError:
                    continue
        except grpc.RpcError as e:
            code = e.code()
            if code == grpc.StatusCode.UNAUTHENTICATED:
                return False
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                raise ClusterError(f"{where}: no answer within {seconds:g} s") from None
            details = (e.details() or code.name).strip().splitlines()[0][:200]
            raise ClusterError(f"{where}: cannot connect ({details})") from None
        except BaseException:
            call.cancel()
            raise
    finally:
        channel.close()


def check_address(address: str | None) -> None:
    """``ClusterError`` unless ``address`` is well formed and something answers there as a
    GCS does (with or without a token): for a process that keeps a connection it has."""
    parsed = parse_address(address or "auto")
    if parsed is not None and not (address or "").startswith("ray://"):
        probe(*parsed, None)


def _token() -> str | None:
    """The token where Ray reads it: ``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH``, else
    ``~/.ray/auth_token``; None when there is none."""
    from ray._raylet import AuthenticationTokenLoader  # type: ignore[attr-defined]

    loader = AuthenticationTokenLoader.instance()
    loader.reset_cache()
    if not loader.has_token(ignore_auth_mode=True):
        return None
    token = loader.get_raw_token(ignore_auth_mode=True)
    return str(token) or None


def _set_auth_mode(mode: str) -> None:
    """Ray's token mode for this process (Ray's own ``_enable_token_auth`` does the same)."""
    from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]

    os.environ[_AUTH_MODE] = mode
    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def authenticate(host: str, port: int) -> None:
    """Settle token authentication with the cluster at ``host:port`` (module docstring), or
    ``ClusterError``."""
    where = f"Ray cluster at {host}:{port}"
    explicit = os.environ.get(_AUTH_MODE)
    if probe(host, port, None):  # no token needed
        if explicit is None:
            _set_auth_mode("disabled")  # a token of this machine's is not for this cluster
        return
    token = _token()
    if token is None:
        raise ClusterError(
            f"{where} requires token authentication and this machine has no token: copy the "
            "head's ~/.ray/auth_token here (ray get-auth-token on the head prints it), or set "
            "RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH"
        )
    if not probe(host, port, token):
        source = (
            "RAY_AUTH_TOKEN"
            if os.environ.get("RAY_AUTH_TOKEN")
            else os.environ.get("RAY_AUTH_TOKEN_PATH") or "~/.ray/auth_token"
        )
        raise ClusterError(
            f"{where} refuses the token of {source}: use the head's (ray get-auth-token on the "
            "head prints it)"
        )
    if explicit is None or explicit.lower() != "token":
        _set_auth_mode("token")


# ----------------------------------------------------------------------------- connecting


def connect(
    address: str | None,
    *,
    cpus: float = 0,
    runtime_env: dict[str, Any] | None = None,
    ship: bool = True,
    **options: Any,
) -> Any:
    """Connect this process to the existing cluster at ``address`` (module docstring), with
    craits shipped to its nodes (``ship``, merged into ``runtime_env``); ``ClusterError`` in
    one line if it cannot be used or has fewer than ``cpus`` CPUs."""
    import ray

    given = address or os.environ.get("RAY_ADDRESS") or "auto"
    if given.startswith("ray://"):  # Ray Client: Ray's own connection, as it is
        parse_address(given)
        with _own_signal_handlers():
            return ray.init(address=given, runtime_env=runtime_env, **options)
    parsed = parse_address(given)
    if parsed is None:
        given = _auto_address()
        parsed = parse_address(given)
        assert parsed is not None
    host, port = parsed
    authenticate(host, port)
    options.setdefault("logging_level", logging.WARNING)  # not Ray's notices of connecting
    env = dict(runtime_env or {})
    with contextlib.ExitStack() as stack:
        if ship:
            modules = stack.enter_context(shipped_modules())
            env["py_modules"] = [*env.get("py_modules", []), *modules]
        loopback = host in LOOPBACK_NAMES
        with _loopback_only() if loopback else contextlib.nullcontext(), _own_signal_handlers():
            try:
                context = ray.init(address=f"{host}:{port}", runtime_env=env or None, **options)
            except (ConnectionError, RuntimeError) as e:
                raise ClusterError(f"Ray cluster at {given}: {_first_line(e)}") from None
    have = ray.cluster_resources().get("CPU", 0.0)
    if have < cpus:
        ray.shutdown()
        raise ClusterError(
            f"Ray cluster at {given} has {have:g} CPUs; this run asks for {cpus:g} (one a "
            "worker): start nodes with more (ray start --num-cpus N) or ask for fewer workers"
        )
    return context


@contextlib.contextmanager
def shipped_modules() -> Iterator[list[str]]:
    """The packages craits runs from, as this process imports them, laid out as a wheel
    installs them (``craits.agents`` and ``craits.training`` inside ``craits``; from a
    working tree they are the folders ``agents/`` and ``training/``), in a temporary folder
    for Ray's ``py_modules`` (Ray zips each, keyed by its content, and uploads it once)."""
    import craits
    import craits_env

    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    with tempfile.TemporaryDirectory(prefix="craits-ship-") as tmp:
        stage = Path(tmp)
        top = Path(craits.__file__).parent
        shutil.copytree(top, stage / "craits", ignore=ignore)
        for sub in ("agents", "training"):
            found = _package_dir(f"craits.{sub}")
            if found is not None and found.parent != top:  # a working tree's own folder
                shutil.rmtree(stage / "craits" / sub, ignore_errors=True)
                shutil.copytree(found, stage / "craits" / sub, ignore=ignore)
        shutil.copytree(Path(craits_env.__file__).parent, stage / "craits_env", ignore=ignore)
        yield [str(stage / name) for name in SHIPPED]


def _package_dir(name: str) -> Path | None:
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except ImportError:
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def check_nodes(check: Callable[[], Any], what: str) -> dict[str, Any]:
    """Run ``check`` (a function of craits, taking nothing) once on every live node of the
    connected cluster, at once; its results by node address, or ``ClusterError`` naming the
    first node that cannot run it (what it lacks) — ``what`` says what the nodes are for."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    nodes = [n for n in ray.nodes() if n.get("Alive")]
    remote = ray.remote(num_cpus=0, max_retries=0)(_call)
    refs = {
        n["NodeManagerAddress"]
        + (
            f" ({n['NodeName']})"
            if n.get("NodeName") not in (None, n["NodeManagerAddress"])
            else ""
        ): (
            remote.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
            ).remote(check)
        )
        for n in nodes
    }
    results: dict[str, Any] = {}
    deadline = time.monotonic() + CHECK_SECONDS
    for node, ref in refs.items():
        try:
            results[node] = ray.get(ref, timeout=max(0.1, deadline - time.monotonic()))
        except ray.exceptions.GetTimeoutError:
            raise ClusterError(
                f"Ray node {node}: no answer within {CHECK_SECONDS:g} s to whether it can {what}"
            ) from None
        except (ray.exceptions.TaskUnschedulableError, ray.exceptions.NodeDiedError):
            continue  # the node died since it was listed (Ray still called it alive): it plays
            # nothing, the live ones were asked
        except ray.exceptions.RayError as e:
            raise ClusterError(
                f"Ray node {node} cannot {what}: {_cause(e)}; every node needs Python "
                f"{sys.version_info.major}.{sys.version_info.minor}, Ray {ray.__version__} and "
                "craits's dependencies (docs/cluster.md)"
            ) from None
    return results


def _call(check: Callable[[], Any]) -> Any:
    return check()


def _cause(error: BaseException) -> str:
    """The one line that says why a remote call failed (the user's exception, not Ray's
    wrapping of it)."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, BaseException):
        return f"{type(cause).__name__}: {_first_line(cause)}"
    lines = [ln.strip() for ln in str(error).strip().splitlines() if ln.strip()]
    for line in reversed(lines):  # Ray's runtime-env and worker errors end with the reason
        if "Error" in line or "error" in line:
            return line[:300]
    return lines[-1][:300] if lines else type(error).__name__


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0][:200] if lines else type(error).__name__


@contextlib.contextmanager
def _own_signal_handlers() -> Iterator[None]:
    """Keep this process's SIGTERM and SIGINT handlers across ``ray.init``, which puts a
    handler of Ray's own in their place (SIGTERM then kills the process where the command
    would have kept what finished and said how to go on)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            if handler is not None:
                signal.signal(sig, handler)


@contextlib.contextmanager
def session(address: str | None, **options: Any) -> Iterator[bool]:
    """Ray for the time of a ``with``: a connection already made is used (yields False);
    else a new local instance (``address`` None) or the cluster at ``address``
    (:func:`init`), shut down at the end (yields True)."""
    import ray

    if ray.is_initialized():
        yield False
        return
    saved_mode = os.environ.get(_AUTH_MODE)
    try:
        init(address, **options)
        try:
            yield True
        finally:
            ray.shutdown()
    finally:
        if os.environ.get(_AUTH_MODE) != saved_mode:
            if saved_mode is None:
                os.environ.pop(_AUTH_MODE, None)
            else:
                os.environ[_AUTH_MODE] = saved_mode
