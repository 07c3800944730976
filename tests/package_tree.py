"""The installed package tree, built as links under ``build/package-tree/`` (ignored by git).

The repository's folders are the packages, but two of them install under another name
(setup.py's ``PACKAGE_DIR``: ``agents/`` is ``craits.agents``). Python finds them through the
editable install; the tools that read files instead of importing (import-linter and grimp,
mypy) need the tree as installed. This builds it from links to the real files, so that a path a
tool prints opens the file itself::

    python tests/package_tree.py        # prints the folder to run the tool in
"""

from __future__ import annotations

import ast
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "build" / "package-tree"
TOP = ("craits_env", "craits", "experiments")  # the root packages the tools read


def package_dir() -> dict[str, str]:
    """setup.py's ``PACKAGE_DIR`` (installed name -> folder), read without running setup."""
    module = ast.parse((ROOT / "setup.py").read_text())
    for node in module.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "PACKAGE_DIR":
            return dict(ast.literal_eval(node.value))
    raise LookupError("setup.py has no PACKAGE_DIR")


def build(tree: Path = TREE) -> Path:
    """The tree at ``tree``, made anew: folders that hold a mapped package are real, every other
    entry is a link to the repository's own file or folder."""
    if tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True)
    mapped = {tuple(name.split(".")): ROOT / folder for name, folder in package_dir().items()}
    parents = {parts[:i] for parts in mapped for i in range(1, len(parts))}

    def place(parts: tuple[str, ...], source: Path) -> None:
        target = tree.joinpath(*parts)
        if parts not in parents:
            target.symlink_to(source, target_is_directory=source.is_dir())
            return
        target.mkdir()
        for child in sorted(source.iterdir()):
            if child.name != "__pycache__":
                place((*parts, child.name), child)
        for name, folder in mapped.items():
            if name[:-1] == parts:
                place(name, folder)

    for top in TOP:
        place((top,), ROOT / top)
    return tree


if __name__ == "__main__":
    sys.stdout.write(f"{build()}\n")
