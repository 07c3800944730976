"""The oracle critics (critic = oracle, perfect): the hidden cards for the value function only."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from craits.agents.network import PolicyNet
from craits.agents.ppo import PPOAgent
from craits.agents.specs import make_agent
from craits.training.checkpoint import load_checkpoint, load_policy, tensor_to_bytes
from craits.training.learner import Learner
from craits.training.train import train
from craits_env import Game, Rules
from craits_env.cards import NUM_CARDS, parse_cards
from craits_env.observation import ObservationEncoder
from craits_env.oracle import encode_oracle, oracle_size, perfect_size
from craits_env.public import PublicGame

from .test_training import tiny

torch.set_num_threads(1)
QUIET = {"progress": False, "echo": lambda s: None}


def test_the_vector_is_each_opponents_hand_in_relative_seat_order() -> None:
    game = Game(4, Rules(), seed=3)
    seat = 1
    hands = {s: parse_cards(["AS", "KD"]) if s != seat else [] for s in range(4)}
    hands[2] = parse_cards(["7C", "7C", "QH"])  # copies count (two decks, R1.5)
    hands[3] = []
    for s, hand in hands.items():
        if s != seat:
            game.hands[s] = list(hand)
    vec = encode_oracle(game, seat)
    assert vec.shape == (oracle_size(4),) == (3 * NUM_CARDS,) and vec.dtype == np.float32
    want = np.zeros((3, NUM_CARDS), np.float32)
    for k, s in enumerate((2, 3, 0)):  # the seats 1, 2, 3 places to the left of seat 1
        for card in hands[s]:
            want[k, card] += 1
    assert np.array_equal(vec.reshape(3, NUM_CARDS), want)
    assert vec.reshape(3, NUM_CARDS)[0, parse_cards(["7C"])[0]] == 2.0


def test_the_vector_holds_every_card_of_every_opponent_in_random_games() -> None:
    rng = np.random.default_rng(0)
    out = np.full(oracle_size(3), 7.0, np.float32)  # stale contents are overwritten
    decisions = 0
    for g in range(40):
        game = Game(3, Rules(hand_sizes=(8, 4, 2), num_decks=2 if g % 2 else 1), seed=g)
        while not game.is_over:
            p = game.current_player
            encode_oracle(game, p, out)
            blocks = out.reshape(2, NUM_CARDS)
            for k in range(2):
                hand = game.hands[(p + k + 1) % 3]
                assert blocks[k].sum() == len(hand)
                assert all(blocks[k][c] == hand.count(c) for c in set(hand))
            decisions += 1
            game.apply(int(rng.choice(game.legal_actions())))
    assert decisions > 1000


def test_the_critic_reads_the_extra_inputs_and_the_policy_never_does() -> None:
    torch.manual_seed(0)
    net = PolicyNet(20, (16, 8), critic_extra=6)
    assert net.spec()["critic_extra"] == 6
    assert "critic_extra" not in PolicyNet(20, (16, 8)).spec()  # older specs unchanged
    obs, extra = torch.rand(5, 20), torch.rand(5, 6)
    logits, value = net(obs, extra)
    logits2, value2 = net(obs, torch.rand(5, 6))
    assert torch.equal(logits, logits2) and not torch.allclose(value, value2)
    assert torch.equal(net(obs)[1], net(obs, torch.zeros(5, 6))[1])  # absent: zeros
    assert torch.equal(net.logits(obs), logits)  # the policy head alone, no critic pass
    # The value loss moves the critic only: no gradient reaches the policy's trunk or head.
    value.pow(2).sum().backward()
    assert all(p.grad is None or not p.grad.any() for p in [*net.trunk.parameters(),
                                                            *net.policy.parameters()])  # fmt: skip
    assert any(p.grad.any() for p in net.critic.parameters())
    # The numpy policy (what PPOAgent plays) ignores the critic.
    rebuilt = PolicyNet.from_spec(net.spec())
    rebuilt.load_state_dict(net.state_dict())
    np.testing.assert_allclose(rebuilt.numpy_policy()(obs[0].numpy()), logits[0].detach().numpy(),
                               rtol=1e-5, atol=1e-6)  # fmt: skip
    with pytest.raises(ValueError, match="critic_extra: got -1"):
        PolicyNet(20, critic_extra=-1)


def test_config_refuses_an_unknown_critic_and_the_oracle_on_the_vector_backend() -> None:
    with pytest.raises(ValueError, match="critic"):
        tiny(critic="omniscient")
    with pytest.raises(ValueError, match="config critic: backend vector trains only the shared"):
        tiny(critic="oracle", backend="vector", opponents={"self": 1.0})


CRITICS = {"oracle": oracle_size(2), "perfect": perfect_size(2)}  # what each one reads


@pytest.fixture(scope="module", params=sorted(CRITICS))
def runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, str]:
    """A shared-critic run, and two runs of the critic started from it (same seed)."""
    critic = request.param
    out = tmp_path_factory.mktemp(critic)
    train(tiny(total_steps=400), out=out / "base", **QUIET)
    for name in ("a", "b"):
        train(tiny(critic=critic, init_policy=str(out / "base"), total_steps=600), out=out / name,
              **QUIET)  # fmt: skip
    return out, critic


def test_an_oracle_critic_starts_as_the_shared_one_whatever_the_hands(
    runs: tuple[Path, str],
) -> None:
    out, critic = runs
    config = tiny(critic=critic, init_policy=str(out / "base"))
    learner = Learner(config, torch.device("cpu"), "start")
    learner.init_policy(config.init_policy)
    old, _ = load_policy(out / "base" / "final.pt")
    net = learner.net
    assert net.critic_extra == CRITICS[critic]
    obs = torch.rand(7, net.obs_size)
    for extra in (None, torch.rand(7, net.critic_extra)):
        logits, value = net(obs, extra)
        old_logits, old_value = old(obs)
        assert torch.equal(logits, old_logits)
        torch.testing.assert_close(value, old_value)
    weight = net.state_dict()["critic.0.weight"]
    assert torch.equal(weight[:, : net.obs_size], old.state_dict()["trunk.0.weight"])
    assert not weight[:, net.obs_size :].any()  # the hidden cards' inputs start at zero weight
    learner.close()


def test_an_oracle_run_learns_the_same_parameters_for_the_same_seed(
    runs: tuple[Path, str],
) -> None:
    out, critic = runs
    a, b = (load_checkpoint(out / name / "final.pt") for name in ("a", "b"))
    assert a["network"]["critic_extra"] == CRITICS[critic]
    assert a["global_step"] >= 600 and a["global_step"] == b["global_step"]
    assert all(torch.equal(a["policy"][k], b["policy"][k]) for k in a["policy"])
    base = load_checkpoint(out / "base" / "final.pt")["policy"]
    obs_size = a["network"]["obs_size"]
    weight = a["policy"]["critic.0.weight"]
    assert weight[:, obs_size : obs_size + oracle_size(2)].any()  # it learned to read the hands
    if critic == "perfect":
        assert weight[:, obs_size + oracle_size(2) :].any()  # and the stock
    assert not torch.equal(a["policy"]["trunk.0.weight"], base["trunk.0.weight"])


def test_an_oracle_run_resumes_exactly(runs: tuple[Path, str], tmp_path: Path) -> None:
    out, critic = runs
    resumed = tmp_path / "resumed"
    (resumed / "checkpoints").mkdir(parents=True)
    shutil.copy(out / "a" / "checkpoints" / "step_000002.pt", resumed / "checkpoints")
    result = train(resume=resumed, **QUIET)
    a, b = load_checkpoint(out / "a" / "final.pt"), load_checkpoint(result.final_checkpoint)
    assert all(torch.equal(a["policy"][k], b["policy"][k]) for k in a["policy"])
    buffer = pickle.loads(tensor_to_bytes(b["rollout"]))["buffer"]
    assert buffer["critic_obs"].shape[1] == CRITICS[critic]  # carried with the transitions


def test_the_batch_gives_the_critic_the_hands_the_observation_hides() -> None:
    config = tiny(critic="oracle", num_players=3)
    learner = Learner(config, torch.device("cpu"), "batch")
    batch, _ = learner.collect()
    n = len(batch)
    assert batch.critic_obs.shape == (n, oracle_size(3)) and n >= config.batch_size
    encoder = ObservationEncoder(3, config.rules)
    own = batch.obs[:, encoder.slices["hand"]]
    blocks = batch.critic_obs.reshape(n, 2, NUM_CARDS)
    copies = config.rules.decks_for(3)
    assert (own + blocks.sum(axis=1) <= copies).all()  # no card held twice beyond the decks
    # Each block's card count is that opponent's hand size in the observation (/ 10).
    opponents = batch.obs[:, encoder.slices["opponents"]].reshape(n, 2, -1)
    np.testing.assert_allclose(blocks.sum(axis=2) / 10, opponents[:, :, 0], atol=1e-6)
    assert blocks.sum() > 0
    learner.close()


def test_an_oracle_checkpoint_plays_as_its_policy(runs: tuple[Path, str]) -> None:
    path = runs[0] / "a" / "final.pt"
    net, meta = load_policy(path)
    assert net.critic is not None and meta["observation"] == "standard"
    agent = make_agent(f"ppo:{path}", num_players=2, rules=Rules(hand_sizes=(3, 2, 1)))
    assert isinstance(agent, PPOAgent)
    decided = 0
    for seed in range(5):
        game = Game(2, Rules(hand_sizes=(3, 2, 1)), seed=seed)
        public = PublicGame(game)
        while not game.is_over:
            view = public.view(game.current_player)
            mask = np.asarray(view["action_mask"], bool)
            action = agent.act(view)
            if mask.sum() > 1:  # the argmax of the policy head, whatever the critic
                obs = torch.from_numpy(np.asarray(view["observation"], np.float32))[None]
                logits = net(obs)[0][0].numpy()
                assert action == int(np.flatnonzero(mask)[np.argmax(logits[mask])])
                decided += 1
            public.apply(action)
    assert decided > 10
