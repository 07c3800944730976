"""The repository stands on its own: its docs and docstrings cite docs/rules.md and
docs/interface.md, never files that are not in it, and every relative link resolves; the README
is a short front door into the docs site."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

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
