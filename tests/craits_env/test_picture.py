"""The table picture (``render_mode="rgb_array"``): its size, its determinism, what it shows
and, above all, what it does not: an opponent's hidden cards."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import cast

import numpy as np
import pytest

from craits_env import Game, Rules
from craits_env.render_rgb import (
    FELT_DARK,
    GOLD,
    INK,
    RED,
    WIDTH,
    picture_shape,
    table_picture,
    text_mask,
    text_width,
)
from craits_env.testing.scenario import stacked_game

from ..scripting import act


def played(num_players: int, seed: int, moves: int) -> Game:
    """A seeded game after ``moves`` decisions, each the first legal action."""
    g = Game(num_players, seed=seed)
    for _ in range(moves):
        if g.is_over:
            break
        g.apply(g.legal_actions()[0])
    return g


def shows_text(picture: np.ndarray, x: int, y: int, text: str, color: tuple[int, int, int]) -> bool:
    """``text`` is drawn in ``color`` with its top-left corner at ``x, y``."""
    mask = text_mask(text)
    region = picture[y : y + mask.shape[0], x : x + mask.shape[1]]
    return bool((region[mask] == color).all())


@pytest.mark.parametrize(("n", "height"), [(2, 360), (4, 360), (7, 448), (10, 448)])
def test_shape_and_dtype(n: int, height: int) -> None:
    g = played(n, seed=n, moves=20)
    assert picture_shape(n) == (height, WIDTH, 3)
    for seat in range(n):
        picture = table_picture(g, seat)
        assert picture.shape == (height, WIDTH, 3)
        assert picture.dtype == np.uint8
        assert picture.flags.writeable  # the caller's own array, not a cached one


def test_deterministic_and_leaves_the_game_alone() -> None:
    g = played(4, seed=3, moves=30)
    before = g.snapshot()
    first = table_picture(g, 2, ["ann", "bo", "cy", "di"])
    first[:] = 0  # scribbling on one picture does not reach the next
    again = table_picture(g, 2, ["ann", "bo", "cy", "di"])
    assert np.array_equal(again, table_picture(g.clone(), 2, ["ann", "bo", "cy", "di"]))
    assert not np.array_equal(again, table_picture(g, 2))  # the names are drawn
    assert g.snapshot() == before


def test_own_hand_is_shown() -> None:
    a = stacked_game([["7c", "Kd", "3s"], ["7d", "2s", "9h"]], starter="3h")
    b = stacked_game([["7c", "Kd", "4s"], ["7d", "2s", "9h"]], starter="3h")
    assert not np.array_equal(table_picture(a, 0), table_picture(b, 0))


def test_hidden_cards_are_not_shown() -> None:
    """Two games differing only in seat 1's cards (and so in the hidden stock): seats 0 and
    2 see the same picture, seat 1 does not."""
    hands = [["7c", "Kd", "3s"], ["Jh", "2s", "Kc"], ["Jc", "Qc", "5s"]]
    other = [hands[0], ["Jh", "Td", "Ac"], hands[2]]
    a = stacked_game(hands, starter="3h")
    b = stacked_game(other, starter="3h")
    assert a.stock_size == b.stock_size and a.stock != b.stock
    for seat in (0, 2):
        assert np.array_equal(table_picture(a, seat), table_picture(b, seat))
    assert not np.array_equal(table_picture(a, 1), table_picture(b, 1))
    act(a, "Jh")  # after the same public move, still the same for the others
    act(b, "Jh")
    assert np.array_equal(table_picture(a, 0), table_picture(b, 0))


def is_red(picture: np.ndarray) -> np.ndarray:
    return np.all(picture == RED, axis=2)


def test_red_suits_are_red() -> None:
    black = stacked_game([["7c", "Kc", "3s"], ["7h", "2d", "9h"]], starter="Js")
    red = stacked_game([["7h", "Kd", "3s"], ["7c", "2c", "9s"]], starter="Js")
    assert not is_red(table_picture(black, 0)).any()  # seat 1's hearts stay hidden
    height = picture_shape(2)[0]
    assert is_red(table_picture(red, 0))[height // 2 :].sum() > 100  # in the hand, below


def test_game_over_shows_the_last_hand() -> None:
    g = Game(2, Rules(hand_sizes=(2, 1)), seed=4)
    last = None
    while not g.is_over:
        last = table_picture(g, 0)
        g.apply(g.legal_actions()[0])
    assert g.hand_index == 2  # one past the last hand: the picture must not say 3/2
    over = table_picture(g, 0)
    assert last is not None and not np.array_equal(over, last)
    header = "HAND 2/2 (1 CARD)"
    assert shows_text(over, 8, 5, header, INK)
    assert not shows_text(over, 8, 5, "HAND 3/2 (1 CARD)", INK)
    assert shows_text(over, WIDTH - 8 - text_width("GAME OVER"), 5, "GAME OVER", GOLD)
    mask = text_mask(header)  # nothing but the text in that corner of the header
    corner = over[5 : 5 + mask.shape[0], 8 : 8 + mask.shape[1]]
    assert (corner[~mask] == FELT_DARK).all()


def test_large_hands() -> None:
    """Two decks, two hands of 30 and of 50 cards: two rows, overlapping; and a hand too big
    for the two rows ends in a "+N" card back."""
    deck = [c for c in range(52) for _ in range(2)]
    for k in (16, 30, 50):
        g = stacked_game([deck[1::2][:k], deck[::2][-k:]], starter="Qs", num_decks=2)
        picture = table_picture(g, 0)
        assert picture.shape == picture_shape(2)
        assert is_red(picture).any()
    g = stacked_game([deck[1::2][:50], deck[::2][-50:]], starter="Qs", num_decks=2)
    slots = [name for cls in Game.__mro__ for name in getattr(cls, "__slots__", ())]
    public = [name for name in slots if name[0] != "_"]
    public += ["top", "is_over", "hand_size", "stock_size", "winners"]
    huge = SimpleNamespace(**{name: getattr(g, name) for name in public})  # a table no deal makes
    huge.hands = [sorted(deck[:100]), g.hands[1]]
    picture = table_picture(cast(Game, huge), 0)
    assert picture.shape == picture_shape(2)


def test_bad_arguments() -> None:
    g = Game(3, seed=0)
    for seat in (-1, 3, True, 1.0):
        with pytest.raises(ValueError, match="seat"):
            table_picture(g, seat)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="names"):
        table_picture(g, 0, ["a", "b"])
    with pytest.raises(ValueError, match="num_players"):
        picture_shape(11)


@pytest.mark.slow
def test_speed(capsys: pytest.CaptureFixture[str]) -> None:
    """Measured, not asserted: one picture should take well under 10 ms."""
    timings = {}
    for n in (2, 4, 10):
        g = played(n, seed=1, moves=40)
        table_picture(g, 0)  # the bitmaps are cached on first use
        repeats = 50
        start = time.perf_counter()
        for i in range(repeats):
            table_picture(g, i % n)
        timings[n] = (time.perf_counter() - start) / repeats * 1e3
    with capsys.disabled():
        print(
            "\ntable_picture: " + ", ".join(f"{n} players {ms:.2f} ms" for n, ms in timings.items())
        )
