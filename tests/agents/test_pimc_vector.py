"""PIMC on the compiled engine: the same numbers as the Python search, bit for bit.

``craits.agents.search_rollouts`` (the greedy rollouts, numba) against
``craits.agents.pimc``'s ``greedy_rollout_action`` and ``rollout_value``,
``craits.agents.search_sampling`` (the samples) against ``hidden_cards.sample_hidden`` —
both drawing from numpy generators — and ``PIMCAgent(engine="compiled")`` against
``PIMCAgent(engine="python")``: the same choices, values and generator states.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from craits.agents.hidden_cards import UNLIMITED, sample_hidden, seat_caps
from craits.agents.pimc import ENGINES, PIMCAgent
from craits.agents.rollout_policy import (
    MAX_ROLLOUT_DECISIONS,
    ROLLOUT_VALUE,
    greedy_rollout_action,
    rollout_value,
)
from craits.agents.search_rollouts import Rollouts, points_of, policy_action
from craits.agents.search_sampling import compiled_samples
from craits.agents.specs import make_agent
from craits_env import Game, Phase, Rules, parse_card
from craits_env.cards import RANK_OF, Rank
from craits_env.public import PublicGame
from craits_env.testing.random_rules import random_config
from craits_env.vector import VectorGame
from craits_env.vector.jit import entry
from craits_env.vector.rng import export_state, generator_row, random_below

SHORT_GAME = (8, 7, 6, 5, 4, 3, 2, 1)


def random_positions(r: random.Random, games: int, per_game: int) -> Iterator[PublicGame]:
    """Positions of random-option games (``random_config``: 2-10 players, one or two decks,
    every option), played at random; each game yields up to ``per_game`` of them."""
    for _ in range(games):
        n, rules = random_config(r)
        game = Game(n, rules, seed=r.randrange(1 << 30))
        pub = PublicGame(game)
        found = 0
        while not game.is_over and found < per_game:
            legal = game.legal_actions()
            if len(legal) > 1 or r.random() < 0.2:
                found += 1
                yield pub
            pub.apply(legal[r.randrange(len(legal))])


class Tables:
    """One VectorGame / Rollouts per table, made on first use."""

    def __init__(self) -> None:
        self.games: dict[tuple[int, Rules], VectorGame] = {}
        self.rollouts: dict[tuple[int, Rules], Rollouts] = {}

    def game(self, g: Game) -> VectorGame:
        key = (g.num_players, g.rules)
        if key not in self.games:
            self.games[key] = VectorGame(1, *key, seed=0, auto_reset=False)
        return self.games[key]

    def rollout(self, g: Game) -> Rollouts:
        key = (g.num_players, g.rules)
        if key not in self.rollouts:
            self.rollouts[key] = Rollouts(*key)
        return self.rollouts[key]


# ---------------------------------------------------------------------------- the policy


def test_the_preference_puts_wild_cards_last() -> None:
    wild = [RANK_OF[c] in (Rank.EIGHT, Rank.NINE) for c in range(52)]
    assert [v < 0 for v in ROLLOUT_VALUE] == wild  # 8s and 9s below all else


@pytest.mark.slow
def test_greedy_action_is_greedy_rollout_action() -> None:
    """The compiled policy picks greedy_rollout_action's action in every phase (R3.1 play,
    R5.2 count, R3.2 / R4 suit calls, R7.1 declarations), ties included."""
    r = random.Random(1)
    tables = Tables()
    phases: dict[int, int] = {}
    checked = 0
    for pub in random_positions(r, 300, 12):
        game = pub.game
        vg = tables.game(game)
        vg.load_game(0, game)
        assert policy_action(vg.state.st, vg.state.params, 0) == greedy_rollout_action(game)
        phases[game.phase] = phases.get(game.phase, 0) + 1
        checked += 1
    assert checked > 2500
    for phase in (Phase.PLAY, Phase.COUNT, Phase.CALL_SUIT, Phase.DECLARE):
        assert phases.get(phase, 0) > 20, phases


# ---------------------------------------------------------------------------- rollouts


def _owners(sizes: dict[int, int], unseen: int) -> np.ndarray:
    owners = [s for s in sizes for _ in range(sizes[s])]
    return np.array(owners + [-1] * (unseen - len(owners)), np.int64)


@pytest.mark.slow
def test_rollout_values_are_the_python_ones() -> None:
    """Random positions of random-option games, three samples each, every legal action:
    the compiled values equal rollout_value's (reshuffles, hands ended and cut short
    included) and the shared numpy generator ends in the same state."""
    r = random.Random(2)
    tables = Tables()
    tally = {"positions": 0, "rollouts": 0, "reshuffled": 0, "ended": 0, "cut short": 0}
    for pub in random_positions(r, 250, 10):
        game = pub.game
        seat = game.current_player
        view = pub.view(seat)
        sizes = {s: k for s, k in enumerate(view.hand_sizes) if s != seat}
        caps = {s: seat_caps(view.tracker, s) for s in sizes}
        unseen = view.unseen_cards()
        legal = list(view.legal_actions)
        others = r.choice((1.0, 0.5, 0.0))
        cap = r.choice((MAX_ROLLOUT_DECISIONS, MAX_ROLLOUT_DECISIONS, 4))
        sampler = np.random.default_rng(r.randrange(1 << 30))
        np_rng = np.random.default_rng(r.randrange(1 << 30))
        start = np_rng.bit_generator.state
        rows, roots, expected = [], [], []
        for _ in range(3):
            hands, stock = sample_hidden(unseen, sizes, caps, sampler)
            root = view.determinize(hands, stock, np_rng)
            roots.append(root)
            rows.append([c for s in sizes for c in hands[s]] + stock)
            row = []
            for action in legal:
                g = root.clone(rng=np_rng)
                g.apply(action)
                row.append(
                    rollout_value(g, seat, game.hand_index, max_decisions=cap, others=others)
                )
                tally["rollouts"] += 1
                tally["reshuffled"] += sum(g.shuffle_pressures) > sum(root.shuffle_pressures)
                if g.hand_index != game.hand_index:
                    tally["ended"] += 1
                else:
                    tally["cut short"] += 1
            expected.append(row)
        rollouts = tables.rollout(game)
        rollouts.load(roots[0])
        values, state = rollouts.values(
            np.array(rows),
            _owners(sizes, len(unseen)),
            legal,
            seat,
            start,
            others=others,
            max_decisions=cap,
        )
        assert values is not None and values.tolist() == expected
        assert state == np_rng.bit_generator.state
        tally["positions"] += 1
    assert tally["positions"] > 2000 and tally["rollouts"] > 15000, tally
    assert tally["reshuffled"] > 200 and tally["ended"] > 5000 and tally["cut short"] > 500, tally


@pytest.mark.slow
def test_cut_short_points_are_the_held_cards() -> None:
    """A rollout stopped before the hand ends scores the cards held (R8.2-R8.4)."""
    r = random.Random(3)
    tables = Tables()
    checked = 0
    for pub in random_positions(r, 60, 8):
        game = pub.game
        vg = tables.game(game)
        vg.load_game(0, game)
        seat = r.randrange(game.num_players)
        others = r.choice((1.0, 0.25))
        g = game.clone()
        expected = rollout_value(g, seat, game.hand_index, max_decisions=0, others=others)
        got = points_of(vg.state.st, vg.state.params, 0, seat, game.hand_index, others)
        assert got == expected
        checked += 1
    assert checked > 300


def _huge_pressures(seed: int) -> PublicGame:
    """A game early in its first hand whose seat 1 already took 50 shuffle pressures (its
    score says so, R10.1): a finished hand's points then need more than 53 bits."""
    game = Game(3, Rules(hand_sizes=(3,)), seed=seed)
    assert not any(game._hand_penalties)
    k = 50
    game.scores[1] += 5 * ((1 << k) - 1) - 5 * ((1 << game.shuffle_pressures[1]) - 1)
    game.shuffle_pressures[1] = k
    return PublicGame(game)


def test_points_beyond_float64_fall_back_to_python() -> None:
    """Points with more than EXACT_PRESSURES pressures: the compiled rollouts refuse them
    and the agent takes Python's big integers instead — the same values and states."""
    pub = _huge_pressures(4)
    game = pub.game
    seat = game.current_player
    view = pub.view(seat)
    legal = list(view.legal_actions)
    sizes = {s: k for s, k in enumerate(view.hand_sizes) if s != seat}
    hands, stock = sample_hidden(view.unseen_cards(), sizes, {}, np.random.default_rng(0))
    rollouts = Rollouts(game.num_players, game.rules)
    rollouts.load(view.determinize(hands, stock, None))
    start = np.random.default_rng(0).bit_generator.state
    values, state = rollouts.values(
        np.array([[c for s in sizes for c in hands[s]] + stock]),
        _owners(sizes, len(view.unseen_cards())),
        legal,
        seat,
        start,
    )
    assert values is None and state == start
    a, b = PIMCAgent(12, seed=3, engine="compiled"), PIMCAgent(12, seed=3, engine="python")
    assert a.action_values(view) == b.action_values(view)
    assert a.generator_states() == b.generator_states()


def test_rollouts_refuse_bad_input() -> None:
    game = Game(3, Rules(), seed=0)
    rollouts = Rollouts(3, Rules())
    state = np.random.default_rng(0).bit_generator.state
    sizes = {1: len(game.hands[1]), 2: len(game.hands[2])}
    owners = _owners(sizes, sizes[1] + sizes[2] + game.stock_size)
    legal = list(game.legal_actions())
    with pytest.raises(ValueError, match="load a root position first"):
        rollouts.values(np.zeros((1, owners.size)), owners, legal, 0, state)
    rollouts.load(game)
    with pytest.raises(ValueError, match="owners"):
        rollouts.values(np.zeros((1, owners.size)), owners[1:], legal, 0, state)
    cards = np.zeros((1, owners.size))
    with pytest.raises(ValueError, match="hand sizes or stock size"):
        rollouts.values(cards[:, 1:], owners[1:], legal, 0, state)
    illegal = next(a for a in range(59) if a not in legal)
    cases: list[tuple[np.ndarray, np.ndarray, list[int], int, str]] = [
        (cards, owners, [illegal], 0, "not legal at the root"),
        (cards, owners, legal, 3, "seat: got 3"),
        (cards, owners + 5, legal, 0, "owners: allowed seats"),
        (cards + 52, owners, legal, 0, "cards: allowed card indices"),
    ]
    for bad_cards, bad_owners, actions, seat, match in cases:
        with pytest.raises(ValueError, match=match) as info:
            rollouts.values(bad_cards, bad_owners, actions, seat, state)
        assert "\n" not in str(info.value)


# ---------------------------------------------------------------------------- samples


def _random_plan(r: random.Random) -> tuple[list[int], dict[int, int], dict[int, list[int]]]:
    if r.random() < 0.1:  # bounds no deal can meet: every unseen card a heart, seat 1 none
        hearts = range(parse_card("Ah"), parse_card("Kh") + 1)
        unseen = sorted(r.sample(hearts, 8))
        no_heart = [UNLIMITED] * 6
        no_heart[2] = 0
        return unseen, {1: 3, 2: 2}, {1: no_heart, 2: [UNLIMITED] * 6}
    n = r.randrange(2, 8)
    unseen = sorted(r.sample(range(52), r.randrange(1, 50)))
    sizes: dict[int, int] = {}
    left = len(unseen)
    for s in range(1, n):
        sizes[s] = r.randrange(0, min(9, left) + 1)
        left -= sizes[s]
    caps = {
        s: [r.choice((UNLIMITED, UNLIMITED, UNLIMITED, 0, 1, 2, 4)) for _ in range(6)]
        for s in sizes
        if r.random() < 0.8
    }
    return unseen, sizes, caps


@pytest.mark.slow
def test_compiled_samples_are_sample_hidden_draw_for_draw() -> None:
    """deal_samples gives sample_hidden's hands (in order) and stock, sample after sample,
    and leaves the numpy generator in the state the Python calls leave it (a buffered
    32-bit half included); bounded deals, retries and the plain-shuffle fallback all occur."""
    r = random.Random(5)
    bounded = fallback = 0
    for case in range(3000):
        unseen, sizes, caps = _random_plan(r)
        count = r.randrange(1, 6)
        seed = r.randrange(1 << 30)
        python, compiled = np.random.default_rng(seed), np.random.default_rng(seed)
        if case % 7 == 0:  # half of a 64-bit draw waits in the generator (has_uint32)
            assert python.integers(5) == compiled.integers(5)
        expected = [sample_hidden(unseen, sizes, caps, python) for _ in range(count)]
        got = compiled_samples(count, unseen, sizes, caps, compiled).tolist()
        for (hands, stock), row in zip(expected, got, strict=True):
            assert row == [c for s in sizes for c in hands[s]] + stock
        assert compiled.bit_generator.state == python.bit_generator.state
        chains = [s for s in caps if sizes.get(s) and min(caps[s]) < UNLIMITED]
        bounded += bool(chains)
        fallback += sizes == {1: 3, 2: 2} and unseen[0] >= parse_card("Ah")
    assert bounded > 1500 and fallback > 200, (bounded, fallback)


@entry
def _draws_below(gen: Any, bounds: Any, out: Any) -> None:
    for i in range(bounds.shape[0]):
        out[i] = random_below(gen, 0, bounds[i])


def test_random_below_is_generator_integers() -> None:
    """random_below(n) draws Generator.integers(n): small and large bounds, the rejection
    path (bounds just above 2**31 reject about half their draws), n == 1 drawing nothing."""
    r = random.Random(8)
    bounds = [
        r.choice((1, 2, 3, 52, 1000, (1 << 31) + 1, (1 << 32) - 1, r.randrange(1, 1 << 32)))
        for _ in range(20_000)
    ]
    rng = np.random.default_rng(8)
    gen = generator_row(rng.bit_generator.state)
    out = np.zeros(len(bounds), np.int64)
    _draws_below(gen, np.array(bounds, np.int64), out)
    assert out.tolist() == [int(rng.integers(n)) for n in bounds]
    assert export_state(gen, 0) == rng.bit_generator.state


def test_compiled_samples_refuse_another_generator() -> None:
    rng = np.random.Generator(np.random.MT19937(0))
    with pytest.raises(ValueError, match="allowed PCG64") as info:
        compiled_samples(1, [0, 1, 2], {1: 2}, {}, rng)
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------------------- the agent


def _play_with_both(n: int, rules: Rules, seed: int, simulations: int, **kw: Any) -> dict[str, int]:
    """Every seat played by a compiled and a Python PIMCAgent, asked the same decisions:
    the same action every time, the same generator states after it; every fifth searched
    decision also the same action_values. Returns counts."""
    game = Game(n, rules, seed=seed)
    pub = PublicGame(game)
    compiled = [PIMCAgent(simulations, seed=seed + s, engine="compiled", **kw) for s in range(n)]
    python = [PIMCAgent(simulations, seed=seed + s, engine="python", **kw) for s in range(n)]
    tally = {"decisions": 0, "values": 0}
    while not game.is_over:
        seat = game.current_player
        view = pub.view(seat)
        a, b = compiled[seat], python[seat]
        if len(view.legal_actions) > 1 and tally["decisions"] % 5 == 4:
            assert a.action_values(view) == b.action_values(view)
            tally["values"] += 1
        action = a.act(view)
        assert action == b.act(view)
        assert a.generator_states() == b.generator_states()
        tally["decisions"] += len(view.legal_actions) > 1
        pub.apply(action)
    return tally


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_the_engines_play_the_same_short_game(n: int) -> None:
    tally = _play_with_both(n, Rules(hand_sizes=SHORT_GAME), seed=10 * n, simulations=24)
    assert tally["decisions"] > 60 and tally["values"] > 10, tally


@pytest.mark.slow
def test_the_engines_agree_over_random_options_and_variants() -> None:
    r = random.Random(6)
    variants: list[dict[str, Any]] = [{}, {"prior": None}, {"endgame": None, "others": 0.5}]
    decisions = 0
    for k in range(8):
        n, rules = random_config(r)
        kw = variants[k % 3]
        decisions += _play_with_both(n, rules, seed=k, simulations=10, **kw)["decisions"]
    assert decisions > 100


def test_engine_argument() -> None:
    assert ENGINES == ("auto", "compiled", "python")
    assert PIMCAgent(8).engine == "compiled"
    assert make_agent("pimc").engine == "compiled"  # type: ignore[attr-defined]
    assert make_agent("pimc:16").engine == "compiled"  # type: ignore[attr-defined]
    assert PIMCAgent(8, engine="python").engine == "python"

    def policy(game: Game) -> int:
        return greedy_rollout_action(game)

    assert PIMCAgent(8, rollout=policy).engine == "python"  # a custom rollout stays in Python
    with pytest.raises(ValueError, match="custom rollout") as info:
        PIMCAgent(8, rollout=policy, engine="compiled")
    assert "\n" not in str(info.value)
    for bad in ("numba", "", None, 1):
        with pytest.raises(ValueError, match="engine: got") as info:
            PIMCAgent(8, engine=bad)  # type: ignore[arg-type]
        assert "\n" not in str(info.value)


def test_rules_beyond_the_compiled_engine() -> None:
    """'auto' plays rules the compiled engine cannot represent in Python; 'compiled' says
    why it cannot."""
    rules = Rules(hand_sizes=(5,), three_points=10**7)
    game = Game(2, rules, seed=0)
    pub = PublicGame(game)
    while len(game.legal_actions()) < 2 or game.phase == Phase.DECLARE:
        pub.apply(game.legal_actions()[0])
    view = pub.view(game.current_player)
    auto = PIMCAgent(8, seed=0, endgame=None)
    assert auto.act(view) == PIMCAgent(8, seed=0, endgame=None, engine="python").act(view)
    assert auto._tables == {(2, rules): None}
    with pytest.raises(ValueError, match="three_points"):
        PIMCAgent(8, seed=0, endgame=None, engine="compiled").act(view)
