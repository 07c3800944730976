"""Ray on this machine only: a new local instance listens on 127.0.0.1 and nowhere else.

By default a local Ray instance binds its servers (GCS, raylet, object manager,
workers) on every network interface, so a ``craits tournament --ray`` or
``craits train --ray`` on a laptop would be reachable from its network. Ray binds
to the node's address, and takes the loopback address as the node's only where it
believes clusters are unsupported (its ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER``
switch): :func:`init` sets that switch while it starts a new local instance, so
every server of it listens on 127.0.0.1 alone (``tests/craits/test_localray.py`` lists the
listening sockets of the instance's processes). Connecting to an existing cluster
(an address, or ``RAY_ADDRESS``) is left to Ray as it is.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

LOOPBACK = "127.0.0.1"
_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # "0": Ray takes the loopback address as the node's


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


def init(address: str | None = None, **options: Any) -> Any:
    """``ray.init(address, **options)``; a new local instance (``address`` None or
    ``"local"``, no ``RAY_ADDRESS``) listens on 127.0.0.1 only and has no dashboard."""
    import ray

    if not is_local(address):
        return ray.init(address=address, **options)
    options.setdefault("include_dashboard", False)
    with _loopback_only():
        return ray.init(address="local", _node_ip_address=LOOPBACK, **options)
