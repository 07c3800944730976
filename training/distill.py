"""Search distilled into the policy (expert iteration on ``champion-search``).

A policy checkpoint ``P`` (trained by ``craits train``) guides a search: ``PIMCAgent``
with ``P`` as its prior, as the spec ``champion-search`` is built (or ``belief-search``,
with ``CollectConfig.sampler = "belief"``: its worlds drawn from the expert-weighted belief) —
``P``'s move everywhere, replaced at the end of a hand (some player holds ``ENDGAME`` cards or
fewer) where determinized rollouts find a clearly better one. That search plays far
better than ``P`` alone (``experiments/results/ladder_standard.md``), so its moves are
targets a network can learn:

1. :func:`collect` plays games with the search at one seat (rotating) against a table
   of opponents (:class:`CollectConfig`), and records at each of its decisions that is
   not forced the network's input
   (:meth:`craits.agents.checkpoint_agent.PPOAgent.features`), the legal actions, the
   search's move (the label), ``P``'s own move and whether it was an end-of-hand decision
   (elsewhere the two moves are the same, but for a one-card declaration: the search
   always declares, R7.1). Games are independent and seeded
   by number, so the data are the same for any number of worker processes.
2. :func:`distill` fine-tunes ``P``'s network on them: the cross-entropy of the search's
   move where it replaced ``P``'s (weight ``override_weight``), and elsewhere the squared
   distance of the legal logits to ``P``'s (``keep_weight``: an anchor, so play elsewhere
   stays ``P``'s); with ``temperature`` every searched decision is trained towards the
   softmax of the search's mean values instead — Adam, minibatches, a held-out tenth of
   the games for the report
   (:class:`DistillReport`: agreement with the search where it overrode ``P``).
3. :func:`save_distilled` writes a ``craits-ppo`` checkpoint (play it as ``ppo:PATH``)
   recording what it was distilled from.

Repeating with the distilled checkpoint as ``P`` is expert iteration: the search on a
better prior gives better labels. ``experiments/distill_champion.py`` runs the rounds.
"""

from __future__ import annotations

import json
import math
import multiprocessing
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from craits.agents.base import Observation, legal_actions_of
from craits.agents.belief import PolicyBelief
from craits.agents.champion import BELIEF_TEMPERATURE
from craits.agents.checkpoint import load_checkpoint, policy_from_checkpoint, save_checkpoint
from craits.agents.checkpoint_agent import PPOAgent
from craits.agents.network import PolicyNet
from craits.agents.pimc import ENDGAME, PIMCAgent
from craits.agents.specs import make_agent
from craits_env import DECLARE, NUM_ACTIONS, Game, Rules
from craits_env.actions import forced_action
from craits_env.fileio import atomic_write_bytes
from craits_env.seeding import derive_rng, derive_seed

from .ppo import masked_logits

SAMPLERS = ("uniform", "belief")
"""Where the search draws its worlds: the uniform consistent sampler (``champion-search``) or
the expert-weighted belief as ``belief-search`` draws them (issue 31)."""
FIELDS = ("features", "mask", "label", "prior", "endgame", "game", "values")
"""The arrays of a :class:`Samples` (and of its ``.npz`` file)."""


@dataclass(frozen=True)
class CollectConfig:
    """What :func:`collect` plays: ``games`` games (numbered from ``first``) of
    ``num_players`` (standard rules unless ``hand_sizes``), game ``i`` against copies of
    ``opponents[i % len(opponents)]``, the search at seat ``(i // len(opponents)) %
    num_players`` with ``simulations`` rollouts per searched decision."""

    checkpoint: str
    games: int
    seed: int
    opponents: tuple[str, ...] = ("expert", "pimc")
    simulations: int = 2048
    num_players: int = 4
    first: int = 0  # the first game's number (collections in parts: 0, then games, …)
    hand_sizes: tuple[int, ...] | None = None  # None: the standard game's (R1); else shorter
    sampler: str = "uniform"  # the search's worlds: "uniform" (champion-search) or "belief"

    @property
    def rules(self) -> Rules:
        return Rules() if self.hand_sizes is None else Rules(hand_sizes=self.hand_sizes)

    def __post_init__(self) -> None:
        if self.games < 1:
            raise ValueError(f"games: got {self.games}, expected at least 1")
        if self.simulations < 1:
            raise ValueError(f"simulations: got {self.simulations}, expected at least 1")
        if not self.opponents:
            raise ValueError("opponents: expected at least one agent spec")
        if self.sampler not in SAMPLERS:
            raise ValueError(f"sampler: got {self.sampler!r}, expected one of {SAMPLERS}")


@dataclass
class Samples:
    """Recorded decisions, one row each (``game``: the game's number in the collection)."""

    features: np.ndarray  # float32 (n, obs_size)
    mask: np.ndarray  # bool (n, NUM_ACTIONS)
    label: np.ndarray  # int64 (n,): the search's move
    prior: np.ndarray  # int64 (n,): the policy's own move
    endgame: np.ndarray  # bool (n,): an end-of-hand (searched) decision
    game: np.ndarray  # int64 (n,)
    values: np.ndarray  # float32 (n, NUM_ACTIONS): the search's mean rollout values, NaN
    # where it did not search (and for illegal actions)

    def __len__(self) -> int:
        return len(self.label)

    @classmethod
    def concatenate(cls, parts: Sequence[Samples]) -> Samples:
        if not parts:
            raise ValueError("no samples to concatenate")
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in FIELDS))

    def save(self, path: str | Path) -> None:
        """Write an ``.npz`` (compressed) atomically."""
        import io

        buffer = io.BytesIO()
        np.savez_compressed(buffer, **{f: getattr(self, f) for f in FIELDS})
        atomic_write_bytes(path, buffer.getvalue())

    @classmethod
    def load(cls, path: str | Path) -> Samples:
        """Read :meth:`save`'s file; ``ValueError`` (one line) if it is not one."""
        try:
            with np.load(path) as data:
                if "values" not in data:  # a file of the first version: no search values
                    nan = np.full(data["mask"].shape, np.nan, np.float32)
                    return cls(**{f: data[f] for f in FIELDS[:-1]}, values=nan)
                arrays = [data[f] for f in FIELDS]
        except (OSError, KeyError, ValueError) as e:
            raise ValueError(f"samples {path}: not a distillation samples file ({e})") from None
        return cls(*arrays)


class _Recorder:
    """The search at one seat, recording each decision that is not forced."""

    name = "distill-recorder"

    def __init__(self, checkpoint: str, simulations: int, seed: int, sampler: str) -> None:
        self.policy = PPOAgent(checkpoint, seed)
        belief = None
        if sampler == "belief":  # belief-search's worlds (its temperature, expert as the model)
            belief = PolicyBelief("expert", temperature=BELIEF_TEMPERATURE)
        self.search = PIMCAgent(simulations, seed=seed, prior=self.policy, sampler=belief)
        self.rows: list[tuple[np.ndarray, np.ndarray, int, int, bool, np.ndarray]] = []

    def reset(self, seed: int | None = None) -> None:
        self.search.reset(seed)

    def act(self, observation: Observation) -> int:
        legal = legal_actions_of(observation)
        forced = forced_action(legal)
        if forced is not None:
            return forced
        prior = int(self.policy.act(observation))
        action = int(self.search.act(observation))  # the policy's move but at the hand's end
        endgame = min(observation.hand_sizes) <= ENDGAME  # type: ignore[attr-defined]
        values = np.full(NUM_ACTIONS, np.nan, np.float32)
        if endgame and DECLARE not in legal and self.search.last_values is not None:
            for a, v in self.search.last_values.items():  # this decision's (it searched)
                values[a] = v
        mask = np.zeros(NUM_ACTIONS, bool)
        mask[list(legal)] = True
        self.rows.append((self.policy.features(observation), mask, action, prior, endgame, values))
        return action


def _collect_game(args: tuple[CollectConfig, int]) -> list[tuple[Any, ...]]:
    config, i = args
    from craits.agents.arena import play_game

    n = config.num_players
    spec = config.opponents[i % len(config.opponents)]
    seat = (i // len(config.opponents)) % n
    rules = config.rules
    seeds = [derive_seed(config.seed, i, s) for s in range(n)]
    recorder = _Recorder(config.checkpoint, config.simulations, seeds[seat], config.sampler)
    recorder.policy.check_table(n, rules)
    agents = [
        recorder if s == seat else make_agent(spec, seed=seeds[s], num_players=n, rules=rules)
        for s in range(n)
    ]
    game = Game(n, rules, rng=derive_rng(config.seed, i))
    play_game(game, agents, seeds)
    return [(*row, i) for row in recorder.rows]


def collect(config: CollectConfig, workers: int = 1, progress: bool = False) -> Samples:
    """Play ``config``'s games (``workers`` processes) and return their decisions in game
    order: the same samples for any ``workers``."""
    PPOAgent(config.checkpoint).check_table(config.num_players, config.rules)  # one line
    jobs = [(config, i) for i in range(config.first, config.first + config.games)]
    if workers > 1:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            games = list(_progress(pool.imap(_collect_game, jobs), config.games, progress))
    else:
        games = list(_progress(map(_collect_game, jobs), config.games, progress))
    rows = [row for game in games for row in game]
    if not rows:
        raise ValueError("collect: the games had no decision to record")
    features, mask, label, prior, endgame, values, game_ids = zip(*rows, strict=True)
    return Samples(
        np.stack(features).astype(np.float32),
        np.stack(mask),
        np.array(label, np.int64),
        np.array(prior, np.int64),
        np.array(endgame, bool),
        np.array(game_ids, np.int64),
        np.stack(values),
    )


def _progress(it: Any, total: int, show: bool) -> Any:
    """``it``, counted by :class:`~craits.agents.progress.Progress` when ``show``: a live bar on
    a terminal, plain lines with an ETA elsewhere (no carriage return in a pipe)."""
    if not show:
        yield from it
        return
    from craits.agents.progress import Progress

    bar = Progress(total, "collecting", "game")
    try:
        for done, item in enumerate(it, 1):
            yield item
            bar.update(done)
    finally:
        bar.close()


@dataclass(frozen=True)
class DistillConfig:
    """How :func:`distill` fine-tunes (see the module docstring)."""

    epochs: int = 4
    batch_size: int = 1024
    learning_rate: float = 1e-4
    override_weight: float = 1.0
    keep_weight: float = 1.0
    temperature: float | None = None  # None: hard labels where the search overrode
    holdout: float = 0.1
    seed: int = 0

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 1:
            raise ValueError("epochs and batch_size: expected positive integers")
        if not 0 <= self.holdout < 1:
            raise ValueError(f"holdout: got {self.holdout}, expected a fraction in [0, 1)")
        if self.temperature is not None and self.temperature <= 0:
            raise ValueError(f"temperature: got {self.temperature}, expected > 0 (points)")
        if self.learning_rate <= 0:
            raise ValueError(f"learning_rate: got {self.learning_rate}, expected > 0")


@dataclass
class DistillReport:
    """Agreement of a network's argmax with the labels, on held-out games."""

    samples: int
    endgame: int
    overrides: int  # end-of-hand decisions (all samples) where the search replaced the prior
    endgame_agreement: float  # argmax == label, end-of-hand decisions
    override_agreement: float  # argmax == label where label != prior
    keep_agreement: float  # argmax == label, the other decisions
    epochs: list[dict[str, float]] = field(default_factory=list)


def agreement(net: PolicyNet, samples: Samples) -> tuple[float, float, float]:
    """(end-of-hand, override, other) fractions of ``samples`` where ``net``'s masked
    argmax is the label (``nan`` where a group is empty)."""
    with torch.no_grad():
        logits = net.logits(torch.from_numpy(samples.features))
        choice = masked_logits(logits, torch.from_numpy(samples.mask)).argmax(-1).numpy()
    hit = choice == samples.label
    override = samples.endgame & (samples.label != samples.prior)

    def rate(m: np.ndarray) -> float:
        return float(hit[m].mean()) if m.any() else math.nan

    return rate(samples.endgame), rate(override), rate(~samples.endgame)


def split(samples: Samples, holdout: float) -> tuple[Samples, Samples]:
    """(training, held-out) by game: the last ``holdout`` fraction of the games held out."""
    games = np.unique(samples.game)
    cut = games[int(len(games) * (1 - holdout))] if holdout > 0 else games.max() + 1
    train = samples.game < cut
    return _rows(samples, train), _rows(samples, ~train)


def _rows(samples: Samples, keep: np.ndarray) -> Samples:
    return Samples(*(getattr(samples, f)[keep] for f in FIELDS))


def _centred(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The legal logits minus their mean (softmax does not see the shift), 0 elsewhere."""
    legal = mask.float()
    mean = (logits * legal).sum(-1, keepdim=True) / legal.sum(-1, keepdim=True)
    return (logits - mean) * legal


def _targets(samples: Samples, config: DistillConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """Each row's target distribution, and whether the row has one (else it is anchored):
    with ``temperature``, a searched decision's target is the softmax of the search's mean
    values / ``temperature`` (points); a decision where the search replaced the policy's
    move (without values or ``temperature``) puts it all on the search's move."""
    n = len(samples)
    target = torch.zeros(n, samples.mask.shape[1])
    override = samples.label != samples.prior
    target[torch.arange(n), torch.from_numpy(samples.label)] = 1.0
    has = torch.from_numpy(override)
    if config.temperature is not None:
        values = torch.from_numpy(samples.values)
        searched = torch.isfinite(values).any(-1)
        scaled = torch.where(torch.isfinite(values), values / config.temperature, -torch.inf)
        soft = torch.softmax(scaled[searched], -1)
        target[searched] = soft
        has = has | searched
    return target, has


def _loss_rows(
    logits: torch.Tensor,
    mask: torch.Tensor,
    teacher: torch.Tensor,
    target: torch.Tensor,
    has_target: torch.Tensor,
    config: DistillConfig,
) -> torch.Tensor:
    """Each row's loss: where it has a target (:func:`_targets`), the cross-entropy to it
    (times ``override_weight``); elsewhere the squared distance of the centred legal
    logits to the starting network's (``teacher``, centred; times ``keep_weight``) — an
    anchor that holds the policy where it was (a cross-entropy to its own move or
    distribution there was measured to move its argmax on ~6% of those decisions)."""
    log_p = torch.log_softmax(masked_logits(logits, mask), -1)
    ce = -(target * log_p).sum(-1)
    anchor = ((_centred(logits, mask) - teacher) ** 2).sum(-1) / mask.float().sum(-1)
    return torch.where(has_target, config.override_weight * ce, config.keep_weight * anchor)


def distill(
    checkpoint: str, samples: Samples, config: DistillConfig
) -> tuple[dict[str, Any], DistillReport]:
    """Fine-tune ``checkpoint``'s network on ``samples``; the new checkpoint's dict (for
    :func:`save_distilled`) and the held-out report."""
    data = load_checkpoint(checkpoint)
    net = policy_from_checkpoint(data, checkpoint)
    if samples.features.shape[1] != net.obs_size:
        raise ValueError(
            f"samples have {samples.features.shape[1]} features, {checkpoint}'s network "
            f"reads {net.obs_size}"
        )
    train, held = split(samples, config.holdout)
    net.requires_grad_(True).train()
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate)
    generator = torch.Generator().manual_seed(config.seed)
    x = torch.from_numpy(train.features)
    m = torch.from_numpy(train.mask)
    target, has_target = _targets(train, config)
    with torch.no_grad():
        teacher = _centred(net.logits(x), m)
    report_epochs = []
    for epoch in range(config.epochs):
        order = torch.randperm(len(train), generator=generator)
        total = 0.0
        for start in range(0, len(train), config.batch_size):
            idx = order[start : start + config.batch_size]
            logits = net.logits(x[idx])
            rows = _loss_rows(logits, m[idx], teacher[idx], target[idx], has_target[idx], config)
            loss = rows.mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(idx)
        net.eval()
        end, over, keep = agreement(net, held) if len(held) else (math.nan,) * 3
        net.train()
        report_epochs.append(
            {
                "epoch": epoch + 1,
                "loss": total / len(train),
                "endgame_agreement": end,
                "override_agreement": over,
                "keep_agreement": keep,
            }
        )
    net.requires_grad_(False).eval()
    end, over, keep = agreement(net, held) if len(held) else (math.nan,) * 3
    report = DistillReport(
        samples=len(samples),
        endgame=int(samples.endgame.sum()),
        overrides=int((samples.endgame & (samples.label != samples.prior)).sum()),
        endgame_agreement=end,
        override_agreement=over,
        keep_agreement=keep,
        epochs=report_epochs,
    )
    out = {k: v for k, v in data.items() if k not in ("optimizer", "rollout", "pool", "rng")}
    out["policy"] = {k: v.detach().clone() for k, v in net.state_dict().items()}
    out["distill"] = json.dumps({"from": str(checkpoint), "config": asdict(config)})
    return out, report


def save_distilled(path: str | Path, payload: dict[str, Any]) -> None:
    """Write :func:`distill`'s checkpoint (atomically); ``ppo:PATH`` plays it."""
    payload = {k: v for k, v in payload.items() if k not in ("format", "version")}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    save_checkpoint(path, payload)
