"""Agents by content: the files an agent spec reads, carried to the machines that play it.

On a Ray cluster (``craits tournament --ray``, ``craits evaluate --ray``, ``craits train
--ray``) a spec that names a file of the driver's machine cannot be read by its path on the
other nodes. :func:`pack` reads, on the driver, what each spec of a list reads:

* ``ppo:PATH`` — the checkpoint file (a run directory's ``final.pt``);
* ``path/to/file.py:ATTR`` — that Python file (it must import nothing else of its folder);
* ``MODULE:ATTR`` whose module is found in the working directory (a ``MODULE.py`` or a
  package folder there) — that file or folder; modules installed elsewhere are not packed (a
  node needs them installed, as it needs craits's dependencies).

The driver puts the packed bytes in Ray's object store; :func:`unpack`, on a node, writes
each file once under a folder named by the hash of its content (:func:`cache_root`) and
makes the spec read it there (:func:`craits.agents.specs.substitute`), or puts the module's
folder on ``sys.path``. The spec text is unchanged everywhere (tables, stored games), and so
is the agent's identity: a checkpoint's is the hash of its weights, a file's agent is named by
the file's name and the hash of its source.
"""

from __future__ import annotations

import hashlib
import io
import os
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from .specs import BUILTIN, substitute

CACHE = "craits-shipped"  # the folder, under the temporary directory, of unpacked files


def cache_root() -> Path:
    """Where :func:`unpack` writes: ``<temporary directory>/craits-shipped``."""
    return Path(tempfile.gettempdir()) / CACHE


def pack(specs: list[str] | tuple[str, ...], cwd: Path | None = None) -> list[dict[str, Any]]:
    """What the specs read from files, by content (module docstring): one entry per spec
    that reads a file of this machine."""
    from .checkpoint_agent import SPEC as PPO
    from .checkpoint_agent import checkpoint_file

    cwd = Path.cwd() if cwd is None else cwd
    entries: list[dict[str, Any]] = []
    for spec in dict.fromkeys(specs):  # each once, in order
        if not isinstance(spec, str):
            continue
        name, sep, arg = spec.partition(":")
        if name == PPO and arg:
            path = checkpoint_file(arg)
            entries.append(_entry(spec, "ppo", path.name, path.read_bytes()))
        elif sep and name not in BUILTIN:
            target, _, attr = spec.rpartition(":")
            if target.endswith(".py") and Path(target).is_file():
                data = Path(target).read_bytes()
                entries.append(_entry(spec, "file", Path(target).name, data, attr))
            elif target and all(p.isidentifier() for p in target.split(".")):
                top = target.split(".")[0]
                if (cwd / top / "__init__.py").is_file() or (cwd / top).is_dir():
                    entries.append(_entry(spec, "module", top, _zip(cwd / top, top)))
                elif (cwd / f"{top}.py").is_file():
                    data = (cwd / f"{top}.py").read_bytes()
                    entries.append(_entry(spec, "module", f"{top}.py", data))
    return entries


def _entry(spec: str, kind: str, name: str, data: bytes, attr: str = "") -> dict[str, Any]:
    digest = hashlib.sha256(data).hexdigest()[:20]
    return {"spec": spec, "kind": kind, "name": name, "attr": attr, "data": data, "hash": digest}


def _zip(folder: Path, top: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                z.write(path, Path(top) / path.relative_to(folder))
    return buffer.getvalue()


def unpack(entries: list[dict[str, Any]], root: Path | None = None) -> dict[str, str]:
    """Write each packed file once (by its content's hash) under ``root`` (default
    :func:`cache_root`) and make its spec read it there; the specs substituted."""
    root = cache_root() if root is None else root
    substitutes: dict[str, str] = {}
    for e in entries:
        folder = root / e["hash"]
        target = folder / e["name"]
        if not target.exists():
            folder.mkdir(parents=True, exist_ok=True)
            scratch = Path(tempfile.mkdtemp(prefix=".unpack-", dir=folder))
            if e["kind"] == "module" and not e["name"].endswith(".py"):
                with zipfile.ZipFile(io.BytesIO(e["data"])) as z:
                    z.extractall(scratch)
            else:
                (scratch / e["name"]).write_bytes(e["data"])
            try:
                os.replace(scratch / e["name"], target)  # whole, or not at all
            except OSError:
                if not target.exists():  # another worker of this node was first otherwise
                    raise
            _remove(scratch)
        if e["kind"] == "ppo":
            substitutes[e["spec"]] = f"ppo:{target}"
        elif e["kind"] == "file":
            substitutes[e["spec"]] = f"{target}:{e['attr']}"
        elif str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    substitute(substitutes)
    return substitutes


def _remove(folder: Path) -> None:
    for path in sorted(folder.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    folder.rmdir()
