"""All-action rollouts of the true position (experiments/one_step_improvement.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from craits.agents.arena import play_game
from craits.agents.checkpoint_agent import PPOAgent
from craits.agents.specs import make_agent
from craits_env import Game, Rules
from craits_env.actions import PHASE_DECLARE
from craits_env.public import PublicGame
from craits_env.seeding import derive_rng
from craits_env.testing.scenario import stacked_game
from experiments.one_step_improvement import (
    Collect,
    QAgent,
    action_values,
    collect,
    copy_public,
    hand_value,
    load_data,
    main,
    policy_report,
    stock_spread,
)

from ..champion_checkpoint import champion_checkpoint

CHECKPOINT = champion_checkpoint()  # the shipped policy as a checkpoint

CONFIG = Collect(str(CHECKPOINT), games=3, seed=5)


@pytest.fixture(scope="module")
def data() -> dict[str, np.ndarray]:
    return collect(CONFIG)


def test_hand_value_is_the_opponents_mean_minus_ones_own() -> None:
    assert hand_value([10, 0, 20, 30], 1) == 20.0
    assert hand_value([10, 0, 20, 30], 3) == 10 - 30


def test_each_action_of_a_stacked_position_is_played_out_with_the_true_stock() -> None:
    # Seat 1 opens on the starter Jc with 5c or Kc (one card declared automatically).
    # 5c first: seats 2, 3, 0 draw Jh, Jd, Js; none can follow clubs, so they draw Qs,
    # Ks, Kh in turn and seat 1 goes out with Kc. Kc first: they draw Jh, Jd, Js on their
    # turns, seat 1 goes out with 5c, whose function makes them draw Qs, Ks, Kh. Either
    # way seats 2, 3, 0 hold Ah Ad Jh Qs (22), Qh Qd Jd Ks (40), Th Td Js Kh (70).
    game = stacked_game(
        [["Th", "Td"], ["5c", "Kc"], ["Ah", "Ad"], ["Qh", "Qd"]],
        starter="Jc",
        stock=["Jh", "Jd", "Js", "Qs", "Ks", "Kh"],
        one_card="auto",
    )
    public = PublicGame(game)
    before = game.snapshot()
    agents = [make_agent("greedy", seed=s) for s in range(4)]
    assert game.current_player == 1
    assert action_values(public, agents, seed=3) == {4: 44.0, 12: 44.0}  # 5c, Kc
    assert game.snapshot() == before  # the real game is untouched


def _reference(public: PublicGame, agents: list, seed: int) -> dict[int, float]:
    """The same values from a deep copy of the whole public game (tracker included)."""
    game = public.game
    seat, hand = game.current_player, game.hand_index
    out = {}
    for action in game.legal_actions():
        ref = copy.deepcopy(public)
        ref.game._rng, ref.game._rng_state = np.random.default_rng(seed), None
        ref.apply(action)
        while ref.game.hand_index == hand and not ref.game.is_over:
            p = ref.game.current_player
            ref.apply(agents[p].act(ref.views[p]))
        out[int(action)] = hand_value(ref.game.hand_points[hand], seat)
    return out


@pytest.mark.slow
def test_values_equal_a_deep_copys_play_out_over_random_positions() -> None:
    checked = 0
    for g in range(3):
        rules = Rules(hand_sizes=(6, 3, 1))
        game = Game(4, rules, rng=derive_rng(17, g))
        public = PublicGame(game)
        agents = [
            PPOAgent(str(CHECKPOINT)) if s == g % 4 else make_agent("expert", seed=s)
            for s in range(4)
        ]
        k = 0
        while not game.is_over:
            p = game.current_player
            if len(game.legal_actions()) > 1 and game.phase != PHASE_DECLARE:
                k += 1
                if k % 3 == 0:
                    state = (game.snapshot(), public.tracker.state())
                    values = action_values(public, agents, seed=k)
                    assert values == _reference(public, agents, seed=k)
                    assert (game.snapshot(), public.tracker.state()) == state
                    checked += 1
            public.apply(agents[p].act(public.views[p]))
    assert checked >= 15


def test_a_copy_keeps_the_trackers_inferences() -> None:
    game = Game(4, Rules(), rng=derive_rng(3))
    public = PublicGame(game)
    agents = [make_agent("expert", seed=s) for s in range(4)]
    for _ in range(40):
        public.apply(agents[game.current_player].act(public.views[game.current_player]))
    dup = copy_public(public, seed=1)
    assert dup.tracker.state() == public.tracker.state()
    assert dup.game.snapshot() == game.snapshot()
    assert dup.game is not game


@pytest.mark.slow
def test_labels_are_the_policys_decisions_with_a_choice(data: dict[str, np.ndarray]) -> None:
    mask, q = data["mask"], data["q"]
    assert len(mask) > 100 and data["features"].shape == (len(mask), 245)
    assert (mask.sum(1) >= 2).all()
    assert np.array_equal(np.isfinite(q), mask)  # a value for every legal action, no other
    hands = data["hands"]
    assert hands.shape == (len(mask), 3 * 52) and hands.max() == 1  # one deck: one copy
    assert (hands.sum(1) >= 1).all()  # a decision with a choice: some opponent holds cards
    assert sorted(set(data["game"].tolist())) == [0, 1, 2]
    assert np.array_equal(data["game"], np.sort(data["game"]))


@pytest.mark.slow
def test_the_labels_are_the_same_for_any_number_of_workers(data: dict[str, np.ndarray]) -> None:
    again = collect(CONFIG, workers=2)
    for key in data:
        assert np.array_equal(data[key], again[key], equal_nan=True), key


@pytest.mark.slow
def test_policy_report_matches_the_agents_own_moves(data: dict[str, np.ndarray]) -> None:
    report = policy_report(str(CHECKPOINT), data)
    policy = PPOAgent(str(CHECKPOINT))
    advantages = []
    for features, mask, q in zip(data["features"], data["mask"], data["q"], strict=True):
        legal = np.flatnonzero(mask)
        move = legal[int(np.argmax(policy._logits(features)[legal]))]
        advantages.append(q[move] - q[legal].mean())
    assert report["decisions"] == len(advantages)
    assert report["policy_move"][0] == pytest.approx(float(np.mean(advantages)), abs=1e-3)


class _Watch:
    """Plays ``agent``; records (its move, the plain policy's move) at every decision."""

    name = "watch"

    def __init__(self, agent: QAgent, plain: PPOAgent) -> None:
        self.agent, self.plain = agent, plain
        self.moves: list[tuple[int, int]] = []

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    def act(self, view):  # type: ignore[no-untyped-def]
        move = self.agent.act(view)
        self.moves.append((move, self.plain.act(view)))
        return move


def test_fit_writes_a_head_the_agent_plays(
    data: dict[str, np.ndarray], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = tmp_path / "d.npz"
    np.savez(files, **data)
    champion = ["--checkpoint", str(CHECKPOINT)]
    out = ["--out", str(tmp_path / "head")]
    assert main(["fit", str(files), "--epochs", "1", *champion, *out]) == 0
    report = json.loads((tmp_path / "head.json").read_text())
    assert report["policy"]["decisions"] == len(data["mask"])
    assert len(report["head"]["epochs"]) == 1
    assert (
        main(
            [
                "fit",
                str(files),
                "--epochs",
                "1",
                "--hands",
                *champion,
                "--out",
                str(tmp_path / "hh"),
            ]
        )
        == 0
    )
    assert json.loads((tmp_path / "hh.json").read_text())["head"]["epochs"]
    monkeypatch.setenv("CRAITS_Q", str(tmp_path / "hh.pt"))
    with pytest.raises(ValueError, match="hands"):
        QAgent()  # a head that reads the hidden cards plays for nobody
    monkeypatch.setenv("CRAITS_Q", str(tmp_path / "head.pt"))
    rules = Rules(hand_sizes=(5, 3, 2))
    moves = {}
    for margin in ("1e9", "-1e9"):
        monkeypatch.setenv("CRAITS_Q_MARGIN", margin)
        watch = _Watch(QAgent(seed=0), PPOAgent(str(CHECKPOINT)))
        agents = [watch] + [make_agent("expert", seed=s) for s in range(1, 4)]
        play_game(Game(4, rules, rng=derive_rng(8)), agents, [0, 1, 2, 3])
        moves[margin] = watch.moves
    assert all(a == b for a, b in moves["1e9"])  # never overrides: the policy's moves
    assert any(a != b for a, b in moves["-1e9"])  # always the head's at the hand's end


def test_bad_arguments_and_files_are_refused_in_one_line(
    data: dict[str, np.ndarray],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    older = tmp_path / "older.npz"  # a file of the first version: no hands
    np.savez(older, **{k: v for k, v in data.items() if k != "hands"})
    assert "hands" not in load_data([older])
    assert main(["fit", str(older), "--hands", "--out", str(tmp_path / "o")]) == 2
    assert "--hands" in capsys.readouterr().err
    assert main(["collect", "--games", "0", "--out", str(tmp_path / "x.npz")]) == 2
    assert "--games" in capsys.readouterr().err
    bad = tmp_path / "bad.npz"
    bad.write_text("not numpy")
    assert main(["fit", str(bad), "--out", str(tmp_path / "h")]) == 2
    err = capsys.readouterr().err.strip()
    assert "bad.npz" in err and "\n" not in err
    with pytest.raises(ValueError, match="collect"):
        load_data([bad])
    monkeypatch.setenv("CRAITS_Q", str(older))
    with pytest.raises(ValueError, match="not a head written by fit"):
        QAgent()
    monkeypatch.setenv("CRAITS_Q_MARGIN", "five")
    with pytest.raises(ValueError, match="CRAITS_Q_MARGIN='five'"):
        QAgent()
    monkeypatch.delenv("CRAITS_Q_MARGIN")
    monkeypatch.delenv("CRAITS_Q", raising=False)
    with pytest.raises(ValueError, match="CRAITS_Q"):
        QAgent()
    assert not any((tmp_path / name).exists() for name in ("x.npz", "h.pt", "o.pt", "o.json"))


@pytest.mark.slow
def test_stock_spread_is_a_reproducible_share() -> None:
    config = Collect(str(CHECKPOINT), games=1, seed=9)
    first = stock_spread(config, every=15, shuffles=2)
    assert first == stock_spread(config, every=15, shuffles=2)
    assert first["positions"] >= 3 and first["within_share"] > 0.0  # (an unbiased estimate:
    # with so few positions it may exceed 1; 6,186 positions gave 0.82)
    assert main(["spread", "--games", "1", "--shuffles", "1"]) == 2  # one order: no spread
