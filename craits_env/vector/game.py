"""``VectorGame``: B games of Craits stepped together by one compiled call.

See :class:`VectorGame`; the compiled rules' entry points are :mod:`craits_env.vector.kernel`
(which lists the modules of the rules), the state :mod:`craits_env.vector.state` and its
layout :mod:`craits_env.vector.layout`, snapshots :mod:`craits_env.vector.convert`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..actions import NUM_ACTIONS, PHASE_GAME_OVER, PHASE_NAMES, action_str
from ..cards import check_permutation, parse_card
from ..deck import remove_cards
from ..engine import Game
from ..hands import check_dealable
from ..options import is_int
from ..rewards import BOUNDED_SCALE, REWARD_MODES, check_reward_mode, hand_rewards, win_shares
from ..rules import Rules, check_num_players
from ..seeding import derive_seed
from . import convert, encode, kernel, layout
from .jit import announce_first_use
from .rng import export_state, load_state, seeded_state
from .state import VectorState


class VectorGame:
    """B independent games of Craits in flat numpy arrays, stepped by one compiled call.

    Args:
        num_envs: B, the number of games (>= 1).
        num_players: 2 to 10 (R1.5), the same in every game.
        rules: the options (``None``: ``Rules()``), the same in every game. Every option of
            :class:`~craits_env.Rules` is supported; values the exact int64 representation
            cannot hold (``|three_points| > 1,000,000``, more than 10,000 hands) raise
            ``ValueError`` naming them (:func:`~craits_env.vector.layout.unsupported_options`).
        seed: game ``b`` draws from ``numpy.random.default_rng(derive_seed(seed, b))`` —
            its first dealer (R2.1), deals and reshuffles, exactly as a
            :class:`~craits_env.Game` made with that generator — and the generator continues
            into the games that follow it in row ``b``. ``None``: fresh OS entropy.
        reward: the reward mode of ``craits_v0`` (:mod:`craits_env.rewards`).
        auto_reset: a finished game is replaced at once by the next game of its row
            (``step`` flags it); with ``False`` it stays over (held) until :meth:`reset`,
            while ``step`` goes on with the games still in play.

    ``step(actions)`` takes one legal action per game (``ValueError`` naming the first
    illegal one, and nothing changes) and returns ``(rewards, done)``: float32
    ``(B, num_players)``, every seat's reward of that step in the reward mode (the hands the
    step finished, and the game's reward when it ended — as ``craits_v0`` pays them), and
    bool ``(B,)``, "this game ended (and, with auto-reset, a new one began)".

    Without auto-reset, a game that is over is held: ``step`` skips it — its action is
    ignored (any integer: -1, what :class:`~craits_env.vector.RandomPolicy` gives an
    all-zero mask, or anything a network samples), its rewards are 0 and ``done`` stays
    True (``done`` is then :meth:`is_over` after the step) — and its state, observation
    (the final position seen by seat 0, as :meth:`observe` gives it) and all-zero mask
    stay as they are, until :meth:`reset`. So a fixed set of games is played to the end
    with ``while not vg.is_over().all()``; a ``step`` with every game over raises.
    :meth:`legal_mask` gives int8 ``(B, 59)``; :meth:`observe` the float32 observation of
    each game's acting seat, identical to ``craits_v0``'s; :meth:`snapshot` one game as
    :meth:`Game.snapshot <craits_env.Game.snapshot>` gives it, equal key for key.

    Scores are exact at any size (``layout`` says how): nothing here overflows.
    ``state`` is the :class:`~craits_env.vector.state.VectorState` the kernels read (for
    code that runs the compiled rules on rows of its own: :mod:`craits_env.vector.rows`).
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int = 4,
        rules: Rules | None = None,
        seed: int | None = None,
        *,
        reward: str = "relative",
        auto_reset: bool = True,
    ) -> None:
        if not is_int(num_envs, numpy=True) or num_envs < 1:
            raise ValueError(f"num_envs: got {num_envs!r}, allowed an int >= 1")
        n = check_num_players(num_players)
        rules = Rules() if rules is None else rules
        if not isinstance(rules, Rules):
            raise ValueError(f"rules: got {type(rules).__name__}, expected craits_env.Rules")
        check_dealable(n, rules)
        check_reward_mode(reward)
        if not isinstance(auto_reset, bool):
            raise ValueError(f"auto_reset: got {auto_reset!r}, allowed True or False")
        if seed is not None and (not is_int(seed, numpy=True) or seed < 0):
            raise ValueError(f"seed: got {seed!r}, allowed None or an int >= 0")
        bad = layout.unsupported_options(rules)
        if bad:
            raise ValueError("VectorGame does not support " + "; ".join(bad))
        size = layout.state_bytes(int(num_envs), n, rules)
        if size > layout.MAX_STATE_BYTES:
            raise ValueError(
                f"num_envs: {num_envs} games of these rules need {size / 2**30:.1f} GiB "
                f"(> {layout.MAX_STATE_BYTES >> 30} GiB; the reshuffle log grows with "
                f"hand_decision_limit={rules.hand_decision_limit}): use fewer games"
            )
        self.num_envs = int(num_envs)
        self.num_players = n
        self.rules = rules
        self.reward_mode = reward
        self.auto_reset = auto_reset
        self.state = VectorState.allocate(self.num_envs, n, rules, reward, auto_reset)
        self.encoder = encode.encoder_for(n, rules)
        self.obs_size = self.encoder.size
        self._offsets = encode.field_offsets(self.encoder)
        self._scaled = np.zeros((self.num_envs, n, n), np.float64)  # the observation's scores
        self._acting = np.full(self.num_envs, -1, np.int64)  # observe(): each acting seat
        self._no_obs = np.zeros((0, self.obs_size), np.float32)  # step() writes none
        self._no_mask = np.zeros((0, NUM_ACTIONS), np.int8)
        if seed is None:
            seed = int(np.random.SeedSequence().entropy) % (1 << 63)  # type: ignore[arg-type]
        self.seed = int(seed)
        for b in range(self.num_envs):
            load_state(self.state.st, b, seeded_state(derive_seed(self.seed, b)))
        self.reset()

    # ------------------------------------------------------------------ stepping

    def step(
        self,
        actions: Any,
        *,
        observe_into: np.ndarray | None = None,
        mask_into: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Apply ``actions[b]`` in every game b; ``(rewards, done)`` (see the class docstring).

        ``observe_into`` / ``mask_into``: arrays as :meth:`observe` / :meth:`legal_mask`
        fill, filled here with the next decision's observations and masks — the same values,
        written while each game's state is hot (faster than the separate calls).

        ``ValueError`` naming the first game in play whose action is not legal, or when
        every game is over (without auto-reset: held games are skipped); nothing changes then.
        """
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or acts.dtype.kind not in "iu":
            raise ValueError(
                f"actions: got {acts.dtype} of shape {acts.shape}, allowed integers of shape "
                f"({self.num_envs},)"
            )
        acts = np.ascontiguousarray(acts, np.int64)
        if not self.auto_reset and self.is_over().all():
            raise ValueError("step: every game is over; reset() them first (auto_reset=False)")
        obs = self._no_obs if observe_into is None else self._obs_out(observe_into)
        mask = self._no_mask if mask_into is None else self._mask_out(mask_into)
        rewards = np.zeros((self.num_envs, self.num_players), np.float32)
        done = np.zeros(self.num_envs, np.bool_)
        bad, fixes = kernel.step(
            *self.state.arrays(), acts, rewards, done, self._offsets, self._scaled, obs, mask
        )
        if bad >= 0:
            raise ValueError(self._illegal(bad, int(acts[bad])))
        if fixes:
            games = self._fix(rewards, done)
            if observe_into is not None:  # the kernel left these games' rows to us
                observe_into[games] = self.observe()[games]
            if mask_into is not None:
                mask_into[games] = self.legal_mask()[games]
        return rewards, done

    def _obs_out(self, out: np.ndarray) -> np.ndarray:
        shape = (self.num_envs, self.obs_size)
        if out.shape != shape or out.dtype != np.float32 or not out.flags.c_contiguous:
            raise ValueError(f"out: allowed a C-contiguous float32 array of shape {shape}")
        return out

    def _mask_out(self, out: np.ndarray) -> np.ndarray:
        shape = (self.num_envs, NUM_ACTIONS)
        if out.shape != shape or out.dtype != np.int8 or not out.flags.c_contiguous:
            raise ValueError(f"out: allowed a C-contiguous int8 array of shape {shape}")
        return out

    def _illegal(self, b: int, action: int) -> str:
        ints = self.state.st[b]
        name = action_str(action) if 0 <= action < NUM_ACTIONS else "not an action id"
        allowed = ", ".join(f"{a} ({action_str(a)})" for a in self.legal_actions(b))
        return (
            f"actions[{b}]: illegal action {action} ({name}) for player_"
            f"{ints[layout.I_CURRENT]} in phase {PHASE_NAMES[ints[layout.I_PHASE]]!r}; "
            f"legal: {allowed}"
        )

    def _fix(self, rewards: np.ndarray, done: np.ndarray) -> np.ndarray:
        """Rewards that need integers beyond int64 (huge shuffle pressures), in Python; then
        the auto-reset the kernel left to us. Returns those games."""
        ints = self.state.st
        games = np.flatnonzero(ints[:, layout.I_FIX])
        for b in games:
            code = int(ints[b, layout.I_FIX])
            if code == layout.ERROR_RLOG_FULL:
                raise RuntimeError(f"game {b}: the reshuffle log outgrew its bound")
            if code == layout.ERROR_NO_DECISION:
                raise RuntimeError(
                    f"game {b}: {layout.MAX_EMPTY_GAMES} new games in a row ended before "
                    "their first decision"
                )
        reset = []
        for b in games:
            if int(ints[b, layout.I_FIX]) != layout.FIX_REWARDS:
                continue
            rewards[b] = self._exact_rewards(int(b), bool(done[b]))
            if done[b] and self.auto_reset:
                reset.append(b)
        if reset:
            kernel.auto_reset(*self.state.arrays(), np.array(reset, np.int64))
        return games

    def _exact_rewards(self, b: int, over: bool) -> np.ndarray:
        """This step's rewards of game ``b`` as ``craits_v0`` computes them, as float32."""
        n = self.num_players
        acc = [0.0] * n
        points = self.hand_points(b)
        for h in range(int(self.state.st[b, layout.I_STEP_HAND]), len(points)):
            if self.reward_mode == "win":
                break
            try:
                values = hand_rewards(points[h], self.reward_mode)
            except OverflowError:  # beyond Python's floats: the exact values
                values = [reward_beyond_double(points[h], q, self.reward_mode) for q in range(n)]
            acc = [a + r for a, r in zip(acc, values, strict=True)]
        if over and self.reward_mode == "win":
            scores = self.scores(b)
            best = min(scores)
            shares = win_shares([q for q in range(n) if scores[q] == best], n)
            acc = [a + r for a, r in zip(acc, shares, strict=True)]
        with np.errstate(over="ignore"):
            return np.array(acc, np.float64).astype(np.float32)

    # ------------------------------------------------------------------ views

    def legal_mask(self, out: np.ndarray | None = None) -> np.ndarray:
        """Every game's legal mask, int8 ``(B, 59)`` (all zeros for a finished game)."""
        if out is None:
            out = np.empty((self.num_envs, NUM_ACTIONS), np.int8)
        kernel.legal_mask(self.state.st, self.state.params, self._mask_out(out))
        return out

    def observe(self, out: np.ndarray | None = None, seats: Any = None) -> np.ndarray:
        """Each game's observation (float32 ``(B, obs_size)``), identical to ``craits_v0``'s:
        of its acting seat (seat 0 once a game is over), or of ``seats[b]``. Fills ``out``
        (C-contiguous float32) when given."""
        if out is None:
            out = np.empty((self.num_envs, self.obs_size), np.float32)
        self._obs_out(out)
        st, p, o, scaled = self.state.st, self.state.params, self._offsets, self._scaled
        if seats is None:
            encode.observe(st, p, self.state.sizes, o, scaled, self._acting, out)
            return out
        who = np.asarray(seats)
        if (
            who.shape != (self.num_envs,)
            or who.dtype.kind not in "iu"
            or (who.size and (who.min() < -1 or who.max() >= self.num_players))
        ):
            raise ValueError(
                f"seats: allowed ints from 0 to {self.num_players - 1} (or -1, the acting "
                f"seat) of shape ({self.num_envs},)"
            )
        encode.observe(st, p, self.state.sizes, o, scaled, np.ascontiguousarray(who, np.int64), out)
        return out

    def current_player(self) -> np.ndarray:
        """Each game's seat to decide, int64 ``(B,)``; -1 for a finished game."""
        return self.state.st[:, layout.I_CURRENT].copy()

    def hands_finished(self) -> np.ndarray:
        """Each game's hands finished so far, int64 ``(B,)`` (R2.2; a new game's: 0)."""
        return self.state.st[:, layout.I_HAND_INDEX].astype(np.int64)

    def is_over(self) -> np.ndarray:
        """bool ``(B,)``: the games that are over (only without auto-reset)."""
        return self.state.st[:, layout.I_PHASE] == PHASE_GAME_OVER

    def legal_actions(self, i: int) -> tuple[int, ...]:
        """Game ``i``'s legal action ids, ascending (``Game.legal_actions``)."""
        return tuple(convert.legal_actions(self.state, self._game_index(i)))

    def snapshot(
        self, i: int, *, legal: Sequence[int] | None = None, resume: bool = False
    ) -> dict[str, Any]:
        """Game ``i`` as ``Game.snapshot()`` gives it (every key, equal values). ``legal``:
        its legal actions when the caller has them already (a :meth:`legal_mask` row).
        ``resume=True`` adds ``Game.snapshot(resume=True)``'s ``"resume"``: the row's
        generator, so that ``Game.from_snapshot`` gives a game that goes on as this row does
        (its deals and reshuffles to come)."""
        b = self._game_index(i)
        snap = convert.snapshot(self.state, b, None if legal is None else list(legal))
        if resume:
            snap["resume"] = {
                "generator": self.generator_state(b),
                "scheduled_deals": [],
                "scheduled_reshuffles": [],
                "recorded": None,
            }
        return snap

    def scores(self, i: int) -> list[int]:
        """Game ``i``'s exact scores (Python ints)."""
        return convert.scores(self.state, self._game_index(i))

    def hand_points(self, i: int) -> list[tuple[int, ...]]:
        """Game ``i``'s finished hands' points, penalties included (``Game.hand_points``)."""
        return convert.hand_points(self.state, self._game_index(i))

    def generator_state(self, i: int) -> dict[str, Any]:
        """Game ``i``'s generator as numpy's ``PCG64.state`` dict (``bit_generator.state``)."""
        return export_state(self.state.st, self._game_index(i))

    def memory_bytes(self) -> int:
        """Bytes of all state arrays (divide by ``num_envs`` for one game)."""
        return self.state.st.nbytes + self.state.cd.nbytes + self._scaled.nbytes

    # ------------------------------------------------------------------ new games

    def reset(
        self,
        games: Sequence[int] | np.ndarray | None = None,
        *,
        dealer: int | None = None,
        deck_top: Sequence[str | int] | None = None,
        generator_state: Mapping[str, Any] | None = None,
    ) -> None:
        """New games in the rows ``games`` (default: all), each from its row's generator.

        ``dealer`` (a seat) and ``deck_top`` (cards on top of the first hand's deck, R2.3)
        act as in :class:`~craits_env.Game`; ``generator_state`` (a numpy PCG64 state) first
        replaces the generator of the one row given. Bad values raise ``ValueError`` as
        ``Game`` does, before anything changes.
        """
        rows = np.arange(self.num_envs) if games is None else np.asarray(games)
        if rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
            raise ValueError("games: allowed a list of game indices")
        rows = np.array([self._game_index(int(b)) for b in rows], np.int64)
        n = self.num_players
        top = np.zeros(0, np.uint8)
        if deck_top is not None:
            deck = list(self.state.deck)
            cards = [parse_card(c) for c in deck_top]
            check_permutation(cards + remove_cards(deck, cards), deck, "deck")
            top = np.array(cards, np.uint8)
        if dealer is None:
            first = -1
        elif isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < n:
            raise ValueError(f"dealer: got {dealer!r}, allowed a seat from 0 to {n - 1}")
        else:
            first = dealer
        if generator_state is not None:
            if rows.size != 1:
                raise ValueError("generator_state: allowed with exactly one game")
            load_state(self.state.st, int(rows[0]), generator_state)
        for b in rows:
            self.state.loaded.pop(int(b), None)
        dealers = np.full(rows.size, first, np.int64)
        announce_first_use(kernel.reset)
        kernel.reset(*self.state.arrays(), rows, dealers, top)
        if np.any(self.state.st[rows, layout.I_FIX] == layout.ERROR_NO_DECISION):
            raise RuntimeError(
                f"{layout.MAX_EMPTY_GAMES} new games in a row ended before their first decision"
            )

    def load_game(
        self, i: int, game: Game, generator_state: Mapping[str, Any] | None = None
    ) -> None:
        """Put a copy of the Python ``game`` (same players and rules) into row ``i``; its future
        randomness comes from ``generator_state``, by default ``game``'s own PCG64 generator
        — or, for a game without one (``Game.from_snapshot`` of a snapshot without
        ``"resume"``), row ``i``'s generator goes on (as :meth:`reset` would draw from it)."""
        convert.load_game(self.state, self._game_index(i), game, generator_state)

    def _game_index(self, i: object) -> int:
        if not is_int(i, numpy=True) or not 0 <= int(i) < self.num_envs:  # type: ignore[call-overload]
            raise ValueError(f"game index: got {i!r}, allowed an int from 0 to {self.num_envs - 1}")
        return int(i)  # type: ignore[call-overload]

    def __repr__(self) -> str:
        return (
            f"VectorGame(num_envs={self.num_envs}, num_players={self.num_players}, "
            f"reward={self.reward_mode!r}, auto_reset={self.auto_reset})"
        )


def reward_beyond_double(points: tuple[int, ...], seat: int, mode: str) -> float:
    """``hand_rewards(points, mode)[seat]`` when Python's float arithmetic overflows: the
    exact value (one correctly rounded division), ±inf beyond a double."""
    n = len(points)
    own = points[seat]
    if mode == "score":
        num, den = -own, 100
    else:  # ((total - own) / (n - 1) - own) / scale == (total - n * own) / ((n - 1) * scale)
        num = sum(points) - n * own
        den = (n - 1) * (100 if mode == "relative" else int(BOUNDED_SCALE))
    try:
        x = num / den
    except OverflowError:
        x = math.inf if num > 0 else -math.inf
    return math.tanh(x) if mode == "bounded" else x


__all__ = ["REWARD_MODES", "VectorGame"]
