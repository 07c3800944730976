"""``tests/own_venv/LIBRARY`` runs only in that library's own venv, by ``make test-LIBRARY``
(``make test`` calls ``test-rllib`` and ``test-agilerl``): ray[rllib] and agilerl pin
libraries the main ``.venv`` cannot hold (Makefile). The main pytest (``python -m pytest``,
its testpaths) does not collect this directory; naming it, or a directory or file in it, on
the command line (``.venv-rllib/bin/python -m pytest tests/own_venv/rllib``) does. Not a
skip: these tests run nowhere else, and an empty run (pytest's exit 5) fails the target."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def named_on_command_line(config: pytest.Config, directory: Path) -> bool:
    """Whether a command-line argument of this pytest run is ``directory`` or inside it."""
    base = config.invocation_params.dir
    for arg in config.invocation_params.args:
        if arg.startswith("-"):
            continue
        path = (base / arg.split("::", 1)[0]).resolve()
        if path == directory or directory in path.parents:
            return True
    return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if HERE in collection_path.resolve().parents and not named_on_command_line(config, HERE):
        return True
    return None
