"""Self-play rollouts on the batched engine: ``num_games`` games in one :class:`VectorGame`.

``backend = "vector"`` in a :class:`~craits.training.config.TrainConfig` plays its games here
instead of :class:`~craits.training.selfplay.SelfPlayRollout` (the Python engine). The two
fill the same buffer (:mod:`craits.training.buffer`) with the same rules for seats, rewards
and streams (read :mod:`craits.training.selfplay`'s docstring first); what differs is who
steps the games:

**A tick** is one compiled :meth:`VectorGame.step` of every game at once. Before it, each
game's pending decision is sorted out from its legal mask and its acting seat: a
decision with a single legal action (forced) takes it without asking anyone; the others
are grouped by who plays the seat — the current network (learner and ``"self"`` seats),
each frozen snapshot, each bot — and each group is decided in one call over its rows: a
network by one forward pass over its rows of the observation array the previous step
filled (``observe_into=``: the engine encodes the observations while each game's state is
hot, so there is no Python encoder here), a bot by one compiled call. Every seat of a tick
acts in the same step; the compiled bots are told its actions first (the expert's public
memory); a finished game's stats are read, its streams closed and its row dealt anew (the
row's own generator continues, as ``VectorGame``'s auto-reset does).

**Who can sit at the table.** ``"self"``, ``"past"`` (frozen snapshots, sampled as on the
Python backend), ``"random"`` (uniform over the legal actions, drawn in the compiled
sampler), the heuristic bots ``greedy``, ``tactician`` and ``expert`` compiled over the rows
(:class:`~craits.agents.compiled_bots.CompiledBot`: the Python bots' moves, decision for
decision) and frozen networks playing their argmax as
:class:`~craits.agents.checkpoint_agent.PPOAgent` does: a ``ppo:PATH`` checkpoint reading the
standard observation (torch), and ``champion`` or a checkpoint reading the belief
observation (numpy, :func:`~craits.agents.gym_vector_env.argmax_moves`: the belief features
from the expert's compiled public memory, :mod:`craits.agents.compiled_belief`).
:class:`~craits.training.config.TrainConfig` refuses any other opponent with
``backend="vector"`` in one line (:func:`~craits.training.config.vector_refusal`): a search
(``pimc``, the ``-search`` specs) or a user's module; those train on ``backend="python"``.

**Reproducible.** The games come from ``VectorGame(seed=draw_seed(rng))`` (game ``b`` of the
vector is the Python game of its row's generator), seats and opponents from ``rng``, the
actions from the torch generator ``collect`` gets, groups decided in a fixed order (the
current network, random, then the others by first seating; only the sampling networks draw
from the torch generator, the bots and checkpoints are deterministic): the same seed trains the same
parameters; :meth:`state_bytes` holds everything, so a resumed run continues exactly.
It is not the same stream of games as the Python backend's (that one draws a seed per
game): the two backends train on different deals of the same rules.
"""

from __future__ import annotations

import pickle
import time
from typing import Any

import numpy as np
import torch

from craits.agents.compiled_belief import write_beliefs
from craits.agents.compiled_bots import COMPILED_BOTS, CompiledBot
from craits.agents.gym_vector_env import argmax_moves, network_of
from craits.agents.network import PolicyNet
from craits_env.seeding import draw_seed
from craits_env.vector import RandomPolicy, VectorGame

from .buffer import RolloutStats, Segment, TransitionBuffer
from .config import VECTOR_OPPONENTS, TrainConfig
from .pool import SELF, OpponentPool, is_snapshot
from .ppo import MaskedCategorical
from .selfplay import LEARNER, OLDER_GAMES, SelfPlayRollout

RANDOM = "random"
CHECKPOINT = "ppo:"  # a checkpoint's spec: ppo:PATH
CURRENT_GROUP, RANDOM_GROUP = 0, 1  # group ids; a snapshot's, bot's or checkpoint's: 2 or more


class VectorSelfPlayRollout:
    """``config.num_games`` games on one :class:`VectorGame`; :meth:`collect` gathers a batch."""

    def __init__(self, config: TrainConfig, pool: OpponentPool, rng: np.random.Generator) -> None:
        self.config = config
        self.n = n = config.num_players
        self.num_games = games = config.num_games
        self.pool = pool
        self.rng = rng
        self.games = VectorGame(
            games, n, config.rules, seed=draw_seed(rng), reward=config.reward, auto_reset=False
        )
        self.obs_size = self.games.obs_size
        self.obs = self.games.observe()
        self.mask = self.games.legal_mask()
        self.buffer = TransitionBuffer(config.batch_size + games * (n + 1), self.obs_size)
        self.random = RandomPolicy(draw_seed(rng))
        self.keys: list[str] = [LEARNER, RANDOM]  # group id -> who: a snapshot's "past@U"
        self.group = np.zeros((games, n), np.int64)  # per game and seat: who plays it
        self.trained = np.zeros((games, n), bool)  # per game and seat: a stream of transitions
        self.learner = np.zeros(games, np.int64)
        self.last = np.full((games, n), -1, np.int64)  # latest transition of each stream
        self.stats = RolloutStats()
        drawn = {k for k, p in zip(pool.kinds, pool.probs, strict=True) if p > 0}
        self.bots = {name: CompiledBot(name) for name in COMPILED_BOTS if name in drawn}
        # Networks reading the belief features (champion, belief checkpoints): numpy, batched.
        self.beliefs: dict[str, Any] = {}
        for spec in sorted(drawn):
            if spec == "champion" or spec.startswith(CHECKPOINT):
                agent, belief = network_of(spec, n, config.rules)
                if belief:
                    self.beliefs[spec] = agent
        self.memory = self.bots.get("expert") or (CompiledBot("expert") if self.beliefs else None)
        for b in range(games):
            self._seat(b)

    @staticmethod
    def observation_size(config: TrainConfig) -> int:
        return SelfPlayRollout.observation_size(config)

    # -- games ---------------------------------------------------------------------

    def _group_of(self, actor: str) -> int:
        if actor in (LEARNER, SELF):
            return CURRENT_GROUP
        if actor == RANDOM:
            return RANDOM_GROUP
        if not (
            is_snapshot(actor)
            or actor in self.bots
            or actor in self.beliefs
            or actor.startswith(CHECKPOINT)
        ):
            raise ValueError(  # TrainConfig refuses these with backend="vector"
                f"backend vector cannot seat {actor!r}; allowed {', '.join(VECTOR_OPPONENTS)}"
            )
        if actor not in self.keys:
            self.keys.append(actor)
        return self.keys.index(actor)

    def _seat(self, b: int) -> None:
        """Seat the players of the game just dealt in row ``b`` (as SelfPlayRollout does)."""
        n, rng = self.n, self.rng
        learner = int(rng.integers(n))
        opponents = iter(self.pool.draw_table(rng, n - 1))
        actors = [LEARNER if s == learner else next(opponents) for s in range(n)]
        self.learner[b] = learner
        self.group[b] = [self._group_of(a) for a in actors]
        self.trained[b] = [a in (LEARNER, SELF) for a in actors]
        self.last[b] = -1

    # -- collecting ------------------------------------------------------------------

    def collect(
        self, policy: PolicyNet, batch_size: int, generator: torch.Generator
    ) -> tuple[Segment, RolloutStats]:
        """Step the games until ``batch_size`` transitions are complete; the segment and stats.

        ``stats.seconds``: ``env`` is the compiled step (rules, rewards, the next
        observations and masks: encoding happens inside it, so ``encode`` holds only the
        gathering of each group's rows) and the bookkeeping; ``forward`` the networks.
        """
        self.stats = stats = RolloutStats()
        segment, new_index = self.buffer.fill(
            batch_size, lambda: self._tick(policy, generator), stats
        )
        last = self.last
        self.last = np.where(last >= 0, new_index[np.maximum(last, 0)], -1)
        return segment, stats

    def _tick(self, policy: PolicyNet, generator: torch.Generator) -> None:
        stats = self.stats
        mask, games = self.mask, self.num_games
        seat = self.games.current_player()
        rows = np.arange(games)
        forced = mask.sum(axis=1, dtype=np.int64) == 1
        actions = mask.argmax(axis=1).astype(np.int64)  # the forced rows' only action
        group = self.group[rows, seat]
        pending = np.flatnonzero(~forced)
        for g in np.unique(group[pending]):  # current network, random, the others: in id order
            r = pending[group[pending] == g]
            key = self.keys[g]
            if g == RANDOM_GROUP:
                actions[r] = self.random.actions(mask[r])
            elif key in self.bots:
                actions[r] = self.bots[key].act(self.games, r)
            elif key in self.beliefs:
                self._belief_argmax(self.beliefs[key], r, seat[r], actions)
            elif key.startswith(CHECKPOINT):
                self._argmax(self.pool.checkpoint_network(key), r, actions)
            else:
                net = policy if g == CURRENT_GROUP else self.pool.network(key)
                self._decide(net, r, seat[r], actions, g == CURRENT_GROUP, generator)
        for bot in self.bots.values():  # every step's actions, before it (the expert's memory)
            bot.observe(self.games, actions)
        if self.memory is not None and "expert" not in self.bots:  # the beliefs' memory
            self.memory.observe(self.games, actions)
        per_hand = self.config.value_horizon == "hand"
        hands = self.games.hands_finished() if per_hand else None
        rewards, done = self.games.step(actions, observe_into=self.obs, mask_into=self.mask)
        stats.steps += games
        self._pay(rewards)
        if per_hand:  # a hand ended (not the game): its streams end (value_horizon = "hand")
            ended = np.flatnonzero((self.games.hands_finished() != hands) & ~done)
            if ended.size:
                self._close(ended)
        if done.any():
            self._finish(np.flatnonzero(done))

    def _close(self, rows: np.ndarray) -> None:
        """End the streams of the games in ``rows``: each seat's latest transition is done."""
        last = self.last[rows]
        self.buffer.end(last[last >= 0])
        self.last[rows] = -1

    def _decide(
        self,
        net: PolicyNet,
        rows: np.ndarray,
        seats: np.ndarray,
        actions: np.ndarray,
        current: bool,
        generator: torch.Generator,
    ) -> None:
        """One forward pass over ``rows``; their actions; the trained rows' transitions."""
        stats = self.stats
        t0 = time.perf_counter()
        obs = self.obs[rows]
        masks = self.mask[rows].view(np.bool_)
        t1 = time.perf_counter()
        with torch.inference_mode():
            logits, values = net(torch.from_numpy(obs))
            dist = MaskedCategorical(logits, torch.from_numpy(masks))
            chosen = dist.sample(generator)
            log_probs = dist.log_prob(chosen).numpy()
        chosen_np = chosen.numpy()
        actions[rows] = chosen_np
        stats.seconds["encode"] += t1 - t0
        stats.seconds["forward"] += time.perf_counter() - t1
        if not current:
            return
        stats.network_decisions += len(rows)
        keep = self.trained[rows, seats]
        if not keep.any():
            return
        rows, seats = rows[keep], seats[keep]
        idx = self.buffer.append(
            obs[keep],
            None,
            masks[keep],
            chosen_np[keep],
            log_probs[keep],
            values.numpy()[keep],
            self.last[rows, seats],
        )
        self.last[rows, seats] = idx

    def _argmax(self, net: PolicyNet, rows: np.ndarray, actions: np.ndarray) -> None:
        """A checkpoint's moves in ``rows``: its most probable legal action (the first of a
        tie, as PPOAgent's argmax), one forward pass."""
        t0 = time.perf_counter()
        with torch.inference_mode():
            logits = net.logits(torch.from_numpy(self.obs[rows])).numpy()
        legal = self.mask[rows].view(np.bool_)
        actions[rows] = np.where(legal, logits, -np.inf).argmax(axis=1)
        self.stats.seconds["forward"] += time.perf_counter() - t0

    def _belief_argmax(
        self, agent: Any, rows: np.ndarray, seats: np.ndarray, actions: np.ndarray
    ) -> None:
        """A belief network's moves in ``rows`` (the observation, then the belief features)."""
        t0 = time.perf_counter()
        assert self.memory is not None
        vg = self.games
        extra = np.zeros((rows.size, agent.input_size - self.obs_size), np.float32)
        lost = write_beliefs(
            vg.state.st, vg.state.params, self.memory.memory(vg), rows, seats, extra
        )
        if lost >= 0:
            raise RuntimeError(f"game {lost}: the public memory lost track of the row")
        x = np.concatenate([self.obs[rows], extra], axis=1)
        actions[rows] = argmax_moves(agent, x, self.mask[rows])
        self.stats.seconds["forward"] += time.perf_counter() - t0

    def _pay(self, rewards: np.ndarray) -> None:
        """Add each seat's reward of the step to its stream's latest transition."""
        games, seats = np.nonzero(rewards)
        if not games.size:
            return
        last = self.last[games, seats]
        ok = last >= 0
        self.buffer.rewards[last[ok]] += rewards[games[ok], seats[ok]]

    def _finish(self, rows: np.ndarray) -> None:
        """Close the streams of the games that ended, log them, deal new ones in their rows."""
        stats, vec = self.stats, self.games
        for b in rows.tolist():
            learner = int(self.learner[b])
            scores = vec.scores(b)
            best = min(scores)
            winners = sum(s == best for s in scores)
            stats.learner_wins.append(1 / winners if scores[learner] == best else 0.0)
            stats.learner_scores.append(scores[learner])
            stats.learner_hand_points += [points[learner] for points in vec.hand_points(b)]
            self._close(np.array([b]))
            self._seat(b)
        vec.reset(rows)
        self.obs[rows] = vec.observe()[rows]
        self.mask[rows] = vec.legal_mask()[rows]

    # -- checkpoints -------------------------------------------------------------------

    def in_use(self) -> set[str]:
        """The frozen snapshots seated in running games."""
        return {k for k in (self.keys[g] for g in np.unique(self.group).tolist()) if is_snapshot(k)}

    _STATE = (
        "games", "obs", "mask", "random", "keys", "group", "trained", "learner", "last", "bots",
        "memory",
    )  # fmt: skip

    def state_bytes(self) -> bytes:
        """The games in flight, the seats, the carried transitions and the generators."""
        state: dict[str, Any] = {k: getattr(self, k) for k in self._STATE}
        state |= {"buffer": self.buffer.state(), "rng": self.rng.bit_generator.state}
        return pickle.dumps({"vector": state}, protocol=pickle.HIGHEST_PROTOCOL)

    def load_state_bytes(self, data: bytes) -> None:
        """Restore :meth:`state_bytes` (from a checkpoint this project wrote: it unpickles)."""
        try:
            state = pickle.loads(data).get("vector")
            if state is not None:
                state["games"].current_player()  # the engine's objects of this release
        except (AttributeError, ImportError, TypeError, EOFError, pickle.UnpicklingError) as e:
            raise ValueError(f"{OLDER_GAMES} ({str(e).strip()[:160]})") from None
        if state is None:
            raise ValueError("the checkpoint's games were played on backend python, not vector")
        if state["games"].num_envs != self.num_games:
            raise ValueError(
                f"the checkpoint has {state['games'].num_envs} games in flight, the config "
                f"num_games={self.num_games}"
            )
        state.setdefault("bots", {})  # a checkpoint of a release without compiled bots
        state.setdefault("memory", state["bots"].get("expert"))  # ... or without champion
        if set(state["bots"]) != set(self.bots):
            raise ValueError(
                f"the checkpoint's games seat the compiled bots {sorted(state['bots'])}, the "
                f"config {sorted(self.bots)}"
            )
        if (state["memory"] is None) != (self.memory is None):
            raise ValueError(
                "the checkpoint's games seat no network reading the belief features, the "
                "config does (or the other way round)"
            )
        for k in self._STATE:
            setattr(self, k, state[k])
        self.buffer.load_state(state["buffer"])
        self.rng.bit_generator.state = state["rng"]
