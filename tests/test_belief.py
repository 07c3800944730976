"""Belief features (craits_env.belief) and the policies that read them (observation = belief)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from craits.agents.ppo import PPOAgent
from craits.agents.specs import make_agent
from craits.training.checkpoint import load_checkpoint
from craits.training.learner import Learner
from craits.training.train import train
from craits_env import DRAW, Game, Rules
from craits_env.actions import CALL_BASE, PHASE_CALL_SUIT, PHASE_COUNT, PHASE_PLAY
from craits_env.belief import CALL_FEATURES, KINDS, PER_OPPONENT, belief_size, encode_belief
from craits_env.cards import SUIT_OF
from craits_env.public import PublicGame, PublicTracker

from .test_training import tiny

torch.set_num_threads(1)


def test_the_vector_says_what_each_opponent_showed_this_hand() -> None:
    """Every decision of 60 random 4-player games: each block read back from the moves."""
    rng = np.random.default_rng(0)
    checked = {"void": 0, "count": 0, "strength<1": 0}
    for g in range(60):
        game = Game(4, Rules(hand_sizes=(8, 5, 3)), seed=g)
        public = PublicGame(game)
        drawn_at: dict[tuple[int, str], int] = {}  # (seat, what) -> game.drawn[seat] then
        played = [[0] * 4 for _ in range(4)]
        hand = game.hand_index
        while not game.is_over:
            p = game.current_player
            vec = encode_belief(public.tracker, p)
            assert vec.shape == (belief_size(4),) and vec.dtype == np.float32
            for k in range(3):
                opp = (p + k + 1) % 4
                block = vec[k * PER_OPPONENT : (k + 1) * PER_OPPONENT]
                for suit in range(4):
                    base = drawn_at.get((opp, f"suit{suit}"))
                    assert block[suit] == (base is not None)
                    want = 0.0 if base is None else 1 / (1 + game.drawn[opp] - base)
                    assert block[4 + suit] == pytest.approx(want)
                    checked["strength<1"] += 0 < want < 1
                for i, what in ((8, "wild"), (10, "count")):
                    base = drawn_at.get((opp, what))
                    assert block[i] == (base is not None)
                    assert block[i + 1] == pytest.approx(
                        0.0 if base is None else 1 / (1 + game.drawn[opp] - base)
                    )
                assert list(block[12:]) == pytest.approx([x / 8 for x in played[opp]])
            legal = game.legal_actions()
            action = int(rng.choice(legal))
            phase, suit, base = game.phase, game.active_suit, game.drawn[p]
            public.apply(action)
            if game.hand_index != hand:  # everything resets with the hand
                hand, drawn_at, played = game.hand_index, {}, [[0] * 4 for _ in range(4)]
                continue
            if action < 52:
                played[p][SUIT_OF[action]] += 1
            elif action == DRAW and phase == PHASE_PLAY:  # R3.1: no card of the suit, no 8 or 9
                drawn_at[p, f"suit{suit}"] = base
                drawn_at[p, "wild"] = base
                checked["void"] += 1
            elif action == DRAW and phase == PHASE_COUNT:  # R5.3: no ace or two
                drawn_at[p, "count"] = base
                checked["count"] += 1
    assert min(checked.values()) > 20, checked


def test_the_vector_never_depends_on_the_hidden_cards() -> None:
    rng = np.random.default_rng(1)
    for g in range(20):
        game = Game(3, Rules(hand_sizes=(8, 6)), seed=100 + g)
        public = PublicGame(game)
        for _ in range(int(rng.integers(5, 60))):
            if game.is_over:
                break
            public.apply(int(rng.choice(game.legal_actions())))
        if game.is_over:
            continue
        view = public.view(game.current_player)
        before = [encode_belief(public.tracker, view.seat, kind=k) for k in KINDS]
        sizes = {s: len(game.hands[s]) for s in range(3) if s != view.seat}
        unseen = list(rng.permutation(view.unseen_cards()))
        hands, k = {}, 0
        for s, size in sizes.items():
            hands[s], k = [int(c) for c in unseen[k : k + size]], k + size
        other = PublicGame(view.determinize(hands, [int(c) for c in unseen[k:]], rng))
        other.tracker.restore(public.tracker.state())
        after = [encode_belief(other.tracker, view.seat, kind=k) for k in KINDS]
        assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))


@pytest.fixture(scope="module")
def belief_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A standard-observation run, and a belief run started from its policy."""
    out = tmp_path_factory.mktemp("belief")
    quiet = {"progress": False, "echo": lambda s: None}
    base = train(tiny(num_players=3, total_steps=400, opponents={"self": 1.0, "greedy": 1.0}),
                 out=out / "base", **quiet)  # fmt: skip
    tuned = train(tiny(num_players=3, total_steps=400, observation="belief",
                       init_policy=str(out / "base"), opponents={"self": 1.0, "greedy": 1.0}),
                  out=out / "tuned", **quiet)  # fmt: skip
    return base.final_checkpoint, tuned.final_checkpoint


def test_a_belief_policy_started_from_a_standard_one_plays_exactly_as_it(
    belief_run: tuple[Path, Path],
) -> None:
    base_ckpt, _ = belief_run
    config = tiny(num_players=3, observation="belief", init_policy=str(base_ckpt),
                  opponents={"self": 1.0, "greedy": 1.0})  # fmt: skip
    learner = Learner(config, torch.device("cpu"), "widen")
    learner.init_policy(config.init_policy)
    base = load_checkpoint(base_ckpt)["policy"]
    weight = learner.net.state_dict()["trunk.0.weight"]
    standard = base["trunk.0.weight"].shape[1]
    assert torch.equal(weight[:, :standard], base["trunk.0.weight"])
    assert not weight[:, standard:].any()  # the new inputs start with zero weights
    obs = torch.rand(5, weight.shape[1])
    from craits.agents.network import PolicyNet

    old = PolicyNet.from_spec(load_checkpoint(base_ckpt)["network"])
    old.load_state_dict(base)
    assert torch.allclose(learner.net(obs)[0], old(obs[:, :standard])[0])
    learner.close()


def test_a_belief_checkpoint_plays_through_seat_views_and_refuses_a_bare_dict(
    belief_run: tuple[Path, Path],
) -> None:
    _, tuned = belief_run
    data = load_checkpoint(tuned)
    assert data["observation"] == "belief"
    agent = make_agent(f"ppo:{tuned}", num_players=3, rules=Rules(hand_sizes=(3, 2, 1)))
    assert isinstance(agent, PPOAgent)
    game = Game(3, Rules(hand_sizes=(3, 2, 1)), seed=5)
    public = PublicGame(game)
    while not game.is_over:
        view = public.view(game.current_player)
        public.apply(agent.act(view))
    fresh = Game(3, Rules(hand_sizes=(3, 2, 1)), seed=6)
    while len(fresh.legal_actions()) < 2:  # to the first real decision
        fresh.apply(fresh.legal_actions()[0])
    view = PublicGame(fresh).view(fresh.current_player)
    bare = {"observation": view["observation"], "action_mask": view["action_mask"]}
    assert int(np.asarray(bare["action_mask"]).sum()) > 1  # a real decision
    with pytest.raises(ValueError, match=r"reads the public history \(observation = belief\)"):
        agent.act(bare)
    with pytest.raises(ValueError, match="observation size"):
        make_agent(f"ppo:{tuned}", num_players=4)


# ----------------------------------------------------------------------------- suit calls


def test_the_calls_block_says_each_opponents_last_call_this_hand() -> None:
    """observation = belief_calls: the belief vector, then per opponent its last call (R4)."""
    rng = np.random.default_rng(2)
    n, calls_seen, decayed = 4, 0, 0
    for g in range(60):
        game = Game(n, Rules(hand_sizes=(8, 5, 3)), seed=200 + g)
        public = PublicGame(game)
        called: dict[int, tuple[int, int]] = {}  # seat -> (suit, game.drawn[seat] then)
        hand = game.hand_index
        while not game.is_over:
            p = game.current_player
            vec = encode_belief(public.tracker, p, kind="belief_calls")
            assert vec.shape == (belief_size(n, "belief_calls"),) == (21 * (n - 1),)
            assert np.array_equal(vec[: belief_size(n)], encode_belief(public.tracker, p))
            calls = vec[belief_size(n) :].reshape(n - 1, CALL_FEATURES)
            for k in range(n - 1):
                opp = (p + k + 1) % n
                want = np.zeros(CALL_FEATURES, np.float32)
                if opp in called:
                    suit, base = called[opp]
                    want[suit] = 1.0
                    want[4] = 1 / (1 + game.drawn[opp] - base)
                    decayed += want[4] < 1
                assert calls[k] == pytest.approx(want)
            action = int(rng.choice(game.legal_actions()))
            phase, base = game.phase, game.drawn[p]
            public.apply(action)
            if game.hand_index != hand:
                hand, called = game.hand_index, {}
                continue
            if phase == PHASE_CALL_SUIT:
                assert CALL_BASE <= action < CALL_BASE + 4
                called[p] = (action - CALL_BASE, base)
                calls_seen += 1
                assert public.tracker.last_call(p) == (action - CALL_BASE, 0)
    assert calls_seen > 200 and decayed > 50, (calls_seen, decayed)
    with pytest.raises(
        ValueError, match="belief kind: got 'calls', allowed 'belief', 'belief_calls'"
    ):
        belief_size(4, "calls")


def test_the_tracker_state_keeps_the_calls_and_reads_older_states() -> None:
    game = Game(3, Rules(), seed=9)
    public = PublicGame(game)
    rng = np.random.default_rng(4)
    while public.tracker.last_call(game.current_player) is None or game.phase == PHASE_CALL_SUIT:
        public.apply(int(rng.choice(game.legal_actions())))
        assert not game.is_over
    state = public.tracker.state()
    assert any(c is not None for c in state["called"])
    copy = PublicGame(game.clone())
    copy.tracker.restore(state)
    assert copy.tracker.state() == state
    older = {k: v for k, v in state.items() if k != "called"}  # written before the calls
    copy.tracker.restore(older)
    assert all(copy.tracker.last_call(s) is None for s in range(3))
    before = copy.tracker.state()
    for bad in ([[4, 0], None, None], [[0, -1], None, None], ["h", None, None]):
        with pytest.raises(
            ValueError, match=r"tracker state\['called'\]\[0\]: got .*allowed None or"
        ):
            copy.tracker.restore({**state, "called": bad})
        assert copy.tracker.state() == before  # nothing changed


def test_a_belief_calls_policy_started_from_a_belief_one_plays_exactly_as_it(
    belief_run: tuple[Path, Path], tmp_path: Path
) -> None:
    _, tuned = belief_run
    config = tiny(num_players=3, observation="belief_calls", init_policy=str(tuned),
                  opponents={"self": 1.0, "greedy": 1.0}, total_steps=300)  # fmt: skip
    learner = Learner(config, torch.device("cpu"), "widen_calls")
    learner.init_policy(config.init_policy)
    from craits.agents.network import PolicyNet

    data = load_checkpoint(tuned)
    old = PolicyNet.from_spec(data["network"])
    old.load_state_dict(data["policy"])
    obs = torch.rand(5, learner.net.obs_size)
    assert learner.net.obs_size == old.obs_size + 2 * CALL_FEATURES
    assert torch.allclose(learner.net(obs)[0], old(obs[:, : old.obs_size])[0])
    learner.close()
    # Trained so, it plays through seat views, reading the calls from the tracker.
    result = train(config, out=tmp_path / "calls", progress=False, echo=lambda s: None)
    agent = make_agent(f"ppo:{result.final_checkpoint}", num_players=3,
                       rules=Rules(hand_sizes=(3, 2, 1)))  # fmt: skip
    game = Game(3, Rules(hand_sizes=(3, 2, 1)), seed=5)
    public = PublicGame(game)
    while not game.is_over:
        view = public.view(game.current_player)
        features = agent.features(view)  # type: ignore[attr-defined]
        assert features.shape == (old.obs_size + 2 * CALL_FEATURES,)
        public.apply(agent.act(view))


def test_a_tracker_pickled_before_the_calls_unpickles_knowing_none() -> None:
    import pickle

    game = Game(3, Rules(), seed=1)
    public = PublicGame(game)
    old = public.tracker.__dict__.copy()
    del old["_called"]  # what a tracker pickled by the earlier version holds
    tracker = PublicTracker.__new__(PublicTracker)
    tracker.__setstate__(old)
    assert [tracker.last_call(s) for s in range(3)] == [None] * 3
    again = pickle.loads(pickle.dumps(public.tracker))
    assert again.state() == public.tracker.state()
