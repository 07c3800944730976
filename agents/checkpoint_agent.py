"""A trained PPO checkpoint as an agent: the spec ``"ppo:PATH"``.

``PATH`` is a checkpoint written by ``craits train`` (``DIR/final.pt`` or
``DIR/checkpoints/step_*.pt``) or a run directory ``DIR`` (its ``final.pt``).
The agent reads only the observation mapping (``"observation"``,
``"action_mask"``) — what an agent sees in ``craits_v0`` — and plays the
network's most probable legal action (argmax: deterministic, so ``seed``
changes nothing). A single legal action is returned without running the
network; otherwise the network's policy head runs in numpy
(:meth:`craits.agents.network.PolicyNet.numpy_policy`: the same float32 weights, a
fraction of the cost of a batch-of-one torch call).

Errors are one-line ``ValueError``s: a missing, corrupt or incompatible
checkpoint when the agent is made; a table it was not trained for (another
number of players — another observation size — or other rules) in
:meth:`PPOAgent.check_table`, which every driver calls before the first game.
A policy plays any game length: only ``hand_sizes`` and
``hand_decision_limit`` may differ from the rules it was trained with.

Its :attr:`PPOAgent.identity` is ``ppo@`` and the first 16 hex digits of
:func:`craits.agents.checkpoint.policy_digest` (weights, table, rules): stored
results follow the weights, not the file name. A process reads each checkpoint
once per content (cached by the hash of the file's bytes, so an overwritten
file is read again whatever its size and time stamp).

torch is imported when a ``ppo`` agent is made (to read the checkpoint), not
when :mod:`craits.agents` is.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from craits_env.actions import forced_action
from craits_env.rules import Rules

from .base import Observation

SPEC = "ppo"
STANDARD = "standard"  # a checkpoint's "observation": craits_v0's observation vector
BELIEF = "belief"  # the observation that reads the public history too (craits_env.belief)
RUN_FINAL = "final.pt"
# Rule options that change only how long a game lasts: a policy plays any of them.
LENGTH_OPTIONS = ("hand_sizes", "hand_decision_limit")


class PPOAgent:
    """Plays the argmax of a trained policy over the legal actions."""

    name = SPEC

    def __init__(self, path: str, seed: int | None = None) -> None:
        self.path = path
        self.seed = seed
        self._logits, self._obs_size, self.meta = _load(checkpoint_file(path))
        self.identity = f"{SPEC}@{self.meta['digest'][:16]}"
        kind = self.meta.get("observation")
        if kind not in (STANDARD, BELIEF):
            raise ValueError(
                f"ppo:{path}: observation {kind!r} was removed in craits 0.3.0 (its code last "
                "lived at commit 9f11649); this code plays standard and belief"
            )
        self._belief = kind == BELIEF

    def __getstate__(self) -> dict[str, Any]:
        """Pickled as its path and identity (a training checkpoint holds the games in
        flight, seated agents included); unpickling reads the file again and refuses one
        whose weights changed."""
        return {"path": self.path, "seed": self.seed, "identity": self.identity}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], state["seed"])  # type: ignore[misc]
        if self.identity != state["identity"]:
            raise ValueError(
                f"ppo:{self.path} is now {self.identity}, it was {state['identity']} when "
                "saved (the checkpoint file changed)"
            )

    @property
    def reads_belief(self) -> bool:
        """Whether the network reads the belief features after the observation."""
        return self._belief

    @property
    def input_size(self) -> int:
        """The length of the network's input (the observation, then any belief features)."""
        return self._obs_size

    def logits(self, features: np.ndarray) -> np.ndarray:
        """The policy's logits of one input (:meth:`features`) or of a batch ``(rows, size)``
        (numpy; a batch's float32 sums may differ from the one-input pass's in the last bit)."""
        return self._logits(features)

    def reset(self, seed: int | None = None) -> None:
        """Start a game; the policy is deterministic, ``seed`` is only recorded."""
        if seed is not None:
            self.seed = seed

    @property
    def label(self) -> str:
        """How messages name the agent: ``ppo:PATH``, or the spec it was made by when it has
        one of its own (``champion``: no path of the installation in a message)."""
        return getattr(self, "spec_label", None) or f"ppo:{self.path}"

    def check_table(self, num_players: int, rules: Rules) -> None:
        """``ValueError`` (one line) unless the checkpoint was trained for this table."""
        from craits_env.observation import ObservationEncoder

        trained = self.meta.get("num_players")
        size = ObservationEncoder(num_players, rules).size
        if self._belief:
            from craits_env.belief import belief_size

            size += belief_size(num_players)
        if size != self._obs_size or (trained is not None and trained != num_players):
            raise ValueError(
                f"{self.label} was trained for {trained} players (observation size "
                f"{self._obs_size}); this table has {num_players} players (observation size "
                f"{size})"
            )
        stored = self.meta.get("rules")
        if isinstance(stored, dict):
            mine = Rules.from_dict(stored).to_dict()
            wanted = rules.to_dict()
            differ = [k for k in wanted if k not in LENGTH_OPTIONS and wanted[k] != mine.get(k)]
            if differ:
                k = differ[0]
                raise ValueError(
                    f"ppo:{self.path} was trained with {k}={mine.get(k)}; this table has "
                    f"{k}={wanted[k]} (only {' and '.join(LENGTH_OPTIONS)} may differ)"
                )

    def act(self, observation: Observation) -> int:
        mask = np.asarray(observation["action_mask"])
        legal = np.flatnonzero(mask)
        forced = forced_action(legal.tolist())
        if forced is not None:
            return forced
        if len(legal) == 0:
            raise ValueError("ppo: no legal action in this observation")
        scores = self._logits(self.features(observation))[legal]
        return int(legal[int(np.argmax(scores))])

    def features(self, observation: Observation) -> np.ndarray:
        """The network's input for ``observation`` (float32: the observation vector, then
        the belief features for a belief checkpoint); ``ValueError`` if its size is wrong."""
        obs = np.asarray(observation["observation"], np.float32)
        if self._belief:
            obs = np.concatenate([obs, self._belief_of(observation)])
        if obs.shape != (self._obs_size,):
            players = self.meta.get("num_players")
            raise ValueError(
                f"{self.label} was trained for {players} players (observation size "
                f"{self._obs_size}); this table gives an observation of size {obs.size}"
            )
        return obs

    def _belief_of(self, observation: Observation) -> np.ndarray:
        """The belief features (craits_env.belief) of the seat whose view ``observation`` is."""
        from craits_env.belief import encode_belief

        tracker = getattr(observation, "tracker", None)
        if tracker is None:
            raise ValueError(
                f"ppo:{self.path} reads the public history (observation = {BELIEF}): it "
                "plays through a seat view (tournaments, craits play, craits serve), not a bare "
                "observation dict"
            )
        seat = observation.seat  # type: ignore[attr-defined]
        return encode_belief(tracker, seat)


def checkpoint_file(path: str) -> Path:
    """``path`` itself, or for a run directory its ``final.pt`` (one-line error if none)."""
    p = Path(path)
    if p.is_dir():
        if (p / RUN_FINAL).is_file():
            return p / RUN_FINAL
        raise ValueError(
            f"ppo:{path}: no {RUN_FINAL} in this run directory (training not finished? "
            f"name a checkpoint: ppo:{p / 'checkpoints' / 'step_N.pt'})"
        )
    return p


_Policy = tuple[Callable[[np.ndarray], np.ndarray], int, dict[str, Any]]
_CACHE: dict[str, _Policy] = {}
_CACHE_SIZE = 8


def _load(path: Path) -> _Policy:
    """The numpy policy, observation size and metadata of a checkpoint (cached by content)."""
    from .checkpoint import load_policy, read_checkpoint_bytes

    content = read_checkpoint_bytes(path)  # ValueError (one line) if missing
    key = hashlib.sha256(content).hexdigest()
    if key in _CACHE:
        return _CACHE[key]
    network, meta = load_policy(path, content)  # ValueError (one line) if unusable
    policy = (network.numpy_policy(), network.obs_size, meta)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = policy
    return policy


def make_ppo(arg: str, seed: int | None) -> PPOAgent:
    """The spec ``ppo:PATH``."""
    from craits_env.extras import require

    require("train", "the agent spec ppo:PATH", ("torch",))
    if not arg:
        raise ValueError(
            "agent spec 'ppo' needs a checkpoint: ppo:PATH (a .pt file or a run directory "
            "of craits train)"
        )
    return PPOAgent(arg, seed)
