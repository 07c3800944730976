"""craits_env.vector.VectorGame: the API, its errors, the generator, auto-reset, loading
games, exact scores at any size, refusals, and craits_v0's backend="vector".

The decision-by-decision proof of sameness over thousands of random games is
``tests/craits_env/test_vector_differential.py``; the env tests of
``tests/craits_env/test_env.py`` run on both backends (``tests/conftest.py``).
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import numpy as np
import pytest

from craits_env import NUM_ACTIONS, Game, Rules, craits_v0
from craits_env.deck import deck_cards, draw_first_dealer
from craits_env.observation import ObservationEncoder
from craits_env.seeding import derive_seed
from craits_env.testing.vector_differential import check_position, check_step
from craits_env.vector import RandomPolicy, VectorGame, kernel, layout
from craits_env.vector.rng import load_state

from .test_snapshots import (
    assert_one_line_error,
    assert_same_env,
    copies,
    env_step,
    make_env,
    random_env_args,
)


def play(vg: VectorGame, steps: int, seed: int = 0) -> None:
    policy = RandomPolicy(seed)
    for _ in range(steps):
        vg.step(policy.actions(vg.legal_mask()))


def snapshots(vg: VectorGame) -> list[dict[str, Any]]:
    return [vg.snapshot(b) for b in range(vg.num_envs)]


# ---------------------------------------------------------------------- the generator


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 7, 12345, 2**62 + 5])
def test_permutations_are_numpys_draw_for_draw(seed: int) -> None:
    """The compiled PCG64 + Generator.permutation give numpy's results and leave numpy's
    state (the buffered 32-bit half included), through lengths that use 0, 1 or many draws."""
    vg = VectorGame(1, 2, seed=0)
    g = np.random.default_rng(seed)
    g.random()  # a state that is not fresh
    load_state(vg.state.st, 0, g.bit_generator.state)
    for length in (52, 1, 0, 2, 104, 44, 88, 3, 52, 7):
        expected = g.permutation(length)
        assert kernel.permutation(vg.state.st, 0, length).tolist() == expected.tolist()
        assert vg.generator_state(0) == g.bit_generator.state


def test_first_dealer_is_r2_1_draw_from_the_same_generator() -> None:
    rules = Rules()
    for n in (2, 3, 5, 8, 10):
        vg = VectorGame(1, n, rules, seed=0)
        deck = deck_cards(rules.decks_for(n), False)
        for seed in range(30):
            g = np.random.default_rng(seed)
            load_state(vg.state.st, 0, g.bit_generator.state)
            got = kernel.first_dealer(vg.state.st, vg.state.params, vg.state.deck, 0)
            assert got == draw_first_dealer(g, n, deck)
            assert vg.generator_state(0) == g.bit_generator.state


def test_each_row_is_the_python_game_of_its_derived_generator() -> None:
    for n, rules in ((4, Rules()), (7, Rules(face_cards=True)), (2, Rules(num_decks=2))):
        vg = VectorGame(5, n, rules, seed=11)
        for b in range(5):
            rng = np.random.default_rng(derive_seed(11, b))
            assert vg.snapshot(b) == Game(n, rules, rng=rng).snapshot()
            assert vg.generator_state(b) == rng.bit_generator.state


@pytest.mark.slow
def test_same_seed_same_games_other_seed_other_deals() -> None:
    a, b, c = (VectorGame(6, 4, seed=s) for s in (3, 3, 4))
    play(a, 300, seed=1)
    play(b, 300, seed=1)
    play(c, 300, seed=1)
    assert snapshots(a) == snapshots(b)
    assert [s["deal"] for s in snapshots(a)] != [s["deal"] for s in snapshots(c)]
    unseeded = VectorGame(2, 4), VectorGame(2, 4)  # fresh OS entropy
    assert unseeded[0].snapshot(0)["deal"] != unseeded[1].snapshot(0)["deal"]


# ---------------------------------------------------------------------- the API


def test_shapes_dtypes_and_views_agree() -> None:
    vg = VectorGame(8, 5, Rules(face_cards=True), seed=2)
    enc = ObservationEncoder(5, Rules(face_cards=True))
    mask = vg.legal_mask()
    obs = vg.observe()
    assert mask.shape == (8, NUM_ACTIONS) and mask.dtype == np.int8
    assert obs.shape == (8, enc.size) and obs.dtype == np.float32 and vg.obs_size == enc.size
    players = vg.current_player()
    assert players.shape == (8,) and players.dtype == np.int64
    for b in range(8):
        assert tuple(np.flatnonzero(mask[b])) == vg.legal_actions(b)
        assert players[b] == vg.snapshot(b)["current_player"]
    out = np.zeros_like(obs)
    assert vg.observe(out) is out and np.array_equal(out, obs)
    seats = np.arange(8) % 5
    game = Game.from_snapshot(vg.snapshot(3))
    assert np.array_equal(vg.observe(seats=seats)[3], enc.encode(game, 3))
    rewards, done = vg.step(RandomPolicy(0).actions(mask))
    assert rewards.shape == (8, 5) and rewards.dtype == np.float32
    assert done.shape == (8,) and done.dtype == np.bool_
    assert vg.memory_bytes() == layout.state_bytes(8, 5, Rules(face_cards=True))
    assert "VectorGame(num_envs=8" in repr(vg)
    policy, seen = RandomPolicy(1), set()
    for _ in range(400):  # hands_finished: each game's finished hands, 0 again in a new game
        hands = vg.hands_finished()
        assert hands.shape == (8,) and hands.dtype == np.int64
        assert hands.tolist() == [len(vg.hand_points(b)) for b in range(8)]
        seen |= set(hands.tolist())
        vg.step(policy.actions(vg.legal_mask()))
    assert {0, 1, 2} <= seen


@pytest.mark.parametrize(
    "kwargs, names",
    [
        ({"num_envs": 0}, ["num_envs", ">= 1"]),
        ({"num_envs": 2.0}, ["num_envs"]),
        ({"num_envs": 1, "num_players": 11}, ["num_players", "2 to 10"]),
        ({"num_envs": 1, "rules": {"face_cards": True}}, ["rules", "Rules"]),
        ({"num_envs": 1, "reward": "points"}, ["reward", "'relative'"]),
        ({"num_envs": 1, "auto_reset": 1}, ["auto_reset"]),
        ({"num_envs": 1, "seed": -1}, ["seed", ">= 0"]),
        ({"num_envs": 1, "num_players": 7, "rules": Rules(num_decks=1)}, ["cannot deal"]),
        ({"num_envs": 1, "rules": Rules(three_points=10**7)}, ["does not support", "three_points"]),
        ({"num_envs": 1, "rules": Rules(hand_sizes=(1,) * 10_001)}, ["hand_sizes", "10,000"]),
        (
            {"num_envs": 100, "rules": Rules(hand_decision_limit=10**8)},
            ["num_envs", "hand_decision_limit", "GiB"],
        ),
    ],
)
def test_bad_constructor_arguments_are_one_line_errors(kwargs: dict, names: list[str]) -> None:
    assert_one_line_error(lambda kw: VectorGame(**kw), kwargs, *names)


def test_bad_calls_are_one_line_errors_and_change_nothing() -> None:
    vg = VectorGame(3, 4, seed=5, auto_reset=False)
    before = snapshots(vg)
    mask = vg.legal_mask()
    actions = RandomPolicy(1).actions(mask)
    illegal = actions.copy()
    illegal[1] = int(np.flatnonzero(mask[1] == 0)[0])
    assert_one_line_error(vg.step, illegal, "actions[1]", "illegal action", "legal:")
    for bad in (actions[:2], actions.astype(float), [1.5, 2, 3], "draw"):
        assert_one_line_error(vg.step, bad, "actions", "shape (3,)")
    assert_one_line_error(vg.step, np.full(3, 99), "actions[0]", "not an action id")
    assert_one_line_error(vg.legal_mask, np.zeros((3, 59), np.int64), "out", "int8")
    assert_one_line_error(vg.observe, np.zeros((3, 5), np.float32), "out", "float32")
    assert_one_line_error(lambda s: vg.observe(seats=s), np.array([0, 4, 1]), "seats")
    assert_one_line_error(vg.snapshot, 3, "game index", "0 to 2")
    assert_one_line_error(vg.legal_actions, -1, "game index")
    assert_one_line_error(lambda d: vg.reset([0], dealer=d), 4, "dealer", "0 to 3")
    assert_one_line_error(lambda t: vg.reset([0], deck_top=t), ["As", "As"], "listed 2 times")
    assert_one_line_error(lambda t: vg.reset([0], deck_top=t), ["1x"], "invalid card")
    assert_one_line_error(
        lambda s: vg.reset([0, 1], generator_state=s),
        np.random.default_rng(0).bit_generator.state,
        "exactly one",
    )
    assert_one_line_error(
        lambda s: vg.reset([0], generator_state=s), np.random.MT19937(0).state, "MT19937", "PCG64"
    )
    assert snapshots(vg) == before


def test_without_auto_reset_a_finished_game_waits_for_reset() -> None:
    vg = VectorGame(2, 3, Rules(hand_sizes=(1,)), seed=3, auto_reset=False)
    policy = RandomPolicy(2)
    while not vg.is_over()[0]:
        mask = vg.legal_mask()
        if vg.is_over()[1]:
            vg.reset([1])
            mask = vg.legal_mask()
        vg.step(policy.actions(mask))
    assert vg.current_player()[0] == -1 and not vg.legal_mask()[0].any()
    over = vg.snapshot(0)
    assert over["phase"] == "game_over" and over["winners"]
    if vg.is_over()[1]:
        vg.reset([1])
    rewards, done = vg.step(np.array([99, vg.legal_actions(1)[0]]))  # row 0 held: 99 ignored
    assert vg.snapshot(0) == over and done[0] and not rewards[0].any()
    rng = np.random.default_rng(derive_seed(3, 0))
    Game(3, Rules(hand_sizes=(1,)), rng=rng)  # the first game of row 0
    vg.reset([0])
    assert vg.snapshot(0) == Game(3, Rules(hand_sizes=(1,)), rng=rng).snapshot()


@pytest.mark.slow
@pytest.mark.parametrize("reward", ["relative", "bounded", "score", "win"])
def test_auto_reset_starts_the_rows_next_game_and_pays_the_final_step(reward: str) -> None:
    """With auto-reset, a row's games are the Python games of its generator one after the
    other; the step that ends a game pays its last hand (and game) reward."""
    n, rules = 3, Rules(hand_sizes=(2, 1))
    vg = VectorGame(4, n, rules, seed=9, reward=reward)
    rngs = [np.random.default_rng(derive_seed(9, b)) for b in range(4)]
    games = [Game(n, rules, rng=rngs[b]) for b in range(4)]
    encoder = ObservationEncoder(n, rules)
    policy = random.Random(4)
    finished = 0
    while finished < 24:
        mask, obs = vg.legal_mask(), vg.observe()
        actions = np.empty(4, np.int64)
        before = [len(g.hand_points) for g in games]
        for b, g in enumerate(games):
            check_position(vg, b, g, encoder, mask[b], obs[b], f"row {b}")
            legal = g.legal_actions()
            actions[b] = legal[policy.randrange(len(legal))]
        rewards, done = vg.step(actions)
        for b, g in enumerate(games):
            g.apply(int(actions[b]))
            check_step(g, before[b], reward, rewards[b], bool(done[b]), f"row {b}")
            while g.is_over:  # the next game of the row (again if it ends on its deal)
                finished += 1
                g = games[b] = Game(n, rules, rng=rngs[b])
    assert vg.snapshot(0)["phase"] != "game_over"


def test_random_policy_takes_only_legal_actions_and_each_of_them() -> None:
    mask = np.zeros((3, NUM_ACTIONS), np.int8)
    mask[0, [3, 52]] = 1
    mask[1, [57]] = 1
    seen: set[int] = set()
    policy = RandomPolicy(5)
    for _ in range(200):
        got = policy.actions(mask)
        assert got[0] in (3, 52) and got[1] == 57 and got[2] == -1
        seen.add(int(got[0]))
    assert seen == {3, 52}


# ---------------------------------------------------------------------- loading games


@pytest.mark.slow
def test_loaded_python_games_continue_identically() -> None:
    """A Python game at any point, loaded into a row with its generator, goes on exactly as
    the Python engine does (through reshuffles and later deals)."""
    from craits_env.testing.random_rules import random_config

    r = random.Random(17)
    for i in range(40):
        n, rules = random_config(r)
        g = Game(n, rules, seed=i)
        for _ in range(r.randrange(120)):
            if g.is_over:
                break
            legal = g.legal_actions()
            g.apply(legal[r.randrange(len(legal))])
        vg = VectorGame(2, n, rules, seed=1)  # row 0 plays on beside it, auto-reset
        vg.load_game(1, g)
        encoder = ObservationEncoder(n, rules)
        steps = 0
        while not g.is_over and steps < 400:
            mask, obs = vg.legal_mask(), vg.observe()
            check_position(vg, 1, g, encoder, mask[1], obs[1], f"config {i}")
            legal = g.legal_actions()
            action = legal[r.randrange(len(legal))]
            hands = len(g.hand_points)
            rewards, done = vg.step(np.array([vg.legal_actions(0)[0], action]))
            g.apply(action)
            check_step(g, hands, "relative", rewards[1], bool(done[1]), f"config {i}")
            steps += 1
        if not g.is_over:
            assert vg.snapshot(1) == g.snapshot()


def test_load_game_refuses_what_it_cannot_hold() -> None:
    g = Game(4, seed=1)
    vg = VectorGame(1, 4, seed=0)
    before = vg.snapshot(0)
    assert_one_line_error(lambda x: vg.load_game(0, x), "game", "load_game", "Game")
    assert_one_line_error(lambda x: vg.load_game(0, x), Game(3, seed=1), "rules differ")
    scripted = Game(4, deals=[Game(4, seed=2).snapshot()["deal"]] * 2, dealer=0)
    assert_one_line_error(lambda x: vg.load_game(0, x), scripted, "scripted")
    assert_one_line_error(lambda x: vg.load_game(0, x), _determinized(g), "deal is unknown")
    bad = g.snapshot()
    bad["scores"] = [10**40, 0, 0, 0]
    bad["hand_points"] = []
    assert_one_line_error(lambda x: vg.load_game(0, x), Game.from_snapshot(bad, seed=1), "scores")
    assert_one_line_error(lambda x: vg.load_game(0, x, np.random.MT19937(0).state), g, "PCG64")
    assert vg.snapshot(0) == before


def _determinized(g: Game) -> Game:
    hands = {s: list(g.hands[s]) for s in range(1, g.num_players)}
    return g.determinized(0, hands, g.stock, np.random.default_rng(0))


def huge_pressure_game(pressures: list[int], reward_seed: int = 0) -> Game:
    """A real position whose seats took ``pressures`` shuffle pressures in an earlier hand
    (scores beyond 2**63 for the big ones): card points plus 5 * (2**k - 1) each."""
    rules = Rules(hand_sizes=(2, 3, 2))
    g = Game(len(pressures), rules, seed=reward_seed)
    r = random.Random(reward_seed)
    while g.hand_index == 0:
        legal = g.legal_actions()
        g.apply(legal[r.randrange(len(legal))])
    s = g.snapshot(resume=True)
    for q, k in enumerate(pressures):
        extra = 5 * ((1 << k) - 1) - 5 * ((1 << s["shuffle_pressures"][q]) - 1)
        s["shuffle_pressures"][q] = k
        s["scores"][q] += extra
        s["hand_points"][0][q] += extra
    return Game.from_snapshot(s)


@pytest.mark.parametrize(
    "pressures",
    [[0, 60, 75, 200], [58, 59, 3, 58], [81, 80, 0, 50], [1000, 1000, 2, 45], [46, 0, 1, 2]],
)
@pytest.mark.parametrize("reward", ["relative", "bounded", "score", "win"])
def test_scores_beyond_int64_are_exact(pressures: list[int], reward: str) -> None:
    """Observations (the scaled score differences), winners, snapshots and rewards stay the
    Python engine's with shuffle pressures far beyond 64 bits (R10.1: no cap)."""
    g = huge_pressure_game(pressures)
    n, rules = g.num_players, g.rules
    vg = VectorGame(1, n, rules, seed=0, reward=reward, auto_reset=False)
    vg.load_game(0, g)
    encoder = ObservationEncoder(n, rules)
    for seat in range(n):
        assert np.array_equal(vg.observe(seats=np.array([seat]))[0], encoder.encode(g, seat))
    r = random.Random(3)
    while not g.is_over:
        check_position(vg, 0, g, encoder, vg.legal_mask()[0], vg.observe()[0], "huge")
        legal = g.legal_actions()
        action = legal[r.randrange(len(legal))]
        hands = len(g.hand_points)
        rewards, done = vg.step(np.array([action]))
        g.apply(action)
        check_step(g, hands, reward, rewards[0], bool(done[0]), "huge")
    assert vg.snapshot(0) == g.snapshot() and vg.scores(0) == g.scores


def test_rewards_beyond_a_double_are_the_float32_of_the_exact_value() -> None:
    """Where Python's float arithmetic overflows (points beyond 2**1024), VectorGame still
    pays the float32 of the exact reward: ±inf, or the exact value where points cancel."""
    from craits_env.vector.game import reward_beyond_double

    huge = 5 * (1 << 1100)
    assert reward_beyond_double((huge, 0, 0), 1, "relative") == float("inf")
    assert reward_beyond_double((huge, 0, 0), 0, "relative") == float("-inf")
    assert reward_beyond_double((huge, huge), 0, "relative") == 0.0
    assert reward_beyond_double((huge, 0), 0, "bounded") == -1.0
    assert reward_beyond_double((huge, 0), 0, "score") == float("-inf")
    assert reward_beyond_double((huge + 300, huge), 1, "relative") == 3.0


# ---------------------------------------------------------------------- craits_v0 on it


def test_backend_is_checked_and_refusals_surface_at_construction() -> None:
    assert_one_line_error(
        lambda b: craits_v0.raw_env(backend=b), "numba", "backend", "'python', 'vector'"
    )
    assert_one_line_error(
        lambda r: craits_v0.raw_env(backend="vector", rules=r),
        Rules(three_points=10**9),
        "three_points",
    )


def test_vector_env_states_restore_into_either_backend() -> None:
    """A state is the same dict on both backends: one taken on either restores into the
    other, and both continue identically."""
    r = random.Random(8)
    for i in range(6):
        args = random_env_args(r)
        env = make_env({**args, "backend": "vector" if i % 2 else "python"}, seed=i)
        for _ in range(r.randrange(150)):
            if env.agents:
                env_step(env, r)
        other = craits_v0.raw_env(**{**args, "backend": "python" if i % 2 else "vector"})
        other.restore(json.loads(json.dumps(env.state())))
        assert json.dumps(other.state()) == json.dumps(env.state())
        while env.agents:
            seed = r.randrange(10**6)
            assert env_step(env, random.Random(seed)) == env_step(other, random.Random(seed))
            assert_same_env(env, other, full=not env.agents or r.random() < 0.1)


@pytest.mark.slow
def test_vector_env_clones_and_restores_continue_identically(env_backend: str) -> None:
    """tests/craits_env/test_snapshots.py's clone / deepcopy / restore check, on both backends."""
    r = random.Random(31)
    for i in range(4):
        args = random_env_args(r)
        env = make_env(args, seed=i)
        for _ in range(r.randrange(100)):
            if env.agents:
                env_step(env, r)
        others = copies(env, args)
        while env.agents:
            seed = r.randrange(10**6)
            action = env_step(env, random.Random(seed))
            for other in others:
                assert env_step(other, random.Random(seed)) == action
        for other in others:
            assert_same_env(env, other)
        assert copy.deepcopy(env).state() == env.state()


@pytest.mark.slow
def test_vector_env_with_public_tracking_matches_python() -> None:
    """track_public=True: the seat views bots read are the same on both backends."""
    envs = [
        make_env({"num_players": 5, "track_public": True, "backend": b}, seed=4)
        for b in ("python", "vector")
    ]
    r = random.Random(6)
    for _ in range(600):
        if not envs[0].agents:
            break
        seed = r.randrange(10**6)
        assert env_step(envs[0], random.Random(seed)) == env_step(envs[1], random.Random(seed))
        a, b = (e.seat_view(e.agent_selection) for e in envs)
        assert a.hand == b.hand and a.legal_actions == b.legal_actions
        assert a.unseen_cards() == b.unseen_cards() and a.stock_size == b.stock_size
        assert np.array_equal(a["observation"], b["observation"])
        assert envs[0].public.tracker.state() == envs[1].public.tracker.state()  # type: ignore[union-attr]


def test_craits_bench_vector_prints_the_contract_keys(capsys: pytest.CaptureFixture[str]) -> None:
    from craits.cli import main

    assert (
        main(
            ["bench", "vector", "--players", "3", "--num-envs", "16", "--seconds", "0.2", "--json"]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["num_envs"] == 16 and result["num_players"] == 3
    assert result["decisions_per_s"] > 0 and result["decisions"] % 16 == 0
    assert result["compile_s"] > 0 and result["memory_bytes_per_game"] > 0
    with pytest.raises(SystemExit) as info:
        main(["bench", "vector", "--num-envs", "0"])
    assert info.value.code == 2
