"""A learned card-location model: who holds each unseen card, from the seat's public view
(issue 31 §1, the alternative to the policy-weighted belief), measured as the belief is.

A network reads what the seat knows — its observation (``craits_v0``), the belief features
(:mod:`craits_env.belief`: the suits, wilds and count cards each opponent showed it lacked)
and, per opponent, the cards it played this hand — and gives, for every card, a distribution
over where it lies: each opponent (relative seat order) or the stock. It is trained by
cross-entropy on the true locations of the unseen cards at the decisions of four ``expert``
players (standard game, 4 players; every seat, decisions with a choice where PIMC searches:
some player holds ``ENDGAME`` cards or fewer), from training seeds of its own
(:data:`TRAIN_SEED`), and scored on the belief diagnostics' held-out games
(``experiments/belief_diagnostics.py``: the same points, beside the uniform consistent sampler
and the policy-weighted belief). Its marginals are fitted to the hand sizes (Sinkhorn: each
card's locations sum to 1, each location's cards to its size; none where the public history
proves the opponent holds none of the card's suit, wilds or count cards) before scoring.

``python experiments/card_locations.py --games 1500 --out experiments/results/belief/learned``
collects, trains (torch, one thread), writes ``model.npz`` and ``training.json``, then the
diagnostics of the held-out games (``diagnostics.json`` and ``.md``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from craits.agents.belief import BeliefSample, systematic_resample
from craits.agents.heuristics import ExpertAgent
from craits.agents.hidden_cards import CATEGORIES, seat_caps
from craits.agents.pimc import ENDGAME, PIMCAgent
from craits.agents.search_sampling import compiled_samples
from craits_env import Game, Rules
from craits_env.belief import belief_size, encode_belief
from craits_env.cards import NUM_CARDS
from craits_env.public import PublicGame, SeatView

TRAIN_SEED = 31_340_000
"""First seed of the training games (the diagnostics' held-out games start at 31,310,000)."""
PLAYERS = 4
UNKNOWN = -1  # a card the seat sees (its hand, the discard pile): no label


def feature_size(num_players: int) -> int:
    obs = len(np.asarray(PublicGame(Game(num_players, Rules(), seed=0)).view(0)["observation"]))
    return obs + belief_size(num_players) + NUM_CARDS * (num_players - 1)


def features(view: SeatView) -> np.ndarray:
    """The model's input at ``view``: public facts only (module doc)."""
    n, seat = view.num_players, view.seat
    obs = np.asarray(view["observation"], np.float32)
    played = np.zeros((n - 1, NUM_CARDS), np.float32)
    tracker = view.tracker
    for k in range(n - 1):
        for card in tracker.played[(seat + k + 1) % n]:
            played[k, card] += 1.0
    return np.concatenate([obs, encode_belief(tracker, seat), played.ravel()])


def labels(game: Game, seat: int) -> np.ndarray:
    """Per card: the opponent holding it (relative order, 0 = the seat's left), ``n - 1`` the
    stock, :data:`UNKNOWN` where the seat sees it."""
    n = game.num_players
    out = np.full(NUM_CARDS, UNKNOWN, np.int64)
    for k in range(n - 1):
        for card in game.hands[(seat + k + 1) % n]:
            out[card] = k
    for card in game.stock:
        out[card] = n - 1
    return out


def positions(view: SeatView) -> bool:
    """Whether the decision at ``view`` is one the model is trained and scored on."""
    return len(view.legal_actions) > 1 and min(view.hand_sizes) <= ENDGAME


def collect(games: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels at every seat's chosen decisions of ``games`` expert games."""
    agents = [ExpertAgent() for _ in range(PLAYERS)]
    xs, ys = [], []
    for g in range(games):
        game = Game(PLAYERS, Rules(), seed=seed + g)
        public = PublicGame(game)
        while not game.is_over:
            p = game.current_player
            view = public.view(p)
            if positions(view):
                xs.append(features(view))
                ys.append(labels(game, p))
            public.apply(agents[p].act(view))
    return np.stack(xs), np.stack(ys)


def sinkhorn(probs: np.ndarray, sizes: np.ndarray, unseen: np.ndarray, rounds: int = 20):
    """``probs`` (cards x locations) rescaled so that each unseen card's row sums to 1 and
    each location's column to its size (cards the seat sees get 0)."""
    m = probs * unseen[:, None]
    for _ in range(rounds):
        m *= (sizes / np.maximum(m.sum(axis=0), 1e-12))[None, :]
        m /= np.maximum(m.sum(axis=1, keepdims=True), 1e-12)
        m *= unseen[:, None]
    return m


class CardModel:
    """The trained network in numpy: :meth:`marginals` of a view, in the diagnostics' order
    (``m[card, location]``: opponents in seat order skipping the seat, then the stock)."""

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]]) -> None:
        self.layers = layers

    @classmethod
    def load(cls, path: Path) -> CardModel:
        data = np.load(path)
        count = len([k for k in data.files if k.startswith("w")])
        return cls([(data[f"w{i}"], data[f"b{i}"]) for i in range(count)])

    def save(self, path: Path) -> None:
        arrays = {}
        for i, (w, b) in enumerate(self.layers):
            arrays[f"w{i}"], arrays[f"b{i}"] = w, b
        np.savez_compressed(path, **arrays)

    def logits(self, x: np.ndarray) -> np.ndarray:
        for i, (w, b) in enumerate(self.layers):
            x = x @ w.T + b
            if i < len(self.layers) - 1:
                x = np.maximum(x, 0.0)
        return x

    def marginals(self, view: SeatView) -> np.ndarray:
        n, seat = view.num_players, view.seat
        z = self.logits(features(view)).reshape(NUM_CARDS, n)
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        unseen = np.zeros(NUM_CARDS)
        unseen[view.unseen_cards()] = 1.0
        # relative order (k: seat + k + 1) to seat order skipping the seat
        order = [(s - seat - 1) % n for s in range(n) if s != seat] + [n - 1]
        p = p[:, order]
        for loc, s in enumerate(s for s in range(n) if s != seat):  # what is proved: none
            caps = seat_caps(view.tracker, s)
            for card in range(NUM_CARDS):
                if any(caps[category] == 0 for category in CATEGORIES[card]):
                    p[card, loc] = 0.0
        sizes = np.array([k for s, k in enumerate(view.hand_sizes) if s != seat], float)
        sizes = np.append(sizes, float(unseen.sum() - sizes.sum()))
        return sinkhorn(p, sizes, unseen)


POWER = 0.4
"""The weights' power: the best log score of the weighted worlds' marginals among 1, 0.5,
0.4, 0.3 and 0.2 on the first diagnostic games (the README)."""


class LearnedBelief:
    """Worlds weighted by the model: uniform consistent candidates (as ``champion-search``
    draws them), each weighed by the product over the unseen cards of the model's marginal
    probability of the card's place in it (the uniform proposal gives every consistent world
    the same probability, so that product is the importance weight) raised to ``power`` (the
    marginals multiplied as if the cards were independent are overconfident: at 1 the weights
    collapse, an effective 31 of 512 worlds, and the worlds' own marginals score below the
    uniform ones), then resampled (as
    :class:`~craits.agents.belief.PolicyBelief` resamples). A ``sampler`` for
    :class:`~craits.agents.pimc.PIMCAgent`."""

    def __init__(
        self, model: CardModel, power: float = POWER, oversample: int = 4, limit: int = 512
    ) -> None:
        self.model, self.power, self.oversample, self.limit = model, power, oversample, limit

    def sample(self, view: SeatView, n: int, rng: np.random.Generator) -> BeliefSample:
        sizes = {s: k for s, k in enumerate(view.hand_sizes) if s != view.seat}
        caps = {s: seat_caps(view.tracker, s) for s in sizes}
        unseen = view.unseen_cards()
        k = max(n, min(self.oversample * n, self.limit))
        rows = compiled_samples(k, unseen, sizes, caps, rng)
        loc_of_slot = np.concatenate(
            [np.full(size, i) for i, size in enumerate(sizes.values())]
            + [np.full(len(unseen) - sum(sizes.values()), len(sizes))]
        ).astype(np.int64)
        log_m = np.log(np.maximum(self.model.marginals(view), 1e-9))
        log_w = self.power * log_m[rows, loc_of_slot[None, :]].sum(axis=1)
        weights = np.exp(log_w - log_w.max())
        weights /= weights.sum()
        picked = systematic_resample(weights, n, rng)
        ess = float(1.0 / np.sum(weights**2))
        return BeliefSample(rows[picked], np.full(n, 1.0 / n), ess, k)


MODEL = Path(__file__).parent / "results" / "belief" / "learned" / "model.npz"


def learned_search(seed: int | None = None) -> PIMCAgent:
    """``champion-search`` drawing its worlds from :class:`LearnedBelief` over the committed
    model (a user spec: ``experiments/card_locations.py:learned_search``)."""
    from craits.agents.champion import SEARCH_SIMULATIONS, make_champion

    if not MODEL.is_file():
        raise FileNotFoundError(
            f"{MODEL} is not committed (2.1 MB): experiments/results/README.md says how to have it"
        )
    agent = PIMCAgent(
        SEARCH_SIMULATIONS,
        seed=seed,
        prior=make_champion("", seed),
        sampler=LearnedBelief(CardModel.load(MODEL)),
    )
    agent.name = "learned-search"
    return agent


def train(
    x: np.ndarray, y: np.ndarray, *, width: int, epochs: int, seed: int, log: list[dict]
) -> CardModel:
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    n = PLAYERS
    net = torch.nn.Sequential(
        torch.nn.Linear(x.shape[1], width),
        torch.nn.ReLU(),
        torch.nn.Linear(width, width),
        torch.nn.ReLU(),
        torch.nn.Linear(width, NUM_CARDS * n),
    )
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(x))
    valid = order[: len(x) // 20]
    fit = order[len(x) // 20 :]
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=UNKNOWN)

    def loss_of(idx: np.ndarray) -> torch.Tensor:
        z = net(xt[idx]).reshape(-1, NUM_CARDS, n)
        return loss_fn(z.reshape(-1, n), yt[idx].reshape(-1))

    for epoch in range(epochs):
        t0 = time.perf_counter()
        rng.shuffle(fit)
        for lo in range(0, len(fit), 512):
            opt.zero_grad()
            loss = loss_of(fit[lo : lo + 512])
            loss.backward()
            opt.step()
        with torch.no_grad():
            v = float(loss_of(valid)) / np.log(2)
        log.append({"epoch": epoch + 1, "valid_bits": -v, "seconds": time.perf_counter() - t0})
        print(f"epoch {epoch + 1}: validation log2 p {-v:.4f} bits per card", flush=True)
    layers = [
        (m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy())
        for m in net
        if isinstance(m, torch.nn.Linear)
    ]
    return CardModel(layers)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1500, help="training games")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--seed", type=int, default=TRAIN_SEED)
    parser.add_argument("--diagnostic-games", type=int, default=8)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.games < 1 or args.epochs < 1 or args.width < 1:
        parser.error("--games, --epochs and --width must be at least 1")
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    x, y = collect(args.games, args.seed)
    collected = time.perf_counter() - t0
    print(f"{len(x)} positions from {args.games} games in {collected:.0f} s", flush=True)
    log: list[dict] = []
    model = train(x, y, width=args.width, epochs=args.epochs, seed=args.seed, log=log)
    model.save(args.out / "model.npz")
    meta = {
        "games": args.games,
        "seed": args.seed,
        "positions": len(x),
        "width": args.width,
        "epochs": args.epochs,
        "collect_seconds": collected,
        "log": log,
    }
    (args.out / "training.json").write_text(json.dumps(meta, indent=1) + "\n")

    sys.path.insert(0, str(Path(__file__).parent))
    import belief_diagnostics as bd

    diag = bd.parser().parse_args(["--games", str(args.diagnostic_games), "--temperature", "2"])
    result = bd.measure(diag, learned=model.marginals)
    text = bd.markdown(result)
    print(text)
    (args.out / "diagnostics.json").write_text(json.dumps(result, indent=1) + "\n")
    (args.out / "diagnostics.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
