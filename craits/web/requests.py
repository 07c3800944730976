"""What a client of ``craits serve`` asks for, checked: a new game, a move, a token.

Every refusal is an :class:`ApiError`: an HTTP status and a one-line reason, raised
before anything changes. The sizes a client may ask for are bounded beforehand, in
:mod:`craits.web.inputs`.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from craits.agents.specs import known_specs
from craits_env import options
from craits_env.actions import parse_action
from craits_env.options import is_int
from craits_env.rules import MAX_PLAYERS, MIN_PLAYERS, Rules

RULE_NAMES = tuple(options.field_types(Rules))
ACTION_KEYS = ("token", "action", "decision")
"""The keys of ``POST /api/games/{id}/actions``."""


class ApiError(Exception):
    """A refused request: an HTTP ``status`` and a one-line ``message``; nothing changed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class StaleDecision(ApiError):
    """A move that answers decision ``asked`` while the game is at decision ``current``
    (a duplicate of a move already applied, or one sent from an old view): 409, never
    applied; the answer carries the current view."""

    def __init__(self, asked: int, current: int) -> None:
        super().__init__(
            409,
            f"decision: this move answers decision {asked}, the game is at decision "
            f"{current} (a duplicate or stale move: not applied; the current view is in 'view')",
        )
        self.asked = asked
        self.current = current


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)


# ----------------------------------------------------------------------------- new games


@dataclass(frozen=True)
class NewGame:
    """What ``POST /api/games`` asks for, checked."""

    opponents: tuple[str, ...]
    seat: int
    seed: int | None
    rules: Rules

    @property
    def num_players(self) -> int:
        return len(self.opponents) + 1


PATH_SPECS = ("ppo",)  # specs of the table whose argument names a file: never from a client
MAX_SPEC_NUMBER = 2048  # a client's pimc:N at most this (N rollouts per searched decision)
SPEC_NUMBER_CAPS = {"openspiel-ismcts": 32}  # N at most this for these (a simulation is ~10 ms)


# the table specs that take ":N" (a budget)
NUMBERED_SPECS = ("pimc", "champion-search", "belief-search", "openspiel-ismcts")


def table_specs() -> list[str]:
    """The names of the spec table a web client may seat without ``--agents``."""
    return [name for name in known_specs() if name not in PATH_SPECS]


def allowed_specs(extra: Collection[str]) -> str:
    """The specs a web client may ask for, in words (for one-line errors)."""
    table = [f"{name}[:N]" if name in NUMBERED_SPECS else name for name in table_specs()]
    listed = f"; and the specs this server allows: {', '.join(extra)}" if extra else ""
    return ", ".join(table) + listed


def check_spec(spec: object, extra: Collection[str]) -> str:
    """``spec`` if a web client may seat it: a spec of the table with no argument or a
    number (``expert``, ``pimc:64``), or one the server was started with (``--agents``).
    A spec that names a file or a module (``ppo:PATH``, ``MODULE:ATTR``) would make the
    server load code or weights chosen by the client, so it must be allowed up front."""
    if not isinstance(spec, str) or not spec.strip():
        raise bad_request(f"opponents: got {spec!r}; allowed specs: {allowed_specs(extra)}")
    spec = spec.strip()
    if spec in extra:
        return spec
    name, sep, arg = spec.partition(":")
    if name in table_specs() and (not sep or (arg.isascii() and arg.isdigit())):
        cap = SPEC_NUMBER_CAPS.get(name, MAX_SPEC_NUMBER)
        if sep and int(arg) > cap:
            raise bad_request(
                f"opponent {spec!r}: the number is at most {cap} here "
                "(a larger one must be allowed when the server starts: --agents)"
            )
        return spec
    if sep or name in known_specs():
        raise bad_request(
            f"opponent {spec!r}: a spec naming a file or module must be allowed when the server "
            f"starts (craits serve --agents {spec}); allowed: {allowed_specs(extra)}"
        )
    raise bad_request(f"unknown agent spec {spec!r}; allowed: {allowed_specs(extra)}")


def parse_rules(value: object) -> Rules:
    """``rules`` of a request: an object of rule options, each a JSON value of its type
    or its command-line text (``"true"``, ``"8,7,6"``) — :mod:`craits_env.options`."""
    if value is None:
        return Rules()
    if not isinstance(value, dict):
        raise bad_request(f"rules: expected an object of rule options, got {value!r}")
    unknown = sorted(set(value) - set(RULE_NAMES))
    if unknown:
        raise bad_request(
            f"rules: unknown option(s) {', '.join(map(str, unknown))}; allowed: "
            f"{', '.join(RULE_NAMES)}"
        )
    chosen: dict[str, Any] = {}
    for name, raw in value.items():
        try:
            chosen[name] = options.from_text(Rules, name, raw) if isinstance(raw, str) else raw
        except ValueError as e:
            raise bad_request(f"rules: {name}: {e}") from None
    try:
        return Rules(**chosen)
    except ValueError as e:
        raise bad_request(f"rules: {e}") from None


def parse_new_game(body: object, extra_specs: Collection[str] = ()) -> NewGame:
    """The checked request of ``POST /api/games`` (:class:`ApiError` 400 otherwise)."""
    if not isinstance(body, dict):
        raise bad_request('expected a JSON object such as {"opponents": ["random"]}')
    keys = ("opponents", "players", "seat", "seed", "rules")
    unknown = sorted(set(body) - set(keys))
    if unknown:
        raise bad_request(
            f"unknown key(s) {', '.join(map(str, unknown))}; allowed: {', '.join(keys)}"
        )
    opponents = body.get("opponents")
    if not isinstance(opponents, list) or not MIN_PLAYERS - 1 <= len(opponents) <= MAX_PLAYERS - 1:
        got = f"{len(opponents)} specs" if isinstance(opponents, list) else repr(opponents)
        raise bad_request(
            f"opponents: got {got}, allowed a list of {MIN_PLAYERS - 1} to "
            f"{MAX_PLAYERS - 1} agent specs"
        )
    specs = tuple(check_spec(s, extra_specs) for s in opponents)
    n = len(specs) + 1
    players = body.get("players", n)
    if players != n or not is_int(players):
        raise bad_request(f"players: got {players!r}, but {len(specs)} opponents make {n} players")
    seat = body.get("seat", 0)
    if not is_int(seat) or not 0 <= seat < n:
        raise bad_request(f"seat: got {seat!r}, allowed 0 to {n - 1} for {n} players")
    seed = body.get("seed")
    if seed is not None and (not is_int(seed) or seed < 0):
        raise bad_request(f"seed: got {seed!r}, allowed an int >= 0 or null (a fresh seed)")
    return NewGame(specs, seat, seed, parse_rules(body.get("rules")))


def parse_action_body(body: object) -> tuple[str, int, int | None]:
    """``(token, action id, decision)`` from ``{"token": T, "action": A, "decision": K}``;
    ``A`` an id or its text (``"7c"``, ``"draw"``, ``"call h"``:
    :func:`craits_env.actions.parse_action`); ``K`` (optional, ``None`` when absent) the
    decision number the move answers — the seat view's ``decision``."""
    if not isinstance(body, dict):
        raise bad_request('expected a JSON object {"token": T, "action": ID, "decision": K}')
    token = body.get("token")
    if not isinstance(token, str):
        raise ApiError(403, "token: missing (the token POST /api/games gave)")
    unknown = sorted(set(body) - set(ACTION_KEYS))
    if unknown:
        raise bad_request(
            f"unknown key(s) {', '.join(map(str, unknown))}; allowed: {', '.join(ACTION_KEYS)}"
        )
    decision = body.get("decision")
    if decision is not None and (not is_int(decision) or decision < 0):
        raise bad_request(
            f"decision: got {decision!r}, allowed an int >= 0 (the view's decision) or absent"
        )
    action = body.get("action")
    if isinstance(action, bool) or not isinstance(action, int | str):
        raise bad_request(f"action: got {action!r}, allowed an action id (see legal)")
    try:
        return token, parse_action(action), decision
    except ValueError as e:
        raise bad_request(str(e)) from None


def token_of(body: object) -> str:
    """The ``token`` of a ``{"token": T}`` body."""
    if not isinstance(body, dict) or not isinstance(body.get("token"), str):
        raise ApiError(403, 'token: missing (expected a JSON object {"token": T})')
    return str(body["token"])
