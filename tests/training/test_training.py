"""craits train: GAE, the masked distribution, the PPO loss, the self-play rollout's rewards,
configs, checkpoints (load, resume exactly, clear errors), the ppo:PATH agent, and the CLI."""

from __future__ import annotations

import math
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from craits.agents.checkpoint import (
    load_checkpoint,
    load_policy,
    save_checkpoint,
    tensor_to_bytes,
)
from craits.agents.duplicate_tournament import TournamentConfig, run_games
from craits.agents.network import PolicyNet
from craits.agents.specs import make_agent
from craits.training.config import (
    FIELDS,
    TrainConfig,
    config_names,
    load_config,
    parse_override,
    to_toml,
)
from craits.training.pool import OpponentPool
from craits.training.ppo import MaskedCategorical, gae, gae_linked, masked_logits, ppo_loss
from craits.training.selfplay import SelfPlayRollout
from craits.training.train import train
from craits_env import Rules, craits_v0
from craits_env.actions import NUM_ACTIONS
from craits_env.engine import Game
from craits_env.observation import ObservationEncoder

torch.set_num_threads(1)

TINY = {
    "name": "tiny",
    "num_players": 2,
    "rules": {"hand_sizes": [3, 2, 1]},
    "num_games": 6,
    "batch_size": 96,
    "num_minibatches": 2,
    "update_epochs": 2,
    "hidden_sizes": [32],
    "opponents": {"self": 1.0, "past": 1.0, "greedy": 1.0},
    "snapshot_every": 1,
    "pool_size": 2,
    "checkpoint_every": 1,
    "eval_every": 0,
    "eval_deals": 2,
    "final_eval_deals": 0,
    "eval_opponents": ["greedy"],
    "total_steps": 1500,
    "device": "cpu",
}


def tiny(**changes: object) -> TrainConfig:
    return TrainConfig.from_dict({**TINY, **changes})


# ----------------------------------------------------------------------------- GAE


def test_gae_matches_a_hand_computed_example_with_a_done() -> None:
    # gamma 0.9, lambda 0.8; the episode ends after step 1.
    adv, ret = gae(
        rewards=np.array([1.0, 0.0, 2.0]),
        values=np.array([0.5, 0.4, 0.3]),
        dones=np.array([0, 1, 0]),
        last_value=0.6,
        gamma=0.9,
        lam=0.8,
    )
    # t=2: 2 + 0.9*0.6 - 0.3 = 2.24; t=1 (done): 0 - 0.4 = -0.4;
    # t=0: (1 + 0.9*0.4 - 0.5) + 0.9*0.8*(-0.4) = 0.86 - 0.288 = 0.572
    np.testing.assert_allclose(adv, [0.572, -0.4, 2.24], rtol=1e-6)
    np.testing.assert_allclose(ret, [1.072, 0.0, 2.54], rtol=1e-6)


def test_gae_linked_equals_gae_on_each_interleaved_stream() -> None:
    rng = np.random.default_rng(0)
    lengths = [7, 5, 9]
    streams = [
        {
            "r": rng.normal(size=k),
            "v": rng.normal(size=k),
            "d": (rng.random(k) < 0.25).astype(float),
        }
        for k in lengths
    ]
    # Interleave: a random order of (stream, position), positions increasing per stream.
    order = [s for s, k in enumerate(lengths) for _ in range(k)]
    rng.shuffle(order)
    pos = [0] * len(lengths)
    flat: list[tuple[int, int]] = []
    for s in order:
        flat.append((s, pos[s]))
        pos[s] += 1
    n = len(flat)
    index = {sp: i for i, sp in enumerate(flat)}
    rewards = np.array([streams[s]["r"][t] for s, t in flat])
    values = np.array([streams[s]["v"][t] for s, t in flat])
    dones = np.array([bool(streams[s]["d"][t]) for s, t in flat])
    next_index = np.full(n, -1)
    bootstrap = np.zeros(n, bool)
    for (s, t), i in index.items():
        if t + 1 < lengths[s]:
            next_index[i] = index[(s, t + 1)]
        if t == lengths[s] - 1:
            bootstrap[i] = True  # the horizon: its value bootstraps, it is not trained
            dones[i] = False
    adv = gae_linked(rewards, values, dones, next_index, 0.97, 0.9, bootstrap)
    for s, k in enumerate(lengths):
        d = streams[s]["d"][: k - 1].copy()
        expected, _ = gae(
            streams[s]["r"][: k - 1], streams[s]["v"][: k - 1], d, streams[s]["v"][k - 1], 0.97, 0.9
        )
        got = [adv[index[(s, t)]] for t in range(k - 1)]
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
        assert adv[index[(s, k - 1)]] == 0.0


def test_gae_linked_refuses_a_transition_without_successor() -> None:
    with pytest.raises(ValueError, match="no successor"):
        gae_linked(np.zeros(2), np.zeros(2), np.zeros(2, bool), np.array([1, -1]), 0.9, 0.9)


# ----------------------------------------------------------------------------- the distribution


def test_masked_distribution_never_samples_an_illegal_action() -> None:
    logits = torch.tensor([[5.0, 0.0, 3.0, -1.0], [0.0, 9.0, 0.0, 0.0]]).repeat(500, 1)
    mask = torch.tensor([[0, 1, 0, 1], [1, 0, 1, 1]], dtype=torch.bool).repeat(500, 1)
    dist = MaskedCategorical(logits, mask)
    gen = torch.Generator().manual_seed(0)
    for _ in range(20):
        actions = dist.sample(gen)
        assert mask.gather(1, actions.unsqueeze(1)).all()
    assert (dist.probs[~mask] == 0).all()  # exactly 0, not tiny
    assert torch.isfinite(dist.log_probs).all()
    assert (dist.mode()[:2] == torch.tensor([1, 0])).all()


@pytest.mark.slow
def test_masked_probabilities_are_the_renormalised_legal_softmax_and_entropy_ignores_illegal() -> (
    None
):
    logits = torch.tensor([[2.0, -1.0, 0.5, 100.0, 0.0]])
    mask = torch.tensor([[1, 1, 1, 0, 0]], dtype=torch.bool)
    dist = MaskedCategorical(logits, mask)
    legal = torch.softmax(torch.tensor([2.0, -1.0, 0.5]), 0)
    torch.testing.assert_close(dist.probs[0, :3], legal)
    assert dist.probs[0, 3] == 0 and dist.probs[0, 4] == 0
    expected = -(legal * legal.log()).sum()
    torch.testing.assert_close(dist.entropy()[0], expected)
    torch.testing.assert_close(dist.log_prob(torch.tensor([2]))[0], legal[2].log())
    # One legal action: probability 1, entropy 0.
    one = MaskedCategorical(logits, torch.tensor([[0, 0, 0, 0, 1]], dtype=torch.bool))
    assert one.probs[0, 4] == 1 and one.entropy()[0] == 0
    assert masked_logits(logits, mask)[0, 3] == torch.finfo(torch.float32).min


def test_illegal_logits_get_no_gradient() -> None:
    logits = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    mask = torch.tensor([[1, 0, 1]], dtype=torch.bool)
    dist = MaskedCategorical(logits, mask)
    (dist.log_prob(torch.tensor([0])) + dist.entropy()).sum().backward()
    assert logits.grad is not None and logits.grad[0, 1] == 0 and logits.grad[0, 0] != 0


# ----------------------------------------------------------------------------- the loss


def test_ppo_loss_clips_the_ratio_as_ppo() -> None:
    # Ratios e^0.5 ≈ 1.65 (advantage +1) and e^-0.5 ≈ 0.61 (advantage +1), clip 0.2.
    new = torch.tensor([0.5, -0.5])
    old = torch.zeros(2)
    adv = torch.tensor([1.0, 1.0])
    out = ppo_loss(
        new_log_prob=new,
        old_log_prob=old,
        advantages=adv,
        entropy=torch.zeros(2),
        new_value=torch.zeros(2),
        old_value=torch.zeros(2),
        returns=torch.zeros(2),
        clip_coef=0.2,
        clip_vloss=False,
        ent_coef=0.0,
        vf_coef=0.0,
    )
    # A > 0: the objective is min(r·A, clip(r)·A): 1.2 for the first, e^-0.5 for the second.
    expected = -(1.2 + math.exp(-0.5)) / 2
    assert out.policy_loss == pytest.approx(expected)
    assert out.clipfrac == 1.0
    kl = ((math.exp(0.5) - 1 - 0.5) + (math.exp(-0.5) - 1 + 0.5)) / 2
    assert out.approx_kl == pytest.approx(kl)
    # The clipped sample gives no gradient; the unclipped one does.
    new_p = new.clone().requires_grad_(True)
    out = ppo_loss(
        new_log_prob=new_p,
        old_log_prob=old,
        advantages=adv,
        entropy=torch.zeros(2),
        new_value=torch.zeros(2),
        old_value=torch.zeros(2),
        returns=torch.zeros(2),
        clip_coef=0.2,
        clip_vloss=False,
        ent_coef=0.0,
        vf_coef=0.0,
    )
    out.loss.backward()
    assert new_p.grad is not None and new_p.grad[0] == 0 and new_p.grad[1] != 0


def test_ppo_loss_value_clipping_and_entropy_bonus() -> None:
    zeros = torch.zeros(1)
    kwargs = dict(
        new_log_prob=zeros,
        old_log_prob=zeros,
        advantages=zeros,
        new_value=torch.tensor([1.0]),
        old_value=torch.tensor([0.0]),
        returns=torch.tensor([2.0]),
        clip_coef=0.2,
        ent_coef=0.1,
        vf_coef=0.5,
    )
    plain = ppo_loss(entropy=torch.tensor([2.0]), clip_vloss=False, **kwargs)  # type: ignore[arg-type]
    assert plain.value_loss == pytest.approx(0.5 * 1.0)
    clipped = ppo_loss(entropy=torch.tensor([2.0]), clip_vloss=True, **kwargs)  # type: ignore[arg-type]
    # V_old + clip(1 - 0, ±0.2) = 0.2: error (0.2 - 2)² = 3.24 > 1, so 0.5·3.24.
    assert clipped.value_loss == pytest.approx(0.5 * 3.24)
    assert float(clipped.loss) == pytest.approx(0.0 - 0.1 * 2.0 + 0.5 * 1.62)


# ----------------------------------------------------------------------------- the rollout


def first_game(config: TrainConfig, seed: int) -> tuple[SelfPlayRollout, Game, int]:
    """A rollout of ``config`` (one game slot) ticked until its first game is over (the same
    seed, the same network and sampling, the same game), that game and its learner's seat
    (a later tick may have dealt the slot another)."""
    pool = OpponentPool(config.opponents, {}, 1)
    rollout = SelfPlayRollout(config, pool, np.random.default_rng(seed))
    torch.manual_seed(0)
    net = PolicyNet(rollout.obs_size, [16])
    gen = torch.Generator().manual_seed(0)
    rollout._tick(net, gen)
    game, learner = rollout.slots[0].public.game, rollout.slots[0].learner
    while not rollout.stats.learner_wins:
        rollout._tick(net, gen)
    return rollout, game, learner


def one_game(config: TrainConfig, seed: int) -> SelfPlayRollout:
    """:func:`first_game`'s rollout."""
    return first_game(config, seed)[0]


def test_hand_rewards_go_to_the_seats_latest_transition_of_that_game() -> None:
    config = tiny(
        num_players=3,
        num_games=1,
        reward="score",
        rules={"hand_sizes": [4, 1, 3]},
        opponents={"greedy": 1.0},
    )
    rollout = one_game(config, 3)
    buf = rollout.buffer
    hands = len(config.rules.hand_sizes)
    points = rollout.stats.learner_hand_points  # the learner's points per hand of the game
    assert len(points) == hands
    end = int(np.flatnonzero(buf.dones[: buf.size])[0])  # the game's last transition
    first_hp = ObservationEncoder(3, config.rules).slices["hand_progress"].start
    hand_of = [round(float(buf.obs[i, first_hp]) * hands) for i in range(end + 1)]
    assert hand_of == sorted(hand_of)
    for i in range(end + 1):
        assert buf.masks[i].sum() >= 2  # forced decisions are not transitions
        assert buf.masks[i, buf.actions[i]]  # every sampled action is legal
        assert buf.next_index[i] == (i + 1 if i < end else -1)  # one stream: consecutive
        # Paid to transition i: the hands that ended after it and before the seat's next one.
        until = hand_of[i + 1] if i < end else hands
        expected = sum(-points[h] / 100 for h in range(hand_of[i], until))
        assert buf.rewards[i] == pytest.approx(expected), i
    assert buf.dones[end] and not buf.dones[:end].any()


def test_value_horizon_hand_ends_every_stream_at_its_hands_end() -> None:
    # value_horizon = "hand": each hand is an episode. One stream (the learner against greedy):
    # a hand's last transition is done and holds that hand's reward; the next hand's first
    # decision opens a new stream; the returns (values 0, gamma = lambda = 1) are the hand's
    # reward alone, not the rest of the game's.
    config = tiny(
        num_players=3,
        num_games=1,
        reward="score",
        rules={"hand_sizes": [4, 1, 3, 2]},
        opponents={"greedy": 1.0},
        value_horizon="hand",
        gamma=1.0,
        gae_lambda=1.0,
    )
    rollout = one_game(config, 5)
    buf = rollout.buffer
    hands = len(config.rules.hand_sizes)
    points = rollout.stats.learner_hand_points
    size = buf.size - buf.open  # the finished game's transitions (a new game may have begun)
    first_hp = ObservationEncoder(3, config.rules).slices["hand_progress"].start
    hand_of = [round(float(buf.obs[i, first_hp]) * hands) for i in range(size)]
    assert hand_of == sorted(hand_of) and len(set(hand_of)) >= 3
    for i in range(size):
        last_of_hand = i == size - 1 or hand_of[i + 1] != hand_of[i]
        assert buf.dones[i] == last_of_hand, i
        assert buf.next_index[i] == (-1 if last_of_hand else i + 1), i
        expected = -points[hand_of[i]] / 100 if last_of_hand else 0.0
        assert buf.rewards[i] == pytest.approx(expected), i
    values = np.zeros(size, np.float32)
    adv = gae_linked(buf.rewards[:size], values, buf.dones[:size], buf.next_index[:size], 1.0, 1.0)
    expected_returns = [-points[h] / 100 for h in hand_of]
    np.testing.assert_allclose(adv, expected_returns, rtol=1e-6, atol=1e-7)
    assert buf.open == sum(last >= 0 for last in rollout.slots[0].last)
    # The same game under the game horizon: one stream, whose returns reach the game's end.
    whole = one_game(config.replace(value_horizon="game"), 5)
    assert whole.stats.learner_hand_points == points  # the same game, the same moves
    wb = whole.buffer
    assert np.array_equal(wb.obs[:size], buf.obs[:size])
    assert wb.dones[size - 1] and not wb.dones[: size - 1].any()
    adv = gae_linked(wb.rewards[:size], values, wb.dones[:size], wb.next_index[:size], 1.0, 1.0)
    rest = [-sum(points[h:]) / 100 for h in hand_of]
    np.testing.assert_allclose(adv, rest, rtol=1e-6, atol=1e-7)


def test_collect_returns_complete_transitions_and_carries_the_open_ones() -> None:
    config = tiny(num_players=3, opponents={"self": 1.0, "greedy": 1.0})
    pool = OpponentPool(config.opponents, {}, 1)
    rollout = SelfPlayRollout(config, pool, np.random.default_rng(0))
    net = PolicyNet(rollout.obs_size, [16])
    gen = torch.Generator().manual_seed(0)
    segment, stats = rollout.collect(net, 96, gen)
    batch = segment.batch(
        gae_linked(
            segment.rewards,
            segment.values,
            segment.dones,
            segment.next_index,
            0.99,
            0.95,
            segment.open,
        )
    )
    assert len(batch) >= 96 and stats.transitions == len(batch) == int((~segment.open).sum())
    assert segment.open.sum() == rollout.buffer.size  # the open ones are carried
    assert stats.steps > len(batch)
    assert batch.masks[np.arange(len(batch)), batch.actions].all()
    open_streams = sum(1 for slot in rollout.slots for last in slot.last if last >= 0)
    assert rollout.buffer.size == open_streams == rollout.buffer.open
    np.testing.assert_allclose(batch.returns, batch.advantages + batch.values, rtol=1e-6)


@pytest.mark.parametrize("players, rules", [(10, {}), (5, {"face_cards": True})])
def test_rollouts_run_at_any_table(players: int, rules: dict[str, object]) -> None:
    config = tiny(
        num_players=players,
        rules={"hand_sizes": [2, 1], **rules},
        opponents={"self": 1.0, "tactician": 1.0, "random": 1.0},
    )
    pool = OpponentPool(config.opponents, {}, 1)
    rollout = SelfPlayRollout(config, pool, np.random.default_rng(1))
    net = PolicyNet(rollout.obs_size, [8])
    segment, stats = rollout.collect(net, 64, torch.Generator().manual_seed(0))
    batch = segment.batch(np.zeros(len(segment), np.float32))
    assert batch.obs.shape[1] == ObservationEncoder(players, config.rules).size
    assert batch.masks[np.arange(len(batch)), batch.actions].all() and stats.learner_wins


def test_pool_draws_by_weight_and_retires_snapshots_still_in_use() -> None:
    spec = PolicyNet(10, [4]).spec()
    pool = OpponentPool({"self": 1.0, "past": 1.0, "greedy": 2.0}, spec, max_size=1)
    rng = np.random.default_rng(0)
    kinds = [k for _ in range(400) for k in pool.draw_table(rng, 3)]
    assert set(kinds) == {"self", "greedy"}  # "past" falls back to "self" while empty
    shares = pool.composition()
    assert shares["greedy"] == pytest.approx(0.5, abs=0.05)
    pool.add_snapshot(PolicyNet(10, [4]), update=1)
    assert {k for _ in range(50) for k in pool.draw_table(rng, 3)} >= {"past@1"}
    pool.add_snapshot(PolicyNet(10, [4]), update=2)
    assert [s.key for s in pool.snapshots] == ["past@2"]
    pool.prune({"past@1"})
    assert pool.network("past@1") is not None  # a running game still seats it
    pool.prune(set())
    with pytest.raises(KeyError):
        pool.network("past@1")


# ----------------------------------------------------------------------------- configs


def test_named_configs_load_and_overrides_are_checked(tmp_path: Path) -> None:
    assert {"ppo_4p", "ppo_2p"} <= set(config_names())
    for name in config_names():
        config = load_config(name)
        assert config.name == name
        assert TrainConfig.from_dict(config.to_dict()) == config
        (tmp_path / f"{name}.toml").write_text(to_toml(config))
        assert load_config(str(tmp_path / f"{name}.toml")) == config
    c = load_config(
        "ppo_2p",
        ["learning_rate=1e-3", "opponents.greedy=2", "hidden_sizes=[64]", "rules.face_cards=true"],
    )
    assert c.learning_rate == 1e-3 and c.opponents["greedy"] == 2.0
    assert c.hidden_sizes == (64,) and c.rules.face_cards
    assert parse_override("eval_opponents=greedy") == ("eval_opponents", "greedy")
    for bad, match in [
        ("nope=1", "unknown config key 'nope'; allowed: "),
        ("learning_rate=fast", "learning_rate"),
        ("num_players=11", "num_players"),
        ("opponents.nobody=1", "unknown agent spec"),
        ("rules.face_cards=3", "face_cards"),
        ("total_steps=0", "total_steps"),
        ("gamma=1.5", "gamma"),
        ("value_horizon=hands", "value_horizon"),
        ("batch_size.x=1", "not a table"),
        ("novalue", "KEY=VALUE"),
    ]:
        with pytest.raises(ValueError, match=match):
            load_config("ppo_4p", [bad])
    with pytest.raises(ValueError, match="unknown config 'nope'; known: "):
        load_config("nope")
    with pytest.raises(ValueError, match=r"^config value_horizon: hand needs a per-hand reward"):
        load_config("ppo_4p", ["value_horizon=hand", "reward=win"])


def test_every_config_field_has_a_one_line_docstring() -> None:
    """The configuration reference is generated from these: 34 fields at most, each with one."""
    import ast
    import inspect

    import craits.training.config as module

    tree = ast.parse(inspect.getsource(module))
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TrainConfig")
    docs = {}
    for node, after in zip(body.body, body.body[1:], strict=False):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            assert isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
            docs[node.target.id] = after.value.value
    assert list(docs) == list(FIELDS) and len(FIELDS) <= 34
    assert all(doc and "\n" not in doc for doc in docs.values()), docs


# ----------------------------------------------------------------------------- a smoke run


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run")
    result = train(
        tiny(eval_every=3, final_eval_deals=2), out=out, progress=False, echo=lambda s: None
    )
    assert result.global_step >= 1500 and result.updates >= 3
    assert set(result.evaluations) == {"greedy"}
    return out


@pytest.mark.slow
def test_smoke_run_writes_events_checkpoints_and_the_final_table(smoke_run: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = list(smoke_run.glob("events.out.tfevents.*"))
    assert events
    acc = EventAccumulator(str(smoke_run))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    for tag in [
        "losses/policy",
        "losses/value",
        "losses/entropy",
        "losses/approx_kl",
        "losses/clipfrac",
        "losses/explained_variance",
        "charts/SPS",
        "charts/learning_rate",
        "learner/mean_hand_points",
        "eval/greedy/win_rate",
        "eval/greedy/win_rate_ci_lo",
        "eval/greedy/mean_score",
        "pool/self_share",
        "pool/greedy_share",
        "pool/past_share",
        "time/update",
    ]:
        assert tag in tags, tag
    assert "hyperparameters" in " ".join(acc.Tags()["tensors"])
    assert (smoke_run / "final.pt").is_file()
    assert sorted(p.name for p in (smoke_run / "checkpoints").glob("*.pt"))[0] == "step_000001.pt"
    assert (smoke_run / "eval" / "greedy" / "results.json").is_file()
    assert (smoke_run / "config.toml").is_file()
    net, meta = load_policy(smoke_run / "final.pt")
    assert meta["num_players"] == 2 and net.obs_size == ObservationEncoder(2, Rules()).size


@pytest.mark.slow
def test_checkpoint_plays_legal_games_as_ppo_spec(smoke_run: Path, tmp_path: Path) -> None:
    spec = f"ppo:{smoke_run / 'final.pt'}"
    config = TournamentConfig((spec, "greedy"), 2, 2, 0, Rules(hand_sizes=(3, 2, 1)))
    games = run_games(config, tmp_path / "t")
    assert len(games) == 4 and all(g["decisions"] > 0 for g in games.values())
    # In the environment, from the observation mapping alone (no SeatView).
    agent = make_agent(spec)
    env = craits_v0.raw_env(num_players=2, rules=Rules(hand_sizes=(3, 2, 1)))
    env.reset(seed=5)
    steps = 0
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else agent.act(dict(obs)))  # raw_env raises if illegal
        steps += 1
    assert steps > 2 and env.game is not None and env.game.is_over


def test_ppo_agent_refuses_another_table_size(smoke_run: Path) -> None:
    agent = make_agent(f"ppo:{smoke_run / 'final.pt'}")
    env = craits_v0.raw_env(num_players=3)
    env.reset(seed=0)
    obs = dict(env.observe(env.agent_selection))
    obs["action_mask"] = np.ones(NUM_ACTIONS, np.int8)
    with pytest.raises(ValueError, match="trained for 2 players"):
        agent.act(obs)


@pytest.mark.slow
def test_resume_continues_exactly(smoke_run: Path, tmp_path: Path) -> None:
    # The smoke run wrote a checkpoint after every update; resume from the second.
    out = tmp_path / "resumed"
    (out / "checkpoints").mkdir(parents=True)
    shutil.copy(smoke_run / "checkpoints" / "step_000002.pt", out / "checkpoints")
    result = train(resume=out, progress=False, echo=lambda s: None)
    a = load_checkpoint(smoke_run / "final.pt")
    b = load_checkpoint(result.final_checkpoint)
    assert a["global_step"] == b["global_step"] and a["update"] == b["update"]
    for key, value in a["policy"].items():
        assert torch.equal(value, b["policy"][key]), key
    # The games in flight and the carried transitions too (pickles differ in sharing only).
    ra, rb = (pickle.loads(tensor_to_bytes(x["rollout"])) for x in (a, b))
    assert ra["rng"] == rb["rng"]
    for key, value in ra["buffer"].items():
        assert np.array_equal(value, rb["buffer"][key]), key
    for sa, sb in zip(ra["slots"], rb["slots"], strict=True):
        assert sa.public.game.snapshot() == sb.public.game.snapshot()
        assert (sa.actors, sa.last, sa.learner) == (sb.actors, sb.last, sb.learner)


@pytest.mark.slow
def test_same_seed_same_parameters_other_seed_other(tmp_path: Path) -> None:
    def final_policy(seed: int, name: str) -> dict[str, torch.Tensor]:
        train(
            tiny(total_steps=400, seed=seed, checkpoint_every=0),
            out=tmp_path / name,
            progress=False,
            echo=lambda s: None,
        )
        return load_checkpoint(tmp_path / name / "final.pt")["policy"]

    a, b, c = final_policy(4, "a"), final_policy(4, "b"), final_policy(5, "c")
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_bad_checkpoints_are_one_line_value_errors(smoke_run: Path, tmp_path: Path) -> None:
    missing = tmp_path / "missing.pt"
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"not a checkpoint\n" * 10)
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes((smoke_run / "final.pt").read_bytes()[:2000])
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(3)}, foreign)
    wrong_shape = tmp_path / "wrong_shape.pt"
    data = load_checkpoint(smoke_run / "final.pt")
    data["policy"]["policy.weight"] = torch.zeros(3, 3)
    save_checkpoint(wrong_shape, {k: v for k, v in data.items() if k not in ("format", "version")})
    cases = [
        (missing, "no such file"),
        (corrupt, "not a readable torch file"),
        (truncated, "not a readable torch file"),
        (foreign, "not a Craits PPO checkpoint"),
        (wrong_shape, "incompatible network"),
    ]
    for path, match in cases:
        with pytest.raises(ValueError, match=match) as info:
            make_agent(f"ppo:{path}")
        assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="needs a checkpoint"):
        make_agent("ppo")
    with pytest.raises(ValueError, match="already holds a run"):
        train(tiny(), out=smoke_run, progress=False, echo=lambda s: None)


# ----------------------------------------------------------------------------- the CLI


def test_cli_train_help_and_one_line_errors(capsys: pytest.CaptureFixture[str]) -> None:
    from craits.cli import main

    with pytest.raises(SystemExit) as info:
        main(["train", "--help"])
    assert info.value.code == 0
    assert "--total-steps" in capsys.readouterr().out
    for argv in (
        ["train", "--set", "bogus=1"],
        ["train", "--set", "learning_rate=x"],
        ["train", "--config", "nope"],
        ["train", "--resume", "/nonexistent.pt"],
        ["train", "--resume", "x.pt", "--seed", "3"],
        ["tournament", "ppo:/nonexistent.pt", "greedy", "--players", "2", "--out", "/tmp/never"],
    ):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "error" in err, err


@pytest.mark.slow
def test_cli_train_runs_and_prints_the_table(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from craits.cli import main

    config = tmp_path / "mini.toml"
    config.write_text(to_toml(tiny(total_steps=300, final_eval_deals=1, checkpoint_every=0)))
    out = tmp_path / "run"
    assert (
        main(["train", "--config", str(config), "--out", str(out), "--no-progress", "--seed", "7"])
        == 0
    )
    text = capsys.readouterr().out
    assert "win rate" in text and f"ppo:{out / 'final.pt'}" in text
    assert load_checkpoint(out / "final.pt")["config"]["seed"] == 7


@pytest.mark.slow
def test_cli_train_rule_options_and_short_game(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """-r NAME=VALUE and --short as craits play and tournament spell them: on top of the
    config's [rules] (-r NAME=VALUE is --set rules.NAME=VALUE; an -r hand_sizes wins)."""
    from craits.cli import main

    config = tmp_path / "mini.toml"
    config.write_text(to_toml(tiny(total_steps=100, checkpoint_every=0)))
    runs = {
        "r": ["-r", "face_cards=true", "--short"],
        "set": ["--set", "rules.face_cards=true", "--set", "rules.hand_sizes=[8,7,6,5,4,3,2,1]"],
        "mixed": ["--short", "-r", "hand_sizes=2,1"],
    }
    for name, extra in runs.items():
        assert (
            main(
                [
                    "train",
                    "--config",
                    str(config),
                    "--out",
                    str(tmp_path / name),
                    "--no-progress",
                    *extra,
                ]
            )
            == 0
        )
    capsys.readouterr()
    rules = {name: load_checkpoint(tmp_path / name / "final.pt")["rules"] for name in runs}
    assert (
        rules["r"]
        == rules["set"]
        == Rules(face_cards=True, hand_sizes=Rules.short_game().hand_sizes).to_dict()
    )
    assert rules["mixed"] == Rules(hand_sizes=(2, 1)).to_dict()
    assert (tmp_path / "r" / "config.toml").read_text() == (
        (tmp_path / "set" / "config.toml").read_text()
    )
    with pytest.raises(SystemExit) as info:
        main(["train", "--help"])
    help_text = capsys.readouterr().out
    assert (
        "-r NAME=VALUE" in help_text and "--short" in help_text and "--set KEY=VALUE" in help_text
    )
    for argv in (
        ["train", "--resume", str(tmp_path / "r"), "--short"],
        ["train", "--resume", str(tmp_path / "r"), "-r", "face_cards=true"],
        ["train", "-r", "colour=red"],
        ["train", "-r", "seven_hits=x"],
    ):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "error" in err, err


def test_numpy_policy_matches_the_network() -> None:
    for activation in ("tanh", "relu"):  # a relu network (distilled, or an older run's) too
        net = PolicyNet(20, [16, 8], activation)
        obs = torch.randn(5, 20)
        with torch.no_grad():
            logits, _ = net(obs)
        fn = net.numpy_policy()
        for i in range(5):
            np.testing.assert_allclose(fn(obs[i].numpy()), logits[i].numpy(), rtol=1e-5, atol=1e-6)


class _TrackerBefore030:
    """Stands for an engine object of a release before 0.3.0, as its games in flight held them:
    pickled (below) under a module name that no longer exists."""


@pytest.mark.slow
def test_a_checkpoint_of_an_earlier_release_keeps_its_policy_and_refuses_its_games(
    smoke_run: Path, tmp_path: Path
) -> None:
    """A checkpoint written before 0.3.0 (rebuilt here from the smoke run's, as such a file
    differs): its config holds keys removed since at their kept values (anneal_lr,
    clip_vloss, ...: dropped); its policy plays and starts a new run (init_policy); its games in
    flight hold engine objects that 0.3.0 changed, so resuming them is refused in one line naming
    the release."""
    from craits.agents.checkpoint import bytes_to_tensor
    from craits.training.state import TrainingState
    from craits.training.train import update

    data = load_checkpoint(smoke_run / "final.pt")
    data["config"] |= {"anneal_lr": True, "clip_vloss": True, "torch_threads": 1}
    games = pickle.dumps({"slots": [_TrackerBefore030()], "buffer": None, "rng": None}, 0)
    here = f"{_TrackerBefore030.__module__}\n_TrackerBefore030".encode()
    assert here in games  # protocol 0 names the class as text: moved to a module that is gone
    games = games.replace(here, b"craits_env.public_before_0_3_0\n_TrackerBefore030")
    data["rollout"] = bytes_to_tensor(games)
    path = tmp_path / "before-0.3.0.pt"
    save_checkpoint(path, {k: v for k, v in data.items() if k not in ("format", "version")})
    data = load_checkpoint(path)
    assert {"anneal_lr", "clip_vloss", "torch_threads"} <= set(data["config"])
    config = TrainConfig.from_dict({**data["config"], "batch_size": 256, "num_minibatches": 2})
    state = TrainingState(config, torch.device("cpu"), "resumed")
    with pytest.raises(ValueError) as info:
        state.load_checkpoint(data, str(path))
    message = str(info.value)
    assert message.startswith(
        f"checkpoint {path}: cannot resume from it (its games in flight "
        "were saved by a release before craits 0.3.0"
    )
    assert "init_policy=PATH" in message and "\n" not in message
    state.close()
    fresh = TrainingState(config.replace(init_policy=str(path)), torch.device("cpu"), "tuned")
    fresh.init_policy(str(path))
    old, _ = load_policy(path)
    assert all(torch.equal(v, fresh.net.state_dict()[k]) for k, v in old.state_dict().items())
    metrics, stats = update(fresh)
    assert stats.transitions >= 256 and metrics["minibatches"] == 2 * config.update_epochs
    fresh.close()


def test_removed_config_keys_are_dropped_at_their_kept_value_and_refused_otherwise() -> None:
    kept = tiny().to_dict() | {
        "anneal_lr": True,
        "critic": "shared",
        "oracle_guiding": [],
        "win_chance_coef": 0.0,
        "activation": "tanh",
        "description": "an old file's line",
    }
    assert TrainConfig.from_dict(kept) == tiny()
    for key, value in [
        ("critic", "oracle"),
        ("oracle_guiding", [1, 2]),
        ("anneal_lr", False),
        ("win_chance_coef", 6.0),
        ("activation", "relu"),
        ("target_kl", 0.02),
    ]:
        with pytest.raises(ValueError) as info:
            TrainConfig.from_dict(tiny().to_dict() | {key: value})
        message = str(info.value)
        assert message.startswith(f"config {key}={value!r}: removed in craits 0.3.0 ("), message
        assert "git checkout 9f11649" in message and "\n" not in message
    with pytest.raises(
        ValueError,
        match=r"^config observation='belief_calls': removed in craits "
        r"0\.3\.0 \(allowed standard, belief",
    ):
        TrainConfig.from_dict(tiny().to_dict() | {"observation": "belief_calls"})
    with pytest.raises(ValueError, match=r"^network critic_extra=52: this part was removed in"):
        PolicyNet.from_spec({**PolicyNet(8, [4]).spec(), "critic_extra": 52})


def test_resuming_a_checkpoint_of_a_removed_option_is_refused_in_one_line(
    smoke_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "old"
    data = load_checkpoint(smoke_run / "checkpoints" / "step_000001.pt")
    data["config"]["critic"] = "oracle"  # as a run of the oracle critic wrote it before 0.3.0
    save_checkpoint(
        out / "checkpoints" / "step_000001.pt",
        {k: v for k, v in data.items() if k not in ("format", "version")},
    )
    with pytest.raises(ValueError) as info:
        train(resume=out, progress=False, echo=lambda s: None)
    where = out / "checkpoints" / "step_000001.pt"
    assert str(info.value).startswith(
        f"checkpoint {where}: config critic='oracle': removed in craits 0.3.0 ("
    )
    assert "\n" not in str(info.value) and not (out / "config.toml").exists()
