"""Agent specs: the one table of built-in agents, your own agents by import path, identities.

A *spec* is the text that names an agent everywhere (tournaments, ``craits
play``, the Gymnasium view's opponents, training opponents):

| spec | agent |
|---|---|
| ``random`` | uniformly random legal action (:class:`craits.agents.base.RandomAgent`) |
| ``greedy``, ``tactician``, ``expert`` | the heuristic ladder (:mod:`craits.agents.heuristics`) |
| ``pimc``, ``pimc:N`` | search, N rollouts per searched decision (:mod:`craits.agents.pimc`) |
| ``ppo:PATH`` | a ``craits train`` checkpoint, or a run directory (its ``final.pt``) |
| ``champion`` | the strongest learned policy, committed (:mod:`craits.agents.champion`) |
| ``champion-search[:N]`` | the champion as PIMC's prior (:mod:`craits.agents.champion`) |
| ``belief-search[:N]`` | champion-search sampling from a belief (:mod:`craits.agents.belief`) |
| ``openspiel-ismcts[:N]`` | OpenSpiel's IS-MCTS (:mod:`craits.agents.openspiel_bots`) |
| ``MODULE:ATTR`` | your agent: ``ATTR`` of an importable module (the working directory included) |
| ``path/to/file.py:ATTR`` | your agent: ``ATTR`` of a Python file |

``ATTR`` is a class or a factory (called with ``seed=`` if it takes one, else
with nothing) that gives an object with ``act(observation) -> action`` (and,
optionally, ``reset(seed)``, ``name``, ``version``) — see :mod:`craits.agents.base`.
:func:`register` adds a name of your own to the table, explicitly.

**Identity.** Stored results (tournament games, training evaluations) are keyed
by what an agent *is*, not by the text that named it: :func:`agent_identity`
is the agent's ``identity`` attribute if it has one (a checkpoint's is the hash
of its weights, its table and its rules, so a moved checkpoint is the same agent
and an overwritten one a different agent), else ``SPEC@VERSION`` with the
class's ``version`` (bumped whenever a bot's play changes), else, for your own
agents without a version, the hash of the source file that defines them. Beside it,
a tournament keeps each agent's behavioural fingerprint — its moves on fixed probe
positions, hashed (:mod:`craits.agents.fingerprint`) — so an agent that declares the
same identity but plays differently (a wrapper reading other weights from a file) is
another agent too.

**Table check.** :func:`make_agent` with ``num_players``/``rules`` calls the
agent's optional ``check_table(num_players, rules)``, which raises a one-line
``ValueError`` if the agent cannot play that table (a checkpoint trained for
another number of players or other rules) — before any game starts.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from craits_env.rules import Rules

from .base import Agent, CallableAgent, Observation, RandomAgent

Factory = Callable[[str, "int | None"], Agent]


@dataclass(frozen=True)
class SpecEntry:
    """One row of the table: ``name`` or ``name:ARG``. Every list of specs elsewhere is read
    from these rows (``--help``, the web's quick bots and numbered specs, the benchmark's
    searching opponents) or checked against them (``tests/repository/test_extension_points.py``).
    """

    name: str
    make: Factory
    argument: str  # "" (none), "[:N]" (optional), ":PATH" (required): for listings
    summary: str
    quick: bool = False
    """a move in about a millisecond (no search, no torch): ``craits serve`` thinks of it in its
    own process, the networks (``champion``) excepted: they think in the bot processes
    (``craits.web.bots.QUICK_SPECS``)"""
    searches: bool = False
    """searches at its decisions: the benchmark meets it on the small deal sets
    (``craits.benchmark.suite.SEARCHING``)"""
    extra: str = ""
    """the install extra it needs (``pip install 'craits[EXTRA]'``), if any"""

    @property
    def form(self) -> str:
        """How the spec is written, for listings: ``pimc[:N]``, ``ppo:PATH (extra train)``."""
        return self.name + self.argument + (f" (extra {self.extra})" if self.extra else "")


def _no_argument(cls: Callable[..., Agent], name: str) -> Factory:
    def make(arg: str, seed: int | None) -> Agent:
        if arg:
            raise ValueError(f"agent spec {name!r} takes no argument, got {name}:{arg}")
        return cls(seed)

    return make


def _heuristic(name: str) -> Factory:
    def make(arg: str, seed: int | None) -> Agent:
        from . import heuristics

        cls = {
            "greedy": heuristics.GreedyAgent,
            "tactician": heuristics.TacticianAgent,
            "expert": heuristics.ExpertAgent,
        }[name]
        return _no_argument(cls, name)(arg, seed)

    return make


def _pimc(arg: str, seed: int | None) -> Agent:
    from .pimc import make_pimc

    return make_pimc(arg, seed)


def _champion(arg: str, seed: int | None) -> Agent:
    from .champion import make_champion

    return make_champion(arg, seed)


def _champion_search(arg: str, seed: int | None) -> Agent:
    from .champion import make_champion_search

    return make_champion_search(arg, seed)


def _belief_search(arg: str, seed: int | None) -> Agent:
    from .champion import make_belief_search

    return make_belief_search(arg, seed)


def _openspiel_ismcts(arg: str, seed: int | None) -> Agent:
    from .openspiel_bots import make_ismcts  # a missing extra: one line naming it

    return make_ismcts(arg, seed)


def _ppo(arg: str, seed: int | None) -> Agent:
    from .checkpoint_agent import make_ppo

    return make_ppo(arg, seed)


BUILTIN_TABLE: tuple[SpecEntry, ...] = (
    SpecEntry("random", _no_argument(RandomAgent, "random"), "", "uniformly random legal move",
              quick=True),
    SpecEntry("greedy", _heuristic("greedy"), "", "sheds its costliest card", quick=True),
    SpecEntry("tactician", _heuristic("tactician"), "", "aimed punishers, escapes, threes",
              quick=True),
    SpecEntry("expert", _heuristic("expert"), "", "card counting and hand planning", quick=True),
    SpecEntry("pimc", _pimc, "[:N]", "expert + determinized search at the end of hands",
              searches=True),
    SpecEntry("ppo", _ppo, ":PATH", "a craits train checkpoint or run directory", extra="train"),
    SpecEntry("champion", _champion, "", "the strongest learned policy (committed), no search",
              quick=True),
    SpecEntry("champion-search", _champion_search, "[:N]", "the champion guiding PIMC",
              searches=True),
    SpecEntry("belief-search", _belief_search, "[:N]", "champion-search on weighted worlds",
              searches=True),
    SpecEntry("openspiel-ismcts", _openspiel_ismcts, "[:N]", "OpenSpiel's IS-MCTS",
              searches=True, extra="openspiel"),
)  # fmt: skip
"""The built-in specs: the one table (:func:`register` adds rows of your own beside it)."""
_TABLE: dict[str, SpecEntry] = {e.name: e for e in BUILTIN_TABLE}
BUILTIN = tuple(_TABLE)


def register(name: str, make: Factory, summary: str = "", argument: str = "") -> None:
    """Add ``name`` to the spec table: ``make(argument_text, seed)`` returns the agent.

    ``name`` must be a word without ``:`` that is not a built-in spec.
    """
    if not name or ":" in name or name in BUILTIN:
        raise ValueError(
            f"register: got name {name!r}; allowed a word without ':', not one of "
            f"{', '.join(BUILTIN)}"
        )
    _TABLE[name] = SpecEntry(name, make, argument, summary)


def known_specs() -> list[str]:
    """The spec names of the table (built-in and registered)."""
    return sorted(_TABLE)


def searches(spec: str) -> bool:
    """Whether ``spec`` names a built-in agent that searches (``searches`` in its row)."""
    entry = _TABLE.get(spec.partition(":")[0])
    return entry is not None and entry.searches


def spec_help(*, builtin: bool = False) -> str:
    """One line listing every spec form (for ``--help`` and error messages); with
    ``builtin=True`` the built-in table's only, not the registered ones."""
    forms = [e.form for e in (BUILTIN_TABLE if builtin else _TABLE.values())]
    return ", ".join(forms) + ", MODULE:ATTR or path/to/file.py:ATTR (your own agent)"


def make_agent(
    spec: str | Agent | Callable[[Observation], int],
    seed: int | None = None,
    *,
    num_players: int | None = None,
    rules: Rules | None = None,
) -> Agent:
    """An agent from a spec string, an :class:`~craits.agents.base.Agent`, or a callable.

    With ``num_players`` (and ``rules``, default the standard rules) the agent is
    checked for that table first (see the module docstring).
    """
    agent, _ = resolve_agent(spec, seed, num_players=num_players, rules=rules)
    return agent


def resolve_agent(
    spec: str | Agent | Callable[[Observation], int],
    seed: int | None = None,
    *,
    num_players: int | None = None,
    rules: Rules | None = None,
) -> tuple[Agent, str]:
    """The agent of ``spec`` and its identity (see the module docstring)."""
    if isinstance(spec, str):
        agent, fallback = _from_text(spec, seed)
    elif isinstance(spec, Agent):
        agent, fallback = spec, _class_identity(type(spec), getattr(spec, "name", "agent"))
    elif callable(spec):
        agent = CallableAgent(spec)
        fallback = _class_identity(spec, agent.name)
    else:
        raise ValueError(
            f"agent spec: got {type(spec).__name__}, expected a spec string or callable"
        )
    if num_players is not None:
        check_table(agent, num_players, rules if rules is not None else Rules(), spec)
    identity = getattr(agent, "identity", None)
    return agent, identity if isinstance(identity, str) and identity else fallback


def agent_identity(spec: str, **table: Any) -> str:
    """What the agent of ``spec`` is, for keying stored results (module docstring)."""
    return resolve_agent(spec, **table)[1]


def check_table(agent: Agent, num_players: int, rules: Rules, spec: object = None) -> None:
    """``agent.check_table(num_players, rules)`` if it has one (``ValueError`` if it can't play)."""
    check = getattr(agent, "check_table", None)
    if callable(check):
        check(num_players, rules)


# ----------------------------------------------------------------------------- specs as text


_SUBSTITUTES: dict[str, str] = {}


def substitute(mapping: Mapping[str, str]) -> None:
    """Make each spec of ``mapping`` read what its value names (a ``ppo:PATH`` or
    ``file.py:ATTR`` of files carried to this machine by content: :mod:`craits.agents.shipped`);
    the spec text, and the agent's identity, stay the same."""
    _SUBSTITUTES.update(mapping)


def substituted(spec: str) -> str:
    """The spec that ``spec`` reads (itself unless :func:`substitute` said otherwise)."""
    return _SUBSTITUTES.get(spec, spec)


def _from_text(spec: str, seed: int | None) -> tuple[Agent, str]:
    name, sep, arg = substituted(spec).partition(":")
    entry = _TABLE.get(name)
    if entry is not None:
        agent = entry.make(arg, seed)
        version = getattr(agent, "version", None)
        return agent, spec if version is None else f"{spec}@{version}"
    if sep:
        return _user_agent(substituted(spec), seed)
    raise ValueError(f"unknown agent spec {spec!r}; known: {spec_help()}")


def _user_agent(spec: str, seed: int | None) -> tuple[Agent, str]:
    """``MODULE:ATTR`` or ``path/to/file.py:ATTR``: a class or factory of an agent."""
    target, _, attr = spec.rpartition(":")
    if not target or not attr:
        raise ValueError(f"agent spec {spec!r}: expected MODULE:ATTR or path/to/file.py:ATTR")
    module = _load_file(spec, target) if target.endswith(".py") else _import(spec, target)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"agent spec {spec!r}: {target} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError(f"agent spec {spec!r}: {attr} is not a class or factory of an agent")
    params: Mapping[str, inspect.Parameter]
    try:
        params = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        params = {}
    takes_seed = "seed" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
    try:
        agent = obj(seed=seed) if takes_seed else obj()
    except Exception as e:
        why = f"{type(e).__name__}: {e}"
        raise ValueError(f"agent spec {spec!r}: {attr}() failed ({why})") from None
    if not callable(getattr(agent, "act", None)):
        raise ValueError(f"agent spec {spec!r}: {attr}() gave an object without act(observation)")
    if not callable(getattr(agent, "reset", None)):
        agent = _WithReset(agent)
    label = f"{Path(target).name}:{attr}" if target.endswith(".py") else f"{target}:{attr}"
    cls = obj if inspect.isclass(obj) else type(agent)
    version = getattr(agent, "version", None)
    identity = f"{label}@{version}" if version is not None else _source_identity(label, cls, obj)
    return agent, identity


class _WithReset:
    """A user's agent without ``reset``: resetting does nothing."""

    def __init__(self, agent: Any) -> None:
        self._agent = agent
        self.name = str(getattr(agent, "name", type(agent).__name__))

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: Observation) -> int:
        return int(self._agent.act(observation))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._agent, name)


_FILES: dict[str, Any] = {}


def _load_file(spec: str, target: str) -> Any:
    path = Path(target).resolve()
    if not path.is_file():
        raise ValueError(f"agent spec {spec!r}: no such file {target}")
    key = str(path)
    if key not in _FILES:
        digest = hashlib.sha256(key.encode()).hexdigest()[:12]
        module_spec = importlib.util.spec_from_file_location(f"craits_user_{digest}", path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_spec.name] = module  # so classes defined there pickle (workers)
        try:
            module_spec.loader.exec_module(module)
        except Exception as e:
            sys.modules.pop(module_spec.name, None)
            raise ValueError(
                f"agent spec {spec!r}: loading {target} failed ({type(e).__name__}: {e})"
            ) from None
        _FILES[key] = module
    return _FILES[key]


def _import(spec: str, target: str) -> Any:
    if not all(part.isidentifier() for part in target.split(".")):
        raise ValueError(f"unknown agent spec {spec!r}; known: {spec_help()}")
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:  # as `python -m` does: modules of the working directory are found
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as e:
        if e.name is not None and target.startswith(e.name):
            raise ValueError(
                f"agent spec {spec!r}: no module {e.name!r} (not installed, not in the working "
                "directory); known specs: " + spec_help()
            ) from None
        raise ValueError(f"agent spec {spec!r}: importing {target} failed ({e})") from None
    except Exception as e:
        raise ValueError(
            f"agent spec {spec!r}: importing {target} failed ({type(e).__name__}: {e})"
        ) from None
    finally:
        if added and cwd in sys.path:
            sys.path.remove(cwd)


def _source_identity(label: str, *objects: Any) -> str:
    """``label@src-<hash>``: the hash of the source files defining ``objects``."""
    h = hashlib.sha256()
    for obj in objects:
        try:
            source = inspect.getsourcefile(obj)
        except TypeError:
            source = None
        if source and os.path.isfile(source):
            h.update(Path(source).read_bytes())
    return f"{label}@src-{h.hexdigest()[:12]}"


def _class_identity(obj: Any, name: str) -> str:
    version = getattr(obj, "version", None)
    if version is not None:
        return f"{name}@{version}"
    return _source_identity(f"{getattr(obj, '__module__', '?')}.{name}", obj)
