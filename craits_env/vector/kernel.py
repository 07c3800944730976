"""The compiled rules' entry points: B games stepped, reset and masked in one numba call each.

The rules of :mod:`craits_env.engine` over the flat state arrays ``st`` and ``cd``
(:mod:`craits_env.vector.layout`) live in one module per idea, each function the
namesake of a method of :class:`~craits_env.engine.Game` (``Game._draw`` is
:func:`.piles.draw` …, ``tests/craits_env/test_vector_namesakes.py`` checks that none is missing),
statement for statement and in the same order, so that every field — stale ones at the
end of a hand included — ends up as the Python engine leaves it:

- :mod:`.piles`: cards moving between hands, stock and discard pile (draws, reshuffles);
- :mod:`.hand_scoring`: a hand's points (R8) and its end;
- :mod:`.turns`: the cards' functions and the turn order;
- :mod:`.decisions`: the legal actions and ``Game.apply``;
- :mod:`.deal`: deals and new games;
- :mod:`.step_rewards`: a step's rewards on the exact scores.

Where the engine raises ``_HandOver`` those functions return ``True`` and their callers
return at once. The entry points here (:func:`step`, :func:`reset`, :func:`legal_mask` …)
loop over the games inside one compiled call; the differential test
(``tests/craits_env/test_vector_differential.py``) holds them to the Python engine.

Scores are exact (``layout`` explains the representation): nothing here can overflow.
A step that finishes a hand whose points need more than 53 bits (a seat with more than
:data:`~.step_rewards.EXACT_PRESSURES` shuffle pressures) leaves that step's rewards to
Python (``st[b, I_FIX] = FIX_REWARDS``), which computes them on exact integers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..actions import PHASE_GAME_OVER
from .deal import auto_reset_game, draw_first_dealer, new_game
from .decisions import apply, is_legal, write_mask
from .encode import write_observation
from .jit import entry, unowned
from .layout import (
    FIX_REWARDS,
    I_CURRENT,
    I_FIX,
    I_HAND_INDEX,
    I_PHASE,
    I_STEP_HAND,
    P_AUTO_RESET,
    P_PLAYERS,
    P_REWARD_MODE,
    REWARD_WIN,
)
from .rng import shuffle_in_place
from .step_rewards import add_hand_rewards, add_win_rewards


@entry
def step(
    st: Any,
    cd: Any,
    p: Any,
    sizes: Any,
    deck: Any,
    actions: Any,
    rewards: Any,
    done: Any,
    o: Any,
    scaled: Any,
    obs: Any,
    mask: Any,
) -> tuple[int, int]:
    """Apply ``actions[b]`` to every game b; ``(illegal, fixes)``: -1 or the first game whose
    action is illegal (then nothing has changed), and how many games set ``I_FIX`` (their
    rewards and auto-reset are left to Python). Writes ``rewards`` (B, n) float32 — the
    step's hand rewards, then the game's (as ``craits_v0`` adds them) — and ``done``; and,
    unless they have no rows, each game's next observation into ``obs`` (offsets ``o``) and
    legal mask into ``mask``, while its state is still in the cache (games left to Python
    are written by Python after it resets them). A game over before the step (held, without
    auto-reset) is skipped: its action is ignored, its rewards are 0 and ``done`` True."""
    st, cd, p, sizes, deck = unowned(st), unowned(cd), unowned(p), unowned(sizes), unowned(deck)
    o, scaled = unowned(o), unowned(scaled)
    write_obs, write_masks = obs.shape[0] > 0, mask.shape[0] > 0
    if write_obs:
        obs = unowned(obs)
    if write_masks:
        mask = unowned(mask)
    num = actions.shape[0]
    for b in range(num):
        if st[b, I_PHASE] != PHASE_GAME_OVER and not is_legal(st, p, b, actions[b]):
            return b, 0
    n = p[P_PLAYERS]
    auto = p[P_AUTO_RESET] != 0
    win = p[P_REWARD_MODE] == REWARD_WIN
    acc = np.zeros(n, np.float64)
    fixes = 0
    for b in range(num):
        st[b, I_FIX] = 0
        first = st[b, I_HAND_INDEX]
        st[b, I_STEP_HAND] = first
        held = st[b, I_PHASE] == PHASE_GAME_OVER  # over before this step (no auto-reset)
        if not held:
            apply(st, cd, p, sizes, deck, b, actions[b])
        over = st[b, I_PHASE] == PHASE_GAME_OVER
        if held:
            for q in range(n):
                rewards[b, q] = 0.0
        elif st[b, I_HAND_INDEX] > first or over:
            for q in range(n):
                acc[q] = 0.0
            exact = True
            if not win:
                for h in range(first, st[b, I_HAND_INDEX]):
                    exact = exact and add_hand_rewards(st, p, b, h, acc)
            if over and win:
                add_win_rewards(st, p, b, acc)
            if not exact and st[b, I_FIX] == 0:
                st[b, I_FIX] = FIX_REWARDS
            for q in range(n):
                rewards[b, q] = acc[q]
        else:
            for q in range(n):
                rewards[b, q] = 0.0
        done[b] = over
        if st[b, I_FIX] != 0:
            fixes += 1
            continue
        if over and auto:
            auto_reset_game(st, cd, p, sizes, deck, b)
        if write_obs:
            write_observation(st, p, sizes, o, scaled, b, max(st[b, I_CURRENT], 0), obs)
        if write_masks:
            write_mask(st, p, b, mask[b])
    return -1, fixes


@entry
def reset(
    st: Any, cd: Any, p: Any, sizes: Any, deck: Any, games: Any, dealers: Any, top: Any
) -> None:
    """New games in the rows ``games`` (first dealers ``dealers``, -1 = drawn); ``top``
    (the first hand's ``deck_top``) applies to each of them. With auto-reset a game that
    ends before its first decision is followed by another."""
    st, cd, p, sizes, deck = unowned(st), unowned(cd), unowned(p), unowned(sizes), unowned(deck)
    cards = unowned(top)[: top.shape[0]]  # a slice, as the steps' deck[:0]: one compilation
    for i in range(games.shape[0]):
        b = games[i]
        st[b, I_FIX] = 0
        new_game(st, cd, p, sizes, deck, b, dealers[i], cards)
        if st[b, I_PHASE] == PHASE_GAME_OVER and p[P_AUTO_RESET] != 0:
            auto_reset_game(st, cd, p, sizes, deck, b)


@entry
def auto_reset(st: Any, cd: Any, p: Any, sizes: Any, deck: Any, games: Any) -> None:
    """:func:`auto_reset_game` of the rows ``games`` (after Python computed their rewards)."""
    st, cd, p, sizes, deck = unowned(st), unowned(cd), unowned(p), unowned(sizes), unowned(deck)
    for i in range(games.shape[0]):
        auto_reset_game(st, cd, p, sizes, deck, games[i])


@entry
def legal_mask(st: Any, p: Any, out: Any) -> None:
    """``out`` (B, 59) int8 := every game's legal mask."""
    st, p, out = unowned(st), unowned(p), unowned(out)
    for b in range(out.shape[0]):
        write_mask(st, p, b, out[b])


@entry
def mask_row(st: Any, p: Any, b: int, row: Any) -> None:
    """:func:`write_mask` of one game, for Python callers."""
    write_mask(st, p, b, row)


@entry
def first_dealer(st: Any, p: Any, deck: Any, b: int) -> int:
    """Draw a first dealer from row ``b``'s generator (tests: against ``draw_first_dealer``)."""
    return draw_first_dealer(st, p, deck, b)


@entry
def permutation(st: Any, b: int, length: int) -> Any:
    """``Generator.permutation(length)`` from row ``b``'s generator (tests: against numpy)."""
    out = np.zeros((1, length), np.int64)
    for i in range(length):
        out[0, i] = i
    shuffle_in_place(st, b, out, np.int64(0), np.int64(0), length)
    return out[0]
