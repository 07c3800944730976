"""Names kept for one release after they moved (docs/versioning.md, "Deprecations").

- :func:`alias_package`: the old top-level packages ``agents`` and ``training``. Since 0.3.0
  the agents are :mod:`craits.agents` and training is :mod:`craits.training`, so that a
  user's own ``agents.py``, ``agents/``, ``training.py`` or ``training/`` never shadows them.
  The wheel still installs ``agents`` and ``training`` (from ``deprecated/``): importing
  either warns once, in one line naming the replacement, and gives the very same modules
  (``agents.pimc is craits.agents.pimc``).
- :func:`moved_module`: a module that moved keeps its old name, which warns once and is the
  new module itself.

Both go in :data:`REMOVED_IN`.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from collections.abc import Sequence
from typing import Any

REMOVED_IN = "0.4"


class _AliasLoader(importlib.abc.Loader):
    """Loads ``old.X`` as the module ``new.X`` itself (one module object under two names)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.real_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = importlib.import_module(self.target)
        self.real_spec = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # The import system set the alias's spec on the real module: put its own back.
        module.__spec__ = self.real_spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(self.old + "."):
            return None
        real = self.new + fullname[len(self.old) :]
        if importlib.util.find_spec(real) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(real))


def _warn(old: str, new: str, what: str) -> None:
    warnings.warn(
        f"the {what} {old!r} is deprecated since craits 0.3.0 and goes in {REMOVED_IN}: "
        f"import {new} instead",
        FutureWarning,
        stacklevel=4,
    )


def moved_module(old: str, new: str) -> None:
    """Call from the module ``old`` (``moved_module(__name__, "pkg.new")``): warn, then make
    ``old`` the module ``new`` itself (``from old import x`` gives ``new.x``)."""
    _warn(old, new, "module")
    sys.modules[old] = importlib.import_module(new)


def alias_package(old: str, new: str, namespace: dict[str, Any]) -> None:
    """Make the package ``old`` (whose globals are ``namespace``) a deprecated alias of ``new``."""
    _warn(old, new, "package")
    module = importlib.import_module(new)
    if not any(isinstance(f, _AliasFinder) and f.old == old for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder(old, new))
    namespace.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
    namespace["__all__"] = list(getattr(module, "__all__", ()))
    namespace["__getattr__"] = lambda name: getattr(module, name)
    namespace["__path__"] = []  # a package: its submodules come from the finder above
