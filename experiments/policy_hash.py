"""The hash of a checkpoint's policy: a refactor that must not change training proves it.

The first 16 hex digits of the SHA-256 over the policy's state dict, key by key in sorted
order (each key's name, then its tensor's bytes). Compare a fixed-seed run of two trees in
the same session, e.g. (the tree of commit C exported to DIR with ``git archive C | tar -x
-C DIR``)::

    craits train -c ppo_4p --total-steps 60000 --set final_eval_deals=4 --set eval_every=0 --out A
    PYTHONPATH=DIR python -m craits train -c ppo_4p ... --out B      # run from DIR
    python experiments/policy_hash.py A/final.pt B/final.pt
"""

from __future__ import annotations

import hashlib
import sys

from craits.agents.checkpoint import load_checkpoint


def policy_hash(path: str) -> str:
    """The hash of the policy of checkpoint ``path`` (see the module docstring)."""
    state = load_checkpoint(path)["policy"]
    digest = hashlib.sha256()
    for key in sorted(state):
        digest.update(key.encode())
        digest.update(state[key].cpu().numpy().tobytes())
    return digest.hexdigest()[:16]


if __name__ == "__main__":
    for path in sys.argv[1:]:
        print(policy_hash(path), path)
