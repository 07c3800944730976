"""Oracle guiding (Suphx): the policy reads the opponents' hands for a while, then loses them.

The schedule, the dropped entries, what the buffer stores, a start from a policy without
them that plays as before, a checkpoint that plays without them, and exact resumes."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from craits.agents.network import PolicyNet
from craits.agents.specs import make_agent
from craits.training.checkpoint import load_checkpoint, load_policy
from craits.training.config import TrainConfig, load_config
from craits.training.learner import Learner
from craits.training.selfplay import SelfPlayRollout
from craits.training.train import train
from craits_env import Rules, craits_v0
from craits_env.oracle import encode_oracle, oracle_size

from .test_training import tiny

QUIET = {"progress": False, "echo": lambda s: None}
HANDS = oracle_size(2)  # the two-player tiny table: one opponent's 52 entries


def test_the_schedule_keeps_all_then_fades_linearly_then_none() -> None:
    c = TrainConfig(oracle_guiding=[100, 300])
    assert [c.oracle_keep(s) for s in (0, 99, 100, 200, 250, 299, 300, 10**9)] == [
        1.0, 1.0, 1.0, 0.5, 0.25, 0.005, 0.0, 0.0]  # fmt: skip
    assert TrainConfig().oracle_keep(0) == 0.0  # no guiding: nothing shown
    assert TrainConfig(oracle_guiding=[5, 5]).oracle_keep(4) == 1.0
    assert TrainConfig(oracle_guiding=[5, 5]).oracle_keep(5) == 0.0


@pytest.mark.parametrize("bad", [[5, 1], [1], [1, 2, 3], [-1, 3]])
def test_bad_schedules_are_one_line_errors(bad: list[int]) -> None:
    with pytest.raises(ValueError, match=r"^config oracle_guiding: got .* allowed \[\] or"):
        TrainConfig(oracle_guiding=bad)


def test_the_vector_backend_refuses_it() -> None:
    with pytest.raises(ValueError, match=r"^config oracle_guiding: backend vector"):
        load_config("selfplay_4p", ["oracle_guiding=[0, 10]"])


def test_the_network_reads_its_oracle_inputs_as_zero_when_playing() -> None:
    torch.manual_seed(0)
    net = PolicyNet(20, (8, 8), oracle_inputs=6)
    assert net.play_size == 14 and net.spec()["oracle_inputs"] == 6
    assert PolicyNet.from_spec(net.spec()).oracle_inputs == 6
    assert "oracle_inputs" not in PolicyNet(20, (8,)).spec()  # older specs read as before
    play = torch.rand(5, 14)
    full = torch.cat([play, torch.zeros(5, 6)], -1)
    torch.testing.assert_close(net.logits(play), net.logits(full), rtol=0, atol=0)
    torch.testing.assert_close(net(play)[1], net(full)[1], rtol=0, atol=0)
    shown = torch.cat([play, torch.ones(5, 6)], -1)
    assert not torch.allclose(net.logits(shown), net.logits(full))  # the inputs are read
    numpy_logits = net.numpy_policy()
    for row in play.numpy():
        np.testing.assert_allclose(numpy_logits(row), net.logits(torch.from_numpy(row)[None])[0]
                                   .detach().numpy(), rtol=1e-5, atol=1e-5)  # fmt: skip
    with pytest.raises(ValueError, match=r"^oracle_inputs: got 20"):
        PolicyNet(20, (8,), oracle_inputs=20)


def guided(**changes: object) -> TrainConfig:
    return tiny(oracle_guiding=[300, 900], **changes)


def test_the_policy_sees_the_deciders_opponents_hands_as_the_schedule_keeps_them() -> None:
    config = guided(batch_size=400)
    rollout = SelfPlayRollout(config, Learner(config, torch.device("cpu"), "g").pool,
                              np.random.default_rng(0))  # fmt: skip
    assert rollout.obs_size == SelfPlayRollout.observation_size(tiny()) + HANDS
    net = PolicyNet(rollout.obs_size, (32,), oracle_inputs=HANDS)
    gen = torch.Generator().manual_seed(0)
    seen = []

    def spy(slots: list, seats: list, *rest: object) -> None:  # type: ignore[type-arg]
        for r, (slot, p) in enumerate(zip(slots, seats, strict=True)):
            seen.append((rollout._obs[r, -HANDS:].copy(), encode_oracle(slot.public.game, p)))
        store(slots, seats, *rest)

    store = rollout._store
    rollout._store = spy  # type: ignore[method-assign]
    rollout.oracle_keep = 1.0
    rollout.collect(net, 64, gen)
    assert seen and all(np.array_equal(a, b) for a, b in seen)  # all shown: the true hands
    assert any(b.any() for _, b in seen)
    seen.clear()
    rollout.oracle_keep = 0.0
    batch, _ = rollout.collect(net, 64, gen)
    assert seen and not any(a.any() for a, _ in seen)  # none shown
    seen.clear()
    rollout.oracle_keep = 0.5
    batch, _ = rollout.collect(net, 400, gen)
    shown = sum(int((a > 0).sum()) for a, _ in seen)
    held = sum(int((b > 0).sum()) for _, b in seen)
    assert all(np.all((a == 0) | (a == b)) for a, b in seen)  # an entry is kept or zeroed
    assert 0.4 < shown / held < 0.6
    # The batch stores the input as the network saw it (this collect's decisions, or the
    # ones carried from the last).
    inputs = {a.tobytes() for a, _ in seen}
    fresh = [row for row in batch.obs[:, -HANDS:] if row.tobytes() in inputs]
    assert len(fresh) >= len(batch) - config.num_games * 2
    assert any(row.any() for row in fresh)


def test_a_start_from_an_unguided_policy_plays_as_before_and_learns_to_read_them(
    tmp_path: Path,
) -> None:
    train(tiny(total_steps=400), out=tmp_path / "base", **QUIET)
    old, _ = load_policy(tmp_path / "base" / "final.pt")
    config = guided(init_policy=str(tmp_path / "base"))
    learner = Learner(config, torch.device("cpu"), "g")
    learner.init_policy(config.init_policy)
    net = learner.net
    assert net.obs_size == old.obs_size + HANDS and net.oracle_inputs == HANDS
    play = torch.rand(7, old.obs_size)
    shown = torch.cat([play, torch.rand(7, HANDS) * 2], -1)
    torch.testing.assert_close(net(shown)[0], old(play)[0], rtol=0, atol=1e-6)  # hands unread
    torch.testing.assert_close(net(shown)[1], old(play)[1], rtol=0, atol=1e-6)
    assert not net.trunk[0].weight[:, old.obs_size :].any()
    learner.close()
    result = train(config.replace(total_steps=1200), out=tmp_path / "g", **QUIET)
    tuned, _ = load_policy(result.final_checkpoint)
    assert tuned.trunk[0].weight[:, old.obs_size :].abs().sum() > 0  # it learned to read them
    # The checkpoint plays without them: the ppo agent feeds the observation alone.
    agent = make_agent(f"ppo:{result.final_checkpoint}")
    env = craits_v0.raw_env(num_players=2, rules=Rules(hand_sizes=(3, 2, 1)))
    env.reset(seed=3)
    decisions = 0
    for _name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        action = None
        if not (term or trunc):
            action = agent.act(dict(obs))
            legal = np.flatnonzero(obs["action_mask"])
            if len(legal) > 1:
                x = torch.from_numpy(np.asarray(obs["observation"], np.float32))[None]
                logits = tuned.logits(x)[0].detach().numpy()[legal]
                assert action == legal[int(np.argmax(logits))]
                decisions += 1
        env.step(action)
    assert decisions > 0
    # A guided policy starts only a guided network of its own shape.
    with pytest.raises(ValueError, match=r"^config init_policy: .* holds the network"):
        train(tiny(total_steps=200, init_policy=str(result.final_checkpoint)),
              out=tmp_path / "bad", **QUIET)  # fmt: skip


def test_a_guided_run_resumes_exactly_mid_fade(tmp_path: Path) -> None:
    config = guided(total_steps=1500)
    full = train(config, out=tmp_path / "full", **QUIET)
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(tmp_path / "full"))
    acc.Reload()
    keeps = [(e.step, e.value) for e in acc.Scalars("charts/oracle_keep")]
    assert keeps[0][1] == 1.0 and keeps[-1][1] == 0.0  # x axis: the steps after each batch
    values = [v for _, v in keeps]
    assert values == sorted(values, reverse=True)  # never rises
    out = tmp_path / "resumed"
    (out / "checkpoints").mkdir(parents=True)
    steps = [load_checkpoint(p)["global_step"]
             for p in sorted((tmp_path / "full" / "checkpoints").glob("*.pt"))]  # fmt: skip
    mid = next(i for i, s in enumerate(steps, 1) if 300 < s < 900)  # inside the fade
    shutil.copy(tmp_path / "full" / "checkpoints" / f"step_{mid:06d}.pt", out / "checkpoints")
    resumed = train(resume=out, **QUIET)
    a, b = load_checkpoint(full.final_checkpoint), load_checkpoint(resumed.final_checkpoint)
    assert a["global_step"] == b["global_step"]
    for key, value in a["policy"].items():
        assert torch.equal(value, b["policy"][key]), key


def test_a_rollout_worker_drops_the_hands_as_the_learner_tells_it() -> None:
    from craits.training.distributed import RolloutWorker
    from craits.training.learner import LocalRollouts
    from craits.training.pool import OpponentPool

    config = guided()
    torch.manual_seed(0)
    net = PolicyNet(SelfPlayRollout.observation_size(config), config.hidden_sizes,
                    oracle_inputs=HANDS)  # fmt: skip
    spec = net.spec()
    local = LocalRollouts(config, OpponentPool(config.opponents, spec, config.pool_size))
    worker = RolloutWorker(config.to_dict(), spec, 0, 0, [])  # worker 0: the same games
    for version, keep in enumerate((1.0, 0.5, 0.0)):
        local.set_oracle_keep(keep)
        batch, _ = local.collect(net, version, 96)
        result = worker.collect(96, net.state_dict(), version, keep)
        assert np.array_equal(batch.obs, result.batch.obs)
        assert np.array_equal(batch.actions, result.batch.actions)
        fresh = batch.obs[config.num_games * 2 :, -HANDS:]  # past the carried transitions
        assert fresh.any() == (keep > 0)


def test_with_a_hands_head_the_shown_hands_are_the_carried_ones() -> None:
    config = guided(batch_size=200, hands_coef=0.5)
    rollout = SelfPlayRollout(config, Learner(config, torch.device("cpu"), "g").pool,
                              np.random.default_rng(0))  # fmt: skip
    net = PolicyNet(rollout.obs_size, (32,), hands_out=HANDS, oracle_inputs=HANDS)
    rollout.oracle_keep = 1.0
    batch, _ = rollout.collect(net, 150, torch.Generator().manual_seed(0))
    assert batch.critic_obs.any() and np.array_equal(batch.obs[:, -HANDS:], batch.critic_obs)
