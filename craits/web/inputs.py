"""What a web client may ask for, bounded before the game code sees it, and where its token is.

Each bound is one line here, checked on the request as received (a **400** naming what is
allowed) before :mod:`craits.web.requests` parses it:

- a number in a spec (``pimc:N``, ``champion-search:N``) is ASCII digits ``[0-9]+``
  (``"²".isdigit()`` and ``"٣".isdecimal()`` are true in Python, and ``int("٣")`` is 3);
- every text of a rule option or an action is ASCII (the texts they allow all are);
- a game's hands (the length of ``hand_sizes``): at most :data:`MAX_HANDS`;
  ``three_points``: at most :data:`MAX_THREE_POINTS`; ``hand_decision_limit``: at most
  :data:`MAX_HAND_DECISION_LIMIT`; a seed: at most :data:`MAX_SEED_DIGITS` digits.

The token of a game may be sent three ways (docs/interface.md): ``?token=T`` on a ``GET``,
``"token"`` in a ``POST``'s body, or the header ``Authorization: Bearer T``
(:func:`bearer_token`, :func:`with_token`), which keeps it out of logs and histories.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from craits_env.rules import Rules

from .costs import check_cost
from .requests import MAX_SPEC_NUMBER, NUMBERED_SPECS, ApiError, NewGame

MAX_HANDS = 100
"""Hands of one game at most (the standard game has 15)."""
MAX_THREE_POINTS = 1000
"""``three_points`` at most (the standard is 3)."""
MAX_HAND_DECISION_LIMIT = 20_000
"""``hand_decision_limit`` at most (the standard is 5000)."""
MAX_SEED_DIGITS = 40
"""Decimal digits of a seed at most."""
SPEC_NUMBER = re.compile(r"[0-9]+")
"""How the number of a spec is written (ASCII only; ``str.isdecimal`` is true for ``٣``)."""
_BEARER = re.compile(r"Bearer[ \t]+(\S+)", re.IGNORECASE)


def _bad(message: str) -> ApiError:
    return ApiError(400, message)


def check_new_game_body(body: object, extra_specs: Collection[str] = ()) -> None:
    """Refuse what :func:`~craits.web.requests.parse_new_game` must not see (see the
    module docstring); anything else is left to it."""
    if not isinstance(body, dict):
        return
    opponents = body.get("opponents")
    for spec in opponents if isinstance(opponents, list) else ():
        if not isinstance(spec, str) or spec.strip() in extra_specs:
            continue
        name, sep, arg = spec.strip().partition(":")
        if sep and name in NUMBERED_SPECS and not SPEC_NUMBER.fullmatch(arg):
            raise _bad(
                f"opponent {spec!r}: N of {name}:N is written in digits 0-9, 1 to {MAX_SPEC_NUMBER}"
            )
    rules = body.get("rules")
    for name, raw in rules.items() if isinstance(rules, dict) else ():
        if isinstance(raw, str) and not raw.isascii():
            raise _bad(f"rules: {name}: got {raw!r}, allowed ASCII text (digits 0-9)")


def check_new_game(request: NewGame, extra_specs: Collection[str] = ()) -> NewGame:
    """``request`` if its sizes are within the bounds of the module docstring, and each
    searching opponent's move within its cost at this table (:mod:`craits.web.costs`;
    not a spec the server was started with, ``--agents``)."""
    rules = request.rules
    seed = request.seed
    if seed is not None and seed >= 10**MAX_SEED_DIGITS:
        raise _bad(
            f"seed: got a number of more than {MAX_SEED_DIGITS} digits, allowed "
            f"0 to 10**{MAX_SEED_DIGITS} - 1 or null (a fresh seed)"
        )
    hands = len(rules.hand_sizes)
    if hands > MAX_HANDS:
        raise _bad(f"rules: hand_sizes: got {hands} hands, allowed 1 to {MAX_HANDS} here")
    checked = {"three_points": MAX_THREE_POINTS, "hand_decision_limit": MAX_HAND_DECISION_LIMIT}
    for name, most in checked.items():
        value = getattr(rules, name)
        if value > most:
            default = getattr(Rules(), name)
            raise _bad(
                f"rules: {name}: got {value}, allowed at most {most} here (default {default})"
            )
    for spec in request.opponents:
        why = None if spec in extra_specs else check_cost(spec, request.num_players, rules)
        if why is not None:
            raise _bad(why)
    return request


def check_action_body(body: object) -> None:
    """Refuse an action written in other than ASCII (``"٣"`` is not action 3)."""
    if isinstance(body, dict) and isinstance(body.get("action"), str):
        action = body["action"]
        if not action.isascii():
            raise _bad(
                f"action: got {action!r}, allowed an action id 0-58 or its text "
                "('7c', 'draw', 'call h')"
            )


def bearer_token(headers: Mapping[str, str]) -> str | None:
    """The token of an ``Authorization: Bearer T`` header, or ``None``."""
    match = _BEARER.fullmatch(headers.get("authorization", "").strip())
    return match.group(1) if match else None


def with_token(body: Any, headers: Mapping[str, str]) -> Any:
    """``body`` with the bearer token as its ``token`` when it has none of its own."""
    token = bearer_token(headers)
    if token is not None and isinstance(body, dict) and "token" not in body:
        return {**body, "token": token}
    if token is not None and body is None:
        return {"token": token}
    return body
