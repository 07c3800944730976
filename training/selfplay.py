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
pass. Every seat played by the current network (the learner's and the "self" seats) is a
*stream* of transitions.

**Rewards.** When a hand ends, each trained seat's reward for it (the
environment's reward mode, :func:`craits_env.rewards.hand_rewards`) is added
to that seat's most recent transition in the game — the reward that follows
its action, as PettingZoo's ``last()`` pays it. A reward that arrives before a
seat's first non-forced decision of the game follows no action of the policy
and is dropped. The game's end marks each stream's last transition ``done``; with
``value_horizon = "hand"`` every hand's end does (a hand is an episode: no return
reaches across it, and a reward of a hand where the seat made no decision is dropped).

**The buffer** (:mod:`craits.training.buffer`, shared with the batched engine's rollout)
links each stream's transitions; a collection ends once ``batch_size`` of them are complete
and hands them over as a :class:`~craits.training.buffer.Segment`.

**The hands head's targets** (``hands_coef > 0``): each decision of the current network
also encodes the opponents' hands (:func:`craits_env.opponent_hands.encode_hands`) into the
buffer's ``hands``; the network never reads them (frozen snapshots are asked without them).
"""

from __future__ import annotations

import io
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
from craits_env.opponent_hands import encode_hands, hands_size
from craits_env.public import PublicGame
from craits_env.rewards import game_rewards, hand_rewards
from craits_env.seeding import draw_seed

from .buffer import RolloutStats, Segment, TransitionBuffer
from .config import TrainConfig
from .pool import SELF, OpponentPool, is_snapshot
from .ppo import MaskedCategorical

LEARNER = "learner"
CURRENT = "current"  # the group of seats the current network plays (learner and "self")


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


class SelfPlayRollout:
    """``num_games`` games in flight; :meth:`collect` gathers one update's batch."""

    def __init__(self, config: TrainConfig, pool: OpponentPool, rng: np.random.Generator) -> None:
        self.config = config
        self.n = config.num_players
        self.rules = config.rules
        self.pool = pool
        self.rng = rng
        self.base_size = ObservationEncoder(self.n, self.rules).size
        self.belief = config.observation == "belief"
        self.obs_size = self.observation_size(config)
        self.hands_width = self.hands_targets_size(config)
        games = config.num_games
        capacity = config.batch_size + games * (self.n + 1)
        self.buffer = TransitionBuffer(capacity, self.obs_size, self.hands_width)
        self._obs = np.zeros((games, self.obs_size), np.float32)
        self._hands = np.zeros((games, self.hands_width), np.float32)
        self._masks = np.zeros((games, NUM_ACTIONS), bool)
        self.stats = RolloutStats()
        self.slots = [self._new_slot() for _ in range(games)]

    @staticmethod
    def observation_size(config: TrainConfig) -> int:
        """The length of the network's input at ``config``'s table: the observation vector
        of its kind (standard, or standard then belief)."""
        size = ObservationEncoder(config.num_players, config.rules).size
        if config.observation == "belief":
            size += belief_size(config.num_players)
        return size

    @staticmethod
    def hands_targets_size(config: TrainConfig) -> int:
        """The width of the hands head's targets (the opponents' hands, ``hands_coef > 0``;
        else 0)."""
        return hands_size(config.num_players) if config.hands_coef > 0 else 0

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
        slot.trained = [a in (LEARNER, SELF) for a in slot.actors]
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

    def _close_streams(self, slot: Slot) -> None:
        """End every stream of the game: its latest transition is done (the game's end, or
        a hand's with ``value_horizon = "hand"``); the seat's next decision opens a new one."""
        self.buffer.end(np.array([last for last in slot.last if last >= 0], np.int64))
        slot.last = [-1] * len(slot.last)

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
    ) -> tuple[Segment, RolloutStats]:
        """Step the games until ``batch_size`` transitions are complete; the segment and the
        stats (``env`` seconds: the time not spent encoding or in forward passes)."""
        self.stats = stats = RolloutStats()
        segment, new_index = self.buffer.fill(
            batch_size, lambda: self._tick(policy, generator), stats
        )
        for slot in self.slots:
            slot.last = [int(new_index[i]) if i >= 0 else -1 for i in slot.last]
        return segment, stats

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
        hands = self._hands[:k] if current and self.hands_width else None
        seats = []
        base, belief = self.base_size, self.belief
        for r, slot in enumerate(slots):
            game = slot.public.game
            p = game.current_player
            seats.append(p)
            obs[r, :base] = slot.encoder.encode(game, p)
            if belief:
                encode_belief(slot.public.tracker, p, obs[r, base:])
            if hands is not None:
                encode_hands(game, p, hands[r])
            legal_mask(game.legal_actions(), masks[r])
        t1 = time.perf_counter()
        with torch.inference_mode():
            if current:  # the values of the trained seats' transitions
                logits, values = net(torch.from_numpy(obs))
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
            self._store(slots, seats, actions, log_probs, values.numpy(), hands)
        for slot, a in zip(slots, actions, strict=True):
            self._apply(slot, a)

    def _store(
        self,
        slots: list[Slot],
        seats: list[int],
        actions: list[int],
        log_probs: np.ndarray,
        values: np.ndarray,
        hands: np.ndarray | None,
    ) -> None:
        """The trained seats' transitions, each after its stream's latest."""
        rows = [r for r, (slot, p) in enumerate(zip(slots, seats, strict=True)) if slot.trained[p]]
        if not rows:
            return
        prev = np.array([slots[r].last[seats[r]] for r in rows], np.int64)
        idx = self.buffer.append(
            self._obs[rows],
            None if hands is None else hands[rows],
            self._masks[rows],
            np.asarray(actions)[rows],
            log_probs[rows],
            values[rows],
            prev,
        )
        for j, r in zip(idx.tolist(), rows, strict=True):
            slots[r].last[seats[r]] = j

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
        try:
            state = _Unpickler(io.BytesIO(data)).load()
            for slot in state.get("slots", []):
                slot.public.game.legal_actions()  # the engine's objects of this release
        except (AttributeError, ImportError, TypeError, EOFError, pickle.UnpicklingError) as e:
            raise ValueError(f"{OLDER_GAMES} ({str(e).strip()[:160]})") from None
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


OLDER_GAMES = (
    "its games in flight were saved by a release before craits 0.3.0, whose engine objects "
    "they hold; start a new run from its policy instead (--set init_policy=PATH)"
)
# Modules renamed in 0.3.0 whose objects a checkpoint's games may hold: the agent playing a
# checkpoint (``ppo:PATH``, seated as a bot) lived in craits.agents.ppo before.
RENAMED_MODULES = {"craits.agents.ppo": "craits.agents.checkpoint_agent"}


class _Unpickler(pickle.Unpickler):
    """Reads the games of a checkpoint written before 0.3.0 too (:data:`RENAMED_MODULES`)."""

    def find_class(self, module: str, name: str) -> Any:
        return super().find_class(RENAMED_MODULES.get(module, module), name)
