"""The project's package-level import graph, function-level imports included.

    python -m experiments.import_graph            # one line per arrow: A -> B (imports)
    python -m experiments.import_graph --detail   # and every module-level import behind it

(from the repository root: ``experiments`` is found on the working directory).

The layers, bottom to top: craits_env < agents < training < craits < experiments. An
arrow that points up (a lower layer importing a higher one) is marked ``UP``; the
import-linter contract in pyproject.toml (``lint-imports``, run by ``make test``) fails on
any. Built with grimp, the library import-linter uses.
"""

from __future__ import annotations

import argparse
import sys

import grimp

LAYERS = ["craits_env", "agents", "training", "craits", "experiments"]  # bottom first


def arrows(detail: bool = False) -> list[str]:
    graph = grimp.build_graph(*LAYERS, include_external_packages=False)
    lines = []
    for a in LAYERS:
        for b in LAYERS:
            if a == b:
                continue
            imports = graph.find_matching_direct_imports(import_expression=f"{a}.** -> {b}.**")
            if not imports:
                continue
            up = LAYERS.index(b) > LAYERS.index(a)
            lines.append(f"{a} -> {b}: {len(imports)} import(s){'  UP' if up else ''}")
            if detail:
                lines += sorted(f"    {i['importer']} -> {i['imported']}" for i in imports)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--detail", action="store_true", help="list the imports of each arrow")
    args = parser.parse_args(argv)
    lines = arrows(args.detail)
    print("\n".join(lines))
    ups = sum(line.endswith("UP") for line in lines)
    print(f"{sum(not line.startswith(' ') for line in lines)} arrows, {ups} up")
    return 1 if ups else 0


if __name__ == "__main__":
    sys.exit(main())
