"""Shared test set-up. The scripted-game dialect itself lives in :mod:`tests.scripting`.

The rules tests (and any test that stacks a deck) script a game in one dialect::

    from craits_env.testing.scenario import stacked_game

    from .scripting import act, assert_hands, legal, state

    g = stacked_game([["Kc", "Qd"], ["7h", "2s"]], starter="3h", stock=["Ah"])
    act(g, "7h", "declare")  # seat 1 plays down to one card; seat 0 draws the Ah (R4 7)
    assert_hands(g, [["Kc", "Qd", "Ah"], ["2s"]])
    assert state(g) == (0, "play", legal("Ah"))

Those helpers are plain functions in ``tests/scripting.py`` because pytest forbids
importing from a conftest. This file registers that module for pytest's assertion
rewriting, so that a failing check inside a helper (``assert_hands``, ``points``) shows
the values it compared.
"""

import json
from pathlib import Path

import pytest

pytest.register_assert_rewrite("tests.scripting")


@pytest.fixture(params=["python", "vector"])
def env_backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test on both engines behind ``craits_v0``: the default of
    ``raw_env(backend=...)`` becomes this parameter (``tests/craits_env/test_env.py`` uses it for
    every test), so the same test checks the Python engine and the compiled VectorGame."""
    from craits_env import craits_v0

    defaults = craits_v0.raw_env.__init__.__kwdefaults__
    assert defaults is not None and "backend" in defaults
    monkeypatch.setitem(defaults, "backend", request.param)
    return str(request.param)


# ----------------------------------------------------------------------------- durations

DURATIONS = Path(__file__).resolve().parents[1] / "build" / "test-durations.json"
_durations: dict[str, dict[str, object]] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Each test's seconds (setup, call and teardown), and whether it is in the slow lane."""
    entry = _durations.setdefault(
        report.nodeid, {"seconds": 0.0, "slow": "slow" in report.keywords}
    )
    entry["seconds"] = round(float(entry["seconds"]) + report.duration, 3)  # type: ignore[arg-type]


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Keep the durations measured (``build/test-durations.json``, merged with earlier runs'):
    the record that places a test in its lane. Written by the controller only under xdist."""
    if hasattr(session.config, "workerinput") or not _durations:
        return
    known = json.loads(DURATIONS.read_text()) if DURATIONS.is_file() else {}
    known.update(_durations)
    DURATIONS.parent.mkdir(parents=True, exist_ok=True)
    ordered = dict(sorted(known.items(), key=lambda kv: -float(kv[1]["seconds"])))
    DURATIONS.write_text(json.dumps(ordered, indent=1) + "\n")
