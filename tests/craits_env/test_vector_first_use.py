"""The batched engine's first use in a process says, in one line on stderr, that numba is
preparing its kernels (the first time on a machine it compiles them for ~20 s), instead of
stalling silently; later games of the same process say nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from craits_env.vector.jit import FIRST_USE_MESSAGE

pytestmark = pytest.mark.slow  # numba's cold compile in a subprocess


def test_the_first_use_says_so_once_and_prints_nothing_on_stdout() -> None:
    code = (
        "from craits_env.vector import VectorGame\n"
        "a = VectorGame(2, 4, seed=1)\n"
        "b = VectorGame(3, 2, seed=2)\n"
        "a.reset()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [FIRST_USE_MESSAGE]
