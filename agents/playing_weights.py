"""A policy's playing weights in a torch-free file (numpy ``.npz``), and the agent that plays it.

A training checkpoint (:mod:`craits.agents.checkpoint`) holds much besides the policy: the
value and auxiliary heads, Adam's state, the opponent pool, the games in flight, and it
needs torch to read. A playing-weights file holds only what choosing a move needs: the
float32 weights of the policy's trunk and head as trained, and a JSON ``meta`` entry:

| ``meta`` key | content |
|---|---|
| ``format`` / ``version`` | ``"craits-playing-weights"`` / :data:`VERSION` |
| ``activation`` | ``"tanh"`` or ``"relu"``, after every hidden layer |
| ``obs_size`` | the length of the network's input (the observation, then belief features) |
| ``observation`` | ``"standard"`` or ``"belief"`` (:mod:`craits_env.belief`) |
| ``num_players``, ``rules`` | the table it was trained for (``Rules.to_dict()``) |
| ``digest`` | the checkpoint's :func:`~craits.agents.checkpoint.policy_digest` |
| ``weights_sha256`` | the hash of the arrays below (:func:`weights_hash`), checked on load |
| ``source`` | the run it came from: ``run_name``, ``global_step``, ``update`` |

and the arrays ``hidden.0.weight``, ``hidden.0.bias``, … (one pair a hidden layer, in order)
then ``policy.weight`` ``(59, width)`` and ``policy.bias``. :class:`PlayingWeightsAgent`
plays such a file exactly as :class:`~craits.agents.checkpoint_agent.PPOAgent` plays the
checkpoint it was exported from: the same argmax of the same float32 arithmetic, and the
same identity, ``ppo@`` and the first 16 hex digits of ``digest`` — the weights cannot
change under it, since a file whose arrays do not hash to ``weights_sha256`` is refused.

:func:`playing_weights_bytes` writes the same bytes for the same weights (fixed zip entry
order and times, no compression); ``experiments/export_champion.py`` exports the champion.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from craits_env.actions import NUM_ACTIONS

from .checkpoint_agent import PPOAgent
from .mlp_numpy import ACTIVATIONS, Layer, mlp_policy

FORMAT = "craits-playing-weights"
VERSION = 1
OBSERVATIONS = ("standard", "belief")
META = "meta"
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # every entry's time stamp: the same bytes for the same weights


@dataclass(frozen=True)
class PlayingWeights:
    """A policy read from a playing-weights file: its layers and what it was trained for."""

    hidden: tuple[Layer, ...]
    policy: Layer
    meta: dict[str, Any]

    @property
    def obs_size(self) -> int:
        """The length of the network's input."""
        return int(self.meta["obs_size"])

    def logits(self) -> Callable[[np.ndarray], np.ndarray]:
        """The policy as a function ``input (obs_size,) -> logits (59,)`` (:func:`mlp_policy`)."""
        return mlp_policy(self.hidden, self.policy, self.meta["activation"])


def array_names(num_hidden: int) -> list[str]:
    """The arrays of a file with ``num_hidden`` hidden layers, in the order they are stored."""
    names = [f"hidden.{i}.{part}" for i in range(num_hidden) for part in ("weight", "bias")]
    return [*names, "policy.weight", "policy.bias"]


def weights_hash(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 over each array's name, dtype, shape and bytes, in :func:`array_names` order."""
    h = hashlib.sha256()
    for name in array_names(_num_hidden(arrays)):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}:{a.dtype.str}:{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _num_hidden(arrays: dict[str, np.ndarray]) -> int:
    return sum(1 for name in arrays if name.startswith("hidden.") and name.endswith(".weight"))


def playing_weights_bytes(arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> bytes:
    """The ``.npz`` file of ``arrays`` (named as :func:`array_names`, float32) and ``meta``
    (``weights_sha256`` is added here). Deterministic: the same input gives the same bytes."""
    names = array_names(_num_hidden(arrays))
    if sorted(names) != sorted(arrays):
        raise ValueError(f"playing weights: got arrays {sorted(arrays)}, expected {names}")
    meta = {**meta, "format": FORMAT, "version": VERSION, "weights_sha256": weights_hash(arrays)}
    entries = [(name, np.ascontiguousarray(arrays[name], np.float32)) for name in names]
    entries.append((META, np.array(json.dumps(meta, sort_keys=True))))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for name, array in entries:
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, array, allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=ZIP_TIME)
            info.external_attr = 0o644 << 16
            z.writestr(info, buffer.getvalue())
    return out.getvalue()


def read_playing_weights(path: str | Path, content: bytes | None = None) -> PlayingWeights:
    """The policy in a playing-weights file (``content``: its bytes, if already read);
    ``ValueError`` (one line) naming what is wrong with a missing, unreadable, altered or
    inconsistent file."""
    if content is None:
        content = _read_bytes(path)
    try:
        with np.load(io.BytesIO(content), allow_pickle=False) as z:
            arrays = {name: z[name] for name in z.files}
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise ValueError(f"playing weights {path}: not a readable .npz file ({e})") from None
    try:
        meta = json.loads(str(arrays.pop(META)))
    except (KeyError, ValueError):
        raise ValueError(f"playing weights {path}: no readable {META!r} entry") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"playing weights {path}: not a {FORMAT} file")
    if meta.get("version") != VERSION:
        raise ValueError(
            f"playing weights {path}: format version {meta.get('version')!r}, this code reads "
            f"{VERSION}"
        )
    _check_meta(path, meta)
    names = array_names(_num_hidden(arrays))
    if sorted(arrays) != sorted(names):
        raise ValueError(f"playing weights {path}: arrays {sorted(arrays)}, expected {names}")
    if weights_hash(arrays) != meta.get("weights_sha256"):
        raise ValueError(f"playing weights {path}: the weights do not match weights_sha256")
    layers = [(arrays[w], arrays[b]) for w, b in zip(names[::2], names[1::2], strict=True)]
    width = int(meta["obs_size"])
    for (w, b), name in zip(layers, names[::2], strict=True):
        if w.dtype != np.float32 or b.dtype != np.float32 or w.ndim != 2 or w.shape[1] != width:
            raise ValueError(
                f"playing weights {path}: {name} is {w.dtype} {w.shape}, expected float32 "
                f"(n, {width})"
            )
        if b.shape != (w.shape[0],):
            raise ValueError(f"playing weights {path}: the bias of {name} has shape {b.shape}")
        width = w.shape[0]
    if width != NUM_ACTIONS:
        raise ValueError(f"playing weights {path}: {width} logits, expected {NUM_ACTIONS}")
    return PlayingWeights(tuple(layers[:-1]), layers[-1], meta)


def _check_meta(path: str | Path, meta: dict[str, Any]) -> None:
    """``ValueError`` unless ``meta`` names what playing needs, with allowed values."""
    if meta.get("activation") not in ACTIVATIONS:
        raise ValueError(
            f"playing weights {path}: activation {meta.get('activation')!r}, allowed "
            f"{list(ACTIVATIONS)}"
        )
    if meta.get("observation") not in OBSERVATIONS:
        raise ValueError(
            f"playing weights {path}: observation {meta.get('observation')!r}, allowed "
            f"{list(OBSERVATIONS)}"
        )
    for key in ("obs_size", "num_players"):
        if not isinstance(meta.get(key), int) or meta[key] < 1:
            raise ValueError(f"playing weights {path}: {key} {meta.get(key)!r}, expected >= 1")
    digest = meta.get("digest")
    if not isinstance(digest, str) or len(digest) < 16 or not isinstance(meta.get("rules"), dict):
        raise ValueError(f"playing weights {path}: meta needs a digest and the rules")


def _read_bytes(path: str | Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise ValueError(f"playing weights {path}: no such file") from None
    except OSError as e:
        raise ValueError(f"playing weights {path}: unreadable ({e.strerror})") from None


_CACHE: dict[str, PlayingWeights] = {}
_CACHE_SIZE = 8


def _load(path: str) -> PlayingWeights:
    """:func:`read_playing_weights`, once per content (keyed by the hash of the file's bytes)."""
    content = _read_bytes(path)
    key = hashlib.sha256(content).hexdigest()
    if key not in _CACHE:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = read_playing_weights(path, content)
    return _CACHE[key]


class PlayingWeightsAgent(PPOAgent):
    """:class:`~craits.agents.checkpoint_agent.PPOAgent` playing a playing-weights file
    instead of a checkpoint: the same moves, the same identity and table checks, no torch."""

    def __init__(self, path: str, seed: int | None = None) -> None:
        weights = _load(path)
        self.path = path
        self.seed = seed
        self.meta = {
            "num_players": weights.meta["num_players"],
            "rules": weights.meta["rules"],
            "observation": weights.meta["observation"],
            "digest": weights.meta["digest"],
            **weights.meta["source"],
        }
        self._logits = weights.logits()
        self._obs_size = weights.obs_size
        self._belief = weights.meta["observation"] == "belief"
        self.identity = f"ppo@{weights.meta['digest'][:16]}"
