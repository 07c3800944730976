"""Train the luck estimator's value model (``agents/weights/luck_value.npz``) on zoo games.

``data``: plays the line-ups of :data:`LINEUPS` (zoo members against three ``expert``, mixed
tables, the 2-player game, 3, 5 and 6 players), one seat rotation a deal, on deals of
:data:`SEED` (a seed of its own, no benchmark suite's: ``tests/agents/test_luck.py`` checks
it), replays every game's chance events (:func:`craits.agents.luck.chance_events`) and keeps
a share of them as (the value model's inputs from every seat, the points each seat went on to
score in the hand). ``train``: a ReLU network fitted by Adam on the squared error (torch, for
training only) on targets clipped to ±600 points, a tenth of the games held out; writes the
numpy weights with their sha256 and this command in ``meta``. Usage::

    python experiments/luck_model.py data --out runs/luck
    python experiments/luck_model.py train --data runs/luck --out agents/weights/luck_value.npz

then set ``MODEL_SHA256`` in ``agents/luck.py`` to the hash it prints.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import time
from pathlib import Path

import numpy as np

from craits.agents.duplicate_tournament import GamePlayer, TournamentConfig, plan
from craits.agents.luck import (
    SCALE,
    array_names,
    chance_events,
    inputs,
    model_bytes,
    weights_hash,
)
from craits.agents.luck_features import INPUTS, STAGE_END
from craits_env.rules import Rules

SEED = 410_001
"""The training games' tournament seed (deals derived from it and the line-up's number)."""
SHORT = Rules(hand_sizes=(8, 7, 6, 5, 4, 3, 2, 1))
LINEUPS: tuple[tuple[int, Rules, tuple[str, ...], int], ...] = (
    (4, Rules(), ("random", "expert", "expert", "expert"), 400),
    (4, Rules(), ("greedy", "expert", "expert", "expert"), 400),
    (4, Rules(), ("tactician", "expert", "expert", "expert"), 400),
    (4, Rules(), ("expert", "expert", "expert", "expert"), 600),
    (4, Rules(), ("champion", "expert", "expert", "expert"), 400),
    (4, Rules(), ("random", "greedy", "tactician", "expert"), 300),
    (4, Rules(), ("champion", "champion", "expert", "greedy"), 200),
    (4, Rules(), ("random", "random", "random", "random"), 120),
    (4, SHORT, ("expert", "expert", "expert", "expert"), 200),
    (2, Rules(), ("expert", "expert"), 500),
    (2, Rules(), ("random", "expert"), 240),
    (2, Rules(), ("greedy", "expert"), 240),
    (2, Rules(), ("tactician", "expert"), 240),
    (3, Rules(), ("expert", "tactician", "greedy"), 120),
    (5, Rules(), ("expert", "expert", "tactician", "greedy", "random"), 80),
    (6, Rules(), ("expert", "expert", "expert", "tactician", "greedy", "random"), 60),
)
"""(players, rules, line-up, deals): the training games, one rotation a deal."""
CLIP = 600.0
"""Targets clipped to ±CLIP points: a spiral of shuffle pressures (R10.1, random players)
costs thousands, which a squared error would chase."""
KEEP = 0.35  # share of a game's chance events kept (consecutive ones are alike)


def _rows(job: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kept rows of deals ``lo..hi`` of line-up ``k``: inputs, targets, game numbers."""
    k, lo, hi = job
    players, rules, specs, deals = LINEUPS[k]
    config = TournamentConfig(specs, players, deals, SEED + k, rules, rotations="one")
    player = GamePlayer(config, record=True)
    xs, ys, gs = [], [], []
    for task in plan(config)[lo:hi]:
        ev = chance_events(player.play(task)["record"])
        rng = np.random.default_rng([SEED, k, task.deal])
        target = ev.remaining()
        keep = np.nonzero(
            (ev.stage != STAGE_END) & ~np.isnan(target[:, 0]) & (rng.random(len(ev)) < KEEP)
        )[0]
        x = inputs(ev, keep, ev.card[keep])
        xs.append(x.reshape(-1, INPUTS).astype(np.float16))
        ys.append(target[keep].reshape(-1))
        gs.append(np.full(len(keep) * players, k * 100_000 + task.deal, dtype=np.int64))
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(gs)


def data(out: Path, workers: int) -> None:
    jobs = [
        (k, lo, min(lo + 20, lineup[3]))
        for k, lineup in enumerate(LINEUPS)
        for lo in range(0, lineup[3], 20)
    ]
    start = time.monotonic()
    with mp.get_context("spawn").Pool(workers) as pool:
        parts = []
        for i, part in enumerate(pool.imap(_rows, jobs), 1):
            parts.append(part)
            print(f"{i}/{len(jobs)} chunks, {time.monotonic() - start:.0f} s", flush=True)
    x = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    g = np.concatenate([p[2] for p in parts])
    out.mkdir(parents=True, exist_ok=True)
    np.savez(out / "data.npz", x=x, y=y, game=g)
    print(f"{len(y):,} rows from {len(np.unique(g)):,} games in {time.monotonic() - start:.0f} s")


def train(
    folder: Path,
    out: Path,
    epochs: int,
    width: int,
    depth: int,
    rows: int,
    seed: int,
    command: str,
) -> None:
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(2)
    z = np.load(folder / "data.npz")
    x, y, game = z["x"], np.clip(z["y"], -CLIP, CLIP), z["game"]
    games = np.unique(game)
    rng = np.random.default_rng(seed)
    held = np.isin(game, rng.permutation(games)[: len(games) // 10])
    if rows and rows < len(y):  # a random share of the training rows
        held_rows = np.nonzero(held)[0]
        train_rows = rng.choice(np.nonzero(~held)[0], rows, replace=False)
        x, y, held = (
            x[np.r_[train_rows, held_rows]],
            y[np.r_[train_rows, held_rows]],
            np.r_[np.zeros(rows, bool), np.ones(len(held_rows), bool)],
        )
    xt = torch.tensor(x[~held], dtype=torch.float32)
    yt = torch.tensor(y[~held] / SCALE, dtype=torch.float32)
    xv = torch.tensor(x[held], dtype=torch.float32)
    yv = torch.tensor(y[held] / SCALE, dtype=torch.float32)
    modules: list[torch.nn.Module] = []
    for i in range(depth):
        modules += [torch.nn.Linear(INPUTS if i == 0 else width, width), torch.nn.ReLU()]
    net = torch.nn.Sequential(*modules, torch.nn.Linear(width, 1))
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    batch = 8192
    start = time.monotonic()
    for epoch in range(epochs):
        perm = torch.randperm(len(yt))
        net.train()
        for i in range(0, len(perm), batch):
            b = perm[i : i + batch]
            loss = torch.nn.functional.mse_loss(net(xt[b])[:, 0], yt[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
        with torch.no_grad():
            val = float(torch.nn.functional.mse_loss(net(xv)[:, 0], yv))
        base = float(((yv - yv.mean()) ** 2).mean())
        print(
            f"epoch {epoch + 1}: held-out MSE {val * SCALE**2:.1f} points² "
            f"(R² {1 - val / base:.3f}), {time.monotonic() - start:.0f} s",
            flush=True,
        )
    layers = [m for m in net if isinstance(m, torch.nn.Linear)]
    arrays = {}
    for i, layer in enumerate(layers):
        arrays[f"w{i}"] = layer.weight.detach().numpy().T.copy()
        arrays[f"b{i}"] = layer.bias.detach().numpy().copy()
    arrays["lin"] = np.zeros(INPUTS, np.float32)
    assert sorted(arrays) == sorted(array_names(len(layers)))
    meta = {
        "inputs": INPUTS,
        "width": width,
        "depth": depth,
        "target": "each seat's points from the state to the end of the hand, / 100",
        "training": {
            "command": command,
            "seed": SEED,
            "lineups": [[p, r.to_dict(), list(s), d] for p, r, s, d in LINEUPS],
            "rows": int((~held).sum()),
            "games": len(games),
            "held_out_r2": 1 - val / base,
            "held_out_mse": val * SCALE**2,
        },
    }
    out.write_bytes(model_bytes(arrays, meta))
    digest = weights_hash({k: np.ascontiguousarray(v, np.float32) for k, v in arrays.items()})
    print(f"wrote {out}: weights sha256 {digest}")
    print(json.dumps(meta["training"]["held_out_r2"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    d = sub.add_parser("data")
    d.add_argument("--out", type=Path, default=Path("runs/luck"))
    d.add_argument("--workers", type=int, default=2)
    t = sub.add_parser("train")
    t.add_argument("--data", type=Path, default=Path("runs/luck"))
    t.add_argument("--out", type=Path, default=Path("agents/weights/luck_value.npz"))
    t.add_argument("--epochs", type=int, default=12)
    t.add_argument("--width", type=int, default=64)
    t.add_argument("--depth", type=int, default=1, help="hidden layers")
    t.add_argument("--rows", type=int, default=1_500_000, help="training rows (a random share)")
    t.add_argument("--seed", type=int, default=0)
    f = sub.add_parser("fit")
    f.add_argument("--basis", type=Path, default=Path("runs/luck/basis.npz"))
    f.add_argument("--out", type=Path, default=Path("agents/weights/luck_value.npz"))
    f.add_argument("--workers", type=int, default=2)
    f.add_argument("--ridge", type=float, default=1e-4)
    args = parser.parse_args()
    if args.what == "fit":
        command = (
            f"python experiments/luck_model.py fit --basis {args.basis} --out {args.out} "
            f"--ridge {args.ridge}"
        )
        fit(args.basis, args.out, args.workers, args.ridge, command)
    elif args.what == "data":
        data(args.out, args.workers)
    else:
        command = (
            f"python experiments/luck_model.py train --data {args.data} --out {args.out} "
            f"--epochs {args.epochs} --width {args.width} --depth {args.depth} "
            f"--rows {args.rows} --seed {args.seed}"
        )
        train(
            args.data,
            args.out,
            args.epochs,
            args.width,
            args.depth,
            args.rows,
            args.seed,
            command,
        )


# ----------------------------------------------------------------------------- variance fit

FIT_DEALS = {0: 80, 1: 80, 2: 80, 3: 80, 4: 80, 5: 30, 6: 30, 8: 30, 9: 30, 10: 30, 11: 30, 12: 30}
"""Line-up -> deals whose games fit the output layer: mostly against three ``expert`` (the
benchmark's table), none of the all-random ones (their pressure spirals would dominate)."""


def _hand_features(job: tuple[int, int, int, str]) -> tuple[np.ndarray, np.ndarray]:
    """Per finished hand and seat of deals ``lo..hi`` of line-up ``k``: the features'
    corrections summed over the hand (:func:`craits.agents.luck.feature_corrections`), and
    the hand's points less the exact corrections of its ending draws."""
    from craits.agents.luck import feature_corrections, read_model

    k, lo, hi, basis = job
    players, rules, specs, deals = LINEUPS[k]
    config = TournamentConfig(specs, players, deals, SEED + k, rules, rotations="one")
    player = GamePlayer(config, record=True)
    model = read_model(basis)
    xs, ys = [], []
    for task in plan(config)[lo:hi]:
        ev = chance_events(player.play(task)["record"])
        feats, exact = feature_corrections(model, ev)  # (hands, n, K), (hands, n)
        hands = len(ev.hand_points)
        xs.append(feats[:hands].reshape(-1, feats.shape[-1]))
        ys.append((ev.hand_points - exact[:hands]).reshape(-1))
    return np.concatenate(xs), np.concatenate(ys)


def fit(basis: Path, out: Path, workers: int, ridge: float, command: str) -> None:
    """The output layer over ``[relu(basis's first layer), inputs]`` that removes the most
    variance from each hand's points: least squares of the points (less the exact ending
    corrections) on the features' corrections, a tenth of the games held out."""
    from craits.agents.luck import read_model

    jobs = [
        (k, lo, min(lo + 10, d), str(basis)) for k, d in FIT_DEALS.items() for lo in range(0, d, 10)
    ]
    start = time.monotonic()
    with mp.get_context("spawn").Pool(workers) as pool:
        parts = []
        for i, part in enumerate(pool.imap(_hand_features, jobs), 1):
            parts.append(part)
            print(f"{i}/{len(jobs)} chunks, {time.monotonic() - start:.0f} s", flush=True)
    held = np.array([i % 10 == 9 for i, p in enumerate(parts) for _ in range(len(p[1]))])
    x = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    y = np.clip(y, -CLIP, CLIP)
    scale = np.maximum(x[~held].std(axis=0), 1e-6)
    xs = x / scale
    a = xs[~held]
    beta = np.linalg.solve(a.T @ a + ridge * len(a) * np.eye(a.shape[1]), a.T @ y[~held]) / scale
    for name, m in (("training", ~held), ("held out", held)):
        resid = y[m] - x[m] @ beta
        print(
            f"{name}: hand points variance {y[m].var():.0f} -> {resid.var():.0f} "
            f"({1 - resid.var() / y[m].var():.3f} removed), {m.sum()} hands"
        )
    model = read_model(basis)
    w0, b0 = model.arrays["w0"], model.arrays["b0"]
    width = w0.shape[1]
    arrays = {
        "w0": w0,
        "b0": b0,
        "w1": (beta[:width] / SCALE)[:, None],
        "b1": np.zeros(1, np.float32),
        "lin": beta[width:] / SCALE,
    }
    held_removed = 1 - (y[held] - x[held] @ beta).var() / y[held].var()
    meta = {
        "inputs": INPUTS,
        "width": width,
        "depth": 1,
        "target": "each seat's points from the state to the end of the hand: the output layer "
        "fitted to the variance its corrections remove from each hand's points",
        "basis": model.meta.get("training", {}),
        "training": {
            "command": command,
            "seed": SEED,
            "fit_deals": {str(k): v for k, v in FIT_DEALS.items()},
            "lineups": [[p, r.to_dict(), list(s), d] for p, r, s, d in LINEUPS],
            "hands": len(y),
            "ridge": ridge,
            "held_out_variance_removed": float(held_removed),
        },
    }
    out.write_bytes(model_bytes(arrays, meta))
    digest = weights_hash({k: np.ascontiguousarray(v, np.float32) for k, v in arrays.items()})
    print(f"wrote {out}: weights sha256 {digest}")


if __name__ == "__main__":
    main()
