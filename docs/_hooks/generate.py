"""MkDocs hook: pages that are generated from the code, so they never drift from it.

A page asks for a generated block with an HTML comment on a line of its own:

- ``<!-- generated: docstring MODULE -->`` — that module's docstring, as Markdown (the
  environment's page is its module docstring, as PettingZoo's pages are);
- ``<!-- generated: train-config -->`` — the reference of every ``TrainConfig`` field (type,
  default, its one-line docstring), read from the dataclass's source;
- ``<!-- generated: observation-slices -->`` — the observation's slice table, from
  ``craits_env.observation.FIELDS`` (the layout's one declaration);
- ``<!-- generated: cli -->`` — ``craits --help`` and every subcommand's ``--help``, from the
  argparse parsers themselves; ``<!-- generated: cli-usage -->`` — every command's usage line,
  one a line (the page's "at a glance");
- ``<!-- generated: demo -->`` — what ``craits demo`` prints (seeded: the same on every machine);
- ``<!-- generated: leaderboard SUITE -->`` — the committed report cards of a benchmark suite
  (``experiments/results/benchmark/SUITE``) as one table (:mod:`craits.benchmark.leaderboard`);
  ``<!-- generated: deal-sets SUITE -->`` — the suite's deal sets, with their seeds and hashes;
  ``<!-- generated: interval-widths SUITE -->`` — the half-widths of the 95% intervals each
  deal set gave on the committed cards;
- ``<!-- generated: file PATH -->`` — a file of the repository (``CHANGELOG.md``), its links to
  ``docs/X`` made links to the page ``X``.

Links from a page to ``../CHANGELOG.md`` (right on GitHub) become links to the changelog page.
Any other link from a page to ``../PATH``, a file of the repository outside ``docs/`` (the
committed results under ``experiments/results/``, an example script, a configuration), is right
on GitHub as it is written and checked to resolve by ``tests/repository/test_docs.py``. On the
site an image is copied into the site (``repository/PATH``); any other file becomes a link to
it in the repository once ``mkdocs.yml`` names one (``repo_url``: ``blob/main/PATH``), and while the
project has no public address it is the link's text followed by the file's path in code (no
invented address). So strict mode needs no exception for files that are not pages.

A code block marked ``notest`` (```` ```python notest ````: pytest-markdown-docs does not run it;
kept for the blocks that need a library of another venv, RLlib's and AgileRL's) is shown as a
plain Python block: the mark is dropped from the fence for the site.

Sphinx-style roles in docstrings (``:class:`~a.b.C```, ``:mod:`x```) become inline code.

Before the plugins are configured, ``on_startup`` builds the package tree as installed under
``build/docs-tree`` (``tests/package_tree.py``: ``craits.agents`` is the folder ``agents/``),
where ``mkdocs.yml`` tells mkdocstrings to look.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import importlib
import importlib.util
import inspect
import io
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docstrings import markdown_of_docstring

MARKER = re.compile(r"^<!-- generated: ([\w-]+)(?: ([\w./-]+))? -->$", re.M)
ROOT = Path(__file__).resolve().parents[2]


def module_docstring(name: str) -> str:
    module = importlib.import_module(name)
    if not module.__doc__:
        raise ValueError(f"generated: docstring {name}: the module has no docstring")
    return markdown_of_docstring(module.__doc__)


def train_config_reference() -> str:
    from craits.training import config

    source = inspect.getsource(config.TrainConfig)
    tree = ast.parse(source)
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    docs: dict[str, str] = {}
    body = cls.body
    for node, after in zip(body, [*body[1:], None], strict=True):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            is_doc = isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
            docs[node.target.id] = " ".join(after.value.value.split()) if is_doc else ""
    rows = ["| key | type | default | what it is |", "|---|---|---|---|"]
    defaults = config.TrainConfig()
    for f in dataclasses.fields(config.TrainConfig):
        if not docs.get(f.name):
            raise ValueError(f"TrainConfig.{f.name} has no docstring")
        kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        default = getattr(defaults, f.name)
        shown = config.to_toml(defaults).split(f"\n{f.name} = ", 1)
        value = shown[1].split("\n", 1)[0] if len(shown) == 2 else repr(default)
        rows.append(f"| `{f.name}` | `{kind}` | `{value}` | {_cell(docs[f.name])} |")
    return "\n".join(rows)


def _cell(text: str) -> str:
    return markdown_of_docstring(text).replace("|", "\\|")


def cli_reference() -> str:
    from craits.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.choices and a.dest == "command")
    parts = ["## `craits`", "", "```text", _help(parser), "```"]
    for name, command in sub.choices.items():
        parts += ["", f"## `craits {name}`", "", "```text", _help(command), "```"]
        for target, parser_of in _subcommands(command).items():  # craits bench engine, ...
            parts += ["", f"### `craits {name} {target}`", "", "```text", _help(parser_of), "```"]
    return "\n".join(parts)


def cli_usage() -> str:
    """Every command's usage line (``[-h]`` left out), one a line, in a text block."""
    from craits.cli import build_parser

    def usage(parser: Any) -> str:
        return " ".join(parser.format_usage().split()).removeprefix("usage: ").replace(" [-h]", "")

    lines = ["craits --version"]
    sub = next(a for a in build_parser()._actions if a.choices and a.dest == "command")
    for command in sub.choices.values():
        lines += [usage(p) for p in _subcommands(command).values()] or [usage(command)]
    return "\n".join(["```text", *lines, "```"])


def demo_output() -> str:
    """What ``craits demo`` prints, in a text block."""
    from craits.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["demo"])
    if status != 0:
        raise ValueError(f"generated: demo: craits demo exited with status {status}")
    return "\n".join(["```text", out.getvalue().rstrip(), "```"])


def _subcommands(parser: Any) -> dict[str, Any]:
    action = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    return dict(action.choices) if action is not None else {}


def _help(parser: Any) -> str:
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            parser.print_help()
        return out.getvalue().rstrip()
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def deal_sets_table(suite_name: str) -> str:
    from craits.benchmark.suite import suite

    chosen = suite(suite_name)
    lines = [
        "| table | deal set | players | deals | seed | sha256 |",
        "|---|---|---:|---:|---:|---|",
    ]
    for table in chosen.tables:
        for name in (table.full, table.search):
            d = chosen.deal_set(table, "", "", "search" if name == table.search else "full")
            lines.append(
                f"| {table.title} | `{d.name}` | {d.players} | {d.deals} | {d.seed} | "
                f"`{d.sha256[:16]}…` |"
            )
    return "\n".join(lines)


def generate(kind: str, arg: str | None) -> str:
    if kind == "docstring" and arg:
        return module_docstring(arg)
    if kind == "train-config":
        return train_config_reference()
    if kind == "observation-slices":
        from craits_env.observation import slice_table

        return slice_table()
    if kind == "cli":
        return cli_reference()
    if kind == "cli-usage":
        return cli_usage()
    if kind == "demo":
        return demo_output()
    if kind == "leaderboard" and arg:
        from craits.benchmark.leaderboard import read_cards, rows, to_markdown

        found = read_cards(ROOT / "experiments" / "results" / "benchmark" / arg, arg)
        return to_markdown(rows(found)) if found else f"No card of suite {arg} is committed yet."
    if kind == "interval-widths" and arg:
        from craits.benchmark.leaderboard import read_cards, widths, widths_markdown

        found = read_cards(ROOT / "experiments" / "results" / "benchmark" / arg, arg)
        return widths_markdown(widths(found)) if found else "No card is committed yet."
    if kind == "deal-sets" and arg:
        return deal_sets_table(arg)
    if kind == "file" and arg:
        return re.sub(r"\]\(docs/([^)]+)\)", r"](\1)", (ROOT / arg).read_text())
    raise ValueError(f"unknown generated block {kind!r} {arg or ''}")


REPOSITORY_LINK = re.compile(r"(!?)\[([^\]]*)\]\(\.\./([^)\s]+)\)")


def repository_links(markdown: str, repo_url: str | None) -> str:
    """``](../PATH)`` (a file of the repository outside docs/) as a link to it on ``repo_url``,
    or without one as its text and path."""

    def link(m: re.Match[str]) -> str:
        image, text, target = m.group(1), m.group(2), m.group(3)
        path = target.split("#", 1)[0]
        if not (ROOT / path).exists():
            raise ValueError(f"a link to ../{target}: no such file in the repository")
        if image:  # copied into the site by on_files
            return f"![{text}]({COPIED}/{path})"
        if not repo_url:
            shown = text.strip("`")
            return f"`{path}`" if shown in (path, path.rsplit("/", 1)[-1]) else f"{text} (`{path}`)"
        kind = "raw" if image else "blob"
        return f"{image}[{text}]({repo_url.rstrip('/')}/{kind}/main/{target})"

    return REPOSITORY_LINK.sub(link, markdown)


COPIED = "repository"  # where images of the repository outside docs/ go on the site


def on_files(files: Any, config: Any, **_: Any) -> Any:
    """Every image that a page shows from outside docs/ becomes a file of the site."""
    from mkdocs.structure.files import File

    docs = Path(config["docs_dir"])
    for page in sorted(docs.rglob("*.md")):
        for m in REPOSITORY_LINK.finditer(page.read_text()):
            path = m.group(3).split("#", 1)[0]
            if m.group(1) and (ROOT / path).is_file():
                uri = f"{COPIED}/{path}"
                if files.get_file_from_path(uri) is None:
                    files.append(File.generated(config, uri, abs_src_path=str(ROOT / path)))
    return files


DOCS_TREE = ROOT / "build" / "docs-tree"  # mkdocs.yml: mkdocstrings' paths


def on_startup(**_: Any) -> None:
    """The package tree as installed, for mkdocstrings (griffe reads folders, and the folder
    ``agents/`` is the package ``craits.agents``); before the plugins' ``on_config``, where
    mkdocstrings resolves its paths."""
    script = ROOT / "tests" / "package_tree.py"
    spec = importlib.util.spec_from_file_location("package_tree", script)
    assert spec is not None and spec.loader is not None
    package_tree = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(package_tree)
    # Built aside and put in place only when it changed, so that builds running side by side
    # (make docs beside the test that builds the site) do not pull the tree from under another.
    fresh = package_tree.build(DOCS_TREE.with_name(f"{DOCS_TREE.name}.{os.getpid()}"))
    if _listing(fresh) == _listing(DOCS_TREE):
        shutil.rmtree(fresh)
        return
    if DOCS_TREE.exists():
        old = DOCS_TREE.rename(DOCS_TREE.with_name(f"{DOCS_TREE.name}.old.{os.getpid()}"))
        shutil.rmtree(old)
    fresh.rename(DOCS_TREE)


def _listing(tree: Path) -> list[tuple[str, str]]:
    """Every entry of a package tree (links not followed) and where it links to."""
    found = []
    for folder, dirs, files in os.walk(tree):
        for name in dirs + files:
            path = Path(folder) / name
            target = os.readlink(path) if path.is_symlink() else ""
            found.append((str(path.relative_to(tree)), target))
    return sorted(found)


NOTEST_FENCE = re.compile(r"^(\s*```+\s*python)\s+notest\s*$", re.M)


def on_page_markdown(markdown: str, config: Any = None, **_: Any) -> str:
    markdown = markdown.replace("](../CHANGELOG.md)", "](changelog.md)")
    markdown = NOTEST_FENCE.sub(r"\1", markdown)
    markdown = MARKER.sub(lambda m: generate(m.group(1), m.group(2)), markdown)
    return repository_links(markdown, config.get("repo_url"))
