"""Each extension point is declared once (docs/architecture.md, "Where to add things"): a rule
option is a field of ``Rules``, a bot a row of the spec table, an observation feature a row of
``FIELDS``, a web endpoint a route of the app. Every other list, help text and docs table is
generated from that one declaration or checked against it here, so a new one cannot be
forgotten in a list that nothing reads back."""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import inspect
import io
import random
import re
import sys
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import numpy as np
import pytest

from craits.agents import specs
from craits.agents.specs import BUILTIN, BUILTIN_TABLE
from craits.arguments import SPECS_HELP
from craits.benchmark.suite import SEARCHING, SUITES, ZOO, is_searching
from craits.cli import build_parser
from craits.web.bots import NETWORK_SPECS, QUICK_SPECS, is_quick
from craits_env import observation, options
from craits_env.rules import Rules
from craits_env.testing.random_rules import OPTION_CHOICES, SCHEDULE_OPTIONS, random_config
from craits_env.vector import encode, layout

ROOT = Path(__file__).resolve().parents[2]
FIELD_NAMES = [f.name for f in dataclasses.fields(Rules)]


def rows(markdown: str, header: str) -> list[list[str]]:
    """The body rows (cells stripped) of the Markdown table whose header line is ``header``."""
    lines = markdown.splitlines()
    start = lines.index(header) + 2  # the header, then the |---| line
    body = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        body.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return body


# ----------------------------------------------------------------------------- rule options


def test_the_random_tests_play_every_value_of_every_rule_option() -> None:
    """random_config (the random-option invariants, the vector engine's differential runs)
    draws each value OPTION_CHOICES derives from Rules' annotations; the rest is its schedule."""
    assert [*OPTION_CHOICES] == [n for n in FIELD_NAMES if n not in SCHEDULE_OPTIONS]
    assert set(SCHEDULE_OPTIONS) < set(FIELD_NAMES)
    kinds = options.field_types(Rules)
    for name, values in OPTION_CHOICES.items():
        if kinds[name] is bool:
            assert values == (False, True)
        elif get_origin(kinds[name]) is Literal:
            assert values == get_args(kinds[name])
    r = random.Random(39)
    seen = {
        (name, getattr(rules, name))
        for _ in range(400)
        for n, rules in [random_config(r)]
        for name in OPTION_CHOICES
    }
    assert seen == {(name, v) for name, values in OPTION_CHOICES.items() for v in values}


# A value other than the default for the options that random_config draws itself (at 4
# players: num_decks=1 would be the default's one deck).
SCHEDULE_VALUES: dict[str, Any] = {"num_decks": 2, "hand_sizes": (8,), "hand_decision_limit": 7}


def test_every_rule_option_reaches_the_compiled_kernels() -> None:
    """A Rules field that rule_params does not read would be played by the Python engine only
    (VectorGame, craits_v0's backend="vector", PIMC's rollouts would ignore it)."""
    base = layout.rule_params(4, Rules(), "relative", False)
    default = Rules()
    for name in FIELD_NAMES:
        values = OPTION_CHOICES.get(name) or (SCHEDULE_VALUES[name],)
        for value in values:
            if value == getattr(default, name):
                continue
            changed = layout.rule_params(4, Rules(**{name: value}), "relative", False)
            assert not np.array_equal(changed, base), f"Rules.{name}={value!r} reaches no P_*"


def test_the_kernel_parameters_are_numbered_once_and_each_is_set() -> None:
    names = {k: v for k, v in vars(layout).items() if re.fullmatch(r"P_[A-Z_]+", k)}
    assert sorted(names.values()) == list(range(layout.NUM_PARAMS))
    tree = ast.parse(inspect.getsource(layout.rule_params))
    written = {
        node.slice.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.slice, ast.Name)
    }
    assert written == set(names)


def field_docstrings(cls: type) -> dict[str, str]:
    """Each field's docstring (the string after it in the class body)."""
    (node,) = ast.parse(inspect.getsource(cls)).body
    assert isinstance(node, ast.ClassDef)
    docs = {}
    for item, after in zip(node.body, [*node.body[1:], None], strict=True):
        is_field = isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
        if is_field and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
            docs[item.target.id] = str(after.value.value)  # type: ignore[union-attr]
    return docs


def type_cell(kind: Any) -> str:
    """How docs/rules.md's table writes an option's type."""
    if get_origin(kind) is Literal:
        (item,) = {type(a) for a in get_args(kind)}
        return f"`{item.__name__}`"
    optional = type(None) in get_args(kind)
    if optional:
        (inner,) = [a for a in get_args(kind) if a is not type(None)]
        return type_cell(inner) + " or `None`"
    if get_origin(kind) is tuple:
        return f"`tuple[{get_args(kind)[0].__name__}, ...]`"
    return f"`{kind.__name__}`"


def value_cell(value: Any) -> str:
    return f'`"{value}"`' if isinstance(value, str) else f"`{value!r}`"


def test_the_rules_page_lists_every_option_as_rules_declares_it() -> None:
    """docs/rules.md §13: one row per field, in order, with its type, default, rule id (the
    field docstring's [R…]) and, for a choice, every value; and a paragraph on what it does."""
    page = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    table = rows(page, "| field | type | default | allowed | rule |")
    assert [row[0] for row in table] == [f"`{name}`" for name in FIELD_NAMES]
    kinds, docs, default = options.field_types(Rules), field_docstrings(Rules), Rules()
    for (_, kind, value, allowed, rule), name in zip(table, FIELD_NAMES, strict=True):
        assert kind == type_cell(kinds[name]), name
        assert value == value_cell(getattr(default, name)), name
        assert rule == re.match(r"\[(R[\d.]+)\]", docs[name]).group(1), name  # type: ignore[union-attr]
        choices = get_args(kinds[name]) if get_origin(kinds[name]) is Literal else ()
        assert all(value_cell(c) in allowed for c in choices), name
        assert f"- **`{name}`**:" in page, f"docs/rules.md: no paragraph on {name}"


# ----------------------------------------------------------------------------- agent specs


def help_of(command: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", "1000")  # no wrapping: argparse breaks lines at hyphens
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        sub.choices[command].print_help()
    return out.getvalue()


def test_the_help_of_every_command_that_seats_agents_lists_every_spec(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    seating = [name for name in sub.choices if "agent specs:" in help_of(name, monkeypatch)]
    assert {"demo", "tournament", "evaluate", "play"} <= set(seating)
    for command in seating:
        text = help_of(command, monkeypatch)
        missing = [
            e.form
            for e in BUILTIN_TABLE  # "champion" must not be read in "champion-search"
            if not re.search(rf"(?<![\w-]){re.escape(e.form)}(?![\w-])", text)
        ]
        assert not missing, f"craits {command} --help omits {missing}"
    assert SPECS_HELP.startswith("agent specs: " + ", ".join(e.form for e in BUILTIN_TABLE))


def test_the_web_thinks_in_process_exactly_the_quick_rows() -> None:
    # but a network's (champion's) forward pass: in the bot processes (issue 43, E)
    assert {e.name for e in BUILTIN_TABLE if e.quick} - NETWORK_SPECS == QUICK_SPECS
    assert {"random", "greedy", "tactician", "expert"} <= QUICK_SPECS
    assert {"champion"} == NETWORK_SPECS
    for e in BUILTIN_TABLE:
        assert is_quick(e.name) == (e.quick and e.name not in NETWORK_SPECS)
        assert not (e.quick and (e.searches or e.extra or e.argument)), e.name


def test_the_benchmarks_zoo_and_searching_opponents_are_rows_of_the_table() -> None:
    """The zoo is frozen per suite (a new bot joins no suite by itself), but each of its names is
    a spec of the table; the opponents met on the small deal sets are the searching rows."""
    assert set(ZOO) <= set(BUILTIN)
    for suite in SUITES.values():
        assert set(suite.zoo) | {suite.reference} <= set(BUILTIN), suite.name
    assert set(SEARCHING) == {e.name for e in BUILTIN_TABLE if e.searches}
    for e in BUILTIN_TABLE:
        assert is_searching(e.name) == is_searching(f"{e.name}:8") == e.searches


def test_the_web_reads_which_specs_take_a_number_or_a_path_from_the_table() -> None:
    pytest.importorskip("fastapi")
    from craits.web import requests

    assert set(requests.NUMBERED_SPECS) == {e.name for e in BUILTIN_TABLE if e.argument == "[:N]"}
    assert set(requests.PATH_SPECS) == {e.name for e in BUILTIN_TABLE if e.argument == ":PATH"}
    assert set(requests.SPEC_NUMBER_CAPS) <= set(requests.NUMBERED_SPECS)
    assert requests.table_specs() == [n for n in specs.known_specs() if n not in ("ppo",)]


def first_cell_names(table: list[list[str]]) -> set[str]:
    """The spec names written in code (``name``, ``name:N``) in each row's first cell."""
    return {m for row in table for m in re.findall(r"`+([a-z][\w-]*)", row[0])}


def test_every_spec_of_the_table_is_documented() -> None:
    """The spec tables of agents/specs.py's docstring and docs/agents.md name every row."""
    assert specs.__doc__ is not None
    docstring = first_cell_names(rows(specs.__doc__, "| spec | agent |"))
    page = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    documented = first_cell_names(rows(page, "| spec | what it does |"))
    for where, names in (("agents/specs.py", docstring), ("docs/agents.md", documented)):
        missing = [name for name in BUILTIN if name not in names]
        assert not missing, f"{where}: no row for the spec(s) {missing}"


# ----------------------------------------------------------------------------- observation


def test_the_observation_layout_is_one_table() -> None:
    """observation.FIELDS: the module docstring holds slice_table() (the test prints it), the
    docs page generates it (docs/_hooks/generate.py), the compiled encoder's FIELD_ORDER is
    every field but the opponents' blocks (it writes them with own_status), in order."""
    table = observation.slice_table()
    assert table in (observation.__doc__ or ""), f"craits_env/observation.py's docstring: {table}"
    page = (ROOT / "docs" / "environments.md").read_text(encoding="utf-8")
    assert "<!-- generated: observation-slices -->" in page
    sys.path.insert(0, str(ROOT / "docs" / "_hooks"))
    try:
        import generate
    finally:
        sys.path.remove(str(ROOT / "docs" / "_hooks"))
    assert generate.generate("observation-slices", None) == table
    names = [f.name for f in observation.FIELDS]
    assert list(encode.FIELD_ORDER) == [n for n in names if n != "opponents"]


# ----------------------------------------------------------------------------- web endpoints


def route_key(method: str, path: str) -> str:
    """``GET /api/games/{}``: a route with its parameters' names left out."""
    return f"{method} {re.sub(r'{[^}]*}', '{}', path)}"


def test_every_api_route_is_in_the_apps_table_and_the_interface(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    from craits.web import app as web_app

    app = web_app.create_app(web_app.Settings(games_dir=tmp_path))
    routes = {
        route_key(method, route.path)  # type: ignore[attr-defined]
        for route in app.routes
        if getattr(route, "path", "").startswith("/api/")
        for method in getattr(route, "methods", ())
        if method != "HEAD"
    }
    assert routes
    pattern = r"\b(GET|POST|PUT|DELETE|PATCH) (/api/[\w/{}-]*\w[}]?)"
    interface = (ROOT / "docs" / "interface.md").read_text(encoding="utf-8")
    for where, text in (
        ("craits/web/app.py", web_app.__doc__ or ""),
        ("docs/interface.md", interface),
    ):
        documented = {route_key(m, p) for m, p in re.findall(pattern, text)}
        assert routes <= documented, f"{where} does not document {sorted(routes - documented)}"
        assert documented <= routes, f"{where} documents no route {sorted(documented - routes)}"
