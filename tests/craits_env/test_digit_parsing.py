"""Numbers typed as text are ASCII digits: ``str.isdigit`` is true for ``"²"`` (which
``int`` refuses), ``"٣"`` and ``"１２"`` (which ``int`` reads as 3 and 12). Each reader —
an action id (:func:`craits_env.actions.parse_action`), a card's number in ``craits play``
(:func:`craits.play.parse_move`), a Ray cluster's port — refuses them, a string with a NUL,
and a 5000-digit number, in one line that says what is allowed."""

from __future__ import annotations

import pytest

from craits.localray import parse_address
from craits.play import MoveError, parse_move
from craits_env.actions import parse_action

from ..craits.test_play import two_player_game

HUGE = "7" * 5000
"""More digits than ``int`` reads from text (4300 by default)."""


def _one_line(error: BaseException) -> str:
    message = str(error)
    assert "\n" not in message and len(message) < 200, message
    return message


@pytest.mark.parametrize(
    "text, message",
    [
        ("²", "invalid action '²': an action id is written in digits 0-9, 0 to 58"),
        ("٣", "invalid action '٣': an action id is written in digits 0-9, 0 to 58"),
        ("１２", "invalid action '１２': an action id is written in digits 0-9, 0 to 58"),
        (
            "1\x00",
            "invalid action '1\\x00': expected a card such as '7c', 'draw', a suit "
            "(c, d, h, s), 'declare', 'silent' or an id 0-58",
        ),
        (HUGE, "invalid action id of 5000 digits: expected 0 to 58"),
        ("1234567890", "invalid action id of 10 digits: expected 0 to 58"),
        ("123456789", "invalid action id 123456789: expected 0 to 58"),
    ],
)
def test_an_action_id_is_ascii_digits(text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_action(text)
    assert _one_line(info.value) == message


def test_ascii_action_ids_still_parse() -> None:
    assert [parse_action(t) for t in ("0", "3", " 52 ", "058")] == [0, 3, 52, 58]


@pytest.mark.parametrize(
    "text, message",
    [
        ("²", "'²' is not a card number: write it in digits 0-9 (your cards are numbered 1 to 4)"),
        ("٣", "'٣' is not a card number: write it in digits 0-9 (your cards are numbered 1 to 4)"),
        (
            "１２",
            "'１２' is not a card number: write it in digits 0-9 (your cards are numbered 1 to 4)",
        ),
        (
            "1\x00",
            "'1\\x00' is not a move: type a card (7c) or its number, draw, help or quit; "
            "legal now: 9♦ (2), K♥ (3)",
        ),
        (HUGE, "no card number of 5000 digits: your cards are numbered 1 to 4"),
        ("0003", "no card number of 4 digits: your cards are numbered 1 to 4"),
        (
            "٣" * 5000,
            "'٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣٣ is not a card number: write it "
            "in digits 0-9 (your cards are numbered 1 to 4)",
        ),
    ],
)
def test_a_card_number_is_ascii_digits_and_the_game_is_unchanged(text: str, message: str) -> None:
    g = two_player_game()  # 7♣ 9♦ K♥ 5♠ on Q♥: 9♦ (2) and K♥ (3) are legal
    before = g.snapshot()
    with pytest.raises(MoveError) as info:
        parse_move(text, g, 0)
    assert _one_line(info.value) == message
    assert g.snapshot() == before
    assert parse_move("3", g, 0) == parse_move("03", g, 0) == 38  # K♥


@pytest.mark.parametrize(
    "address, message",
    [
        ("127.0.0.1:²", "the port is a number 1 to 65535 in digits 0-9"),
        ("ray://127.0.0.1:٣", "the port is a number 1 to 65535 in digits 0-9"),
        ("127.0.0.1:１２", "the port is a number 1 to 65535 in digits 0-9"),
        ("127.0.0.1:99999", "the port is a number 1 to 65535 in digits 0-9"),
        ("127.0.0.1:0", "the port is a number 1 to 65535 in digits 0-9"),
        ("127.0.0.1:" + HUGE, "the port is a number 1 to 65535 in digits 0-9"),
        ("127.0.0.1:1\x00", "expected auto, HOST:PORT or ray://HOST:PORT"),
    ],
)
def test_a_ray_port_is_ascii_digits_checked_before_connecting(address: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_address(address)
    said = _one_line(info.value)
    assert said.startswith(f"Ray address {address!r:.80}: ") and said.endswith(message)
