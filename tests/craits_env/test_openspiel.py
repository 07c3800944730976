"""python_craits inside OpenSpiel: its own tests, its bots, a differential run against the
engine, resampling from the information state, the uniform consistent deal."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import ismcts, mcts

import craits_env.integrations.openspiel as os_craits
from craits_env import Game, Rules
from craits_env.cards import parse_card
from craits_env.consistent_deals import SeatBound, deal_consistent, seat_bounds
from craits_env.testing.random_rules import random_config

SHORT = "python_craits(players=3,hand_sizes=3;2;1,history_slots=64)"


def _params(n: int, rules: Rules) -> dict[str, object]:
    params: dict[str, object] = {"players": n, **rules.to_dict(), "history_slots": 32}
    params["hand_sizes"] = os_craits.hand_sizes_param(rules.hand_sizes)
    params["num_decks"] = rules.num_decks or 0
    return params


def _play_random(state: pyspiel.State, rng: np.random.Generator, decisions: int) -> None:
    while not state.is_terminal() and decisions:
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
            decisions -= 1


def test_game_type_and_parameters() -> None:
    game = pyspiel.load_game("python_craits(players=4,face_cards=True,hand_sizes=3;1)")
    t = game.get_type()
    assert t.short_name == "python_craits"
    assert t.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert t.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert t.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert t.provides_information_state_tensor and t.provides_observation_tensor
    assert game.num_players() == 4 and game.num_distinct_actions() == 59
    assert game.rules == Rules(face_cards=True, hand_sizes=(3, 1))
    assert game.information_state_tensor_size() == 4 + 52 + 1 + 32 * 0 + 512 * (
        14 + 4 + 52 + 4 + 14 + 2
    )
    assert game.observation_tensor_size() == game.encoder.size
    with pytest.raises(ValueError, match=r"hand_sizes got 'x', allowed ints separated by"):
        os_craits.CraitsGame({"hand_sizes": "x"})
    with pytest.raises(ValueError, match="num_players: got 11"):
        os_craits.CraitsGame({"players": 11})
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['jokers'\]"):
        os_craits.CraitsGame({"jokers": True})


@pytest.mark.slow
def test_random_sim_test_over_random_options() -> None:
    r = random.Random(7)
    for _ in range(4):
        n, rules = random_config(r)
        n = min(n, 4)
        rules = rules.replace(hand_sizes=rules.hand_sizes[:2], hand_decision_limit=60)
        game = os_craits.CraitsGame(_params(n, rules))
        pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


def test_the_opening_chance_nodes_and_returns() -> None:
    game = pyspiel.load_game(SHORT)
    state = game.new_initial_state()
    assert state.is_chance_node() and state.chance_outcomes() == [
        (0, 1 / 3),
        (1, 1 / 3),
        (2, 1 / 3),
    ]
    state.apply_action(2)  # the first dealer
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 52 and all(p == pytest.approx(1 / 52) for _, p in outcomes)
    for c in range(52):
        assert state.is_chance_node()
        state.apply_action(c)
    assert not state.is_chance_node() and state.engine.first_dealer == 2
    assert state.engine.hands[0] == [0, 3, 6]  # seat 0 is dealt cards 0, 3, 6 (dealer 2, R2.3)
    assert state.returns() == [0.0, 0.0, 0.0]
    _play_random(state, np.random.default_rng(1), 10_000)
    assert state.is_terminal()
    winners = state.engine.winners()
    assert sum(state.returns()) == pytest.approx(0.0)
    assert all(state.returns()[s] > 0 for s in winners)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_differential_against_the_engine(seed: int) -> None:
    """The same deck orders and actions: the same game, decision by decision."""
    n, rules = 3, Rules(hand_sizes=(3, 2, 1), face_cards=seed == 1, seven_hits="next")
    rng = np.random.default_rng(seed)
    engine = Game(n, rules, seed=seed, record=True)
    actions, seen = [], []
    while not engine.is_over:
        legal = engine.legal_actions()
        seen.append(
            (
                engine.current_player,
                legal,
                list(engine.hands[engine.current_player]),
                list(engine.scores),
            )
        )
        actions.append(int(rng.choice(legal)))
        engine.apply(actions[-1])
    deals, reshuffles = engine.deck_orders()
    orders = {("deal", h): [parse_card(c) for c in d] for h, d in enumerate(deals)}
    for h, hand in enumerate(reshuffles):
        for i, o in enumerate(hand):
            orders[("reshuffle", h, i)] = [parse_card(c) for c in o]
    state = os_craits.CraitsGame(_params(n, rules)).new_initial_state()
    state.apply_action(engine.first_dealer)
    k = 0
    while not state.is_terminal():
        if state.is_chance_node():
            need = state._need
            state.apply_action(orders[need][len(state._order)])
            continue
        player, legal, hand, scores = seen[k]
        assert state.current_player() == player
        assert state.legal_actions() == list(legal)
        assert state.information_state_string(player).split("\n")[0].split("hand:")[1] == " ".join(
            f"{c}" for c in map(_card_str, hand)
        )
        assert state.engine.scores == scores
        state.apply_action(actions[k])
        k += 1
    assert k == len(actions) and state.engine.scores == engine.scores


def _card_str(c: int) -> str:
    from craits_env.cards import CARD_STRS

    return CARD_STRS[c]


@pytest.mark.slow
def test_resampling_keeps_the_information_state() -> None:
    game = pyspiel.load_game("python_craits(players=4,hand_sizes=5;3)")
    rng = np.random.default_rng(3)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    checked = 0
    for _ in range(6):
        state = game.new_initial_state()
        _play_random(state, rng, int(rng.integers(1, 40)))
        if state.is_terminal() or state.is_chance_node():
            continue
        p = state.current_player()
        info, tensor = state.information_state_string(p), state.information_state_tensor(p)
        for _ in range(5):
            world = state.resample_from_infostate(p, sampler)
            assert world.information_state_string(p) == info
            assert world.information_state_tensor(p) == tensor
            assert world.engine.hands[p] == state.engine.hands[p]
            assert world.legal_actions() == state.legal_actions()
            for s in range(4):
                bound = seat_bounds(world._tracker, s)
                if s != p and bound is not None:
                    assert bound.holds(world.engine.hands[s])
            _play_random(world, rng, 10_000)  # the world plays on, chance nodes included
            assert world.is_terminal()
        checked += 1
    assert checked >= 3


@pytest.mark.slow
def test_a_belief_supplies_the_resampled_worlds() -> None:
    """resample_from_infostate with craits.agents.belief.BeliefSampler: the world is the
    belief's own draw (the same seed, the same world), the information state is kept, and the
    hand's decisions reach the belief (python_craits records them), so its weights move."""
    from craits.agents.belief import BeliefSampler, PolicyBelief
    from craits_env.public import PublicGame

    game = pyspiel.load_game("python_craits(players=4,hand_sizes=6;4)")
    rng = np.random.default_rng(12)
    checked = weighted = 0
    for _ in range(12):
        state = game.new_initial_state()
        _play_random(state, rng, int(rng.integers(6, 30)))
        if state.is_terminal() or state.is_chance_node():
            continue
        p = state.current_player()
        info = state.information_state_string(p)
        worlds = [
            state.resample_from_infostate(p, BeliefSampler(PolicyBelief(temperature=2.0), seed=4))
            for _ in range(2)
        ]
        assert worlds[0].engine.hands == worlds[1].engine.hands
        assert all(w.information_state_string(p) == info for w in worlds)
        public = PublicGame(state.engine)
        public.tracker = state._tracker
        view = public.view(p)
        steps = view.tracker.steps
        assert steps is not None and len(steps) > 0
        sampler = BeliefSampler(PolicyBelief(temperature=2.0), seed=4)
        draw = np.random.default_rng(os_craits._seed_from(sampler))
        hands, _ = sampler.sample(view, 1, draw)[0]
        assert all(sorted(worlds[0].engine.hands[s]) == sorted(h) for s, h in hands.items())
        belief = PolicyBelief(temperature=2.0)
        if belief.evidence(view, steps):
            pool = belief.candidates(view, 32, np.random.default_rng(0))
            weighted += bool(pool.weights.max() > pool.weights.min())
        checked += 1
    assert checked >= 6 and weighted >= 2


@pytest.mark.slow
def test_consistent_deal_is_uniform_by_enumeration() -> None:
    """Five unseen cards, two seats of one card and three in the stock; seat 1 showed no
    heart and drew nothing since: every consistent world equally often."""
    unseen = [parse_card(c) for c in ("2h", "5h", "7c", "Kd", "Js")]
    caps: list[int | None] = [None, None, 0, None, None, None]  # no heart
    bounds = {1: SeatBound(caps)}
    start = {1: [parse_card("7c")], 2: [parse_card("2h")]}
    worlds = {(a, b) for a, b in itertools.permutations(unseen, 2) if bounds[1].holds([a])}
    assert len(worlds) == 3 * 4
    for tries, sweeps in ((8, 12), (0, 12)):  # rejection, then the swap chain alone
        rng = np.random.default_rng(0)
        counts: Counter[tuple[int, int]] = Counter()
        draws = 12_000
        for _ in range(draws):
            hands, stock = deal_consistent(unseen, start, bounds, rng, tries=tries, sweeps=sweeps)
            assert len(stock) == 3
            counts[(hands[1][0], hands[2][0])] += 1
        assert set(counts) == worlds
        expected = draws / len(worlds)
        assert all(abs(k - expected) < 5 * expected**0.5 for k in counts.values()), counts


def test_consistent_deal_rejects_a_bad_start() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="start is not a deal of the unseen cards"):
        deal_consistent([1, 2, 3], {1: [4]}, {}, rng)
    with pytest.raises(ValueError, match="start breaks a seat's bounds"):
        deal_consistent(
            [parse_card("2h"), 5],
            {1: [parse_card("2h")]},
            {1: SeatBound([None, None, 0, None, None, None])},
            rng,
        )


@pytest.mark.slow
def test_ismcts_and_mcts_bots_play_whole_games() -> None:
    game = pyspiel.load_game("python_craits(players=2,hand_sizes=2;1,history_slots=16)")
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(0))
    bots = [
        ismcts.ISMCTSBot(
            game, evaluator, 2.0, max_simulations=8, random_state=np.random.RandomState(1)
        ),
        mcts.MCTSBot(game, 2.0, 8, evaluator, random_state=np.random.RandomState(2)),
    ]
    rng = np.random.default_rng(4)
    for _ in range(2):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(actions, p=probs)))
            else:
                state.apply_action(int(bots[state.current_player()].step(state)))
        assert sum(state.returns()) == pytest.approx(0.0)
