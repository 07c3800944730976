"""Is there a one-step improvement of a policy, learnable from what it sees? (all-action rollouts)

A policy ``P`` (a ``craits train`` checkpoint, by default the champion) plays at one seat
against a table of bots. At each of its decisions with a choice (a one-card declaration
aside: declaring is never worse, R7.1), **every** legal action is valued the same way:
the true position — the opponents' real hands, the stock's real order, what the public
tracker inferred — is copied, the action applied, and the hand played to its end by the
table's own agents (``P`` at its seat, the bots at theirs); the value is the opponents'
mean points for the hand minus the seat's own (``craits.agents.pimc.rollout_value``'s number).
Every action of a decision plays out on the same future randomness (common random
numbers: one reshuffle generator seed per decision).

Such a value is one draw of ``Q(information, action)``: the true position is itself one
draw of the positions the seat's information allows, from the real distribution (the
bots' and ``P``'s play included), so averaged over games the labels are the action
values of the seat's information set under the table's real play — what PPO estimates
from one trajectory of the action taken, here for every action at once. Then:

- ``collect``: the labelled decisions (``P``'s network input, the legal mask, the values)
  into an ``.npz``; game ``i`` of a seed is the same for any ``--workers``.
- ``fit``: reports the advantage of ``P``'s own move over the legal mean, of its second
  choice, and where ``P`` hesitates (its top two logits within 0.5); then regresses the
  actions' values relative to the legal mean with a head on a copy of ``P``'s trunk
  (Huber loss; advantages clipped to ±``CLIP`` points; the last tenth of the games held out)
  and reports, on the held-out
  decisions, the explained variance and the value gained by playing the head's argmax
  instead of ``P``'s move (with margins: only where the head prefers another move by
  more than ``m`` points). Writes the head (``OUT.pt``) and the report (``OUT.json``).
- :class:`QAgent`: ``P`` with the fitted head overriding its move at the end of a hand
  (some player holds ``ENDGAME`` cards or fewer) where the head prefers another move by
  more than ``CRAITS_Q_MARGIN`` points (the head's file: ``CRAITS_Q``), for a tournament::

    python experiments/one_step_improvement.py collect --games 2000 --seed 41 --out runs/q/p0.npz
    python experiments/one_step_improvement.py fit runs/q/p0.npz --out runs/q/head
    CRAITS_Q=runs/q/head.pt CRAITS_Q_MARGIN=5 craits tournament \\
        experiments/one_step_improvement.py:QAgent expert expert expert --players 4 \\
        --deals 300 --seed 555 --workers 2 --out runs/q/t555

The measurements: ``experiments/results/champion/notes.md`` ("One step of improvement").
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import multiprocessing
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from craits.agents.base import Agent, Observation
from craits.agents.checkpoint_agent import PPOAgent
from craits.agents.network import PolicyNet
from craits.agents.pimc import ENDGAME
from craits.agents.specs import make_agent
from craits_env import DECLARE, NUM_ACTIONS, Game, Rules
from craits_env.actions import PHASE_DECLARE, forced_action
from craits_env.fileio import atomic_write_bytes, atomic_write_text
from craits_env.opponent_hands import encode_hands, hands_size
from craits_env.public import PublicGame
from craits_env.seeding import derive_rng, derive_seed
from experiments.export_champion import CHECKPOINT

CHAMPION = str(CHECKPOINT)


# ---------------------------------------------------------------------------- the labels


def copy_public(public: PublicGame, seed: int) -> PublicGame:
    """An independent copy of ``public``: the game with its true hidden cards, and what the
    tracker inferred this hand; the copy's future randomness comes from ``seed``."""
    copy = PublicGame(public.game.clone(rng=np.random.default_rng(seed)), public.encoder)
    copy.tracker.restore(public.tracker.state())
    return copy


def hand_value(points: Sequence[int], seat: int) -> float:
    """The opponents' mean points for the hand minus ``seat``'s (higher is better)."""
    own = points[seat]
    return (sum(points) - own) / (len(points) - 1) - own


def action_values(public: PublicGame, agents: Sequence[Agent], seed: int) -> dict[int, float]:
    """The current player's value of each legal action: the true position copied, the
    action applied, the hand played out by ``agents`` (one per seat), every action on the
    same generator ``seed``. ``public`` is left as it was. (A hand ends: at the latest at
    its decision limit, R12.)"""
    game = public.game
    seat, hand = game.current_player, game.hand_index
    values = {}
    for action in game.legal_actions():
        copy = copy_public(public, seed)
        g = copy.game
        copy.apply(action)
        while g.hand_index == hand and not g.is_over:
            p = g.current_player
            copy.apply(agents[p].act(copy.views[p]))
        values[int(action)] = hand_value(g.hand_points[hand], seat)
    return values


@dataclass(frozen=True)
class Collect:
    """Games ``first … first + games - 1`` of ``seed``: game ``i`` seats the checkpoint at
    seat ``(i // len(opponents)) % num_players`` and copies of ``opponents[i % len]``
    elsewhere (the standard game)."""

    checkpoint: str
    games: int
    seed: int
    opponents: tuple[str, ...] = ("expert",)
    num_players: int = 4
    first: int = 0


def decisions(config: Collect, i: int) -> Iterator[tuple[PublicGame, list[Agent], PPOAgent, int]]:
    """Plays game ``i``; yields (the public game, the agents, the policy, a rollout seed) at
    each of the policy's decisions with a choice (a declaration aside), before its move."""
    n, rules = config.num_players, Rules()
    spec = config.opponents[i % len(config.opponents)]
    seat = (i // len(config.opponents)) % n
    seeds = [derive_seed(config.seed, i, s) for s in range(n)]
    policy = PPOAgent(config.checkpoint, seeds[seat])
    policy.check_table(n, rules)
    agents: list[Agent] = [
        policy if s == seat else make_agent(spec, seed=seeds[s], num_players=n, rules=rules)
        for s in range(n)
    ]
    for agent, s in zip(agents, seeds, strict=True):
        agent.reset(s)
    game = Game(n, rules, rng=derive_rng(config.seed, i))
    public = PublicGame(game)
    crn = derive_rng(config.seed, i, n)  # one rollout seed per labelled decision
    while not game.is_over:
        p = game.current_player
        if p == seat and len(game.legal_actions()) > 1 and game.phase != PHASE_DECLARE:
            yield public, agents, policy, int(crn.integers(1 << 62))
        public.apply(agents[p].act(public.views[p]))


def label_game(args: tuple[Collect, int]) -> tuple[np.ndarray, ...]:
    """Game ``i``'s labelled decisions: (network inputs, legal masks, values — NaN where
    illegal —, the opponents' true hands: ``craits_env.opponent_hands.encode_hands``, for the
    analysis only)."""
    config, i = args
    rows = []
    for public, agents, policy, seed in decisions(config, i):
        q = np.full(NUM_ACTIONS, np.nan, np.float32)
        mask = np.zeros(NUM_ACTIONS, bool)
        for a, v in action_values(public, agents, seed).items():
            q[a], mask[a] = v, True
        seat = public.game.current_player
        rows.append((policy.features(public.views[seat]), mask, q, encode_hands(public.game, seat)))
    if not rows:  # (a game without one: a one-hand schedule at most)
        n = config.num_players
        view = PublicGame(Game(n, Rules(), rng=derive_rng(0))).views[0]
        return (
            np.zeros((0, len(PPOAgent(config.checkpoint).features(view))), np.float32),
            np.zeros((0, NUM_ACTIONS), bool),
            np.zeros((0, NUM_ACTIONS), np.float32),
            np.zeros((0, hands_size(n)), np.uint8),
        )
    f, m, q, h = zip(*rows, strict=True)
    return np.stack(f), np.stack(m), np.stack(q), np.stack(h).astype(np.uint8)


def stock_spread(config: Collect, every: int = 10, shuffles: int = 8) -> dict[str, Any]:
    """How much of an action's advantage the order of the stock decides: at every
    ``every``-th labelled decision of ``config``'s games, the actions are valued on the true
    position and on ``shuffles`` copies whose stock is reshuffled (the hands as they are).
    The share of the advantages' variance (clipped, ``CLIP``) that lies within a position
    across stock orders (the unbiased variance over the orders, the true one among them, by
    the mean square) is what no player — even one shown every hand — can predict; an
    estimate, which may exceed 1 over a few positions."""
    within, total, rows = [], [], 0
    for i in range(config.first, config.first + config.games):
        for k, (public, agents, _, seed) in enumerate(decisions(config, i)):
            if k % every:
                continue
            legal = public.game.legal_actions()
            table = []
            for j in range(shuffles + 1):
                copy = copy_public(public, seed)
                if j:  # the same permutation of the stock as before restack existed
                    drawn_last_first = copy.game.stock[::-1]
                    np.random.default_rng([seed, j]).shuffle(drawn_last_first)
                    copy.game.restack(drawn_last_first[::-1])
                values = action_values(copy, agents, seed)
                table.append([values[a] for a in legal])
            adv = np.array(table)
            adv = np.clip(adv - adv.mean(1, keepdims=True), -CLIP, CLIP)
            within.append(adv.var(0, ddof=1).mean())
            total.append((adv**2).mean())
            rows += 1
    share = float(np.mean(within) / np.mean(total))
    return {"positions": rows, "shuffles": shuffles, "within_share": share}


def collect(config: Collect, workers: int = 1) -> dict[str, np.ndarray]:
    """The labelled decisions of ``config``'s games, in game order (the same for any
    ``workers``): ``features``, ``mask``, ``q``, ``hands`` (the opponents' true hands) and
    ``game`` (each row's game number)."""
    jobs = [(config, i) for i in range(config.first, config.first + config.games)]
    if workers > 1:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            parts = pool.map(label_game, jobs, chunksize=4)
    else:
        parts = [label_game(job) for job in jobs]
    return {
        "features": np.concatenate([p[0] for p in parts]),
        "mask": np.concatenate([p[1] for p in parts]),
        "q": np.concatenate([p[2] for p in parts]),
        "hands": np.concatenate([p[3] for p in parts]),
        "game": np.concatenate(
            [np.full(len(p[0]), i) for p, (_, i) in zip(parts, jobs, strict=True)]
        ),
    }


def load_data(paths: Sequence[str | Path]) -> dict[str, np.ndarray]:
    """``collect``'s files concatenated; ``ValueError`` (one line) for a file that is not one."""
    parts = []
    for path in paths:
        try:
            with np.load(path) as data:
                part = {k: data[k] for k in ("features", "mask", "q", "game")}
                if "hands" in data:  # files of the first version lack them
                    part["hands"] = data["hands"]
                parts.append(part)
        except (OSError, KeyError, ValueError) as e:
            raise ValueError(f"{path}: not a file of this script's collect ({e})") from None
    keys = set.intersection(*(set(p) for p in parts))
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0] if k in keys}


# ---------------------------------------------------------------------------- the analysis


def _centred(v: Any, legal: Any) -> Any:
    """Each row's legal entries minus their mean; 0 where illegal (numpy or torch)."""
    mean = (v * legal).sum(-1)[..., None] / legal.sum(-1)[..., None]
    return (v - mean) * legal


def _mean_se(x: np.ndarray) -> list[float]:
    return (
        [float(x.mean()), float(x.std(ddof=1) / np.sqrt(len(x)))]
        if len(x) > 1
        else [float("nan")] * 2
    )


def policy_report(checkpoint: str, data: dict[str, np.ndarray]) -> dict[str, Any]:
    """How ``checkpoint``'s own moves fare against the labels (points, mean and standard
    error): its move's and its second choice's advantage over the legal mean, and the
    second choice minus its move where its top two logits are within 0.5."""
    import torch

    from craits.agents.checkpoint import load_policy

    net, _ = load_policy(checkpoint)
    mask = data["mask"]
    with torch.no_grad():
        logits = torch.cat(
            [
                net.logits(torch.from_numpy(data["features"][i : i + 65536]))
                for i in range(0, len(mask), 65536)
            ]
        ).numpy()
    logits = np.where(mask, logits, -np.inf)
    adv = np.clip(_centred(np.nan_to_num(data["q"]), mask.astype(np.float64)), -CLIP, CLIP)
    order = np.argsort(-logits, axis=1)
    rows = np.arange(len(mask))
    first, second = order[:, 0], order[:, 1]
    close = (logits[rows, first] - logits[rows, second]) < 0.5
    return {
        "decisions": len(mask),
        "legal_per_decision": float(mask.sum(1).mean()),
        "advantage_sd": float(np.sqrt((adv**2).sum() / mask.sum())),
        "policy_move": _mean_se(adv[rows, first]),
        "second_choice": _mean_se(adv[rows, second]),
        "close_share": float(close.mean()),
        "close_second_minus_move": _mean_se((adv[rows, second] - adv[rows, first])[close]),
    }


MARGINS = (0.0, 2.0, 5.0)
CLIP = 200.0
"""Advantages are clipped to ±CLIP points in every fit and report: a reshuffle spiral (R10.1,
each pressure twice the last) can cost a hand tens of thousands of points, and a few such
labels (about 0.2% of them beyond ±200 here) would otherwise be every statistic."""


def fit(
    checkpoint: str,
    data: dict[str, np.ndarray],
    epochs: int = 8,
    lr: float = 3e-4,
    batch: int = 1024,
    seed: int = 0,
    hands: bool = False,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A value head on a copy of ``checkpoint``'s trunk regressing the labels' advantages;
    (its weights, the held-out report: per epoch the explained variance and the gain of its
    argmax over the policy's move, overall and at each of ``MARGINS``). ``hands``: the trunk
    also reads the opponents' true hands (its first layer widened, zero weights on them) —
    what one step of improvement would gain with the hidden cards known; no player can use
    such a head."""
    import torch
    from torch import nn

    from craits.agents.checkpoint import load_policy

    torch.manual_seed(seed)
    net, _ = load_policy(checkpoint)
    policy_logits = net.logits
    trunk = net.trunk.requires_grad_(True)
    head = nn.Linear(net.hidden_sizes[-1], NUM_ACTIONS)
    nn.init.zeros_(head.weight)
    nn.init.zeros_(head.bias)
    x = torch.from_numpy(data["features"])
    mask = torch.from_numpy(data["mask"])
    legal = mask.float()
    target = _centred(torch.from_numpy(np.nan_to_num(data["q"])), legal).clamp(-CLIP, CLIP)
    games = np.unique(data["game"])
    cut = games[int(len(games) * 0.9)]
    train = torch.from_numpy(np.flatnonzero(data["game"] < cut))
    held = torch.from_numpy(np.flatnonzero(data["game"] >= cut))
    with torch.no_grad():
        prior = policy_logits(x[held]).masked_fill(~mask[held], -torch.inf).argmax(-1)
    if hands:
        extra = torch.from_numpy(data["hands"].astype(np.float32))
        first = trunk[0]
        wide = nn.Linear(first.in_features + extra.shape[1], first.out_features)
        with torch.no_grad():
            wide.weight.zero_()
            wide.weight[:, : first.in_features] = first.weight
            wide.bias.copy_(first.bias)
        trunk = nn.Sequential(wide, *list(trunk)[1:])
        x = torch.cat([x, extra], 1)

    def predict(ix: torch.Tensor) -> torch.Tensor:
        return _centred(head(trunk(x[ix])), legal[ix])

    def evaluate() -> dict[str, Any]:
        with torch.no_grad():
            pred = predict(held)
            t = target[held]
            ev = 1 - float(((pred - t) ** 2).sum() / (t**2).sum())
            rows = torch.arange(len(held))
            choice = pred.masked_fill(~mask[held], -torch.inf).argmax(-1)
            gain = (t[rows, choice] - t[rows, prior]).numpy()
            better = (pred[rows, choice] - pred[rows, prior]).numpy()
        out: dict[str, Any] = {"explained_variance": ev}
        for m in MARGINS:
            out[f"gain_margin_{m:g}"] = _mean_se(np.where(better > m, gain, 0.0))
            out[f"changed_margin_{m:g}"] = float((better > m).mean())
        return out

    optimizer = torch.optim.Adam([*trunk.parameters(), *head.parameters()], lr=lr)
    generator = torch.Generator().manual_seed(seed)
    report: dict[str, Any] = {"held_out_decisions": len(held), "epochs": []}
    for epoch in range(epochs):
        order = train[torch.randperm(len(train), generator=generator)]
        for start in range(0, len(order), batch):
            ix = order[start : start + batch]
            loss = (
                nn.functional.smooth_l1_loss(predict(ix), target[ix], reduction="sum", beta=10.0)
                / legal[ix].sum()
            )
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        report["epochs"].append({"epoch": epoch + 1, **evaluate()})
    weights = {
        "trunk": trunk.state_dict(),
        "head": head.state_dict(),
        "from": checkpoint,
        "hands": hands,
        "activation": net.activation,
    }
    return weights, report


# ---------------------------------------------------------------------------- the agent


class QAgent:
    """The policy, its end-of-hand moves overridden by a fitted head (see the docstring):
    ``CRAITS_Q`` (the head's ``.pt``), ``CRAITS_Q_MARGIN`` (points, default 5)."""

    name = "one-step"

    def __init__(self, seed: int | None = None) -> None:
        import torch

        text = os.environ.get("CRAITS_Q_MARGIN", "5")
        try:
            self.margin = float(text)
        except ValueError:
            raise ValueError(
                f"QAgent: CRAITS_Q_MARGIN={text!r}, allowed a number of points"
            ) from None
        path = os.environ.get("CRAITS_Q")
        if not path or not Path(path).is_file():
            raise ValueError("QAgent: set CRAITS_Q to a head written by this script's fit")
        try:
            saved = torch.load(path, weights_only=True)
            trunk, head = saved["trunk"], saved["head"]
        except Exception:  # torch raises many kinds for a file it cannot read
            raise ValueError(f"QAgent: CRAITS_Q={path} is not a head written by fit") from None
        if saved.get("hands"):
            raise ValueError(
                f"QAgent: {path} reads the opponents' hands (fit --hands): no player can"
            )
        self.policy = PPOAgent(saved["from"], seed)
        # The head on its trunk is a PolicyNet whose policy head gives the values: played in
        # numpy as any policy is (PolicyNet.numpy_policy).
        hidden = [
            trunk[k].shape[0]
            for k in sorted(trunk, key=lambda k: int(k.split(".")[0]))
            if k.endswith(".weight")
        ]
        net = PolicyNet(
            trunk["0.weight"].shape[1], hidden, saved.get("activation", "tanh"), init=False
        )
        net.trunk.load_state_dict(trunk)
        net.policy.load_state_dict(head)
        self._values = net.numpy_policy()
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
        self.version = f"{digest}@{self.margin:g}"  # stored results follow the head and margin

    def reset(self, seed: int | None = None) -> None:
        self.policy.reset(seed)

    def act(self, observation: Observation) -> int:
        legal = [int(a) for a in np.flatnonzero(np.asarray(observation["action_mask"]))]
        forced = forced_action(legal)
        if forced is not None:
            return forced
        move = int(self.policy.act(observation))
        if DECLARE in legal or min(observation.hand_sizes) > ENDGAME:  # type: ignore[attr-defined]
            return move
        q = self._values(self.policy.features(observation))
        best = max(legal, key=lambda a: q[a])
        return best if q[best] - q[move] > self.margin else move


# ---------------------------------------------------------------------------- the command


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="label a policy's decisions by all-action rollouts")
    c.add_argument("--checkpoint", default=CHAMPION, help="the policy (default: the champion)")
    c.add_argument("--games", type=int, default=2000, help="games to play")
    c.add_argument("--first", type=int, default=0, help="the first game's number")
    c.add_argument("--seed", type=int, default=41, help="the collection's seed")
    c.add_argument("--opponents", nargs="+", default=["expert"], help="the bots' specs")
    c.add_argument("--workers", type=int, default=1, help="processes")
    c.add_argument("--out", type=Path, required=True, help="the .npz to write")
    r = sub.add_parser("spread", help="how much of an advantage the stock's order decides")
    r.add_argument("--checkpoint", default=CHAMPION, help="the policy (default: the champion)")
    r.add_argument("--games", type=int, default=100, help="games to play")
    r.add_argument("--seed", type=int, default=43, help="the games' seed")
    r.add_argument("--every", type=int, default=10, help="every k-th labelled decision")
    r.add_argument("--shuffles", type=int, default=8, help="stock orders per position")
    f = sub.add_parser("fit", help="report on a policy's moves and fit a value head")
    f.add_argument("data", nargs="+", type=Path, help="collect's .npz files")
    f.add_argument("--checkpoint", default=CHAMPION, help="the policy the data are of")
    f.add_argument("--epochs", type=int, default=8)
    f.add_argument("--lr", type=float, default=3e-4)
    f.add_argument(
        "--hands",
        action="store_true",
        help="the head also reads the opponents' true hands (analysis only)",
    )
    f.add_argument("--out", type=Path, required=True, help="writes OUT.pt and OUT.json")
    args = parser.parse_args(argv)
    try:
        if args.command == "collect":
            if args.games < 1 or args.first < 0 or args.workers < 1:
                raise ValueError("--games and --workers: at least 1; --first: 0 or more")
            config = Collect(
                args.checkpoint, args.games, args.seed, tuple(args.opponents), first=args.first
            )
            data = collect(config, args.workers)
            buffer = io.BytesIO()
            np.savez_compressed(buffer, **data)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(args.out, buffer.getvalue())
            print(f"{len(data['mask'])} decisions of {args.games} games -> {args.out}")
            return 0
        if args.command == "spread":
            if args.games < 1 or args.every < 1 or args.shuffles < 2:
                raise ValueError("--games, --every: at least 1; --shuffles: at least 2")
            config = Collect(args.checkpoint, args.games, args.seed)
            print(json.dumps(stock_spread(config, args.every, args.shuffles)))
            return 0
        if args.epochs < 1 or args.lr <= 0:
            raise ValueError("--epochs: at least 1; --lr: above 0")
        data = load_data(args.data)
        if args.hands and "hands" not in data:
            raise ValueError("--hands: these files do not record the hands (collect them again)")
        report = {"policy": policy_report(args.checkpoint, data)}
        weights, report["head"] = fit(args.checkpoint, data, args.epochs, args.lr, hands=args.hands)
    except ValueError as e:
        print(f"one_step_improvement: {e}", file=sys.stderr)
        return 2
    import torch

    buffer = io.BytesIO()
    torch.save(weights, buffer)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(args.out.with_suffix(".pt"), buffer.getvalue())
    text = json.dumps(report, indent=1)
    atomic_write_text(args.out.with_suffix(".json"), text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
