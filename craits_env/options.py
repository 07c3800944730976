"""Typed options: one parser for every dataclass of options, built from its field types.

:class:`~craits_env.rules.Rules` and ``craits.training.config.TrainConfig`` are frozen
dataclasses whose annotations say what each option takes. Everything that
turns outside input into an option goes through here, so a value is checked,
converted and explained the same way everywhere:

- :func:`coerce` — a Python / JSON / TOML value (``Rules(...)``, ``Rules.from_dict``,
  a TOML configuration): ``bool`` stays a bool (never an int), a list becomes a
  tuple, an int a float where a float is asked for, a table a nested dataclass;
- :func:`from_text` — command-line text (``-r seven_hits=next_but_one``,
  ``-r hand_sizes=8,7,6``, ``-r num_decks=none``);
- :func:`allowed` — what a field allows, in words, for one-line errors.

Supported annotations: ``bool``, ``int``, ``float``, ``str``, ``Literal[...]``,
``X | None``, ``tuple[int, ...]``, ``tuple[str, ...]``, ``dict[str, ...]`` and a
dataclass with a ``from_dict`` class method (a table).
"""

from __future__ import annotations

import dataclasses
import functools
import numbers
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")
_NONE = ("none", "auto", "null")


@functools.cache
def field_types(cls: type) -> dict[str, Any]:
    """The resolved annotation of every field of the dataclass ``cls``."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def is_int(value: object, *, numpy: bool = False) -> bool:
    """Whether ``value`` is an integer and not a bool: a Python ``int``; with ``numpy=True``
    also a numpy integer (any :class:`numbers.Integral`, never ``numpy.bool_``)."""
    if numpy:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    return isinstance(value, int) and not isinstance(value, bool)


def _optional(kind: Any) -> tuple[bool, Any]:
    """``(True, X)`` for ``X | None``; ``(False, kind)`` otherwise."""
    if get_origin(kind) in (Union, types.UnionType):
        args = [a for a in get_args(kind) if a is not type(None)]
        if len(args) < len(get_args(kind)):
            return True, args[0] if len(args) == 1 else Union[tuple(args)]  # noqa: UP007
    return False, kind


def allowed(kind: Any) -> str:
    """What ``kind`` allows, in words."""
    optional, kind = _optional(kind)
    prefix = "None or " if optional else ""
    origin = get_origin(kind)
    if origin is Literal:
        return prefix + ", ".join(repr(a) for a in get_args(kind))
    if kind is bool:
        return prefix + "True or False"
    if kind is int:
        return prefix + "an int"
    if kind is float:
        return prefix + "a number"
    if kind is str:
        return prefix + "a string"
    if origin is tuple:
        item = get_args(kind)[0]
        return prefix + f"a list of {item.__name__}s"
    if origin is dict or dataclasses.is_dataclass(kind):
        return prefix + "a table"
    return prefix + str(kind)


class _Inner(ValueError):
    """A bad item inside a table or a nested dataclass: its own message."""


def coerce(cls: type, name: str, value: Any) -> Any:
    """``value`` as field ``name`` of ``cls`` takes it; ``ValueError`` ``"got …, allowed …"``
    (for an item of a table: ``"KEY: got …, allowed …"``)."""
    kind = field_types(cls)[name]
    try:
        return _coerce(kind, value)
    except _Inner as e:
        raise ValueError(str(e)) from None
    except (TypeError, ValueError):
        raise ValueError(f"got {value!r}, allowed {allowed(kind)}") from None


def _coerce(kind: Any, value: Any) -> Any:
    optional, kind = _optional(kind)
    if value is None:
        if optional:
            return None
        raise ValueError
    origin = get_origin(kind)
    if origin is Literal:
        for choice in get_args(kind):
            if value == choice and type(value) is type(choice):
                return choice
        raise ValueError
    if kind is bool:
        if isinstance(value, bool):
            return value
        raise ValueError
    if kind is int:
        if is_int(value):
            return value
        raise ValueError
    if kind is float:
        if is_int(value) or isinstance(value, float):
            return float(value)
        raise ValueError
    if kind is str:
        if isinstance(value, str):
            return value
        raise ValueError
    if origin is tuple:
        item = get_args(kind)[0]
        if isinstance(value, item) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, list | tuple):
            raise ValueError
        return tuple(_coerce(item, v) for v in value)
    if origin is dict:
        if not isinstance(value, dict):
            raise ValueError
        value_kind = get_args(kind)[1]
        if value_kind is Any:
            return dict(value)
        items = {}
        for k, v in value.items():
            try:
                items[str(k)] = _coerce(value_kind, v)
            except ValueError:
                raise _Inner(f"{k}: got {v!r}, allowed {allowed(value_kind)}") from None
        return items
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        if isinstance(value, kind):
            return value
        if isinstance(value, dict):
            try:
                return kind.from_dict(value)  # type: ignore[attr-defined]
            except ValueError as e:
                raise _Inner(str(e)) from None
        raise ValueError
    raise TypeError(f"unsupported option type {kind!r}")


def from_text(cls: type, name: str, text: str) -> Any:
    """Command-line ``text`` as field ``name`` of ``cls`` (then :func:`coerce`'d)."""
    kind = field_types(cls)[name]
    optional, inner = _optional(kind)
    raw = text.strip()
    try:
        if optional and raw.lower() in _NONE:
            return None
        return _coerce(kind, _parse(inner, raw))
    except ValueError:
        raise ValueError(f"got {raw!r}, allowed {allowed(kind)}") from None


def _parse(kind: Any, raw: str) -> Any:
    origin = get_origin(kind)
    if origin is Literal:
        for choice in get_args(kind):
            if raw == str(choice):
                return choice
        raise ValueError
    if kind is bool:
        if raw.lower() in _TRUE:
            return True
        if raw.lower() in _FALSE:
            return False
        raise ValueError
    if kind is int:
        return int(raw)
    if kind is float:
        return float(raw)
    if origin is tuple:
        item = get_args(kind)[0]
        return tuple(_parse(item, part.strip()) for part in raw.split(",") if part.strip())
    return raw
