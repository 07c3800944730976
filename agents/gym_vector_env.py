"""The Gymnasium vector view on the batched engine: N learner seats against compiled bots.

``gymnasium.make_vec("craits/Craits-v0", num_envs=N, vectorization_mode="vector_entry_point",
**kwargs)`` (after ``import craits_env``) is a :class:`CraitsVectorEnv`: N games of
:class:`~craits_env.vector.VectorGame`, one learner seat in each, the other seats played by
the compiled heuristic bots (:class:`~craits.agents.compiled_bots.CompiledBot`) inside
``step`` until each learner's next decision — each row in one compiled loop, the learner's
rewards summed there too (:func:`~craits.agents.compiled_table.play_rows`). It takes the
single view's keyword arguments
(:class:`~craits.agents.gym_env.CraitsGymEnv`: ``num_players``, ``opponents``, ``seat``,
``rules``, ``illegal_action``, ``flat_obs``, and ``reward``, ``auto_forced``, ``max_steps``)
and plays the same games: row ``b`` after ``reset(seed=s)`` is, decision for decision, the
single view after ``reset(seed=s + b)`` (gymnasium's ``SyncVectorEnv`` seeds its copies so)
— the same observations, masks, rewards, terminations, truncations and final infos, for the
same learner actions; ``reset(seed=[s0, s1, ...])`` gives each row its own seed.

Opponents: ``"random"``, ``"greedy"``, ``"tactician"``, ``"expert"``, and the frozen networks
``"champion"`` and ``"ppo:PATH"`` (one per other seat in seat order skipping the learner, or
one name for all). ``random`` draws exactly as the single view's
:class:`~craits.agents.base.RandomAgent` (a ``random.Random`` per seat, seeded from the row's
generator); the bots are compiled twins of the Python bots; a network plays its argmax over
the legal actions in one forward pass over the rows stopped at its seats (a near tie of the
batch's float32 sums is decided by the one-input pass ``ppo:PATH`` plays: the same moves),
reading the belief features of the expert's compiled memory where it was trained on them
(``champion``: :mod:`craits.agents.compiled_belief`). Other specs (``pimc``, agents,
callables) are refused in one line.

Spaces are batched (``single_observation_space`` is the single view's observation space,
``single_action_space`` its ``Discrete(59)``); ``infos["action_mask"]`` is the int8
``(N, 59)`` mask of each learner's next decision and :meth:`CraitsVectorEnv.action_masks`
the same as bool. Infos are batched as gymnasium's ``SyncVectorEnv`` batches the single
view's (each key with its ``_key`` row mask): ``seat`` and ``action_mask`` always; on the
step that ends a row's episode ``winners``, ``scores``, ``place`` and ``hand_points`` (and
``illegal_action``); on a row's (re)start ``reward_before_first_move`` and ``skipped_games``.

**Autoreset: next step** (``metadata["autoreset_mode"]`` is ``AutoresetMode.NEXT_STEP``,
gymnasium's default): the step that ends a row's episode returns its last observation,
``terminated`` or ``truncated``, and an all-zero mask; the row's next ``step`` ignores its
action and starts the row's next game (reward 0, not terminated, the reset's infos), as the
single view's ``reset()`` without a seed would. ``autoreset_mode=AutoresetMode.SAME_STEP``
(or ``"SameStep"``) resets it in the same step instead, as gymnasium's ``SyncVectorEnv`` does
in that mode: the step returns the next game's first observation and mask and the reset's
infos, with the last observation in ``infos["final_obs"]`` and the last info in
``infos["final_info"]`` (Stable-Baselines3's convention; :mod:`craits_env.integrations.sb3`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from craits_env.actions import NUM_ACTIONS, PHASE_GAME_OVER
from craits_env.belief import belief_size
from craits_env.craits_v0 import raw_env
from craits_env.rewards import hand_rewards, win_shares
from craits_env.rules import Rules
from craits_env.scoring import pressure_costs
from craits_env.seeding import draw_seed
from craits_env.vector import VectorGame
from craits_env.vector.jit import announce_first_use
from craits_env.vector.layout import (
    ERROR_RLOG_FULL,
    I_CURRENT,
    I_FIX,
    I_HAND_INDEX,
    I_PHASE,
    POINTS,
)
from craits_env.vector.rows import load_state

from .compiled_belief import write_beliefs
from .compiled_bots import COMPILED_BOTS
from .compiled_expert import forget_rows, new_memory
from .compiled_table import (
    BOT_CODES,
    CLOSED,
    LEARNER,
    LEARNER_GROUP,
    MT_WIDTH,
    NET,
    NETWORK,
    PAY,
    RANDOM,
    RESET,
    mt_state,
    play_rows,
)
from .compiled_tactician import SCRATCH_FLOATS, SCRATCH_INTS
from .compiled_values import weights
from .gym_env import ILLEGAL_ACTION_MODES, MAX_SKIPPED_GAMES
from .heuristics import ExpertAgent, TacticianAgent

VECTOR_OPPONENTS: tuple[str, ...] = ("random", *COMPILED_BOTS, "champion", "ppo:PATH")
"""The opponents the vector view seats: ``random``, the compiled bots and frozen networks."""

RESET_OPTIONS = ("dealer", "deck")


class CraitsVectorEnv(gymnasium.vector.VectorEnv):
    """N games on the batched engine, one learner seat each (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}  # noqa: RUF012

    def __init__(
        self,
        num_envs: int = 1,
        num_players: int = 4,
        opponents: Sequence[str] | str = "random",
        seat: int | None = None,
        rules: Rules | None = None,
        render_mode: str | None = None,
        illegal_action: str = "terminate",
        flat_obs: bool = False,
        *,
        reward: str = "relative",
        auto_forced: bool = False,
        max_steps: int | None = None,
        backend: str = "python",
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
    ) -> None:
        modes = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
        mode = next((m for m in modes if autoreset_mode in (m, m.value)), None)
        if mode is None:
            raise ValueError(
                f"autoreset_mode: got {autoreset_mode!r}, allowed "
                "AutoresetMode.NEXT_STEP ('NextStep') or AutoresetMode.SAME_STEP ('SameStep')"
            )
        self.autoreset_mode = mode
        self.metadata = {**self.metadata, "autoreset_mode": mode}
        if render_mode is not None:
            raise ValueError(f"render_mode: got {render_mode!r}, allowed None (no vector render)")
        if not isinstance(flat_obs, bool):
            raise ValueError(f"flat_obs: got {flat_obs!r}, allowed True or False")
        # The single view's checks of the table, the rules and the options (one-line errors).
        aec = raw_env(
            num_players, rules, reward=reward, auto_forced=auto_forced, max_steps=max_steps,
            backend=backend,
        )  # fmt: skip
        n = aec.num_players
        if isinstance(opponents, str):
            opponents = [opponents] * (n - 1)
        opponents = list(opponents)
        if len(opponents) != n - 1:
            raise ValueError(f"opponents: got {len(opponents)}, need {n - 1} for {n} players")
        nets: list[str] = []  # the networks' specs, in first seating
        for spec in opponents:
            if isinstance(spec, str) and (spec == "champion" or spec.startswith("ppo:")):
                nets += [spec] if spec not in nets else []
                continue
            if not isinstance(spec, str) or spec not in VECTOR_OPPONENTS[:-2]:
                raise ValueError(
                    f"opponents: got {spec!r}, the vector env seats only {list(VECTOR_OPPONENTS)}"
                    " (use gymnasium.make for other agents)"
                )
        if seat is not None and (
            isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n
        ):
            raise ValueError(f"seat: got {seat!r}, allowed None or a seat from 0 to {n - 1}")
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(
                f"illegal_action: got {illegal_action!r}, allowed 'terminate', 'raise'"
            )
        self.num_envs = int(num_envs)  # VectorGame checks it
        self.game = VectorGame(num_envs, n, aec.rules, seed=0, reward=reward, auto_reset=False)
        self.num_players = n
        self.rules = aec.rules
        self.reward_mode = reward
        self.auto_forced = auto_forced
        self.max_steps = max_steps
        self.opponents = opponents
        self.fixed_seat = seat
        self.illegal_action = illegal_action
        self.flat_obs = flat_obs
        self.render_mode = None
        space = aec.observation_space("player_0")
        assert isinstance(space, gymnasium.spaces.Dict)
        self.single_observation_space = space["observation"] if flat_obs else space
        self.single_action_space = aec.action_space("player_0")
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        # Who plays each seat (agents/compiled_table.py: the opponents are played there).
        self._nets = [network_of(spec, n, aec.rules) for spec in nets]
        self._kind = [
            NETWORK + nets.index(o) if o in nets else RANDOM if o == "random" else BOT_CODES[o]
            for o in opponents
        ]
        b_all = self.num_envs
        self._w_tactician = weights(TacticianAgent)
        self._w_expert = weights(ExpertAgent)
        remember = "expert" in opponents or any(belief for _, belief in self._nets)
        self._memory = new_memory(b_all if remember else 0)  # the expert's, the beliefs'
        self._net_obs = np.zeros((b_all, aec.encoder.size), np.float32)
        self._net_mask = np.zeros((b_all, NUM_ACTIONS), np.int8)
        self._mts = np.zeros((b_all if "random" in opponents else 0, n, MT_WIDTH), np.uint32)
        self._ints = np.zeros(SCRATCH_INTS, np.int64)  # the bots' scratch space
        self._floats = np.zeros(SCRATCH_FLOATS, np.float64)
        self._first = np.full(b_all, -1, np.int64)  # play_rows: each row's learner action
        self._status = np.zeros(b_all, np.int64)
        self._rngs: list[np.random.Generator] = [np.random.default_rng() for _ in range(b_all)]
        self.seats = np.zeros(b_all, np.int64)  # each row's learner seat
        self._table = np.full((b_all, n), LEARNER, np.int64)  # per row and seat: who plays
        self._steps = np.zeros(b_all, np.int64)  # decisions of the episode (max_steps)
        self._truncated = np.zeros(b_all, np.bool_)
        self._illegal = np.zeros(b_all, np.bool_)
        self._ended = np.zeros(b_all, np.bool_)  # the episode ended: the next step resets
        self._obs = np.zeros((b_all, aec.encoder.size), np.float32)
        self._mask = np.zeros((b_all, NUM_ACTIONS), np.int8)
        self._group = np.full(b_all, CLOSED, np.int64)  # the open reward group's owner
        self._first_hand = np.zeros(b_all, np.int64)  # hands finished when it opened
        self._reset_done = False

    # ------------------------------------------------------------------ the API

    def reset(
        self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """New games in every row: row ``b`` as the single view's ``reset(seed=seed + b)``
        (``seed`` a list: ``reset(seed=seed[b])``; ``None``: each row's generator goes on, or
        fresh entropy at the first reset). ``options``: ``dealer``, ``deck`` for every row."""
        options = dict(options or {})
        unknown = sorted(map(str, set(options) - set(RESET_OPTIONS)))
        if unknown:
            raise ValueError(f"reset options: unknown key(s) {unknown}; allowed {RESET_OPTIONS}")
        if seed is not None:
            seeds = (
                [int(seed) + b for b in range(self.num_envs)]
                if isinstance(seed, int | np.integer)
                else list(seed)
            )
            if len(seeds) != self.num_envs:
                raise ValueError(f"seed: got {len(seeds)} seeds, need {self.num_envs} (num_envs)")
            self._rngs = [seeding.np_random(int(s))[0] for s in seeds]
        self._reset_done = True
        rows = np.arange(self.num_envs)
        self._ended[:] = False
        self._illegal[:] = False
        infos: dict[str, Any] = {}
        for b, info in self._start(rows, options).items():
            self._add_info(infos, info, b)
        self._observe()
        return self._obs_out(), self._base_infos(infos)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Each learner's action; the opponents then play until each learner's next
        decision or the end (next-step autoreset: see the module docstring)."""
        if not self._reset_done:
            raise ValueError("step() before reset()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or (acts.size and acts.dtype.kind not in "iu"):
            raise ValueError(
                f"actions: got {acts.dtype} {acts.shape}, allowed ints ({self.num_envs},)"
            )
        acts = acts.astype(np.int64)
        n = self.num_envs
        rewards = np.zeros(n, np.float64)
        terminated = np.zeros(n, np.bool_)
        truncated = np.zeros(n, np.bool_)
        infos: dict[str, Any] = {}
        restart = np.flatnonzero(self._ended)
        play = ~self._ended
        legal = self._mask[np.arange(n), np.clip(acts, 0, NUM_ACTIONS - 1)] != 0
        legal &= (acts >= 0) & (acts < NUM_ACTIONS)
        illegal = play & ~legal
        if illegal.any():
            b = int(np.flatnonzero(illegal)[0])
            if self.illegal_action == "raise":
                allowed = [int(a) for a in np.flatnonzero(self._mask[b])]
                raise ValueError(
                    f"actions: row {b}: action {int(acts[b])} is not legal; legal: {allowed}"
                )
            self._illegal |= illegal
            rewards[illegal] = -1.0
            terminated |= illegal
            play &= ~illegal
        learner, others = np.zeros(n, np.float64), np.zeros(n, np.float64)
        finals: dict[int, dict[str, Any]] = {}  # same-step: rows ended and dealt again
        redealt = np.zeros(n, np.bool_)

        def deal_again(rows: np.ndarray) -> None:
            """Same-step autoreset inside the opponents' loop: the rows' episodes ended; their
            last observation and info kept, their next games dealt and played with the rest."""
            self._close(rows, others, learner)
            which = np.flatnonzero(rows)
            over = self.game.is_over()
            rewards[which] = learner[which] + others[which]
            terminated[which], truncated[which] = over[which], ~over[which]
            seen = self.game.observe(seats=self.seats)
            none = np.zeros(NUM_ACTIONS, np.int8)
            for b in which:
                info = self._final_info(int(b))
                info["action_mask"] = none.copy()
                last = seen[b] if self.flat_obs else {"observation": seen[b], "action_mask": none}
                finals[int(b)] = {"final_obs": last, "final_info": info}
            self._deal(which, {})
            learner[which] = others[which] = 0.0
            redealt[which] = True

        same_step = self.autoreset_mode == AutoresetMode.SAME_STEP
        if restart.size:  # next-step autoreset: new games, their opponents play with the rest
            self._ended[restart] = False
            self._illegal[restart] = False
            self._deal(restart, {})
        if play.any() or restart.size:
            self._open(play, LEARNER_GROUP)
            self._steps[play] += 1
            first = self._first
            first[:] = -1
            first[play] = acts[play]
            active = play.copy()
            active[restart] = True
            self._play_opponents(
                active, others, learner, (play.copy(), deal_again) if same_step else None, first
            )
            kept = play & ~redealt
            rewards[kept] = learner[kept] + others[kept]  # the single view's order of sums
            over = self.game.is_over()
            terminated |= kept & over
            truncated |= kept & self._truncated & ~over
        ended = (terminated | truncated) & ~redealt
        self._ended |= ended
        row_infos = {int(b): self._final_info(int(b)) for b in np.flatnonzero(ended)}
        if restart.size:
            row_infos.update(self._start(restart, {}, played=others))
        if same_step and row_infos:  # illegal actions: the rows ended without a step
            self._observe()  # the last observations, masks all zero
            for b, info in row_infos.items():
                info["action_mask"] = self._mask[b].copy()
                finals[b] = {"final_obs": self._row_obs(b), "final_info": info}
            finished = np.array(sorted(row_infos), np.int64)
            self._ended[finished] = False
            self._illegal[finished] = False
            row_infos = self._start(finished, {})
        if redealt.any():
            row_infos.update(self._start(np.flatnonzero(redealt), {}, played=others))
        for b in sorted(finals):
            self._add_info(infos, finals[b], b)
        for b in sorted(row_infos):
            self._add_info(infos, row_infos[b], b)
        self._observe()
        return self._obs_out(), rewards, terminated, truncated, self._base_infos(infos)

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions now (bool, ``(N, 59)``); all False in a row whose
        episode just ended (its next step resets it)."""
        return self._mask.astype(bool)

    def close_extras(self, **kwargs: Any) -> None:
        self._reset_done = False

    # ------------------------------------------------------------------ the rows

    def _start(
        self, rows: np.ndarray, options: dict[str, Any], played: np.ndarray | None = None
    ) -> dict[int, dict[str, Any]]:
        """Deal each row of ``rows`` a game in which its learner decides (as the single view's
        reset: games that end first are skipped); the rows' reset infos. ``played``: the rows
        were dealt (:meth:`_deal`) and their opponents played, for these rewards."""
        skipped = np.zeros(self.num_envs, np.int64)
        before = np.zeros(self.num_envs, np.float64)
        pending = np.asarray(rows, np.int64)
        if played is not None:
            before[pending] = played[pending]
            pending = self._skipped(pending, skipped)
        while pending.size:
            self._deal(pending, options)
            active = np.zeros(self.num_envs, np.bool_)
            active[pending] = True
            before[pending] = 0.0
            self._play_opponents(active, before, before)
            pending = self._skipped(pending, skipped)
        return {
            int(b): {
                "seat": int(self.seats[b]),
                "reward_before_first_move": float(before[b]),
                "skipped_games": int(skipped[b]),
            }
            for b in rows
        }

    def _skipped(self, rows: np.ndarray, skipped: np.ndarray) -> np.ndarray:
        """The rows whose game ended before the learner's first decision (counted)."""
        ended = rows[self.game.is_over()[rows] | self._truncated[rows]]
        skipped[ended] += 1
        if ended.size and skipped[ended].max() > MAX_SKIPPED_GAMES:
            raise ValueError(
                f"reset: {MAX_SKIPPED_GAMES + 1} games in a row ended before the learner's "
                "first decision (a stacked deck, or only one-card hands?)"
            )
        return ended

    def _deal(self, rows: np.ndarray, options: dict[str, Any]) -> None:
        """New games in ``rows`` from their generators, as the single view's reset draws them
        (the game's seed, the learner's seat, each opponent's seed); reward groups opened."""
        n = self.num_players
        vg = self.game
        for b in rows:
            rng = self._rngs[b]
            game_seed = draw_seed(rng)
            seat = int(rng.integers(n)) if self.fixed_seat is None else self.fixed_seat
            self.seats[b] = seat
            others = [s for s in range(n) if s != seat]
            self._table[b, seat] = LEARNER
            for s, kind in zip(others, self._kind, strict=True):
                self._table[b, s] = kind
                agent_seed = draw_seed(rng)
                if kind == RANDOM:  # RandomAgent(agent_seed)'s generator
                    self._mts[b, s] = mt_state(agent_seed)
            # The row's generator := the single view's game generator, default_rng(game_seed)
            state = np.random.default_rng(game_seed).bit_generator.state
            load_state(vg.state.st, int(b), state)
        vg.reset(rows, dealer=options.get("dealer"), deck_top=options.get("deck"))
        if self._memory.shape[0]:
            forget_rows(vg.state.st, self._memory, np.asarray(rows, np.int64))
        self._steps[rows] = 0
        self._truncated[rows] = False
        self._open(rows, RESET)

    def _play_opponents(
        self,
        active: np.ndarray,
        others: np.ndarray,
        own: np.ndarray,
        on_end: tuple[np.ndarray, Callable[[np.ndarray], None]] | None = None,
        first: np.ndarray | None = None,
    ) -> None:
        """The ``active`` rows are played (``first[b]`` >= 0: the learner's action first), their
        opponents' decisions and forced moves (``auto_forced``) until each learner's turn, the
        end or the truncation: in compiled code (:func:`~.compiled_table.play_rows`), which
        adds the learners' rewards to ``others`` (of the opponents' steps) and ``own`` (of the
        learner's step) as the single view adds them, and leaves a reward that needs exact
        integers to :meth:`_close`. ``on_end``: ``(watched, call)``, ``call`` told (once, a mask)
        of the watched rows whose episode ended (same-step autoreset)."""
        vg = self.game
        if first is None:
            first = self._first
            first[:] = -1
        status = self._status
        max_steps = -1 if self.max_steps is None else int(self.max_steps)
        pending = np.flatnonzero(active)
        announce_first_use(play_rows)
        while pending.size:
            lost = play_rows(
                *vg.state.arrays(), self._table, self._w_tactician, self._w_expert,
                self._memory, self._mts, pending, first, self._steps, self._truncated,
                self._group, self._first_hand, self.seats, own, others, max_steps,
                self.auto_forced, self._ints, self._floats, status,
            )  # fmt: skip
            if lost >= 0:
                self._lost(lost)
            first[pending] = -1
            again = np.zeros(self.num_envs, np.bool_)
            again[pending[status[pending] == PAY]] = True
            if again.any():
                self._close(again, others, own)
            moved = pending[status[pending] == NET]
            if moved.size:
                self._network_moves(moved, first)
                again[moved] = True
            if on_end is not None:
                watched, call = on_end
                now = watched & (vg.is_over() | self._truncated)
                if now.any():
                    watched &= ~now
                    call(now)
                    again |= now
            pending = np.flatnonzero(again)
        self._close(active, others, own)

    def _network_moves(self, rows: np.ndarray, first: np.ndarray) -> None:
        """``first[rows]`` := the moves of the networks whose seats decide in ``rows``."""
        vg = self.game
        st = vg.state.st
        obs = vg.observe(out=self._net_obs)  # each row's acting seat: the networks' here
        mask = vg.legal_mask(out=self._net_mask)
        seats = st[rows, I_CURRENT]
        codes = self._table[rows, seats]
        for k, (agent, belief) in enumerate(self._nets):
            mine = codes == NETWORK + k
            if not mine.any():
                continue
            which = rows[mine]
            x = obs[which]
            if belief:
                extra = np.zeros((which.size, belief_size(self.num_players)), np.float32)
                lost = write_beliefs(st, vg.state.params, self._memory, which, seats[mine], extra)
                if lost >= 0:
                    self._lost(lost)
                x = np.concatenate([x, extra], axis=1)
            first[which] = argmax_moves(agent, x, mask[which])

    def _lost(self, b: int) -> None:
        if int(self.game.state.st[b, I_FIX]) == ERROR_RLOG_FULL:
            raise RuntimeError(f"game {b}: the reshuffle log outgrew its bound")
        raise RuntimeError(f"game {b}: the expert's memory lost track of the row")

    # A reward group is what craits_v0 pays for one step: a decision and the forced moves
    # after it (auto_forced), or a reset and its forced moves. The single view adds the
    # learner's group to the sum of the opponents' groups and drops the reset's.
    def _open(self, rows: np.ndarray, owner: int) -> None:
        self._group[rows] = owner
        self._first_hand[rows] = self.game.state.st[rows, I_HAND_INDEX]

    def _close(self, rows: np.ndarray, others: np.ndarray, own: np.ndarray) -> None:
        """Close the open reward groups of ``rows``: the learner's reward of each group (the
        hands it finished in order, then the "win" reward) is added to ``own`` (the learner's
        group) or ``others``."""
        st = self.game.state.st
        hands, over = st[:, I_HAND_INDEX], st[:, I_PHASE] == PHASE_GAME_OVER
        closing = rows & (self._group != CLOSED)
        paid = closing & ((hands > self._first_hand) | over) & (self._group != RESET)
        for b in np.flatnonzero(paid):
            to = own if self._group[b] == LEARNER_GROUP else others
            to[b] += self._group_reward(int(b), int(self._first_hand[b]), bool(over[b]))
        self._group[closing] = CLOSED

    def _group_reward(self, b: int, first_hand: int, over: bool) -> float:
        seat = int(self.seats[b])
        reward = 0.0
        if self.reward_mode != "win":
            for points in self._hand_points(b, first_hand):
                reward += hand_rewards(points, self.reward_mode)[seat]
        if over and self.reward_mode == "win":
            reward += win_shares(self._winners(b), self.num_players)[seat]
        return reward

    def _hand_points(self, b: int, first: int) -> list[tuple[int, ...]]:
        """``game.hand_points(b)[first:]`` (what ``convert.hand_points`` reads, from ``first``
        on: this env loads no Python game, so every hand is in the row)."""
        st, n = self.game.state.st, self.num_players
        last = int(st[b, I_HAND_INDEX])
        hands = st[b, POINTS + 3 * n * first : POINTS + 3 * n * last].reshape(-1, n, 3).tolist()
        return [tuple(c + pressure_costs(k0, k1) for c, k0, k1 in hand) for hand in hands]

    def _seat_hand_points(self, b: int, seat: int) -> list[int]:
        """``[points[seat] for points in game.hand_points(b)]``, read for that seat alone."""
        st, n = self.game.state.st, self.num_players
        last = int(st[b, I_HAND_INDEX])
        hands = st[b, POINTS : POINTS + 3 * n * last].reshape(-1, n, 3)[:, seat].tolist()
        return [c + pressure_costs(k0, k1) for c, k0, k1 in hands]

    def _winners(self, b: int) -> list[int]:
        scores = self.game.scores(b)
        best = min(scores)
        return [s for s, v in enumerate(scores) if v == best]

    def _final_info(self, b: int) -> dict[str, Any]:
        """The single view's last info of row ``b`` (less the mask: added for every row)."""
        seat = int(self.seats[b])
        scores = self.game.scores(b)
        mine = scores[seat]
        info: dict[str, Any] = {"seat": seat}
        if self._illegal[b]:
            info["illegal_action"] = True
        info.update(
            winners=self._winners(b),
            scores=scores,
            place=1 + sum(s < mine for s in scores),
            hand_points=self._seat_hand_points(b, seat),
        )
        return info

    def _observe(self) -> None:
        vg = self.game
        vg.observe(out=self._obs, seats=self.seats)
        vg.legal_mask(out=self._mask)
        waiting = ~vg.is_over() & (vg.current_player() == self.seats)
        self._mask[self._ended | ~waiting] = 0

    def _row_obs(self, b: int) -> Any:
        if self.flat_obs:
            return self._obs[b].copy()
        return {"observation": self._obs[b].copy(), "action_mask": self._mask[b].copy()}

    def _obs_out(self) -> Any:
        if self.flat_obs:
            return self._obs.copy()
        return {"observation": self._obs.copy(), "action_mask": self._mask.copy()}

    def _base_infos(self, infos: dict[str, Any]) -> dict[str, Any]:
        """``seat`` and ``action_mask`` of every row, as ``SyncVectorEnv`` batches them."""
        everyone = np.ones(self.num_envs, np.bool_)
        infos["seat"] = self.seats.copy()
        infos["_seat"] = everyone
        infos["action_mask"] = self._mask.copy()
        infos["_action_mask"] = everyone.copy()
        return infos


def network_of(spec: str, num_players: int, rules: Rules) -> tuple[Any, bool]:
    """The frozen network of ``champion`` or ``ppo:PATH`` (checked for the table, one-line
    ``ValueError``s) and whether it reads the belief features."""
    from .checkpoint_agent import PPOAgent
    from .specs import resolve_agent

    agent, _ = resolve_agent(spec, num_players=num_players, rules=rules)
    assert isinstance(agent, PPOAgent)
    return agent, agent.reads_belief


NEAR_TIE = 1e-4  # relative gap between the two best legal logits decided by the one-input pass


def argmax_moves(agent: Any, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``PPOAgent.act`` of each row (the only legal action, else the first legal action of
    highest logit): one batched forward pass; rows whose two best legal logits are within
    :data:`NEAR_TIE` are decided again by the agent's one-input pass (its exact moves)."""
    legal = mask.astype(bool)
    logits = np.where(legal, agent.logits(x), -np.inf)
    moves = logits.argmax(axis=1)
    top = np.sort(logits, axis=1)[:, -2:]
    near = (top[:, 0] >= top[:, 1] - NEAR_TIE * (1.0 + np.abs(top[:, 1]))) & (legal.sum(1) > 1)
    for i in np.flatnonzero(near):
        exact = np.where(legal[i], agent.logits(x[i]), -np.inf)
        moves[i] = int(exact.argmax())
    return moves
