"""The proof of sameness: VectorGame against the Python engine, decision by decision.

:func:`compare` plays B games of one configuration on a :class:`VectorGame` and, beside each
row, the :class:`~craits_env.Game` made with the same generator
(``default_rng(derive_seed(seed, b))``, continued into the row's next games), choosing
each decision at random among the legal actions. At every decision it asserts that both
engines give the same legal mask, the same observation (``craits_v0``'s encoder) and the
same snapshot (every key); at every step the same float32 rewards (``craits_v0``'s reward
arithmetic) and the same "game over"; at each game's end the same final snapshot. Every
``rebuild_every`` decisions the Python engine is also rebuilt from the vector's snapshot
and generator (``Game.from_snapshot``) and must reproduce it.

:func:`craits_env.testing.random_rules.random_config` draws configurations from the option
space of the random-option invariant tests (a test checks that it covers every option of ``Rules``).
``tests/craits_env/test_vector_differential.py`` runs it in CI;
``experiments/vector_differential.py`` is the documented longer run.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..actions import DRAW
from ..engine import Game
from ..observation import ObservationEncoder, legal_mask
from ..rewards import REWARD_MODES, game_rewards, hand_rewards
from ..rules import Rules
from ..seeding import derive_rng, derive_seed
from ..vector import VectorGame
from .random_rules import random_config

SHORT_SIZES = (1, 1, 2, 3)  # short_config's hand sizes


def short_config(r: random.Random, chance: float = 0.8) -> tuple[int, Rules]:
    """:func:`random_config`, whose schedule is, with probability ``chance``, one or two short
    hands (sizes of :data:`SHORT_SIZES`): the CI run's many quick games."""
    n, rules = random_config(r)
    if r.random() < chance:
        rules = rules.replace(
            hand_sizes=tuple(r.choice(SHORT_SIZES) for _ in range(r.randint(1, 2)))
        )
    return n, rules


@dataclass
class Tally:
    """What a comparison checked."""

    games: int = 0
    decisions: int = 0
    snapshots: int = 0
    rebuilds: int = 0
    configs: int = 0
    decks: dict[int, int] = field(default_factory=dict)  # decks in play -> games
    players: dict[int, int] = field(default_factory=dict)  # players -> games

    def add(self, other: Tally) -> None:
        self.games += other.games
        self.decisions += other.decisions
        self.snapshots += other.snapshots
        self.rebuilds += other.rebuilds
        self.configs += other.configs
        for mine, theirs in ((self.decks, other.decks), (self.players, other.players)):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v


class Mismatch(AssertionError):
    """The two engines disagreed; the message says where."""


def _python_rewards(game: Game, done_hands: int, mode: str) -> np.ndarray:
    """``craits_v0``'s rewards of one step: the hands finished since ``done_hands``, then
    the game's reward if it is over — summed in float64, then float32 as VectorGame's."""
    acc = [0.0] * game.num_players
    if mode != "win":
        for points in game.hand_points[done_hands:]:
            acc = [a + r for a, r in zip(acc, hand_rewards(points, mode), strict=True)]
    if game.is_over:
        acc = [a + r for a, r in zip(acc, game_rewards(game, mode), strict=True)]
    with np.errstate(over="ignore"):
        return np.array(acc, np.float64).astype(np.float32)


def _choose(legal: tuple[int, ...], policy: random.Random, draw_chance: float | None) -> int:
    """A random legal action; an optional DRAW with probability ``draw_chance``."""
    if draw_chance is not None and len(legal) > 1 and legal[-1] == DRAW:
        if policy.random() < draw_chance:
            return DRAW
        return legal[policy.randrange(len(legal) - 1)]
    return legal[policy.randrange(len(legal))]


def _check(ok: bool, what: str, where: str, mine: Any = None, theirs: Any = None) -> None:
    if not ok:
        detail = "" if mine is None else f": vector {mine!r} != python {theirs!r}"
        raise Mismatch(f"{what} differ at {where}{detail}")


def _first_difference(a: dict[str, Any], b: dict[str, Any]) -> str:
    keys = [k for k in a if a.get(k) != b.get(k)] + sorted(set(b) - set(a))
    return ", ".join(f"{k}: {a.get(k)!r} vs {b.get(k)!r}" for k in keys[:3])


def check_position(
    vg: VectorGame,
    b: int,
    g: Game,
    encoder: ObservationEncoder,
    mask: np.ndarray,
    obs: np.ndarray,
    where: str,
    *,
    snapshot: bool = True,
) -> None:
    """Game ``b`` of ``vg`` and ``g`` at a decision: the same legal mask (``mask``, a
    ``legal_mask()`` row), observation of the acting seat (``obs``, an ``observe()`` row)
    and, with ``snapshot``, the same snapshot."""
    legal = g.legal_actions()
    _check(
        np.array_equal(mask, legal_mask(legal)),
        "legal masks",
        where,
        np.flatnonzero(mask).tolist(),
        list(legal),
    )
    expected = encoder.encode(g, max(g.current_player, 0))
    if not np.array_equal(obs, expected):
        bad = np.flatnonzero(obs != expected).tolist()
        _check(False, "observations", where, (bad, obs[bad].tolist()), expected[bad].tolist())
    if snapshot:
        snap, mine = vg.snapshot(b, legal=legal), g.snapshot()
        _check(snap == mine, "snapshots", where, _first_difference(snap, mine), "")


def check_step(
    g: Game, hands_before: int, reward: str, rewards: np.ndarray, done: bool, where: str
) -> None:
    """After the same action in both engines: the same float32 rewards (``craits_v0``'s) and
    the same "game over" (``g`` had ``hands_before`` finished hands before it)."""
    expected = _python_rewards(g, hands_before, reward)
    _check(np.array_equal(rewards, expected), "rewards", where, rewards.tolist(), expected.tolist())
    _check(done == g.is_over, "done flags", where, done, g.is_over)


def check_rebuild(vg: VectorGame, b: int, rng: np.random.Generator, where: str) -> None:
    """The generator states agree (``rng``: the Python game's generator), and
    ``Game.from_snapshot`` of the vector's snapshot and generator gives that snapshot back."""
    state = vg.generator_state(b)
    _check(state == rng.bit_generator.state, "generator states", where)
    generator = np.random.Generator(np.random.PCG64(0))
    generator.bit_generator.state = state
    snap = vg.snapshot(b)
    _check(Game.from_snapshot(snap, rng=generator).snapshot() == snap, "rebuilt snapshots", where)


def compare(
    num_players: int,
    rules: Rules,
    *,
    num_envs: int = 4,
    games: int = 8,
    seed: int = 0,
    reward: str = "relative",
    snapshot_every: int = 1,
    rebuild_every: int = 97,
    max_decisions: int = 200_000,
    draw_chance: float | None = None,
) -> Tally:
    """Play at least ``games`` games (over ``num_envs`` rows) in both engines; raise
    :class:`Mismatch` at the first difference. ``snapshot_every``: compare the snapshots at
    every k-th decision of each row (1 = all). ``draw_chance``: the chance of drawing when
    DRAW is one of several legal actions (``voluntary_draw``; ``None``: uniform among all) —
    random players who draw half the time make hands of thousands of decisions."""
    vg = VectorGame(num_envs, num_players, rules, seed=seed, reward=reward, auto_reset=False)
    encoder = ObservationEncoder(num_players, rules)
    rngs = [np.random.default_rng(derive_seed(seed, b)) for b in range(num_envs)]
    py = [Game(num_players, rules, rng=rngs[b]) for b in range(num_envs)]
    policy = random.Random(derive_seed(seed, 1 << 20))
    tally = Tally(configs=1)
    decks = rules.decks_for(num_players)
    game_no = [0] * num_envs
    mask = np.empty((num_envs, 59), np.int8)
    obs = np.empty((num_envs, vg.obs_size), np.float32)
    steps = 0
    while tally.games < games:
        # A game can end when it is dealt (R10.2 on the starter's draws): start again.
        over = [b for b in range(num_envs) if py[b].is_over]
        for b in over:
            where = f"game {b}.{game_no[b]}"
            _check(bool(vg.is_over()[b]), "game over", where)
            snap = vg.snapshot(b)
            _check(
                snap == py[b].snapshot(),
                "final snapshots",
                where,
                _first_difference(snap, py[b].snapshot()),
                "",
            )
            tally.games += 1
            tally.snapshots += 1
            tally.decks[decks] = tally.decks.get(decks, 0) + 1
            tally.players[num_players] = tally.players.get(num_players, 0) + 1
            game_no[b] += 1
            vg.reset([b])
            py[b] = Game(num_players, rules, rng=rngs[b])
        if over:
            continue
        vg.legal_mask(mask)
        vg.observe(obs)
        actions = np.empty(num_envs, np.int64)
        before = [len(g.hand_points) for g in py]
        snapshot = steps % snapshot_every == 0
        for b, g in enumerate(py):
            where = f"game {b}.{game_no[b]}, hand {g.hand_index}, decision {g.hand_decisions}"
            check_position(vg, b, g, encoder, mask[b], obs[b], where, snapshot=snapshot)
            tally.snapshots += snapshot
            if rebuild_every and steps % rebuild_every == b % rebuild_every:
                check_rebuild(vg, b, rngs[b], where)
                tally.rebuilds += 1
            actions[b] = _choose(g.legal_actions(), policy, draw_chance)
        rewards, done = vg.step(actions)
        for b, g in enumerate(py):
            g.apply(int(actions[b]))
            check_step(
                g,
                before[b],
                reward,
                rewards[b],
                bool(done[b]),
                f"game {b}.{game_no[b]} after action {actions[b]}",
            )
        tally.decisions += num_envs
        steps += 1
        if steps * num_envs > max_decisions:
            raise Mismatch(f"no end after {max_decisions} decisions (games too long)")
    return tally


def run_many(
    num_configs: int,
    *,
    seed: int = 0,
    num_envs: int = 4,
    games_per_config: int = 8,
    snapshot_every: int = 1,
    draw_chance: float | None = None,
    short: float = 0.0,
) -> Tally:
    """:func:`compare` over ``num_configs`` random configurations and reward modes
    (``short``: the chance of a short schedule, :func:`short_config`)."""
    r = random.Random(seed)
    total = Tally()
    for i in range(num_configs):
        n, rules = short_config(r, short) if short else random_config(r)
        mode = r.choice(REWARD_MODES)
        game_seed = int(derive_rng(seed, i).integers(1 << 62))
        try:
            tally = compare(
                n,
                rules,
                num_envs=num_envs,
                games=games_per_config,
                seed=game_seed,
                reward=mode,
                snapshot_every=snapshot_every,
                draw_chance=draw_chance,
            )
        except Mismatch as e:
            raise Mismatch(
                f"config {i} (num_players={n}, reward={mode!r}, seed={game_seed}, "
                f"rules={rules.to_dict()}): {e}"
            ) from None
        total.add(tally)
    return total
