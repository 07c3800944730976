"""``craits train`` checkpoints: the format, reading it and writing it (atomically).

Here, not in :mod:`craits.training`, so that playing a checkpoint (``ppo:PATH``) needs
nothing of training. A checkpoint is a ``torch.save``'d dict (loadable with ``weights_only=True``:
only tensors, numbers, strings, lists and dicts):

| key | content |
|---|---|
| ``format`` / ``version`` | ``"craits-ppo"`` / :data:`VERSION` |
| ``network`` | the architecture (:meth:`PolicyNet.spec`) |
| ``policy`` | the network's ``state_dict`` |
| ``num_players``, ``rules`` | the table it was trained for (``Rules.to_dict()``) |
| ``config`` | the :class:`~craits.training.config.TrainConfig` as a dict |
| ``run_name``, ``global_step``, ``update`` | where the run stood |
| ``optimizer`` | Adam's ``state_dict`` |
| ``pool`` | the frozen snapshots (:meth:`OpponentPool.state_dict`) |
| ``rng`` | the torch generators' states |
| ``rollout`` | the games in flight, pickled into a ``uint8`` tensor (:func:`bytes_to_tensor`) |

Playing a checkpoint (``"ppo:PATH"``) reads only the network; resuming a run
also unpickles ``rollout`` — resume only from checkpoints you wrote.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any

import torch

from craits_env.fileio import atomic_write_bytes

from .network import PolicyNet, frozen_network

FORMAT = "craits-ppo"
VERSION = 1


STANDARD = "standard"  # a checkpoint's "observation": what its network reads (craits_env.belief)


def read_checkpoint_bytes(path: str | os.PathLike[str]) -> bytes:
    """A checkpoint file's bytes; ``ValueError`` with one line if there is no such file."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"checkpoint {path}: no such file")
    try:
        return p.read_bytes()
    except OSError as e:
        raise ValueError(f"checkpoint {path}: unreadable ({e.strerror})") from None


def load_checkpoint(path: str | os.PathLike[str], content: bytes | None = None) -> dict[str, Any]:
    """A checkpoint's dict (tensors on the CPU); ``ValueError`` with one line if it is unusable.

    ``content``: the file's bytes, already read (:func:`read_checkpoint_bytes`).
    """
    if content is None:
        content = read_checkpoint_bytes(path)
    try:
        data = torch.load(io.BytesIO(content), map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds for a bad file: all mean "unreadable"
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(f"checkpoint {path}: not a readable torch file ({first})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(
            f"checkpoint {path}: not a Craits PPO checkpoint (craits train writes them)"
        )
    if data.get("version") != VERSION:
        raise ValueError(
            f"checkpoint {path}: format version {data.get('version')!r}, this code reads {VERSION}"
        )
    return data


def policy_from_checkpoint(
    data: dict[str, Any], path: str | os.PathLike[str] = "checkpoint"
) -> PolicyNet:
    """The network stored in a loaded checkpoint; ``ValueError`` if it does not fit its spec."""
    try:
        return frozen_network(data["network"], data["policy"])
    except (KeyError, TypeError, RuntimeError, ValueError) as e:
        first = str(e).strip().splitlines()[0]
        raise ValueError(f"checkpoint {path}: incompatible network ({first})") from None


def policy_digest(data: dict[str, Any]) -> str:
    """The hash of what a checkpoint's agent *is*: its network spec, weights, table and rules.

    Optimiser state, step counters and run names do not enter it: the same weights saved
    twice, copied or moved are the same agent; any change of a weight is another agent.
    """
    h = hashlib.sha256()
    head = {k: data.get(k) for k in ("network", "num_players", "rules")}
    if data.get("observation", STANDARD) != STANDARD:  # older checkpoints hash as before
        head["observation"] = data["observation"]
    h.update(json.dumps(head, sort_keys=True, default=str).encode())
    for name in sorted(data["policy"]):
        t = data["policy"][name].detach().cpu().contiguous()
        h.update(f"{name}:{t.dtype}:{tuple(t.shape)}".encode())
        h.update(t.numpy().tobytes())
    return h.hexdigest()


def load_policy(
    path: str | os.PathLike[str], content: bytes | None = None
) -> tuple[PolicyNet, dict[str, Any]]:
    """The trained network of a checkpoint file and its metadata (players, rules, step …,
    and ``digest``: :func:`policy_digest`)."""
    data = load_checkpoint(path, content)
    net = policy_from_checkpoint(data, path)
    meta = {k: data.get(k) for k in ("num_players", "rules", "run_name", "global_step", "update")}
    meta["observation"] = data.get("observation", STANDARD)
    meta["digest"] = policy_digest(data)
    return net, meta


def save_checkpoint(path: str | os.PathLike[str], payload: dict[str, Any]) -> None:
    """``torch.save`` ``payload`` (plus format and version) to memory, then write it atomically."""
    buffer = io.BytesIO()
    torch.save({"format": FORMAT, "version": VERSION, **payload}, buffer)
    atomic_write_bytes(path, buffer.getvalue())


def bytes_to_tensor(data: bytes) -> torch.Tensor:
    """Bytes as a ``uint8`` tensor (a checkpoint holds only tensors, numbers and strings)."""
    return torch.frombuffer(bytearray(data), dtype=torch.uint8)


def tensor_to_bytes(t: torch.Tensor) -> bytes:
    """The bytes of :func:`bytes_to_tensor`'s tensor."""
    return t.numpy().tobytes()
