"""Behavioural fingerprints (craits.agents.fingerprint): stable for the built-in bots, apart
for agents that play apart, seeded for stochastic agents, absent (and why) for agents too
slow or not reproducible; kept beside the identities in a tournament's store."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from craits.agents.base import RandomAgent, legal_actions_of
from craits.agents.duplicate_tournament import (
    CONFIG_FILE,
    ResultStore,
    TournamentConfig,
    TournamentRefused,
    identify,
)
from craits.agents.fingerprint import PROBE_GAMES, PROBES_PER_GAME, fingerprint, fingerprints
from craits.agents.specs import make_agent
from craits_env import Rules

QUICK = ("random", "greedy", "tactician", "expert", "champion")
SHORT = Rules(hand_sizes=(3, 2, 1))


def builtin_prints() -> dict[str, str | None]:
    agents = {spec: make_agent(spec, 41_000) for spec in QUICK}
    return {k: v.value for k, v in fingerprints(agents, 4, Rules()).items()}


class Lowest:
    """Plays its lowest legal action id; ``shift`` of them plays the ``shift``-th lowest."""

    name = "lowest"

    def __init__(self, shift: int = 0) -> None:
        self.shift = shift

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: Any) -> int:
        legal = sorted(legal_actions_of(observation))
        return int(legal[min(self.shift, len(legal) - 1)])


class Unseeded(Lowest):
    """Draws from a generator that reset(seed) does not seed."""

    def __init__(self) -> None:
        super().__init__()
        self._rng = random.Random()

    def act(self, observation: Any) -> int:
        legal = legal_actions_of(observation)
        return int(legal[self._rng.randrange(len(legal))])


class Raising(Lowest):
    def act(self, observation: Any) -> int:
        raise RuntimeError("no")


@pytest.mark.slow
def test_the_builtin_bots_have_distinct_fingerprints_the_same_every_time() -> None:
    first, second = builtin_prints(), builtin_prints()
    assert first == second
    assert all(isinstance(v, str) and v.startswith("fp-") and len(v) == 19 for v in first.values())
    assert len(set(first.values())) == len(QUICK)  # each bot plays apart from the others


@pytest.mark.slow
def test_the_builtin_fingerprints_are_the_same_in_another_process() -> None:
    code = (
        "import json, sys; sys.path.insert(0, '.'); "
        "from tests.agents.test_fingerprint import builtin_prints; "
        "print(json.dumps(builtin_prints()))"
    )
    root = Path(__file__).parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "123", "PATH": ""},
    )
    assert json.loads(done.stdout) == builtin_prints()


def test_a_change_of_play_changes_the_fingerprint_and_a_stochastic_agent_is_seeded() -> None:
    assert fingerprint(Lowest()).value == fingerprint(Lowest()).value
    assert fingerprint(Lowest()).value != fingerprint(Lowest(shift=1)).value
    # A random agent is reset with a fixed seed at every probe: the same moves every time.
    a, b = fingerprint(RandomAgent(1)), fingerprint(RandomAgent(2))
    assert a.value is not None and a.value == b.value
    # The table is part of the probes: other rules, other positions.
    assert fingerprint(Lowest(), 4, SHORT).value != fingerprint(Lowest()).value


def test_agents_without_a_fingerprint_say_why() -> None:
    unseeded = fingerprint(Unseeded())
    assert unseeded.value is None and "not reproducible under a fixed seed" in unseeded.reason
    slow = fingerprints({"a": Lowest()}, 4, Rules(), time_limit=0.0)["a"]
    assert slow.value is None and slow.reason == "too slow to fingerprint (over 0 s on the probes)"
    # An agent that raises on a probe is fingerprinted by the exceptions it raises.
    raising = fingerprint(Raising())
    assert raising.value is not None and raising.value != fingerprint(Lowest()).value


def test_identify_probes_each_spec_once_and_not_a_searching_bot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import craits.agents.tournament_plan as plan

    calls: list[list[str]] = []
    real = plan.fingerprints

    def counted(agents: dict[str, Any], *args: Any, **kw: Any) -> Any:
        calls.append(list(agents))
        return real(agents, *args, **kw)

    monkeypatch.setattr(plan, "fingerprints", counted)
    config = identify(TournamentConfig(("expert", "pimc:4", "expert", "greedy"), 4, 1, 0))
    assert calls == [["expert", "greedy"]]
    prints = config.fingerprints
    assert prints[0] == prints[2] == builtin_prints()["expert"]
    assert prints[1] == "unprobed: it searches (identified by its version and budget)"
    assert config.agents == ("expert@1", "pimc:4@2", "expert@1", "greedy@1")
    assert identify(config, probe=False).fingerprints == ()
    assert PROBE_GAMES * PROBES_PER_GAME == 48


# ----------------------------------------------------------------------------- the store


def stored(out: Path, config: TournamentConfig, **changes: Any) -> None:
    ResultStore(out, config)
    path = out / CONFIG_FILE
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def test_a_store_of_other_fingerprints_is_refused_in_one_line(tmp_path: Path) -> None:
    config = identify(TournamentConfig(("greedy", "expert"), 2, 2, 0, SHORT))
    stored(tmp_path, config, fingerprints=["fp-0000000000000000", config.fingerprints[1]])
    with pytest.raises(TournamentRefused) as refused:
        ResultStore.check(tmp_path, config)
    message = str(refused.value)
    assert "\n" not in message
    now = config.fingerprints[0]
    assert f"agent greedy (greedy@1) plays differently now (fingerprint {now} on" in message
    assert "fp-0000000000000000 when its games were played" in message


def test_a_side_without_a_fingerprint_compares_by_identity(tmp_path: Path) -> None:
    config = identify(TournamentConfig(("greedy", "expert"), 2, 2, 0, SHORT))
    # A store of an older craits (no fingerprints): accepted, and it gains them.
    old = tmp_path / "old"
    stored(old, config)
    data = json.loads((old / CONFIG_FILE).read_text())
    del data["fingerprints"]
    (old / CONFIG_FILE).write_text(json.dumps(data))
    ResultStore(old, config)
    assert json.loads((old / CONFIG_FILE).read_text())["fingerprints"] == list(config.fingerprints)
    # An agent not probed this time (over the time limit): accepted; the stored one is kept.
    unprobed = config.fingerprints[0], "unprobed: too slow to fingerprint (over 2 s on the probes)"
    other = TournamentConfig(
        config.specs, 2, 2, 0, SHORT, agents=config.agents, fingerprints=unprobed
    )
    ResultStore(old, other)
    assert json.loads((old / CONFIG_FILE).read_text())["fingerprints"] == list(config.fingerprints)
