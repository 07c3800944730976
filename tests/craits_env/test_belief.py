"""Belief features (craits_env.belief) and the policies that read them (observation = belief)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from craits.agents.checkpoint import load_checkpoint
from craits.agents.checkpoint_agent import PPOAgent
from craits.agents.specs import make_agent
from craits.training.state import TrainingState
from craits.training.train import train
from craits_env import DRAW, Game, Rules
from craits_env.actions import PHASE_CALL_SUIT, PHASE_COUNT, PHASE_PLAY
from craits_env.belief import PER_OPPONENT, belief_size, encode_belief
from craits_env.cards import SUIT_OF
from craits_env.public import PublicGame, PublicTracker

from ..training.test_training import tiny

torch.set_num_threads(1)


@pytest.mark.slow
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
        before = encode_belief(public.tracker, view.seat)
        sizes = {s: len(game.hands[s]) for s in range(3) if s != view.seat}
        unseen = list(rng.permutation(view.unseen_cards()))
        hands, k = {}, 0
        for s, size in sizes.items():
            hands[s], k = [int(c) for c in unseen[k : k + size]], k + size
        other = PublicGame(view.determinize(hands, [int(c) for c in unseen[k:]], rng))
        other.tracker.restore(public.tracker.state())
        after = encode_belief(other.tracker, view.seat)
        assert np.array_equal(before, after)


@pytest.fixture(scope="module")
def belief_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A standard-observation run, and a belief run started from its policy."""
    out = tmp_path_factory.mktemp("belief")
    quiet = {"progress": False, "echo": lambda s: None}
    base = train(
        tiny(num_players=3, total_steps=400, opponents={"self": 1.0, "greedy": 1.0}),
        out=out / "base",
        **quiet,
    )
    tuned = train(
        tiny(
            num_players=3,
            total_steps=400,
            observation="belief",
            init_policy=str(out / "base"),
            opponents={"self": 1.0, "greedy": 1.0},
        ),
        out=out / "tuned",
        **quiet,
    )
    return base.final_checkpoint, tuned.final_checkpoint


@pytest.mark.slow
def test_a_belief_policy_started_from_a_standard_one_plays_exactly_as_it(
    belief_run: tuple[Path, Path],
) -> None:
    base_ckpt, _ = belief_run
    config = tiny(
        num_players=3,
        observation="belief",
        init_policy=str(base_ckpt),
        opponents={"self": 1.0, "greedy": 1.0},
    )
    state = TrainingState(config, torch.device("cpu"), "widen")
    state.init_policy(config.init_policy)
    base = load_checkpoint(base_ckpt)["policy"]
    weight = state.net.state_dict()["trunk.0.weight"]
    standard = base["trunk.0.weight"].shape[1]
    assert torch.equal(weight[:, :standard], base["trunk.0.weight"])
    assert not weight[:, standard:].any()  # the new inputs start with zero weights
    obs = torch.rand(5, weight.shape[1])
    from craits.agents.network import PolicyNet

    old = PolicyNet.from_spec(load_checkpoint(base_ckpt)["network"])
    old.load_state_dict(base)
    assert torch.allclose(state.net(obs)[0], old(obs[:, :standard])[0])
    state.close()


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


def test_an_init_policy_that_is_not_there_says_what_to_pass_instead(tmp_path: Path) -> None:
    config = tiny(num_players=3, init_policy=str(tmp_path / "nothing" / "final.pt"))
    state = TrainingState(config, torch.device("cpu"), "widen")
    with pytest.raises(ValueError, match="no such file") as e:
        state.init_policy(config.init_policy)
    assert "--set init_policy=PATH" in str(e.value) and "\n" not in str(e.value)
