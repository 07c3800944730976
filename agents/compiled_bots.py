"""The heuristic bots compiled over the batched engine's rows: :class:`CompiledBot`.

:mod:`craits.agents.heuristics`' bots read a :class:`~craits_env.public.SeatView` of a Python
:class:`~craits_env.Game`; their twins here read a row of a
:class:`~craits_env.vector.VectorGame` (its arrays, :mod:`craits_env.vector.layout`) and decide
for many rows in one compiled call, **identical decision for decision**: the same choices and
the same tie-breaks (``tests/agents/test_compiled_bots.py`` holds each one to its Python bot
over thousands of positions of random-option games, 2-10 players, one and two decks).

>>> import numpy as np
>>> from craits_env.vector import VectorGame
>>> vg = VectorGame(8, num_players=4, seed=0)
>>> bot = CompiledBot("expert")  # or "greedy", "tactician"
>>> for _ in range(20):
...     actions = bot.act(vg)  # every row's acting seat; bot.act(vg, rows=[0, 3]) for some
...     bot.observe(vg, actions)  # before each step: the expert's memory learns from it
...     rewards, done = vg.step(actions)
>>> (bot.name, bot.version, actions.shape, actions.dtype == np.int64)
('expert', 1, (8,), True)

``act(game, rows=None, out=None)`` returns, for each row asked (all by default), the action
the Python bot would take for that row's acting seat (int64); ``ValueError`` for a row that
is over or not in the game. The bots are deterministic (they draw nothing). ``greedy``
(:func:`greedy_action`) and ``tactician`` (:mod:`craits.agents.compiled_tactician`) read only
the position, which the row holds; the tactician's and expert's weights are read from their
Python classes when the bot is made.

``expert`` (:mod:`craits.agents.compiled_expert`) also reads public memory: who showed,
by drawing, that it held no card of a suit, no 8 or 9, no ace or two, and how many cards it
drew since (what it reads of :class:`~craits_env.public_tracker.PublicTracker`). The bot keeps
that per row of the one VectorGame it follows, learnt from :meth:`CompiledBot.observe`, which
must be told every step's actions (every seat's) before ``game.step`` applies them; a new
hand, a new game, a ``reset`` or a ``load_game`` starts a row's memory afresh, as a new
tracker does, and a row that moved within its hand without ``observe`` is refused in one line
rather than guessed at. ``forget(game, rows=None)`` follows another game, or clears rows.
The other bots accept ``observe`` and ignore it, so one loop drives any of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from craits_env.actions import (
    CALL_BASE,
    DECLARE,
    DRAW,
    PHASE_CALL_SUIT,
    PHASE_DECLARE,
    PHASE_GAME_OVER,
)
from craits_env.cards import NUM_CARDS, NUM_SUITS
from craits_env.vector import VectorGame, rows
from craits_env.vector.jit import announce_first_use, entry, inner, unowned
from craits_env.vector.layout import HELD1, HELD2, I_CURRENT, I_PHASE

from .compiled_cards import CARDS, POINTS, SUIT_BITS, copies, lowest_bit, points_by_suit
from .compiled_expert import expert_actions, forget_rows, new_memory, observe_steps
from .compiled_tactician import SCRATCH_FLOATS, SCRATCH_INTS, tactician_actions
from .compiled_values import weights
from .heuristics import ExpertAgent, GreedyAgent, TacticianAgent

NO_ACTION = -1
"""The action of a row with no decision (never returned by :meth:`CompiledBot.act`)."""

# GreedyAgent.play: the most points, ties to the highest card index — the first card of this
# order that is legal is the one its loop keeps (``>=`` over ascending ids).
GREEDY_ORDER = np.array(sorted(range(NUM_CARDS), key=lambda c: (-POINTS[c], -c)), np.int64)


@inner
def greedy_call(st: Any, b: int, legal: int) -> int:
    """``GreedyAgent.call``: the legal suit held most, by points on a tie, then the lowest."""
    q = st[b, I_CURRENT]
    one, two = st[b, HELD1 + q], st[b, HELD2 + q]
    best, best_held, best_points = NO_ACTION, -1, -1
    for suit in range(NUM_SUITS):
        if not (legal >> (CALL_BASE + suit)) & 1:
            continue
        held, points = copies(one, two, SUIT_BITS[suit]), points_by_suit(one, two, suit)
        if held > best_held or (held == best_held and points > best_points):
            best, best_held, best_points = CALL_BASE + suit, held, points
    return best


@inner
def greedy_action(st: Any, p: Any, b: int) -> int:
    """``GreedyAgent.act`` for row ``b``'s acting seat (``NO_ACTION`` once it is over): the only
    legal action if there is one (R3.6); DECLARE when asked (R7.1); the suit call of
    :func:`greedy_call` (R3.2, R4); else the legal card with the most points (R8.2, the count's
    aces and twos too, R5.2), the highest index on a tie, DRAW if none (R3.3)."""
    legal = rows.legal_bits(st, p, b)
    if legal == 0:
        return NO_ACTION
    if legal & (legal - 1) == 0:
        return lowest_bit(legal)
    phase = st[b, I_PHASE]
    if phase == PHASE_DECLARE:
        return DECLARE
    if phase == PHASE_CALL_SUIT:
        return greedy_call(st, b, legal)
    cards = legal & CARDS
    for i in range(NUM_CARDS):
        c = GREEDY_ORDER[i]
        if (cards >> c) & 1:
            return c
    return DRAW


@entry
def greedy_actions(st: Any, p: Any, w: Any, which: Any, out: Any, si: Any, sf: Any) -> None:
    """``out[i]`` := :func:`greedy_action` of row ``which[i]`` (no weights, no scratch)."""
    st, p = unowned(st), unowned(p)
    for i in range(which.shape[0]):
        out[i] = greedy_action(st, p, which[i])


_POSITION_KERNELS = {"greedy": greedy_actions, "tactician": tactician_actions}
_PYTHON_TWINS: dict[str, type[GreedyAgent]] = {
    "greedy": GreedyAgent,
    "tactician": TacticianAgent,
    "expert": ExpertAgent,
}
COMPILED_BOTS: tuple[str, ...] = tuple(_PYTHON_TWINS)
"""The bots compiled (their spec names)."""


class CompiledBot:
    """A heuristic bot (a name of :data:`COMPILED_BOTS`) deciding for rows of a VectorGame.

    ``name`` and ``version`` are its Python twin's (``greedy@1``): the same player. See the
    module docstring: :meth:`act` decides, :meth:`observe` is told each step's actions (the
    expert's memory learns from them), :meth:`forget` clears that memory."""

    def __init__(self, name: str) -> None:
        if name not in _PYTHON_TWINS:
            raise ValueError(f"compiled bot: got {name!r}, allowed one of {list(COMPILED_BOTS)}")
        twin = _PYTHON_TWINS[name]
        self.name: str = twin.name
        self.version: int = twin.version
        self._weights = weights(twin) if name != "greedy" else np.zeros(0, np.float64)
        self._remembers = name == "expert"
        self._game: VectorGame | None = None  # the game the memory follows
        self._memory = new_memory(0)
        self._ints = np.zeros(SCRATCH_INTS, np.int64)  # the kernels' scratch space
        self._floats = np.zeros(SCRATCH_FLOATS, np.float64)

    def act(
        self,
        game: VectorGame,
        rows: Sequence[int] | np.ndarray | None = None,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """The bot's action for the acting seat of each row of ``rows`` (default: every row),
        int64; ``out`` (int64, one per row asked) is filled and returned when given."""
        st, p = game.state.st, game.state.params
        which = _rows(rows, game.num_envs)
        over = np.flatnonzero(st[which, I_PHASE] == PHASE_GAME_OVER)
        if over.size:
            raise ValueError(
                f"rows: row {int(which[over[0]])} is over (no decision); allowed rows in play"
            )
        if out is None:
            out = np.empty(which.size, np.int64)
        elif out.shape != (which.size,) or out.dtype != np.int64 or not out.flags.c_contiguous:
            raise ValueError(
                f"out: got {out.dtype} {out.shape}, allowed C-contiguous int64 ({which.size},)"
            )
        if not self._remembers:
            kernel = _POSITION_KERNELS[self.name]
            announce_first_use(kernel)
            kernel(st, p, self._weights, which, out, self._ints, self._floats)
            return out
        memory = self._memory_of(game)
        announce_first_use(expert_actions)
        lost = expert_actions(
            st, p, game.state.deck, self._weights, memory, which, out, self._ints, self._floats
        )
        self._check(lost)
        return out

    def observe(self, game: VectorGame, actions: Sequence[int] | np.ndarray) -> None:
        """Tell the bot every row's action about to be applied by ``game.step(actions)``:
        call it before each step (every seat's actions, the bot's or not). The expert learns
        its public memory from them (it refuses to act on a row that moved otherwise within
        a hand); the other bots read only the position and ignore them."""
        acts = np.asarray(actions)
        if acts.shape != (game.num_envs,) or (acts.size and acts.dtype.kind not in "iu"):
            raise ValueError(
                f"actions: got {acts.dtype} {acts.shape}, allowed ints ({game.num_envs},)"
            )
        if self._remembers:
            memory = self._memory_of(game)
            st, p = game.state.st, game.state.params
            self._check(observe_steps(st, p, memory, np.ascontiguousarray(acts, np.int64)))

    def forget(self, game: VectorGame, rows: Sequence[int] | np.ndarray | None = None) -> None:
        """Follow ``game`` from now on, knowing nothing of the past decisions of ``rows``
        (default: all; the other rows' memory stays when the game is the one followed)."""
        if self._game is not game:
            self._game, self._memory = game, new_memory(game.num_envs)
        forget_rows(game.state.st, self._memory, _rows(rows, game.num_envs))

    def memory(self, game: VectorGame) -> np.ndarray:
        """The public memory kept for ``game``'s rows (the expert's: ``compiled_expert.M_*``;
        what :func:`~craits.agents.compiled_belief.write_beliefs` reads), settled lazily."""
        if not self._remembers:
            raise ValueError(f"{self.name}: this bot keeps no memory (the expert does)")
        return self._memory_of(game)

    def _memory_of(self, game: VectorGame) -> np.ndarray:
        if self._game is None:
            self._game, self._memory = game, new_memory(game.num_envs)
        elif self._game is not game:
            raise ValueError(
                f"{self.name}: this bot remembers another VectorGame's games; use one bot per "
                "VectorGame, or forget(game) to follow this one"
            )
        return self._memory

    def _check(self, lost: int) -> None:
        if lost >= 0:
            raise ValueError(
                f"{self.name}: row {lost} has not advanced by exactly the steps it was told "
                "(call observe(game, actions) once before every step; forget(game, rows) to "
                "start afresh)"
            )

    def __repr__(self) -> str:
        return f"CompiledBot({self.name!r})"


def _rows(rows: Sequence[int] | np.ndarray | None, num_envs: int) -> np.ndarray:
    if rows is None:
        return np.arange(num_envs, dtype=np.int64)
    which = np.asarray(rows)
    if which.ndim != 1 or (which.size and which.dtype.kind not in "iu"):
        raise ValueError(f"rows: allowed a list of row indices from 0 to {num_envs - 1}")
    if which.size and (which.min() < 0 or which.max() >= num_envs):
        raise ValueError(
            f"rows: got {int(which.min())}..{int(which.max())}, allowed 0 to {num_envs - 1}"
        )
    return np.ascontiguousarray(which, np.int64)
