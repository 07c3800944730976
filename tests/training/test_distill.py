"""Search distilled into the policy (craits.training.distill, experiments/distill_champion.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from craits.agents.arena import play_game
from craits.agents.base import legal_actions_of
from craits.agents.belief import PolicyBelief
from craits.agents.champion import BELIEF_TEMPERATURE
from craits.agents.checkpoint import load_checkpoint, policy_digest, policy_from_checkpoint
from craits.agents.checkpoint_agent import PPOAgent
from craits.agents.pimc import ENDGAME, PIMCAgent
from craits.agents.specs import make_agent
from craits.training.distill import (
    CollectConfig,
    DistillConfig,
    Samples,
    _targets,
    agreement,
    collect,
    distill,
    save_distilled,
    split,
)
from craits.training.ppo import masked_logits
from craits_env import DECLARE, Game
from craits_env.actions import forced_action
from craits_env.seeding import derive_rng, derive_seed

from ..champion_checkpoint import champion_checkpoint

CHECKPOINT = champion_checkpoint()  # the shipped policy as a checkpoint

ROOT = Path(__file__).resolve().parents[2]
SHORT = (7, 6, 5)
CONFIG = CollectConfig(
    str(CHECKPOINT),
    games=6,
    seed=11,
    opponents=("expert", "greedy"),
    simulations=48,
    hand_sizes=SHORT,
)


@pytest.fixture(scope="module")
def samples() -> Samples:
    return collect(CONFIG)


class _Watch:
    """Wraps an agent; records (features, legal, action) at its decisions that are not forced."""

    def __init__(self, agent: PIMCAgent, policy: PPOAgent) -> None:
        self.agent, self.policy, self.name = agent, policy, "watch"
        self.moves: list[tuple[np.ndarray, list[int], int, bool]] = []

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    def act(self, view):  # type: ignore[no-untyped-def]
        action = int(self.agent.act(view))
        legal = legal_actions_of(view)
        if forced_action(legal) is None:
            endgame = min(view.hand_sizes) <= ENDGAME
            self.moves.append((self.policy.features(view), sorted(legal), action, endgame))
        return action


def assert_recorded(samples: Samples, config: CollectConfig, i: int, watch: _Watch) -> None:
    """Game ``i`` of ``config`` replayed with ``watch`` at the collection's seat: the samples
    of that game are exactly its decisions (features, legal actions, move, end of hand)."""
    n, rules = config.num_players, config.rules
    seat = (i // len(config.opponents)) % n
    spec = config.opponents[i % len(config.opponents)]
    agents = [
        watch if s == seat else make_agent(spec, num_players=n, rules=rules) for s in range(n)
    ]
    seeds = [derive_seed(config.seed, i, s) for s in range(n)]
    play_game(Game(n, rules, rng=derive_rng(config.seed, i)), agents, seeds)  # type: ignore[arg-type]
    rows = np.flatnonzero(samples.game == i)
    assert len(rows) == len(watch.moves) > 0
    for r, (features, legal, action, endgame) in zip(rows, watch.moves, strict=True):
        assert np.array_equal(samples.features[r], features)
        assert np.flatnonzero(samples.mask[r]).tolist() == legal
        assert samples.label[r] == action and samples.endgame[r] == endgame


@pytest.mark.slow
def test_collect_records_exactly_champion_search_s_moves(samples: Samples) -> None:
    assert len(samples) > 150 and samples.endgame.any() and (~samples.endgame).any()
    overrides = samples.endgame & (samples.label != samples.prior)
    assert overrides.any()  # the search did replace the policy's move somewhere
    differ = ~samples.endgame & (samples.label != samples.prior)
    assert (samples.label[differ] == DECLARE).all()  # elsewhere the policy's move (R7.1)
    assert samples.mask[np.arange(len(samples)), samples.label].all()
    searched = samples.endgame & ~samples.mask[:, DECLARE]
    assert np.array_equal(np.isfinite(samples.values).any(1), searched)
    assert np.array_equal(np.isfinite(samples.values), samples.mask & searched[:, None])
    best = np.nanargmax(np.where(searched[:, None], samples.values, 0), 1)
    moved = searched & (samples.label != samples.prior)
    assert moved.any() and (samples.label[moved] == best[moved]).all()  # the best mean won
    for i in range(CONFIG.games):
        # The same game with champion-search:48 (PIMC, the champion as prior) at the seat.
        policy = PPOAgent(str(CHECKPOINT))
        assert_recorded(samples, CONFIG, i, _Watch(PIMCAgent(48, prior=policy), policy))


@pytest.mark.slow
def test_collect_with_the_belief_records_exactly_belief_search_s_moves() -> None:
    config = CollectConfig(
        str(CHECKPOINT),
        games=2,
        seed=31,
        opponents=("expert",),
        simulations=32,
        hand_sizes=SHORT,
        sampler="belief",
    )
    samples = collect(config)
    uniform = collect(CollectConfig(**{**config.__dict__, "sampler": "uniform"}))
    for i in range(config.games):
        # The same game with belief-search:32's search (the belief at BELIEF_TEMPERATURE).
        policy = PPOAgent(str(CHECKPOINT))
        belief = PolicyBelief("expert", temperature=BELIEF_TEMPERATURE)
        assert_recorded(
            samples, config, i, _Watch(PIMCAgent(32, prior=policy, sampler=belief), policy)
        )
    # Other worlds, other values: the belief's searches are not the uniform sampler's.
    searched = np.isfinite(samples.values).any(1)
    assert searched.any()
    assert not np.array_equal(samples.values, uniform.values, equal_nan=True)
    with pytest.raises(ValueError, match=r"^sampler: got 'oracle', expected one of"):
        CollectConfig(str(CHECKPOINT), games=1, seed=1, sampler="oracle")


@pytest.mark.slow
def test_collect_is_the_same_for_any_number_of_workers_and_in_parts(samples: Samples) -> None:
    parallel = collect(CONFIG, workers=2)
    first = collect(CollectConfig(**{**CONFIG.__dict__, "games": 2}))
    rest = collect(CollectConfig(**{**CONFIG.__dict__, "games": 4, "first": 2}))
    for other in (parallel, Samples.concatenate([first, rest])):
        for f in ("features", "mask", "label", "prior", "endgame", "game", "values"):
            assert np.array_equal(getattr(samples, f), getattr(other, f), equal_nan=True), f


def test_samples_round_trip_and_bad_files(samples: Samples, tmp_path: Path) -> None:
    samples.save(tmp_path / "s.npz")
    back = Samples.load(tmp_path / "s.npz")
    assert np.array_equal(back.features, samples.features)
    assert np.array_equal(back.game, samples.game)
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"^samples .*bad.npz: not a distillation samples file"):
        Samples.load(tmp_path / "bad.npz")
    train, held = split(samples, 0.5)
    assert len(train) + len(held) == len(samples)
    assert train.game.max() < held.game.min()  # split by game, never inside one


@pytest.mark.slow
def test_distill_learns_the_labels_and_writes_a_playable_checkpoint(
    samples: Samples, tmp_path: Path
) -> None:
    # A deliberately different target: a fixed random legal action at every decision.
    rng = np.random.default_rng(0)
    target = np.array([rng.choice(np.flatnonzero(m)) for m in samples.mask])
    relabeled = Samples(
        samples.features,
        samples.mask,
        target,
        samples.prior,
        np.ones(len(target), bool),
        samples.game,
        samples.values,
    )
    base = policy_from_checkpoint(load_checkpoint(CHECKPOINT))
    before = agreement(base, relabeled)[0]
    config = DistillConfig(epochs=60, batch_size=64, learning_rate=3e-3, holdout=0.0)
    payload, report = distill(str(CHECKPOINT), relabeled, config)
    assert len(report.epochs) == 60 and report.samples == len(samples)
    assert report.epochs[-1]["loss"] < report.epochs[0]["loss"] / 3
    save_distilled(tmp_path / "d.pt", payload)
    data = load_checkpoint(tmp_path / "d.pt")
    net = policy_from_checkpoint(data)
    after = agreement(net, relabeled)[0]
    assert before < 0.6 and after > 0.95  # it memorised what it was shown
    assert policy_digest(data) != policy_digest(load_checkpoint(CHECKPOINT))
    agent = PPOAgent(str(tmp_path / "d.pt"))
    assert agent.meta["observation"] == "belief"
    logits, _ = net(torch.from_numpy(samples.features[:50]))
    best = masked_logits(logits, torch.from_numpy(samples.mask[:50])).argmax(-1)
    weights = agent._logits  # the agent plays the network's masked argmax
    for row, b in zip(range(50), best.tolist(), strict=True):
        legal = np.flatnonzero(samples.mask[row])
        assert legal[np.argmax(weights(samples.features[row])[legal])] == b


def test_where_the_search_agreed_the_anchor_leaves_the_policy_exactly_as_it_was(
    samples: Samples,
) -> None:
    agreed = Samples(
        samples.features,
        samples.mask,
        samples.prior,
        samples.prior,
        samples.endgame,
        samples.game,
        samples.values,
    )
    payload, report = distill(str(CHECKPOINT), agreed, DistillConfig(epochs=3, learning_rate=1e-3))
    before = load_checkpoint(CHECKPOINT)["policy"]
    assert all(torch.equal(payload["policy"][k], before[k]) for k in before)
    assert report.overrides == 0 and report.keep_agreement == 1.0


def test_targets_are_the_search_s_move_or_the_softmax_of_its_values(samples: Samples) -> None:
    hard, has = _targets(samples, DistillConfig())
    assert np.array_equal(has.numpy(), samples.label != samples.prior)
    assert (hard.argmax(-1).numpy() == samples.label).all() and (hard.sum(-1) == 1).all()
    soft, has_soft = _targets(samples, DistillConfig(temperature=2.0))
    row = int(np.flatnonzero(np.isfinite(samples.values).any(1))[0])
    legal = np.flatnonzero(samples.mask[row])
    expected = np.exp(samples.values[row, legal] / 2.0)
    assert np.allclose(soft[row, legal].numpy(), expected / expected.sum(), atol=1e-6)
    assert soft[row].sum() == pytest.approx(1.0) and has_soft[row]
    assert has_soft.sum() > has.sum()
    with pytest.raises(ValueError, match="temperature: got 0"):
        DistillConfig(temperature=0)


def test_bad_configurations(samples: Samples) -> None:
    with pytest.raises(ValueError, match="games: got 0"):
        CollectConfig(str(CHECKPOINT), games=0, seed=1)
    with pytest.raises(ValueError, match="holdout: got 1"):
        DistillConfig(holdout=1)
    with pytest.raises(ValueError, match=r"^checkpoint .*none.pt: no such file"):
        collect(CollectConfig("none.pt", games=1, seed=1))
    cut = Samples(
        samples.features[:, :10],
        *(getattr(samples, f) for f in ("mask", "label", "prior", "endgame", "game", "values")),
    )
    with pytest.raises(ValueError, match="samples have 10 features"):
        distill(str(CHECKPOINT), cut, DistillConfig(epochs=1))


@pytest.mark.slow
def test_the_script_refuses_nothing_to_train_on_and_bad_arguments(tmp_path: Path) -> None:
    def script(games: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "experiments/distill_champion.py",
                "--checkpoint",
                str(CHECKPOINT),
                "--games",
                games,
                "--out",
                str(tmp_path / "o"),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )

    run, bad = script("0"), script("-1")
    assert run.returncode == 2 and bad.returncode == 2
    assert run.stderr.strip() == "distill_champion: nothing to train on: --games 0 and no --data"
    assert (
        bad.stderr.strip()
        .splitlines()[-1]
        .endswith("error: --games and --first must be >= 0, --workers >= 1")
    )


def test_collecting_shows_progress_as_plain_lines_off_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The collection's progress is craits.agents.progress's: in a pipe, plain lines with no
    carriage return (it was a tqdm bar everywhere); off, the games pass through untouched."""
    from craits.training.distill import _progress

    assert list(_progress(iter(range(3)), 3, False)) == [0, 1, 2]
    assert capsys.readouterr().err == ""
    assert list(_progress(iter(range(3)), 3, True)) == [0, 1, 2]
    err = capsys.readouterr().err
    assert err.splitlines() == ["collecting: 0/3 games (0%)", "collecting: 3/3 games, done in 0s"]
    assert "\r" not in err
