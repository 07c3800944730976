"""The decorators of the compiled code (numba, cached on disk), and :func:`unowned`.

``entry``: a kernel called from Python. ``inner``: a function called only from compiled
code — no CPython wrapper is built for it, which saves a good part of the cold compile.
``inline``: one called from one place, or tiny: its body is compiled into its caller.
:func:`announce_first_use` says so, in one line, before the kernels' first use in a process
(numba compiles them the first time on a machine: about 20 s; they load from its disk cache
afterwards).
"""

from __future__ import annotations

import sys
from typing import Any

import numba
from numba.core import cgutils, types
from numba.extending import intrinsic

_INNER: dict[str, Any] = {"cache": True, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}
entry = numba.njit(cache=True)
inner = numba.njit(**_INNER)
# A function with one caller (or tiny): compiled into it, no call at run time.
inline = numba.njit(**_INNER, inline="always")


FIRST_USE_MESSAGE = (
    "craits_env.vector: preparing the compiled kernels (numba: about 20 s the first time on "
    "this machine, cached on disk afterwards)"
)
_announced: list[bool] = []


def announce_first_use(kernel: Any) -> None:
    """Print :data:`FIRST_USE_MESSAGE` on stderr once per process, before the first call of
    ``kernel`` (a numba dispatcher) when it has not been compiled or loaded yet."""
    if not _announced and not kernel.signatures:
        _announced.append(True)
        print(FIRST_USE_MESSAGE, file=sys.stderr, flush=True)


@intrinsic
def _as_pointer(typingctx: Any, address: Any) -> Any:
    """An integer address as a ``void*``."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return types.voidptr(address), codegen


@inner
def unowned(a: Any) -> Any:
    """A view of the C-contiguous array ``a`` without numba's reference count.

    An entry point passes its state arrays through this once: the calls between compiled
    functions then skip the atomic reference counting of each array passed (which costs
    more than the rules themselves). The caller keeps ``a`` alive for the call."""
    return numba.carray(_as_pointer(a.ctypes.data), a.shape, a.dtype)  # type: ignore[call-arg]
