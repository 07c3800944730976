"""Export the champion's playing weights: the committed training checkpoint
``experiments/results/champion/final.pt`` (torch) to ``agents/weights/champion.npz``.

The ``.npz`` (:mod:`craits.agents.playing_weights`) holds the policy's trunk and head as
trained (float32), the observation kind, the table it was trained for and the checkpoint's
policy digest, so the specs ``champion`` and ``champion-search`` play it without torch, with
the same moves and the same identity as the checkpoint (``tests/agents/test_champion.py``). The
value and hands heads, the optimiser, the pool and the games in flight stay in the
checkpoint. The bytes are deterministic: exporting again writes the same file.

The training checkpoint is not in the repository (experiments/results/README.md says how to
have it back). ``--to-checkpoint PATH`` goes the other way: a checkpoint whose policy is the
shipped weights (the value head zero, no hands head), for ``ppo:PATH``, ``init_policy`` or
distillation — it plays exactly the shipped moves, under an identity of its own (the digest
covers every head).

    python experiments/export_champion.py [--checkpoint PATH] [--out PATH]
    python experiments/export_champion.py --to-checkpoint runs/champion-policy.pt
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from craits.agents.checkpoint import load_checkpoint, policy_digest
from craits.agents.playing_weights import playing_weights_bytes
from craits_env.fileio import atomic_write_bytes

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINT = ROOT / "experiments" / "results" / "champion" / "final.pt"
"""The champion's training checkpoint (torch): what it was trained to, and how to resume."""
WEIGHTS = ROOT / "agents" / "weights" / "champion.npz"
SOURCE_KEYS = ("run_name", "global_step", "update")


def export_bytes(checkpoint: str | Path = CHECKPOINT) -> bytes:
    """The playing-weights file of a ``craits train`` checkpoint."""
    data = load_checkpoint(checkpoint)
    spec = data["network"]
    state = data["policy"]
    hidden = [
        name.removesuffix(".weight")
        for name in state
        if name.startswith("trunk.") and name.endswith(".weight")
    ]
    if len(hidden) != len(spec["hidden_sizes"]):
        raise ValueError(
            f"checkpoint {checkpoint}: {len(hidden)} trunk layers, its spec has "
            f"{len(spec['hidden_sizes'])}"
        )
    play = spec["obs_size"] - spec.get("oracle_inputs", 0)  # the inputs a player has
    arrays: dict[str, Any] = {}
    for i, name in enumerate(hidden):
        weight = _array(state[f"{name}.weight"])
        arrays[f"hidden.{i}.weight"] = weight[:, :play] if i == 0 else weight
        arrays[f"hidden.{i}.bias"] = _array(state[f"{name}.bias"])
    head = _array(state["policy.weight"])
    arrays["policy.weight"] = head if hidden else head[:, :play]
    arrays["policy.bias"] = _array(state["policy.bias"])
    meta = {
        "activation": spec["activation"],
        "obs_size": play,
        "observation": data.get("observation", "standard"),
        "num_players": data["num_players"],
        "rules": data["rules"],
        "digest": policy_digest(data),
        "source": {k: data.get(k) for k in SOURCE_KEYS},
    }
    return playing_weights_bytes(arrays, meta)


def checkpoint_from_weights(weights: str | Path = WEIGHTS) -> dict[str, Any]:
    """A checkpoint's dict (for :func:`~craits.agents.checkpoint.save_checkpoint`) whose
    policy is the playing-weights file ``weights``: its trunk and policy head, a zero value head."""
    import torch

    from craits.agents.network import PolicyNet
    from craits.agents.playing_weights import read_playing_weights

    played = read_playing_weights(weights)
    meta = played.meta
    sizes = [int(w.shape[0]) for w, _ in played.hidden]
    net = PolicyNet(played.obs_size, sizes, meta["activation"], init=False)
    state = net.state_dict()
    linear = [
        name.removesuffix(".weight")
        for name in state
        if name.startswith("trunk.") and name.endswith(".weight")
    ]
    layers = [*zip(linear, played.hidden, strict=True), ("policy", played.policy)]
    for name, (w, b) in layers:
        state[f"{name}.weight"] = torch.from_numpy(np.array(w, np.float32))
        state[f"{name}.bias"] = torch.from_numpy(np.array(b, np.float32))
    for name in ("value.weight", "value.bias"):
        state[name] = torch.zeros_like(state[name])
    net.load_state_dict(state)
    return {
        "network": net.spec(),
        "policy": net.state_dict(),
        "num_players": meta["num_players"],
        "rules": meta["rules"],
        "observation": meta["observation"],
        "run_name": f"from-weights:{Path(weights).name}",
        "global_step": 0,
        "update": 0,
    }


def _array(tensor: Any) -> Any:
    """A tensor's values as a contiguous numpy array (float32 as trained)."""
    return tensor.detach().cpu().contiguous().numpy().copy()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", type=Path, default=CHECKPOINT)
    parser.add_argument("--out", type=Path, default=WEIGHTS)
    parser.add_argument(
        "--to-checkpoint",
        type=Path,
        metavar="PATH",
        help="write a checkpoint whose policy is --weights instead",
    )
    parser.add_argument("--weights", type=Path, default=WEIGHTS, help="with --to-checkpoint")
    args = parser.parse_args(argv)
    if args.to_checkpoint is not None:
        from craits.agents.checkpoint import save_checkpoint

        save_checkpoint(args.to_checkpoint, checkpoint_from_weights(args.weights))
        print(f"{args.to_checkpoint}: the policy of {args.weights}")
        return 0
    content = export_bytes(args.checkpoint)
    atomic_write_bytes(args.out, content)
    print(f"{args.out}: {len(content):,} bytes, sha256 {hashlib.sha256(content).hexdigest()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
