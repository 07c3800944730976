"""Self-play on the batched engine (``backend="vector"``, craits.training.vector_selfplay).

The rollout's transitions are checked against a replay of the same games on the Python
engine (the reference): the same observations, masks, actions, rewards, stream links
and ends, for every trained seat, and the opponents' moves the Python bots' (the compiled
bots, a checkpoint's policy); training on it is reproducible and resumes exactly.
"""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from craits.agents.base import Agent
from craits.agents.checkpoint import load_checkpoint, save_checkpoint, tensor_to_bytes
from craits.agents.compiled_bots import COMPILED_BOTS
from craits.agents.network import PolicyNet
from craits.agents.specs import make_agent
from craits.training.buffer import TransitionBuffer
from craits.training.config import VECTOR_BOTS, TrainConfig
from craits.training.distributed import RolloutWorker
from craits.training.pool import OpponentPool
from craits.training.rollouts import LocalRollouts
from craits.training.selfplay import LEARNER
from craits.training.train import train
from craits.training.vector_selfplay import CURRENT_GROUP, VectorSelfPlayRollout
from craits_env import Game, Rules
from craits_env.observation import ObservationEncoder, legal_mask
from craits_env.public import PublicGame
from craits_env.rewards import game_rewards, hand_rewards
from craits_env.seeding import derive_seed

from .test_training import tiny

torch.set_num_threads(1)

LEAGUE = {"self": 1.0, "past": 1.0, "random": 1.0}


def vector_tiny(**changes: object) -> TrainConfig:
    return tiny(**{"backend": "vector", "opponents": LEAGUE, **changes})


class Recorder:
    """Wraps a rollout: every step's actions, every stored transition, every seating."""

    def __init__(self, rollout: VectorSelfPlayRollout) -> None:
        self.rollout = rollout
        self.actions: list[np.ndarray] = []
        self.stored: dict[tuple[int, int], int] = {}  # (tick, game) -> buffer index
        self.seatings: list[list[tuple[int, np.ndarray, np.ndarray]]] = [
            [] for _ in range(rollout.num_games)
        ]
        for b in range(rollout.num_games):  # the first games' seats
            self.seatings[b].append(self._seating(b))
        step, decide, seat = rollout.games.step, rollout._decide, rollout._seat

        def logged_step(actions, **kwargs):  # type: ignore[no-untyped-def]
            self.actions.append(np.array(actions))
            return step(actions, **kwargs)

        def logged_decide(net, rows, seats, actions, current, generator):  # type: ignore[no-untyped-def]
            decide(net, rows, seats, actions, current, generator)
            if current:
                for b, s in zip(rows.tolist(), seats.tolist(), strict=True):
                    if rollout.trained[b, s]:
                        self.stored[len(self.actions), b] = int(rollout.last[b, s])

        def logged_seat(b: int) -> None:
            seat(b)
            self.seatings[b].append(self._seating(b))

        rollout.games.step = logged_step  # type: ignore[method-assign]
        rollout._decide = logged_decide  # type: ignore[method-assign]
        rollout._seat = logged_seat  # type: ignore[method-assign]

    def _seating(self, b: int) -> tuple[int, np.ndarray, np.ndarray]:
        r = self.rollout
        return int(r.learner[b]), r.group[b].copy(), r.trained[b].copy()


@pytest.mark.slow
@pytest.mark.parametrize(
    "players, reward, horizon",
    [
        (3, "relative", "game"),
        (2, "score", "game"),
        (5, "win", "game"),
        (3, "relative", "hand"),
        (4, "bounded", "hand"),
    ],
)
def test_transitions_are_what_the_python_engine_replays(
    players: int, reward: str, horizon: str
) -> None:
    config = vector_tiny(
        num_players=players,
        num_games=12,
        batch_size=4000,
        reward=reward,
        rules={"hand_sizes": [3, 2, 1]},
        value_horizon=horizon,
    )
    probe = PolicyNet(VectorSelfPlayRollout.observation_size(config), [16])
    pool = OpponentPool(config.opponents, probe.spec(), 2)
    pool.add_snapshot(PolicyNet(probe.obs_size, [16]), 3)  # "past" seats a real snapshot
    kinds = replay_and_check(config, pool, ticks=400, min_games=config.num_games + 1)
    # Forced decisions, the current network's, a snapshot's and random's all happened.
    assert {(False, LEARNER), (True, LEARNER), (True, "random"), (True, "past@3")} <= kinds


def write_checkpoint(
    path: Path, players: int, rules: dict[str, object], seed: int, observation: str = "standard"
) -> str:
    """A checkpoint of a small random network; its ``ppo:PATH`` spec."""
    torch.manual_seed(seed)
    config = tiny(num_players=players, rules=rules, observation=observation)
    net = PolicyNet(VectorSelfPlayRollout.observation_size(config), [16])
    save_checkpoint(
        path,
        {
            "network": net.spec(),
            "policy": net.state_dict(),
            "num_players": players,
            "rules": Rules(**rules).to_dict(),  # type: ignore[arg-type]
            "observation": observation,
        },
    )
    return f"ppo:{path}"


@pytest.mark.parametrize(
    "players, opponents, ticks",
    [
        (4, {"self": 1.0, "expert": 1.0}, 150),
        (3, {"greedy": 1.0, "tactician": 1.0, "expert": 1.0, "random": 0.5}, 150),
        pytest.param(
            5, {"self": 1.0, "greedy": 1.0, "tactician": 1.0, "expert": 2.0}, 500,
            marks=pytest.mark.slow,
        ),
    ],
)  # fmt: skip
def test_compiled_bots_play_the_python_bots_moves_in_the_replay(
    players: int, opponents: dict[str, float], ticks: int
) -> None:
    config = vector_tiny(
        num_players=players,
        num_games=8,
        batch_size=4000,
        rules={"hand_sizes": [3, 2, 1]},
        opponents=opponents,
    )
    pool = OpponentPool(config.opponents, {}, 1)
    kinds = replay_and_check(config, pool, ticks=ticks, min_games=config.num_games // 2)
    assert {(True, k) for k in opponents if k != "self"} <= kinds  # every bot decided


def test_a_checkpoint_opponent_plays_its_argmax_in_the_replay(tmp_path: Path) -> None:
    rules = {"hand_sizes": [3, 2, 1]}
    spec = write_checkpoint(tmp_path / "opponent.pt", 3, rules, seed=5)
    config = vector_tiny(
        num_players=3, num_games=8, batch_size=4000, rules=rules, opponents={spec: 1.0}
    )
    pool = OpponentPool(config.opponents, {}, 1)
    kinds = replay_and_check(config, pool, ticks=200, min_games=2)
    assert (True, spec) in kinds  # the checkpoint decided


def replay_and_check(
    config: TrainConfig, pool: OpponentPool, ticks: int, min_games: int
) -> set[tuple[bool, str]]:
    """Run ``ticks`` ticks of a rollout and replay its games on the Python engine: the same
    transitions, and every bot's or checkpoint's move the Python agent's; at least
    ``min_games`` games finished. The kinds of
    decisions seen: (not forced, who: "learner" for the current network, else its key)."""
    rollout = VectorSelfPlayRollout(config, pool, np.random.default_rng(7))
    rec = Recorder(rollout)
    torch.manual_seed(0)
    net = PolicyNet(VectorSelfPlayRollout.observation_size(config), [16])
    gen = torch.Generator().manual_seed(1)
    for _ in range(ticks):
        rollout._tick(net, gen)
    buf, vec, n, reward = rollout.buffer, rollout.games, config.num_players, config.reward
    horizon = config.value_horizon
    bot_moves = 0

    def new_game(rng: np.random.Generator) -> tuple[Game, ObservationEncoder, PublicGame]:
        game, encoder = Game(n, config.rules, rng=rng), ObservationEncoder(n, config.rules)
        return game, encoder, PublicGame(game, ObservationEncoder(n, config.rules))

    def agents_of(group: np.ndarray) -> list[Agent | None]:
        """The Python agent of each seat a compiled bot or a checkpoint plays."""
        specs = [rollout.keys[g] for g in group.tolist()]
        return [
            make_agent(k, num_players=n, rules=config.rules)
            if k in rollout.bots or k in rollout.beliefs or k.startswith("ppo:")
            else None
            for k in specs
        ]

    expected_rewards = np.zeros(buf.size)
    expected_next = np.full(buf.size, -1, np.int64)
    expected_done = np.zeros(buf.size, bool)
    finished: list[tuple[int, float]] = []  # per finished game: learner's score, its win
    kinds = set()
    for b in range(config.num_games):
        rng = np.random.default_rng(derive_seed(vec.seed, b))
        game, encoder, public = new_game(rng)
        last, hands_paid, games_done = [-1] * n, 0, 0
        agents = agents_of(rec.seatings[b][0][1])
        for t in range(ticks):
            learner, group, trained = rec.seatings[b][games_done]
            p = game.current_player
            legal = game.legal_actions()
            action = int(rec.actions[t][b])
            assert action in legal
            agent = agents[p]
            if agent is not None and len(legal) > 1:
                assert action == agent.act(public.view(p)), (t, b, rollout.keys[group[p]])
                bot_moves += 1
            stored = rec.stored.get((t, b))
            decides = len(legal) > 1 and group[p] == CURRENT_GROUP and trained[p]
            assert (stored is not None) == decides, (t, b)
            kinds.add((len(legal) > 1, rollout.keys[group[p]]))
            if stored is not None:
                assert np.array_equal(buf.obs[stored], encoder.encode(game, p))
                mask = np.zeros(len(buf.masks[stored]), bool)
                legal_mask(legal, mask)
                assert np.array_equal(buf.masks[stored], mask)
                assert buf.actions[stored] == action
                if last[p] >= 0:
                    expected_next[last[p]] = stored
                last[p] = stored
            public.apply(action)
            for points in game.hand_points[hands_paid:]:
                for s, r in enumerate(hand_rewards(points, reward)):
                    if last[s] >= 0:
                        expected_rewards[last[s]] += r
            if horizon == "hand" and len(game.hand_points) > hands_paid and not game.is_over:
                for s in range(n):  # a hand is an episode: every stream ends with it
                    if last[s] >= 0:
                        expected_done[last[s]] = True
                last = [-1] * n
            hands_paid = len(game.hand_points)
            if game.is_over:
                for s, r in enumerate(game_rewards(game, reward)):
                    if last[s] >= 0:
                        expected_rewards[last[s]] += r
                        expected_done[last[s]] = True
                winners = game.winners()
                won = 1 / len(winners) if learner in winners else 0.0
                finished.append((game.scores[learner], won))
                games_done += 1
                game, encoder, public = new_game(rng)
                last, hands_paid = [-1] * n, 0
                agents = agents_of(rec.seatings[b][games_done][1])
    assert len(rec.stored) == buf.size
    assert np.array_equal(buf.next_index[: buf.size], expected_next)
    assert np.array_equal(buf.dones[: buf.size], expected_done)
    assert np.allclose(buf.rewards[: buf.size], expected_rewards, rtol=1e-6, atol=1e-6)
    assert buf.open == int(((expected_next < 0) & ~expected_done).sum())
    stats = rollout.stats
    assert sorted(zip(stats.learner_scores, stats.learner_wins, strict=True)) == sorted(finished)
    assert stats.steps == ticks * config.num_games and len(finished) >= min_games
    if rollout.bots or any(k.startswith("ppo:") for k in rollout.keys):
        assert bot_moves > 100
    return kinds


def test_collect_takes_complete_transitions_and_relinks_the_carried_ones() -> None:
    config = vector_tiny(num_players=4, num_games=32, batch_size=500)
    pool = OpponentPool(config.opponents, {}, 1)
    rollout = VectorSelfPlayRollout(config, pool, np.random.default_rng(0))
    net, gen = PolicyNet(rollout.obs_size, [16]), torch.Generator().manual_seed(0)
    for _ in range(3):
        segment, stats = rollout.collect(net, 500, gen)
        batch = segment.batch(np.zeros(len(segment), np.float32))
        assert len(batch) >= 500 and stats.transitions == len(batch)
        assert batch.masks[np.arange(len(batch)), batch.actions].all()
        assert batch.hands.shape == (len(batch), 0)  # no hands head on this backend
        buf = rollout.buffer
        assert isinstance(buf, TransitionBuffer)  # the one buffer, as the Python rollout's
        assert int(segment.open.sum()) == buf.size
        assert buf.size == buf.open  # only the open streams' latest transitions are carried
        live = rollout.last[rollout.last >= 0]
        assert sorted(live.tolist()) == list(range(buf.size))
        assert (buf.next_index[: buf.size] == -1).all() and not buf.dones[: buf.size].any()


@pytest.mark.parametrize("opponents", [LEAGUE, {"self": 1.0, "tactician": 1.0, "expert": 1.0}])
def test_a_worker_on_the_vector_backend_collects_what_the_local_rollouts_collect(
    opponents: dict[str, float],
) -> None:
    config = vector_tiny(num_players=3, num_games=8, opponents=opponents)
    net = PolicyNet(VectorSelfPlayRollout.observation_size(config), config.hidden_sizes)
    local = LocalRollouts(config, OpponentPool(config.opponents, net.spec(), 2))
    worker = RolloutWorker(config.to_dict(), net.spec(), 0, 0, [])
    a, _ = local.collect(net, 0, config.batch_size)
    b = worker.collect(config.batch_size, net.state_dict(), 0).segment
    assert np.array_equal(a.obs, b.obs) and np.array_equal(a.actions, b.actions)
    assert np.array_equal(a.rewards, b.rewards) and np.array_equal(a.next_index, b.next_index)
    assert isinstance(local.rollout, VectorSelfPlayRollout)
    assert local.rollout.games.num_envs == config.num_games


@pytest.mark.slow
def test_training_on_the_vector_backend_is_reproducible_and_resumes_exactly(
    tmp_path: Path,
) -> None:
    config = vector_tiny(  # the expert's public memory is in the games in flight too
        num_players=3, total_steps=1200, num_games=8, opponents={**LEAGUE, "expert": 1.0}
    )
    full = train(config, out=tmp_path / "full", progress=False, echo=lambda s: None)
    again = train(config, out=tmp_path / "again", progress=False, echo=lambda s: None)
    other = train(
        config.replace(seed=2), out=tmp_path / "other", progress=False, echo=lambda s: None
    )
    a, b, c = (load_checkpoint(r.final_checkpoint)["policy"] for r in (full, again, other))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)
    # Resume from the second checkpoint: the same parameters and the same games in flight.
    out = tmp_path / "resumed"
    (out / "checkpoints").mkdir(parents=True)
    shutil.copy(tmp_path / "full" / "checkpoints" / "step_000002.pt", out / "checkpoints")
    resumed = train(resume=out, progress=False, echo=lambda s: None)
    x, y = load_checkpoint(full.final_checkpoint), load_checkpoint(resumed.final_checkpoint)
    assert x["global_step"] == y["global_step"]
    assert all(torch.equal(x["policy"][k], y["policy"][k]) for k in x["policy"])
    sa, sb = (pickle.loads(tensor_to_bytes(z["rollout"]))["vector"] for z in (x, y))
    assert np.array_equal(sa["games"].state.st, sb["games"].state.st)
    assert np.array_equal(sa["games"].state.cd, sb["games"].state.cd)
    assert np.array_equal(sa["last"], sb["last"]) and sa["rng"] == sb["rng"]


ALLOWED = "self, past, random, greedy, tactician, expert, champion, ppo:PATH"


def test_the_vector_backend_seats_the_compiled_bots_and_refuses_the_rest_in_one_line(
    tmp_path: Path,
) -> None:
    config = tiny(backend="vector")  # TINY's pool seats greedy: compiled
    assert VectorSelfPlayRollout.observation_size(config) > 0
    assert ("random", *COMPILED_BOTS) == VECTOR_BOTS
    searches = ("pimc:8", "champion-search:8")
    for spec in (*searches, "craits.agents.base:RandomAgent"):  # searches; a user's module
        with pytest.raises(
            ValueError,
            match=rf"^config opponents: backend vector seats only {ALLOWED}; got {spec} \(not "
            r"compiled for the batched engine: use backend=python\)$",
        ):
            vector_tiny(num_players=4, opponents={"self": 1.0, spec: 1.0})
    # Frozen networks: the champion and checkpoints of either observation.
    vector_tiny(num_players=4, opponents={"self": 1.0, "champion": 1.0})
    rules = {"hand_sizes": [3, 2, 1]}
    belief = write_checkpoint(tmp_path / "belief.pt", 3, rules, seed=0, observation="belief")
    vector_tiny(num_players=3, opponents={"self": 1.0, belief: 1.0})
    standard = write_checkpoint(tmp_path / "standard.pt", 3, rules, seed=0)
    vector_tiny(num_players=3, opponents={"self": 1.0, standard: 1.0})


def test_a_belief_checkpoint_plays_its_argmax_in_the_replay(tmp_path: Path) -> None:
    rules = {"hand_sizes": [3, 2, 1]}
    spec = write_checkpoint(tmp_path / "belief.pt", 3, rules, seed=6, observation="belief")
    config = vector_tiny(
        num_players=3, num_games=8, batch_size=4000, rules=rules, opponents={spec: 1.0}
    )
    pool = OpponentPool(config.opponents, {}, 1)
    kinds = replay_and_check(config, pool, ticks=200, min_games=2)
    assert (True, spec) in kinds  # the checkpoint decided, reading the compiled beliefs


def test_games_in_flight_with_other_compiled_bots_are_refused_in_one_line() -> None:
    expert = vector_tiny(num_players=3, opponents={"self": 1.0, "expert": 1.0})
    data = VectorSelfPlayRollout(
        expert, OpponentPool(expert.opponents, {}, 1), np.random.default_rng(0)
    ).state_bytes()
    greedy = vector_tiny(num_players=3, opponents={"self": 1.0, "greedy": 1.0})
    rollout = VectorSelfPlayRollout(
        greedy, OpponentPool(greedy.opponents, {}, 1), np.random.default_rng(0)
    )
    with pytest.raises(
        ValueError,
        match=r"^the checkpoint's games seat the compiled bots \['expert'\], the config "
        r"\['greedy'\]$",
    ):
        rollout.load_state_bytes(data)
    with pytest.raises(ValueError, match=r"^config rules: backend vector does not support "):
        vector_tiny(rules={"hand_sizes": [3, 2, 1], "three_points": 2_000_000})
    with pytest.raises(ValueError, match=r"^config backend: "):
        vector_tiny(backend="gpu")
    with pytest.raises(ValueError, match=r"^config observation: backend vector encodes only "):
        vector_tiny(observation="belief")
    vector_tiny(opponents={"self": 1.0, "greedy": 0.0})  # a zero weight seats no one


def test_a_python_checkpoint_does_not_load_into_vector_games() -> None:
    python = tiny(num_players=3, opponents={"self": 1.0})
    vector = vector_tiny(num_players=3)
    from craits.training.selfplay import SelfPlayRollout

    data = SelfPlayRollout(
        python, OpponentPool(python.opponents, {}, 1), np.random.default_rng(0)
    ).state_bytes()
    rollout = VectorSelfPlayRollout(
        vector, OpponentPool(vector.opponents, {}, 1), np.random.default_rng(0)
    )
    with pytest.raises(ValueError, match="played on backend python, not vector"):
        rollout.load_state_bytes(data)


@pytest.mark.slow
def test_init_policy_starts_from_a_checkpoints_weights_and_refuses_a_mismatch(
    tmp_path: Path,
) -> None:
    first = train(
        vector_tiny(total_steps=300), out=tmp_path / "first", progress=False, echo=lambda s: None
    )
    start = load_checkpoint(first.final_checkpoint)["policy"]
    config = vector_tiny(total_steps=300, init_policy=str(tmp_path / "first"), seed=9)
    from craits.training.state import TrainingState

    state = TrainingState(config, torch.device("cpu"), "init")
    state.init_policy(config.init_policy)
    assert all(torch.equal(v, state.net.state_dict()[k]) for k, v in start.items())
    assert all(torch.equal(v, state.actor.state_dict()[k]) for k, v in start.items())
    state.close()
    tuned = train(config, out=tmp_path / "tuned", progress=False, echo=lambda s: None)
    after = load_checkpoint(tuned.final_checkpoint)["policy"]
    assert not all(torch.equal(start[k], after[k]) for k in start)  # it trained on
    with pytest.raises(ValueError, match=r"^config init_policy: .* holds the network"):
        train(
            config.replace(hidden_sizes=[8]),
            out=tmp_path / "bad",
            progress=False,
            echo=lambda s: None,
        )
    with pytest.raises(ValueError, match=r"^config init_policy: "):
        train(
            config.replace(init_policy=str(tmp_path / "missing.pt")),
            out=tmp_path / "bad2",
            progress=False,
            echo=lambda s: None,
        )
    assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").rglob("*.pt"))


@pytest.mark.slow
def test_champion_plays_its_moves_in_the_replay() -> None:
    """champion on the batched engine: its belief features from the compiled public memory,
    its moves the Python agent's (reading the tracker) in the replay."""
    config = vector_tiny(
        num_players=4, num_games=8, batch_size=4000, rules={"hand_sizes": [3, 2, 1]},
        opponents={"champion": 1.0, "greedy": 0.5},
    )  # fmt: skip
    pool = OpponentPool(config.opponents, {}, 1)
    kinds = replay_and_check(config, pool, ticks=200, min_games=2)
    assert (True, "champion") in kinds  # the champion decided


@pytest.mark.slow
def test_games_with_the_champion_resume_exactly() -> None:
    """The public memory the champion's beliefs read travels in the checkpoint's games."""
    config = vector_tiny(
        num_players=4, num_games=6, batch_size=4000, rules={"hand_sizes": [3, 2, 1]},
        opponents={"champion": 1.0, "self": 1.0},
    )  # fmt: skip
    net = PolicyNet(VectorSelfPlayRollout.observation_size(config), [16])

    def rollout() -> VectorSelfPlayRollout:
        return VectorSelfPlayRollout(
            config, OpponentPool(config.opponents, {}, 1), np.random.default_rng(3)
        )

    a = rollout()
    gen = torch.Generator().manual_seed(2)
    for _ in range(60):
        a._tick(net, gen)
    b = rollout()
    b.load_state_bytes(a.state_bytes())
    assert b.memory is not None and b.memory.memory(b.games) is not a.memory.memory(a.games)
    gen_b = torch.Generator().manual_seed(9)
    gen_b.set_state(gen.get_state())
    for _ in range(120):
        a._tick(net, gen)
        b._tick(net, gen_b)
    assert np.array_equal(a.games.state.st, b.games.state.st)
    assert np.array_equal(a.memory.memory(a.games), b.memory.memory(b.games))
