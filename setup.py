"""The folders are the packages: the one place that says how the repository's folders install.

``craits_env/`` and ``craits/`` install under their own names; ``agents/`` and ``training/``
(top-level folders, so that a reader finds the stack at a glance) install as ``craits.agents`` and
``craits.training`` (names a user's own ``agents.py`` or ``training/`` cannot shadow). Every
package is discovered, data folders (``craits.agents.weights``, ``craits.web.static``, …) included
as namespace packages, so that nothing is a hand-kept list. Everything else is in pyproject.toml.
"""

from setuptools import find_namespace_packages, setup

# Installed name -> the folder that holds it (no link: tests/repository/test_layout.py).
PACKAGE_DIR = {"craits.agents": "agents", "craits.training": "training"}
EXCLUDE = ["*.__pycache__", "*.__pycache__.*"]


def discovered() -> list[str]:
    """Every package and data folder under craits_env/, craits/ and the mapped folders."""
    own = ["craits_env", "craits_env.*", "craits", "craits.*"]
    names = find_namespace_packages(include=own, exclude=EXCLUDE)
    for name, folder in PACKAGE_DIR.items():
        inside = find_namespace_packages(folder, exclude=EXCLUDE)
        names += [name] + [f"{name}.{sub}" for sub in inside]
    return sorted(names)


setup(packages=discovered(), package_dir=PACKAGE_DIR)
