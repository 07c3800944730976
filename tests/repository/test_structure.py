"""The structure of the code, checked on every run (docs/architecture.md): no import cycle among the
modules of one package, no private name used outside the module that defines it, no source
file over 700 lines. (The layers between the packages: import-linter, ``make lint``.)

Each check lists everything it finds, with file and line, so that one run names all of it.
The tests themselves are exempt from the private-name check (they may look inside).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import package_tree

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("craits_env", "craits", "experiments")  # craits holds craits.agents, craits.training
# Source folders (agents/ and training/ install as craits.agents and craits.training: setup.py).
# One module of each folder setup.py maps: the installed tree must show them inside craits.
MAPPED_MODULES = ("craits.agents.specs", "craits.training.train")
SOURCES = ("craits_env", "agents", "training", "craits", "experiments")
SIZED = ("craits_env", "agents", "training", "craits", "experiments")  # not experiments/results
MAX_LINES = 700
SOURCE_SUFFIXES = (".py", ".js", ".css", ".html")
# Names of the standard library's public API that begin with an underscore (namedtuple's).
PUBLIC_UNDERSCORE = {"_replace", "_asdict", "_fields", "_make", "_field_defaults"}


def source_files(folders: tuple[str, ...], suffixes: tuple[str, ...] = (".py",)) -> list[Path]:
    """The files under ``folders``."""
    files: list[Path] = []
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*")):
            rel = path.relative_to(ROOT)
            if "__pycache__" in rel.parts or "results" in rel.parts[:2]:
                continue
            if path.is_file() and path.suffix in suffixes:
                files.append(path)
    return files


def import_cycles() -> list[str]:
    """Each cycle among the modules of one package, as its arrows (importer -> imported:
    line numbers). A subpackage counts as one module of its parent (its modules' imports
    are its own); a package's ``__init__`` is its facade and is not a member.

    grimp reads the installed tree (``tests/package_tree.py``: craits.agents inside craits) and
    finds a package by importing machinery, so it runs in a process of its own there."""
    tree = package_tree.build(package_tree.ROOT / "build" / "structure-tree")
    code = (
        f"import json, sys; sys.path[:0] = [{str(tree)!r}, {str(ROOT)!r}]\n"
        "from tests.repository.test_structure import cycles_in_graph\n"
        "print(json.dumps(cycles_in_graph()))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tree, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    found: list[str] = json.loads(proc.stdout)
    return found


def cycles_in_graph() -> list[str]:
    """:func:`import_cycles` in the process that reads the installed tree — which must hold
    craits.agents and craits.training (the layers pyproject.toml marks optional for a bare run
    from the repository root, checked by make lint on this same tree)."""
    import grimp

    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    found = [f"the installed tree lacks {m}" for m in MAPPED_MODULES if m not in graph.modules]
    for package in sorted(graph.modules):
        children = graph.find_children(package)
        if len(children) < 2:
            continue
        member = {m: child for child in children for m in {child, *graph.find_descendants(child)}}
        arrows: dict[tuple[str, str], list[str]] = {}
        for importer, child in member.items():
            for imported in graph.find_modules_directly_imported_by(importer):
                target = member.get(imported)
                if target is not None and target != child:
                    details = graph.get_import_details(importer=importer, imported=imported)
                    lines = ",".join(str(d["line_number"]) for d in details)
                    arrows.setdefault((child, target), []).append(f"{importer}:{lines}")
        for component in strongly_connected(children, set(arrows)):
            ties = [
                f"{a} -> {b} ({'; '.join(arrows[a, b])})"
                for a in component
                for b in component
                if (a, b) in arrows
            ]
            found.append(f"cycle in {package}: " + ", ".join(ties))
    return found


def strongly_connected(nodes: set[str], edges: set[tuple[str, str]]) -> list[list[str]]:
    """The components of more than one node (Tarjan's algorithm), each sorted."""
    out: dict[str, list[str]] = {}
    for a, b in edges:
        out.setdefault(a, []).append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(out.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return sorted(components)


def is_private(name: str) -> bool:
    """A single leading underscore, not a dunder, not namedtuple's public API."""
    return name.startswith("_") and not name.startswith("__") and name not in PUBLIC_UNDERSCORE


def defined_names(tree: ast.Module) -> set[str]:
    """Every name this module defines: functions, classes, assigned names, parameters and
    the attributes it sets on ``self`` or ``cls`` (``self._x = ...``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def imported_modules(tree: ast.Module, module: str) -> set[str]:
    """The local names bound to modules of ours (``import craits_env.x as x``,
    ``from craits_env import x`` where ``x`` is a module, ``from . import x``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PACKAGES:
                    names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            base = resolve(module, node.module, node.level)
            if base.split(".")[0] not in PACKAGES:
                continue
            for alias in node.names:
                if is_module(f"{base}.{alias.name}"):
                    names.add(alias.asname or alias.name)
    return names


def resolve(module: str, name: str | None, level: int) -> str:
    """The absolute name of ``from <level dots><name> import``, in ``module``."""
    if level == 0:
        return name or ""
    parts = module.split(".")
    is_package = module_path(module).name == "__init__.py"
    base = parts[: len(parts) - level + (1 if is_package else 0)]
    return ".".join([*base, name] if name else base)


def module_path(module: str) -> Path:
    """The file of a module of ours (craits.agents in agents/: setup.py's mapping)."""
    parts = module.split(".")
    for name, folder in package_tree.package_dir().items():
        if parts[: name.count(".") + 1] == name.split("."):
            parts = [folder, *parts[name.count(".") + 1 :]]
    p = ROOT.joinpath(*parts)
    return p / "__init__.py" if p.is_dir() else p.with_suffix(".py")


def is_module(module: str) -> bool:
    return module_path(module).is_file()


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[0] in ("agents", "training"):
        parts.insert(0, "craits")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def private_uses(path: Path) -> list[str]:
    """The private names ``path`` uses that are not its own (:func:`private_uses_in`)."""
    return private_uses_in(path.read_text(), module_name(path), str(path.relative_to(ROOT)))


def private_uses_in(source: str, module: str, where: str) -> list[str]:
    """``from x import _y``; ``m._y`` for a module ``m`` of ours; ``e._y`` for any other
    expression but ``self``/``cls`` when ``_y`` is not defined in this module; in line order."""
    tree = ast.parse(source, where)
    mine = defined_names(tree)
    modules = imported_modules(tree, module)
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if is_private(alias.name):
                    found.append((node.lineno, node.col_offset, f"imports {alias.name}"))
        elif isinstance(node, ast.Attribute) and is_private(node.attr):
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in modules:
                found.append((node.lineno, node.col_offset, f"reads {owner.id}.{node.attr}"))
            elif isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            elif node.attr not in mine:
                found.append((node.lineno, node.col_offset, f"uses .{node.attr}, not its own"))
    return [f"{where}:{line}: {what}" for line, _, what in sorted(found)]


@pytest.mark.slow
def test_no_import_cycle_inside_a_package() -> None:
    cycles = import_cycles()
    assert not cycles, "\n".join(cycles)


@pytest.mark.slow
def test_no_private_name_is_used_outside_its_module() -> None:
    uses = [use for path in source_files(SOURCES) for use in private_uses(path)]
    assert not uses, "\n".join(uses)


def test_no_source_file_is_over_700_lines() -> None:
    sizes = {
        path: len(path.read_text().splitlines()) for path in source_files(SIZED, SOURCE_SUFFIXES)
    }
    over = [f"{p.relative_to(ROOT)}: {n} lines" for p, n in sizes.items() if n > MAX_LINES]
    assert not over, "\n".join(over)
    assert len(sizes) > 100  # the folders were found


def test_the_checks_find_what_they_look_for() -> None:
    """Each check, on code written to break it: it is not silently looking at nothing."""
    edges = {("a", "b"), ("b", "a"), ("b", "c")}
    assert strongly_connected({"a", "b", "c"}, edges) == [["a", "b"]]
    assert strongly_connected({"a", "b"}, {("a", "b")}) == []
    source = (
        "from . import engine\n"
        "from craits_env.engine import _hidden\n"
        "import craits_env.deck as deck\n"
        "class Mine:\n"
        "    def __init__(self):\n"
        "        self._own = 1\n"
        "    def use(self, other, game):\n"
        "        engine._peek()\n"
        "        deck._cut, other._own, game._deal(), self._x, cls._y\n"
        "        game._stock = []\n"
        "        return other._replace(a=1), type(self).__name__\n"
    )
    assert private_uses_in(source, "craits_env.rules", "x.py") == [
        "x.py:2: imports _hidden",
        "x.py:8: reads engine._peek",
        "x.py:9: reads deck._cut",
        "x.py:9: uses ._deal, not its own",
        "x.py:10: uses ._stock, not its own",
    ]
