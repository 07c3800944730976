"""Vectorised self-play rollouts: many games stepped together, one batched forward pass.

The rollout drives ``num_games`` games of the engine directly (no PettingZoo
wrappers) and encodes observations with the environment's own
:class:`~craits_env.observation.ObservationEncoder`, so the network sees exactly
what an agent sees in ``craits_v0``. Each game's seats are fixed at its start:
one **learner** seat (drawn uniformly) and the others drawn from the
:class:`~craits.training.pool.OpponentPool` ("self", a frozen snapshot, or a bot spec).

**A tick.** Every game advances on its own until it awaits a network decision:
bots act on their :class:`~craits_env.public.SeatView`; a decision with a single
legal action is applied at once, without asking anyone (forced decisions are
counted as environment steps but are not transitions); a finished game is
replaced by a new one. Then the pending decisions are grouped by network — the
current one (learner and "self" seats) and each frozen snapshot in use — and
each group is encoded into one preallocated array and decided by one forward
pass. Every seat played by the current network and trained (the learner, and
"self" seats with ``train_self_seats``) is a *stream* of transitions.

**Rewards.** When a hand ends, each trained seat's reward for it (the
environment's reward mode, :func:`craits_env.rewards.hand_rewards`) is added
to that seat's most recent transition in the game — the reward that follows
its action, as PettingZoo's ``last()`` pays it. A reward that arrives before a
seat's first non-forced decision of the game follows no action of the policy
and is dropped. The game's end marks each stream's last transition ``done``; with
``value_horizon = "hand"`` every hand's end does (a hand is an episode: no return
reaches across it, and a reward of a hand where the seat made no decision is dropped).

**The buffer** is flat: streams interleave, and each transition links to its
stream's next one (``next_index``). An update takes every transition whose
successor is known (or that is done); a stream's latest transition, whose
successor is still to come, bootstraps its predecessor and is carried to the
front of the next rollout, where it is trained once its successor arrives
(:func:`craits.training.ppo.gae_linked`). Its log-probability is the behaviour
policy's, as PPO's ratio needs; its value estimate is one update old.

**The oracle critic** (``critic = "oracle"``): each decision of the current network also
encodes the opponents' hands (:func:`craits_env.oracle.encode_oracle`) into the buffer's
``critic_obs``; the value estimate reads them, the policy does not (frozen snapshots, whose
values are unused, are asked without them). The perfect critic (``critic = "perfect"``)
reads the stock's order after them (:func:`craits_env.oracle.encode_perfect`). With
``hands_coef > 0`` the hands are carried the same way, as the targets of the hands head.

**Oracle guiding** (``oracle_guiding``, Suphx): the network's input ends with the opponents'
hands too, each entry kept with probability ``oracle_keep`` (the learner sets it per batch
from :meth:`~craits.training.config.TrainConfig.oracle_keep`; the dropped ones read 0; the mask is
drawn from the games' generator), for every network that acts here — the current one and
the frozen snapshots, which were trained with them. The buffer stores the input as the
network saw it, so PPO's ratio compares like with like. Bots never see the hands.
"""

from __future__ import annotations

import pickle
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from craits.agents.base import Agent
from craits.agents.network import PolicyNet
from craits.agents.specs import make_agent
from craits_env.actions import NUM_ACTIONS, PHASE_GAME_OVER
from craits_env.belief import belief_size, encode_belief
from craits_env.engine import Game
from craits_env.observation import ObservationEncoder, legal_mask
from craits_env.oracle import encode_oracle, encode_perfect, oracle_size, perfect_size
from craits_env.public import PublicGame
from craits_env.rewards import game_rewards, hand_rewards, spread_left, win_chances
from craits_env.seeding import draw_seed

from .config import TrainConfig
from .pool import SELF, OpponentPool, is_snapshot
from .ppo import MaskedCategorical, gae_linked

LEARNER = "learner"
CURRENT = "current"  # the group of seats the current network plays (learner and "self")


@dataclass
class Batch:
    """The transitions of one update, with their advantages and returns."""

    obs: np.ndarray
    critic_obs: np.ndarray  # (len, critic_extra): what only the critic reads (width 0: none)
    masks: np.ndarray
    actions: np.ndarray
    log_probs: np.ndarray
    values: np.ndarray
    advantages: np.ndarray
    returns: np.ndarray

    def __len__(self) -> int:
        return len(self.actions)


class TransitionBuffer:
    """Preallocated arrays of transitions; streams are linked by ``next_index``."""

    def __init__(self, capacity: int, obs_size: int, critic_extra: int = 0) -> None:
        self.capacity = capacity
        self.obs = np.zeros((capacity, obs_size), np.float32)
        self.critic_obs = np.zeros((capacity, critic_extra), np.float32)
        self.masks = np.zeros((capacity, NUM_ACTIONS), bool)
        self.actions = np.zeros(capacity, np.int64)
        self.log_probs = np.zeros(capacity, np.float32)
        self.values = np.zeros(capacity, np.float32)
        self.rewards = np.zeros(capacity, np.float64)
        self.dones = np.zeros(capacity, bool)
        self.next_index = np.full(capacity, -1, np.int64)
        self.size = 0
        self.open = 0  # streams whose latest transition awaits its successor

    _ARRAYS = ("obs", "critic_obs", "masks", "actions", "log_probs", "values", "rewards", "dones",
               "next_index")  # fmt: skip

    def state(self) -> dict[str, Any]:
        return {k: getattr(self, k)[: self.size].copy() for k in self._ARRAYS} | {
            "size": self.size,
            "open": self.open,
        }

    def load_state(self, state: dict[str, Any]) -> None:
        self.size, self.open = state["size"], state["open"]
        for k in self._ARRAYS:
            if k == "critic_obs" and k not in state:  # saved before the oracle critic: none
                continue
            getattr(self, k)[: self.size] = state[k]


@dataclass
class Slot:
    """One game of the vector and who plays each of its seats."""

    public: PublicGame
    encoder: ObservationEncoder  # one per slot: its score cache follows one game
    actors: list[str]  # per seat: LEARNER, "self", "past@U" or a bot spec
    trained: list[bool]  # per seat: its decisions are transitions
    bots: list[Agent | None]  # per seat: the bot, for bot seats
    learner: int
    last: list[int] = field(default_factory=list)  # per seat: buffer index of its latest transition
    hands_rewarded: int = 0
    agent_cache: dict[tuple[str, int], Agent] = field(default_factory=dict)

    @property
    def game(self) -> Game:
        return self.public.game


@dataclass
class RolloutStats:
    """What the learner seats did during one rollout (for the logs)."""

    steps: int = 0  # environment steps: every decision of every seat
    network_decisions: int = 0  # decisions the current network made (trained or not)
    transitions: int = 0
    learner_hand_points: list[int] = field(default_factory=list)
    learner_wins: list[float] = field(default_factory=list)  # per finished game: 1/k if won
    learner_scores: list[int] = field(default_factory=list)
    seconds: dict[str, float] = field(
        default_factory=lambda: {"env": 0.0, "encode": 0.0, "forward": 0.0}
    )


class SelfPlayRollout:
    """``num_games`` games in flight; :meth:`collect` gathers one update's batch."""

    def __init__(self, config: TrainConfig, pool: OpponentPool, rng: np.random.Generator) -> None:
        self.config = config
        self.n = config.num_players
        self.rules = config.rules
        self.pool = pool
        self.rng = rng
        self.base_size = ObservationEncoder(self.n, self.rules).size
        self.belief = config.observation if config.observation != "standard" else None
        self.obs_size = self.observation_size(config)
        self.critic_extra = self.carried_size(config)
        # What the critic's inputs hold: the opponents' hands, then the stock for "perfect".
        self._encode_hidden = encode_perfect if config.critic == "perfect" else encode_oracle
        self.hands = oracle_size(self.n)
        self.guide = self.guide_size(config)  # oracle guiding: the hands at the input's end
        self.oracle_keep = 1.0  # its probability of showing an entry (the learner sets it)
        games = config.num_games
        capacity = config.batch_size + games * (self.n + 1)
        self.buffer = TransitionBuffer(capacity, self.obs_size, self.critic_extra)
        self._obs = np.zeros((games, self.obs_size), np.float32)
        self._critic_obs = np.zeros((games, self.critic_extra), np.float32)
        self._masks = np.zeros((games, NUM_ACTIONS), bool)
        self.stats = RolloutStats()
        self.slots = [self._new_slot() for _ in range(games)]

    @staticmethod
    def observation_size(config: TrainConfig) -> int:
        """The length of the network's input at ``config``'s table: the observation vector
        (of its kind), and oracle guiding's inputs."""
        size = ObservationEncoder(config.num_players, config.rules).size
        if config.observation != "standard":
            size += belief_size(config.num_players, config.observation)
        return size + SelfPlayRollout.guide_size(config)

    @staticmethod
    def guide_size(config: TrainConfig) -> int:
        """How many of the network's inputs are oracle guiding's (the opponents' hands,
        :mod:`craits_env.oracle`, at the end of the input; else 0)."""
        return oracle_size(config.num_players) if config.oracle_guiding else 0

    @staticmethod
    def critic_size(config: TrainConfig) -> int:
        """How many inputs only the critic reads (:mod:`craits_env.oracle`: ``critic =
        "oracle"``, the opponents' hands; ``"perfect"``, the hands and the stock; else 0)."""
        n = config.num_players
        return {"oracle": oracle_size(n), "perfect": perfect_size(n)}.get(config.critic, 0)

    @staticmethod
    def hands_size(config: TrainConfig) -> int:
        """The width of the hands head's targets (the opponents' hands, ``hands_coef > 0``;
        else 0)."""
        return oracle_size(config.num_players) if config.hands_coef > 0 else 0

    @staticmethod
    def carried_size(config: TrainConfig) -> int:
        """The width of the hidden cards carried with each transition (``critic_obs``): what
        the critic reads (:meth:`critic_size`), whose first :func:`oracle_size` entries (the
        opponents' hands) the hands head learns to predict."""
        return max(SelfPlayRollout.critic_size(config), SelfPlayRollout.hands_size(config))

    # -- games ---------------------------------------------------------------------

    def _new_slot(self) -> Slot:
        encoder = ObservationEncoder(self.n, self.rules)
        slot = Slot(
            public=None,  # type: ignore[arg-type]  # dealt by _new_game
            encoder=encoder,
            actors=[],
            trained=[],
            bots=[],
            learner=0,
        )
        self._new_game(slot)
        return slot

    def _new_game(self, slot: Slot) -> None:
        """Deal a new game in ``slot`` and seat its players."""
        n, rng = self.n, self.rng
        game = Game(n, self.rules, seed=draw_seed(rng))
        slot.public = PublicGame(game, slot.encoder)
        slot.learner = int(rng.integers(n))
        opponents = iter(self.pool.draw_table(rng, n - 1))
        slot.actors = [LEARNER if s == slot.learner else next(opponents) for s in range(n)]
        train_self = self.config.train_self_seats
        slot.trained = [a == LEARNER or (a == SELF and train_self) for a in slot.actors]
        slot.bots = []
        for s, actor in enumerate(slot.actors):
            bot = None
            if actor not in (LEARNER, SELF) and not is_snapshot(actor):
                key = (actor, s)
                if key not in slot.agent_cache:
                    slot.agent_cache[key] = make_agent(actor, num_players=n, rules=self.rules)
                bot = slot.agent_cache[key]
                bot.reset(draw_seed(rng))
            slot.bots.append(bot)
        slot.last = [-1] * n
        slot.hands_rewarded = 0

    def _apply(self, slot: Slot, action: int) -> None:
        """Apply one decision; pay the rewards of a hand that ended; close a finished game."""
        slot.public.apply(action)
        self.stats.steps += 1
        game = slot.public.game
        if len(game.hand_points) > slot.hands_rewarded:
            self._pay(slot, game)

    def _pay(self, slot: Slot, game: Game) -> None:
        buf = self.buffer
        mode = self.config.reward
        stats = self.stats
        for k in range(slot.hands_rewarded, len(game.hand_points)):
            points = game.hand_points[k]
            stats.learner_hand_points.append(points[slot.learner])
            rewards = hand_rewards(points, mode)
            if self.config.win_chance_coef:
                rewards = self._add_win_chance(rewards, game, k)
            for s, last in enumerate(slot.last):
                if last >= 0:
                    buf.rewards[last] += rewards[s]
        slot.hands_rewarded = len(game.hand_points)
        if not game.is_over:
            if self.config.value_horizon == "hand":
                self._close_streams(slot)
            return
        final = game_rewards(game, mode)
        winners = game.winners()
        stats.learner_wins.append(1 / len(winners) if slot.learner in winners else 0.0)
        stats.learner_scores.append(game.scores[slot.learner])
        for s, last in enumerate(slot.last):
            if last >= 0:
                buf.rewards[last] += final[s]
        self._close_streams(slot)

    def _add_win_chance(self, rewards: list[float], game: Game, k: int) -> list[float]:
        """``rewards`` of hand ``k`` plus ``win_chance_coef`` times the change hand ``k``
        made to each seat's chance to win (its chances after the hand minus before it:
        :func:`craits_env.rewards.win_chances`; after the game's last hand, the realised
        shares)."""
        sizes = self.rules.hand_sizes
        before = [sum(p[s] for p in game.hand_points[:k]) for s in range(game.num_players)]
        after = [b + own for b, own in zip(before, game.hand_points[k], strict=True)]
        last = game.is_over and k == len(game.hand_points) - 1
        chance_before = win_chances(before, spread_left(sizes, k))
        chance_after = win_chances(after, 0.0 if last else spread_left(sizes, k + 1))
        coef = self.config.win_chance_coef
        return [
            r + coef * (a - b) for r, a, b in zip(rewards, chance_after, chance_before, strict=True)
        ]

    def _close_streams(self, slot: Slot) -> None:
        """End every stream of the game: its latest transition is done (the game's end, or
        a hand's with ``value_horizon = "hand"``); the seat's next decision opens a new one."""
        buf = self.buffer
        for s, last in enumerate(slot.last):
            if last >= 0:
                buf.dones[last] = True
                buf.open -= 1
                slot.last[s] = -1

    def _advance(self, slot: Slot) -> str:
        """Play bots and forced decisions until a network decides; the deciding group."""
        apply = self._apply
        while True:
            game = slot.public.game
            if game.phase == PHASE_GAME_OVER:
                self._new_game(slot)
                game = slot.public.game
            forced = game.forced_action()
            if forced is not None:
                apply(slot, forced)
                continue
            p = game.current_player
            bot = slot.bots[p]
            if bot is not None:
                apply(slot, bot.act(slot.public.views[p]))
                continue
            actor = slot.actors[p]
            return CURRENT if actor in (LEARNER, SELF) else actor

    # -- collecting ------------------------------------------------------------------

    def collect(
        self, policy: PolicyNet, batch_size: int, generator: torch.Generator
    ) -> tuple[Batch, RolloutStats]:
        """Step the games until ``batch_size`` transitions are complete; the batch and stats."""
        return collect_batch(self, policy, batch_size, generator)

    def _tick(self, policy: PolicyNet, generator: torch.Generator) -> None:
        groups: dict[str, list[Slot]] = {}
        for slot in self.slots:
            groups.setdefault(self._advance(slot), []).append(slot)
        for key, slots in groups.items():
            net = policy if key == CURRENT else self.pool.network(key)
            self._decide(net, slots, key == CURRENT, generator)

    def _decide(
        self, net: PolicyNet, slots: list[Slot], current: bool, generator: torch.Generator
    ) -> None:
        """Encode the pending decisions of ``slots``, run ``net`` once, store and apply."""
        stats = self.stats
        t0 = time.perf_counter()
        k = len(slots)
        obs, masks = self._obs[:k], self._masks[:k]
        oracle = current and self.critic_extra > 0
        critic_obs = self._critic_obs[:k] if oracle else None
        seats = []
        base, belief = self.base_size, self.belief
        # Oracle guiding's inputs: encoded only while some are kept (after the fade: zeros).
        showing = self.guide and self.oracle_keep > 0
        shown = obs[:k, self.obs_size - self.guide :] if showing else None
        for r, slot in enumerate(slots):
            game = slot.public.game
            p = game.current_player
            seats.append(p)
            obs[r, :base] = slot.encoder.encode(game, p)
            if belief:
                encode_belief(slot.public.tracker, p, obs[r, base:], belief)
            if critic_obs is not None:
                self._encode_hidden(game, p, critic_obs[r])
            if shown is not None:  # the same hands as the critic's, when it has them
                if critic_obs is not None:
                    shown[r] = critic_obs[r, : self.hands]
                else:
                    encode_oracle(game, p, shown[r])
            legal_mask(game.legal_actions(), masks[r])
        if self.guide:
            self._drop_oracle(obs[:k, self.obs_size - self.guide :])  # zeroes all at keep 0
        t1 = time.perf_counter()
        with torch.inference_mode():
            if current:  # the values of the trained seats' transitions
                extra = None if critic_obs is None else torch.from_numpy(critic_obs)
                logits, values = net(torch.from_numpy(obs), extra)
            else:  # a frozen snapshot: only its moves matter
                logits = net.logits(torch.from_numpy(obs))
            dist = MaskedCategorical(logits, torch.from_numpy(masks))
            actions_t = dist.sample(generator)
            log_probs = dist.log_prob(actions_t).numpy()
        actions = actions_t.tolist()
        t2 = time.perf_counter()
        stats.seconds["encode"] += t1 - t0
        stats.seconds["forward"] += t2 - t1
        if current:
            stats.network_decisions += k
            self._store(slots, seats, actions, log_probs, values.numpy())  # current: set
        for slot, a in zip(slots, actions, strict=True):
            self._apply(slot, a)

    def _drop_oracle(self, hands: np.ndarray) -> None:
        """Oracle guiding (Suphx): keep each entry of ``hands`` with probability
        ``oracle_keep`` (drawn from the games' generator only when it is strictly between 0
        and 1), zero the rest, in place."""
        keep = self.oracle_keep
        if keep <= 0.0:
            hands[:] = 0.0
        elif keep < 1.0:
            hands *= self.rng.random(hands.shape) < keep

    def _store(
        self,
        slots: list[Slot],
        seats: list[int],
        actions: list[int],
        log_probs: np.ndarray,
        values: np.ndarray,
    ) -> None:
        rows = [r for r, (slot, p) in enumerate(zip(slots, seats, strict=True)) if slot.trained[p]]
        if not rows:
            return
        buf = self.buffer
        j0 = buf.size
        idx = np.arange(j0, j0 + len(rows))
        buf.obs[idx] = self._obs[rows]
        buf.critic_obs[idx] = self._critic_obs[rows]
        buf.masks[idx] = self._masks[rows]
        buf.actions[idx] = np.asarray(actions)[rows]
        buf.log_probs[idx] = log_probs[rows]
        buf.values[idx] = values[rows]
        buf.rewards[idx] = 0.0
        buf.dones[idx] = False
        buf.next_index[idx] = -1
        for j, r in enumerate(rows, j0):
            slot, p = slots[r], seats[r]
            prev = slot.last[p]
            if prev >= 0:
                buf.next_index[prev] = j
            else:
                buf.open += 1
            slot.last[p] = j
        buf.size = j0 + len(rows)

    def _take_batch(self) -> Batch:
        batch, new_index = take_batch(self.buffer, self.config)
        for slot in self.slots:
            slot.last = [int(new_index[i]) if i >= 0 else -1 for i in slot.last]
        return batch

    # -- checkpoints -------------------------------------------------------------------

    def in_use(self) -> set[str]:
        """The frozen snapshots seated in running games."""
        return {a for slot in self.slots for a in slot.actors if is_snapshot(a)}

    def state_bytes(self) -> bytes:
        """The games in flight, the carried transitions and the generator, pickled."""
        state = {
            "slots": self.slots,
            "buffer": self.buffer.state(),
            "rng": self.rng.bit_generator.state,
        }
        return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)

    def load_state_bytes(self, data: bytes) -> None:
        """Restore :meth:`state_bytes` (from a checkpoint this project wrote: it unpickles)."""
        state = pickle.loads(data)
        if "slots" not in state:
            raise ValueError("the checkpoint's games were played on backend vector, not python")
        if len(state["slots"]) != len(self.slots):
            raise ValueError(
                f"the checkpoint has {len(state['slots'])} games in flight, the config "
                f"num_games={len(self.slots)}"
            )
        self.slots = state["slots"]
        self.buffer.load_state(state["buffer"])
        self.rng.bit_generator.state = state["rng"]


def collect_batch(
    rollout: Any, policy: PolicyNet, batch_size: int, generator: torch.Generator
) -> tuple[Batch, RolloutStats]:
    """``rollout.collect``: tick until ``batch_size`` transitions are complete, then take
    them (``rollout._take_batch``); ``env`` seconds are the time not spent encoding or
    in forward passes. For :class:`SelfPlayRollout` and the vector backend's rollout."""
    rollout.stats = stats = RolloutStats()
    buf = rollout.buffer
    start = time.perf_counter()
    while buf.size - buf.open < batch_size:
        rollout._tick(policy, generator)
    stats.seconds["env"] = (
        time.perf_counter() - start - stats.seconds["encode"] - stats.seconds["forward"]
    )
    batch = rollout._take_batch()
    stats.transitions = len(batch)
    return batch, stats


def take_batch(buf: TransitionBuffer, c: TrainConfig) -> tuple[Batch, np.ndarray]:
    """The complete transitions of ``buf`` with their advantages; the open ones are carried
    to its front. Returns the batch and each old index's new one (-1: taken)."""
    size = buf.size
    is_open = (buf.next_index[:size] < 0) & ~buf.dones[:size]
    adv = gae_linked(buf.rewards[:size], buf.values[:size], buf.dones[:size],
                     buf.next_index[:size], c.gamma, c.gae_lambda, is_open)  # fmt: skip
    done = np.flatnonzero(~is_open)
    batch = Batch(
        obs=buf.obs[done].copy(),
        critic_obs=buf.critic_obs[done].copy(),
        masks=buf.masks[done].copy(),
        actions=buf.actions[done].copy(),
        log_probs=buf.log_probs[done].copy(),
        values=buf.values[done].copy(),
        advantages=adv[done],
        returns=adv[done] + buf.values[done],
    )
    carried = np.flatnonzero(is_open)
    new_index = np.full(size, -1, np.int64)
    new_index[carried] = np.arange(len(carried))
    for name in TransitionBuffer._ARRAYS:
        array = getattr(buf, name)
        array[: len(carried)] = array[carried]
    buf.size = len(carried)
    assert buf.open == len(carried)
    return batch, new_index
