"""The hands head (hands_coef > 0): an auxiliary task that teaches the policy's trunk the
opponents' hands, with the true hands (craits_env.opponent_hands) as its targets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from craits.agents.checkpoint import load_checkpoint, load_policy
from craits.agents.network import PolicyNet
from craits.agents.specs import make_agent
from craits.training.ppo import (
    MaskedCategorical,
    annealed_learning_rate,
    gae_linked,
    normalize,
    ppo_loss,
)
from craits.training.state import TrainingState
from craits.training.train import train, update
from craits_env import Game, Rules
from craits_env.opponent_hands import hands_size
from craits_env.public import PublicGame

from .test_training import tiny

torch.set_num_threads(1)
QUIET = {"progress": False, "echo": lambda s: None}


def test_the_head_reads_the_policys_trunk_and_leaves_the_moves_unchanged() -> None:
    torch.manual_seed(0)
    net = PolicyNet(20, (16, 8), hands_out=6)
    assert net.spec()["hands_out"] == 6
    assert "hands_out" not in PolicyNet(20, (16, 8)).spec()  # older specs unchanged
    obs = torch.rand(5, 20)
    logits, value, hands = net.with_hands(obs)
    assert hands.shape == (5, 6)
    plain_logits, plain_value = net(obs)
    assert torch.equal(logits, plain_logits) and torch.equal(value, plain_value)
    assert torch.equal(net.logits(obs), logits)
    # Its loss reaches the policy's trunk (that is its point) but not the policy head.
    hands.sum().backward()
    assert any(p.grad is not None and p.grad.any() for p in net.trunk.parameters())
    assert all(p.grad is None for p in net.policy.parameters())
    rebuilt = PolicyNet.from_spec(net.spec())  # a checkpoint rebuilds it
    rebuilt.load_state_dict(net.state_dict())
    np.testing.assert_allclose(
        rebuilt.numpy_policy()(obs[0].numpy()), logits[0].detach().numpy(), rtol=1e-5, atol=1e-6
    )
    with pytest.raises(ValueError, match="hands_out: got -2"):
        PolicyNet(20, hands_out=-2)
    with pytest.raises(ValueError, match="no hands head"):
        PolicyNet(20, (8,)).with_hands(obs)


def test_config_checks_the_coefficient_and_the_backend() -> None:
    with pytest.raises(ValueError, match="config hands_coef"):
        tiny(hands_coef=-0.5)
    with pytest.raises(ValueError, match="config hands_coef: backend vector trains no hands head"):
        tiny(hands_coef=0.5, backend="vector", opponents={"self": 1.0})


def test_one_update_adds_the_weighted_cross_entropy_against_the_true_hands() -> None:
    # The update's loss is PPO's plus hands_coef × BCE(head, does the opponent hold the card):
    # the same update done by hand — collect, GAE, the loss — gives the same parameters.
    config = tiny(num_players=3, hands_coef=0.7, update_epochs=1, num_minibatches=1)
    state = TrainingState(config, torch.device("cpu"), "hands")
    assert state.net.hands_out == hands_size(3)
    start = {k: v.clone() for k, v in state.net.state_dict().items()}
    metrics, stats = update(state)
    assert metrics["hands_loss"] > 0
    # The update by hand, from the same start (a fresh state of the same seed: the same games).
    twin = TrainingState(config, torch.device("cpu"), "twin")
    assert all(torch.equal(v, twin.net.state_dict()[k]) for k, v in start.items())
    segment, twin_stats = twin.rollouts.collect(twin.actor, 0, config.batch_size)
    assert twin_stats.steps == stats.steps
    assert segment.hands.shape == (len(segment), hands_size(3)) and segment.hands.any()
    adv = gae_linked(
        segment.rewards,
        segment.values,
        segment.dones,
        segment.next_index,
        config.gamma,
        config.gae_lambda,
        segment.open,
    )
    batch = segment.batch(adv)
    lr = annealed_learning_rate(config.learning_rate, 0, stats.steps, config.total_steps)
    assert lr == metrics["learning_rate"]
    optimizer = torch.optim.Adam(twin.net.parameters(), lr=lr, eps=1e-5)
    obs = torch.from_numpy(batch.obs)
    mb = torch.randperm(len(batch), generator=torch.Generator().manual_seed(config.seed * 2 + 2))
    logits, value, hand_logits = twin.net.with_hands(obs[mb])
    dist = MaskedCategorical(logits, torch.from_numpy(batch.masks)[mb])
    out = ppo_loss(
        new_log_prob=dist.log_prob(torch.from_numpy(batch.actions)[mb]),
        old_log_prob=torch.from_numpy(batch.log_probs)[mb],
        advantages=normalize(torch.from_numpy(batch.advantages)[mb]),
        entropy=dist.entropy(),
        new_value=value,
        old_value=torch.from_numpy(batch.values)[mb],
        returns=torch.from_numpy(batch.returns)[mb],
        clip_coef=config.clip_coef,
        clip_vloss=True,
        ent_coef=config.ent_coef,
        vf_coef=config.vf_coef,
    )
    held = torch.from_numpy(batch.hands).clamp(max=1.0)[mb]
    bce = nn.functional.binary_cross_entropy_with_logits(hand_logits, held)
    assert bce.item() == metrics["hands_loss"]
    optimizer.zero_grad()
    (out.loss + 0.7 * bce).backward()
    nn.utils.clip_grad_norm_(twin.net.parameters(), config.max_grad_norm)
    optimizer.step()
    for k, v in state.net.state_dict().items():
        assert torch.equal(twin.net.state_dict()[k], v), k
    state.close()
    twin.close()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plain run, and two hands-head runs started from it (same seed)."""
    out = tmp_path_factory.mktemp("hands")
    train(tiny(total_steps=400), out=out / "base", **QUIET)
    for name in ("a", "b"):
        train(
            tiny(
                hands_coef=1.0, init_policy=str(out / "base"), total_steps=3000, learning_rate=0.005
            ),
            out=out / name,
            **QUIET,
        )
    return out


@pytest.mark.slow
def test_a_hands_run_starts_from_a_plain_policy_and_is_reproducible(runs: Path) -> None:
    config = tiny(hands_coef=1.0, init_policy=str(runs / "base"), learning_rate=0.005)
    state = TrainingState(config, torch.device("cpu"), "start")
    state.init_policy(config.init_policy)
    old, _ = load_policy(runs / "base" / "final.pt")
    obs = torch.rand(7, state.net.obs_size)
    assert torch.equal(state.net(obs)[0], old(obs)[0])  # the same moves to start with
    state.close()
    # And back: a plain run starts from a hands-head policy, its head dropped.
    plain = tiny(init_policy=str(runs / "a"))
    state = TrainingState(plain, torch.device("cpu"), "plain")
    state.init_policy(plain.init_policy)
    trained, _ = load_policy(runs / "a" / "final.pt")
    assert state.net.hands is None and torch.equal(state.net(obs)[0], trained(obs)[0])
    state.close()
    a, b = (load_checkpoint(runs / name / "final.pt") for name in ("a", "b"))
    assert a["network"]["hands_out"] == hands_size(2)
    assert all(torch.equal(a["policy"][k], b["policy"][k]) for k in a["policy"])


@pytest.mark.slow
def test_the_head_learns_the_hands_and_the_checkpoint_plays_its_policy(runs: Path) -> None:
    # The untrained head says 1/2 for every card (ln 2); a few updates bring its
    # cross-entropy on games the runs never saw to near that of each card's base rate.
    rules = Rules(hand_sizes=(3, 2, 1))
    net, _ = load_policy(runs / "a" / "final.pt")
    config = tiny(hands_coef=1.0, seed=99)  # games the runs never saw
    fresh = TrainingState(config, torch.device("cpu"), "probe")
    segment, _ = fresh.rollouts.collect(fresh.actor, 0, config.batch_size)
    obs, held = torch.from_numpy(segment.obs), torch.from_numpy(segment.hands).clamp(max=1.0)
    with torch.no_grad():
        trained = nn.functional.binary_cross_entropy_with_logits(net.with_hands(obs)[2], held)
        untrained = nn.functional.binary_cross_entropy_with_logits(
            fresh.net.with_hands(obs)[2], held
        )
    rate = held.mean(dim=0).clamp(1e-3, 1 - 1e-3)
    blind = nn.functional.binary_cross_entropy(rate.expand_as(held), held)
    assert float(untrained) == pytest.approx(np.log(2), abs=0.01)
    assert float(trained) < 0.5 * float(untrained) and float(trained) < float(blind) + 0.1
    fresh.close()
    agent = make_agent(f"ppo:{runs / 'a' / 'final.pt'}", num_players=2, rules=rules)
    for seed in range(3):
        game = Game(2, rules, seed=seed)
        public = PublicGame(game)
        while not game.is_over:
            view = public.view(game.current_player)
            mask = np.asarray(view["action_mask"], bool)
            action = agent.act(view)
            if mask.sum() > 1:
                x = torch.from_numpy(np.asarray(view["observation"], np.float32))[None]
                logits = net.logits(x)[0].detach().numpy()
                assert action == int(np.flatnonzero(mask)[np.argmax(logits[mask])])
            public.apply(action)
