"""The repository stands on its own: its docs and docstrings cite docs/rules.md and
docs/interface.md, never files that are not in it, and every relative link resolves; the README
is a short front door into the docs site. The docs hooks leave code blocks alone and generate
what the code can tell (every command's usage); the site builds strictly, shows its code, and
opens from the disk (site/index.html)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The shared folder's documents, which a user of the repository does not have.
FOREIGN = (*(f"{name}.md" for name in ("RULES", "INTERFACE", "STYLE")), "../shared", "shared/seeds")
TEXT = (".py", ".md", ".toml", ".txt", ".cfg")


def tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if out.returncode == 0 and out.stdout.strip():
        names = out.stdout.splitlines()
    else:  # not a git checkout (an unpacked archive): every file but the virtual environments
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if ".venv" not in p.parts]
    return [ROOT / n for n in names if n.endswith(TEXT) or n in ("Makefile",)]


@pytest.mark.slow
def test_no_file_cites_a_document_outside_the_repository() -> None:
    offenders = []
    for path in tracked_files():
        if path.name == "test_docs.py" or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for word in FOREIGN:
            for m in re.finditer(rf"(?<![\w/]){re.escape(word)}", text):
                line = text.count("\n", 0, m.start()) + 1
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {word}")
    assert not offenders, offenders


def test_every_relative_link_in_the_docs_resolves() -> None:
    broken = []
    for path in [ROOT / "README.md", *ROOT.glob("docs/*.md"), *ROOT.glob("experiments/**/*.md")]:
        text = path.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (path.parent / target).exists():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
    assert not broken, broken


def test_the_readme_is_a_front_door() -> None:
    """At most 150 lines; the manual is the docs site, and the README links into it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150, len(readme.splitlines())
    pages = set(re.findall(r"\]\(docs/([\w-]+\.md)", readme))
    for page in ("index.md", "install.md", "environments.md", "training.md", "results.md"):
        assert page in pages, page


def test_only_blocks_for_another_venv_are_not_run() -> None:
    """A Python block that pytest-markdown-docs does not run says which venv runs it."""
    unmarked = []
    for path in [ROOT / "README.md", *ROOT.glob("docs/*.md")]:
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"^```python notest\n(.*)$", text, re.M):
            if not re.match(r"# runs in the (RLlib|AgileRL) venv", m.group(1)):
                line = text.count("\n", 0, m.start()) + 1
                unmarked.append(f"{path.relative_to(ROOT)}:{line}")
    assert not unmarked, unmarked


def hook(name: str) -> ModuleType:
    """A module of docs/_hooks/, imported from its file."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "_hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_docstring_hook_leaves_fenced_code_alone() -> None:
    """Roles and ``double`` backticks become inline code in prose, never inside a fence (the
    hook once turned a ```` ```python ```` fence into ```` ``python ````: one paragraph)."""
    markdown_of_docstring = hook("docstrings").markdown_of_docstring
    text = (
        "Intro ``env.step`` and :class:`~craits_env.Game`.\n\n"
        "```python\nenv = f(``a``, ':class:`X`')\n```\n\n"
        "~~~~text\n``b``\n```\n~~~~\n\n"
        'After ``options={"deck": [...],\n"dealer": seat}`` and ```` ```python ````.'
    )
    assert markdown_of_docstring(text) == (
        "Intro `env.step` and `craits_env.Game`.\n\n"
        "```python\nenv = f(``a``, ':class:`X`')\n```\n\n"
        "~~~~text\n``b``\n```\n~~~~\n\n"
        'After `options={"deck": [...],\n"dealer": seat}` and ```` ```python ````.'
    )
    from craits_env import craits_v0

    assert craits_v0.__doc__ is not None
    page = markdown_of_docstring(craits_v0.__doc__)
    assert "\n```python\nfrom craits_env import craits_v0\n" in page
    assert "``" not in page.replace("```", "")


def test_the_cli_page_lists_every_command_at_a_glance() -> None:
    """docs/cli.md's "At a glance" is generated from the parsers: every command and every
    ``craits bench`` target has its usage line there."""
    import argparse

    from craits.cli import build_parser

    page = hook("generate").on_page_markdown((ROOT / "docs" / "cli.md").read_text(), config={})
    glance = page.split("## At a glance", 1)[1].split("\n## ", 1)[0]
    lines = re.findall(r"^craits .*$", glance, re.M)
    expected = ["craits --version"]
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in sub.choices.items():
        targets = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
        expected += (
            [f"craits {name} {t} " for t in targets[0].choices] if targets else [f"craits {name} "]
        )
    assert "craits evaluate " in expected and "craits bench vector " in expected
    assert len(lines) == len(expected), lines
    for line, start in zip(lines, expected, strict=True):
        assert line.startswith(start), (line, start)
    assert "[-h]" not in glance


class Links(HTMLParser):
    """The ``href`` and ``src`` of a page, and the text of its ``<pre>`` blocks."""

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []
        self.pre: list[str] = []
        self._in_pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.targets += [v for k, v in attrs if k in ("href", "src") and v]
        if tag == "pre":
            self._in_pre += 1
            self.pre.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in_pre -= tag == "pre" and self._in_pre > 0

    def handle_data(self, data: str) -> None:
        if self._in_pre:
            self.pre[-1] += data


@pytest.mark.slow  # builds the site (about 5 s)
def test_the_site_builds_shows_its_code_and_opens_from_the_disk(tmp_path: Path) -> None:
    """``mkdocs build --strict``; no page shows a broken fence as text; the Environments page
    opens with its code block; every link between pages names a file (no directory URL, which
    over file:// shows a listing) that exists, and search's index is a script (the offline
    plugin: search works without a server)."""
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(site)]
    out = subprocess.run(build, cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    pages = sorted(site.glob("*.html"))
    assert {p.stem for p in pages} == {p.stem for p in (ROOT / "docs").glob("*.md")} | {"404"}
    broken = []
    for page in pages:  # 404.html is a server's page: its links are absolute
        text = page.read_text(encoding="utf-8")
        assert "``python" not in text and "`python" not in text, page.name
        links = Links()
        links.feed(text)
        for target in links.targets:
            path = target.split("#", 1)[0].split("?", 1)[0]
            if not path or re.match(r"^[a-z]+:", path) or page.name == "404.html":
                continue
            if path.endswith("/") or not (page.parent / path).is_file():
                broken.append(f"{page.name}: {target}")
        if page.name == "environments.html":
            assert links.pre[0].startswith("from craits_env import craits_v0\n"), links.pre[0]
    assert not broken, broken[:20]
    assert (site / "search" / "search_index.js").is_file()


def test_the_environments_page_lists_every_reward() -> None:
    """docs/environments.md's reward table has one row per mode of craits_env.rewards, in order."""
    from craits_env.rewards import REWARD_MODES

    page = (ROOT / "docs" / "environments.md").read_text(encoding="utf-8")
    table = page.split("**Rewards** (`reward=`)", 1)[1].split("\n\n", 2)[1]
    rows = re.findall(r'^\| `"(\w+)"`', table, re.M)
    assert tuple(rows) == REWARD_MODES, rows
