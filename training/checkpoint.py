"""Writing checkpoints: one ``.pt`` file per save, written atomically.

The format (and reading it: :func:`load_checkpoint`, :func:`load_policy`) is
:mod:`craits.agents.checkpoint`'s, so that playing a checkpoint (``ppo:PATH``) needs
nothing of :mod:`craits.training`.
"""

from __future__ import annotations

import io
import os
from typing import Any

import torch

from craits.agents.checkpoint import (
    FORMAT,
    VERSION,
    load_checkpoint,
    load_policy,
    policy_digest,
    policy_from_checkpoint,
    read_checkpoint_bytes,
)
from craits_env.fileio import atomic_write_bytes

__all__ = [
    "FORMAT",
    "VERSION",
    "bytes_to_tensor",
    "load_checkpoint",
    "load_policy",
    "policy_digest",
    "policy_from_checkpoint",
    "read_checkpoint_bytes",
    "save_checkpoint",
    "tensor_to_bytes",
]


def save_checkpoint(path: str | os.PathLike[str], payload: dict[str, Any]) -> None:
    """``torch.save`` ``payload`` (plus format and version) to memory, then write it atomically."""
    buffer = io.BytesIO()
    torch.save({"format": FORMAT, "version": VERSION, **payload}, buffer)
    atomic_write_bytes(path, buffer.getvalue())


def bytes_to_tensor(data: bytes) -> torch.Tensor:
    return torch.frombuffer(bytearray(data), dtype=torch.uint8)


def tensor_to_bytes(t: torch.Tensor) -> bytes:
    return t.numpy().tobytes()
