"""One dialect for scripted games: deal chosen cards, play named moves, check exact outcomes.

A scripted test deals with :func:`craits_env.testing.scenario.stacked_game` (the hands by
seat, the starter, the first cards of the stock; the rest of the deck follows in
index order Ac, 2c, …, Kc, Ad, …), plays moves by name with :func:`act` and
checks whose turn it is, in which phase, with which legal actions, and what each
seat holds:

>>> from craits_env.testing.scenario import stacked_game
>>> g = stacked_game([["Kc", "Qd", "3s"], ["Ac", "2s", "9h"]], starter="2h",
...                  stock=["5d", "6d", "7d", "8d"])
>>> state(g) == (1, "count", legal("Ac", "2s"))  # the starter 2 opens the count (R2.5)
True
>>> act(g, "2s", "draw")  # seat 1 raises it to 4; seat 0 holds no ace or two and takes it
>>> assert_hands(g, [["Kc", "Qd", "3s", "5d", "6d", "7d", "8d"], ["Ac", "9h"]])
>>> state(g) == (1, "play", legal("9h"))
True

A move is what :func:`craits_env.parse_action` reads: a card (``"7c"``), ``"draw"``
(also taking the count), ``"call h"``, ``"declare"``, ``"silent"``, or an action id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from craits_env import Game, parse_action, parse_card

RANKS = "A23456789TJQK"
SUITS = "cdhs"
ALL_CARDS = [r + s for s in SUITS for r in RANKS]  # index order (R1.3)


def act(g: Game, *moves: str | int) -> None:
    """Apply ``moves`` in order, each by name (``"7c"``, ``"draw"``, ``"call h"`` …)."""
    for move in moves:
        g.apply(parse_action(move))


def legal(*moves: str | int) -> tuple[int, ...]:
    """The exact legal-action tuple offering ``moves``: their ids ascending, as
    ``Game.legal_actions()`` gives them (so ``"draw"`` comes after the cards)."""
    return tuple(sorted(parse_action(m) for m in moves))


def calls(suits: str) -> tuple[int, ...]:
    """The legal actions of a suit call offering the suit letters ``suits``: ``calls("dh")``."""
    return legal(*(f"call {s}" for s in suits))


ALL_CALLS = calls(SUITS)  # after an 8 (R4)


def turn(g: Game) -> tuple[int | None, str]:
    """``(current_player, phase)``: who decides now, and what (``None`` once the game is over)."""
    s = g.snapshot()
    return s["current_player"], s["phase"]


def state(g: Game) -> tuple[int | None, str, tuple[int, ...]]:
    """``(current_player, phase, legal actions)`` in one comparable tuple."""
    player, phase = turn(g)
    return player, phase, g.legal_actions()


def assert_hands(g: Game, expected: Sequence[Sequence[str]] | Mapping[int, Sequence[str]]) -> None:
    """Each seat holds exactly ``expected[seat]``, compared as multisets (in any order).

    A list names every seat's hand; a dict ``{seat: cards}`` only the seats it lists.
    """
    hands = g.snapshot()["hands"]
    if isinstance(expected, Mapping):
        seats = list(expected)
    else:
        assert len(expected) == len(hands), f"{len(expected)} hands expected, {len(hands)} seats"
        seats = list(range(len(hands)))
    got = {s: sorted(hands[s], key=parse_card) for s in seats}
    want = {s: sorted(expected[s], key=parse_card) for s in seats}
    assert got == want


def sizes(g: Game) -> list[int]:
    """How many cards each seat holds."""
    return [len(h) for h in g.snapshot()["hands"]]


def points(g: Game) -> list[int]:
    """The points of the first hand (in a one-hand game, the only one); the game must be over."""
    s = g.snapshot()
    assert s["phase"] == "game_over", f"the game is not over: phase {s['phase']}"
    return s["hand_points"][0]


def rest_of_deck(listed: Sequence[str], num_decks: int = 1, remove_kq: bool = False) -> list[str]:
    """The deck in index order without one copy of each listed card (what follows them)."""
    deck = [c for c in ALL_CARDS if not (remove_kq and c[0] in "KQ")] * num_decks
    deck.sort(key=parse_card)
    for c in listed:
        deck.remove(c)
    return deck
