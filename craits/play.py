"""``craits play``: a person plays Craits in the terminal against bots.

The human's seat (``seat``, default 0) reads moves from a text stream — a terminal or
a pipe — and everything is written as plain lines (colours only on a terminal), so a
game can be scripted and tested. Before each decision the table is shown: the hand
dealt, the top card, the active suit, the count, the direction, each player's cards
and score, and the moves allowed now. Every other seat is an agent spec
(:func:`craits.agents.specs.make_agent`), seeded from ``seed``: the table is
:class:`craits.table.HumanTable`, the one ``craits serve`` seats too.

Moves, typed at the prompt (case does not matter):

- a card: ``7c``, ``7♣``, ``10h``, or its number in the numbered hand;
- ``draw`` (or ``d``): draw a card, or take the count;
- in a suit call: ``c`` ``d`` ``h`` ``s``, ``clubs`` … or ``♥``;
- in the one-card declaration (R7.1): ``declare`` (or ``one``) / ``silent``;
- ``help``; ``quit`` (or ``exit``).

An invalid move gets a one-line message saying what is allowed, and the prompt again;
it never changes the game. A decision with a single legal move (a draw with no
playable card) is made for the human, saying so.

``interactive`` (default: both the input and the output are terminals) is a person at
a terminal: after each hand's results the game waits for Enter before the next deal
(``quit`` there quits; the end of input there ends the game as anywhere else).
Otherwise (piped input) it never waits, and it gives up after
:data:`MAX_INVALID_IN_A_ROW` invalid moves in a row, saying so on standard error, so
that a script feeding nonsense cannot loop forever; a valid move resets the count.

Exit status of :func:`play_game`: 0 when the game is finished or the human quits,
1 when the input ends (EOF) before the game does or a bot fails, 2 when piped input
gave up with too many invalid moves. With ``record`` the game (finished or not) is
appended to a record file (:mod:`craits_env.records`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TextIO

from craits.agents.arena import IllegalAction
from craits_env.actions import (
    CALL_BASE,
    DECLARE,
    DRAW,
    NUM_CARDS,
    PHASE_CALL_SUIT,
    PHASE_COUNT,
    PHASE_DECLARE,
    STAY_SILENT,
)
from craits_env.cards import RANK_CHARS, RANK_OF, SUIT_CHARS, SUIT_SYMBOLS, parse_card
from craits_env.engine import Game
from craits_env.records import append_record
from craits_env.rules import Rules
from craits_env.seeding import fresh_seed

from .narrate import SUIT_NAMES, CardText, noun, plural
from .table import HumanTable
from .terminal import Terminal

HELP = "help"
QUIT = "quit"
MAX_INVALID_IN_A_ROW = 100
"""Piped input: invalid moves in a row after which the game stops (exit status 2)."""
MAX_CARD_NUMBER_DIGITS = 3
"""A card's number in the hand has at most this many digits (two decks hold 104 cards)."""
NEXT_HAND_PROMPT = "Press Enter for the next hand (or type quit) "
_TOO_MANY_INVALID = "too many invalid moves"  # why the game stops, besides QUIT, None (EOF)
_GO_ON = "go on"  # the game goes on
_DRAW_WORDS = ("draw", "d", "take", "pass")
_DECLARE_WORDS = ("declare", "one", "one card", "y", "yes")
_SILENT_WORDS = ("silent", "stay silent", "n", "no", "s")
_card = CardText().card


class MoveError(ValueError):
    """An input that is not a legal move now; the message says what is allowed."""


# ----------------------------------------------------------------------------- input


def parse_move(text: str, game: Game, seat: int) -> int | str:
    """The action id for ``text`` typed by ``seat``, or :data:`HELP` / :data:`QUIT`.

    Raises :class:`MoveError` with a one-line message for anything not legal now.
    """
    s = " ".join(text.strip().lower().split())
    for symbol, letter in zip(SUIT_SYMBOLS, SUIT_CHARS, strict=True):
        s = s.replace(symbol, letter)
    if s in ("help", "?"):
        return HELP
    if s in ("quit", "exit"):
        return QUIT
    if game.current_player != seat or game.is_over:
        raise MoveError("it is not your turn")
    legal = game.legal_actions()
    phase = game.phase
    if not s:
        raise MoveError(_allowed(game, seat))
    if phase == PHASE_CALL_SUIT:
        return _parse_call(s, legal)
    if phase == PHASE_DECLARE:
        if s in _DECLARE_WORDS:
            return DECLARE
        if s in _SILENT_WORDS:
            return STAY_SILENT
        raise MoveError(f"{text.strip()!r}: {_allowed(game, seat)}")
    return _parse_play(s, text.strip(), game, seat, legal)


def _parse_call(s: str, legal: tuple[int, ...]) -> int:
    s = s.removeprefix("call ").strip()
    names = {n: i for i, n in enumerate(SUIT_NAMES)} | {n[:-1]: i for i, n in enumerate(SUIT_NAMES)}
    suit = SUIT_CHARS.index(s) if len(s) == 1 and s in SUIT_CHARS else names.get(s)
    options = [f"{SUIT_CHARS[a - CALL_BASE]} ({SUIT_NAMES[a - CALL_BASE]})" for a in legal]
    allowed = ", ".join(options[:-1]) + " or " + options[-1]
    if suit is None:
        raise MoveError(f"{s!r} is not a suit: call {allowed}")
    if CALL_BASE + suit not in legal:
        raise MoveError(f"a 9 keeps its suit or takes the other of its colour: call {allowed}")
    return CALL_BASE + suit


def _parse_play(s: str, raw: str, game: Game, seat: int, legal: tuple[int, ...]) -> int:
    hand = game.hands[seat]
    if s in _DRAW_WORDS:
        if DRAW in legal:
            return DRAW
        playable = ", ".join(_card(c) for c in legal if c < NUM_CARDS)
        raise MoveError(f"you cannot draw: you hold a playable card ({playable}) and must play")
    if s.isdigit():
        card = hand[_card_number(s, raw, len(hand)) - 1]
    else:
        try:
            card = parse_card(s)
        except ValueError:
            raise MoveError(f"{raw!r} is not a move: {_allowed(game, seat)}") from None
        if card not in hand:
            raise MoveError(f"you do not hold {_card(card)}: {_allowed(game, seat)}")
    if card in legal:
        return card
    if game.phase == PHASE_COUNT:
        why = (
            f"the count is on ({game.count}): only an ace or a two, or draw "
            f"{plural(game.count, 'card')}"
        )
    else:
        top = game.discard[-1]
        why = (
            f"on {_card(top)} play a card of suit {SUIT_SYMBOLS[game.active_suit]} or rank "
            f"{RANK_CHARS[RANK_OF[top]]}, or an 8 or a 9"
        )
    raise MoveError(f"{_card(card)} cannot be played now: {why}")


def _card_number(s: str, raw: str, cards: int) -> int:
    """The number ``s`` of a card in a hand of ``cards`` cards, from 1: ASCII digits only
    (``"٣".isdigit()`` is true and ``int("٣")`` is 3; ``int("²")`` fails)."""
    numbered = f"your cards are numbered 1 to {cards}"
    if not s.isascii():
        raise MoveError(f"{raw!r:.40} is not a card number: write it in digits 0-9 ({numbered})")
    if len(s) > MAX_CARD_NUMBER_DIGITS:
        raise MoveError(f"no card number of {len(s)} digits: {numbered}")
    k = int(s)
    if not 1 <= k <= cards:
        raise MoveError(f"no card number {k}: {numbered}")
    return k


def _allowed(game: Game, seat: int) -> str:
    legal = game.legal_actions()
    if game.phase == PHASE_CALL_SUIT:
        return "call a suit: " + ", ".join(SUIT_CHARS[a - CALL_BASE] for a in legal)
    if game.phase == PHASE_DECLARE:
        return 'you hold one card: type declare (or one) to declare "one card", or silent'
    hand = game.hands[seat]
    moves = [f"{_card(c)} ({hand.index(c) + 1})" for c in legal if c < NUM_CARDS]
    if DRAW in legal:
        moves.append("draw")
    return "type a card (7c) or its number, draw, help or quit; legal now: " + ", ".join(moves)


HELP_TEXT = (
    "Moves: a card (7c, 7♣, 10h) or its number in your hand; draw (d) to draw or take the "
    "count; in a suit call c d h s or clubs diamonds hearts spades; when you play down to "
    'one card: declare (one) to say "one card", or silent; quit to stop. Match the active '
    "suit or the top card's rank; 8s and 9s are wild. Rules: docs/rules.md."
)


# ----------------------------------------------------------------------------- the table


def table_lines(game: Game, seat: int, labels: Sequence[str], text: CardText) -> list[str]:
    """What the human sees before a decision: the table, the numbered hand, the moves."""
    n = game.num_players
    sizes = game.rules.hand_sizes
    lines = [
        "",
        f"── hand {game.hand_index + 1}/{len(sizes)} · {plural(game.hand_size, 'card')} dealt "
        f"to each · dealer {labels[game.dealer]} · stock {game.stock_size} ──",
        f"top {text.card(game.discard[-1])}   active suit {text.suit(game.active_suit)}   "
        + ("direction → left" if game.direction == 1 else "direction ← right")
        + (f"   COUNT {game.count}" if game.count else ""),
    ]
    width = max(len(x) for x in labels)
    for s in range(n):
        notes = []
        if s in game.went_out:
            notes.append("out")
        if game.one_card_penalty_pending[s]:
            notes.append("owes the one-card penalty")
        if game.shuffle_pressures[s]:
            notes.append(plural(game.shuffle_pressures[s], "shuffle pressure"))
        mark = "▶" if s == game.current_player else " "
        cards, score = len(game.hands[s]), game.scores[s]
        lines.append(
            f" {mark} {labels[s]:<{width}}  {cards:>3} {noun(cards, 'card'):<5}  score {score:>5}"
            + (f"  ({', '.join(notes)})" if notes else "")
        )
    hand = game.hands[seat]
    lines.append("your hand: " + "  ".join(f"{i}:{text.card(c)}" for i, c in enumerate(hand, 1)))
    legal = game.legal_actions()
    phase = game.phase
    if phase == PHASE_CALL_SUIT:
        moves = ", ".join(
            f"{SUIT_CHARS[a - CALL_BASE]} ({text.suit(a - CALL_BASE)})" for a in legal
        )
        lines.append(f"call a suit for your {text.card(game.discard[-1])}: {moves}")
    elif phase == PHASE_DECLARE:
        lines.append('you hold one card: declare "one card" (declare) or stay silent (silent)')
    else:
        moves_list = [f"{text.card(c)} ({hand.index(c) + 1})" for c in legal if c < NUM_CARDS]
        if DRAW in legal:
            moves_list.append(
                f"draw {plural(game.count, 'card')}" if phase == PHASE_COUNT else "draw"
            )
        what = (
            "the count: play an ace or a two, or take it" if phase == PHASE_COUNT else "your turn"
        )
        if game.extra_play and game.king_left:
            what = f"king's sequence: {plural(game.king_left, 'more card')}"
        elif game.extra_play and phase != PHASE_COUNT:
            what = "you play again"
        lines.append(f"{what} — legal: " + ", ".join(moves_list))
    return lines


# ----------------------------------------------------------------------------- the game


class _Stopped(Exception):
    """The human stopped at a pause between hands while the bots were moving."""

    def __init__(self, why: str | None) -> None:
        super().__init__(why)
        self.why = why


class PlaySession:
    """One game of a human against bots (see the module docstring)."""

    def __init__(
        self,
        opponents: Sequence[str],
        terminal: Terminal,
        *,
        seat: int = 0,
        seed: int | None = None,
        rules: Rules | None = None,
        record: str | os.PathLike[str] | None = None,
        interactive: bool | None = None,
        errors: TextIO | None = None,
    ) -> None:
        self.seed_chosen = seed is not None
        self.seed = fresh_seed() if seed is None else seed  # shown once the game ends
        self.term = terminal
        self.interactive = terminal.interactive if interactive is None else interactive
        self._errors = errors
        self.invalid_in_a_row = 0
        self.text = CardText()
        self.record_path = record
        self.table = HumanTable(
            opponents, seat=seat, seed=self.seed, rules=rules, source="craits play", text=self.text
        )
        self.table.on_told = self._told
        self.seat = seat
        self.seats = self.table.seats
        self.game = self.table.game
        self.labels = self.table.labels
        self.narrator = self.table.narrator

    def _told(self, hand: int, parts: list[list[str]]) -> None:
        """Say a decision's lines (the table calls it); a stop at a pause ends the game."""
        told = self._tell(parts)
        if told != _GO_ON:
            raise _Stopped(told)

    def run(self) -> int:
        """Play to the end; the exit status (see the module docstring)."""
        term, game = self.term, self.game
        rules = game.rules
        seed = f"seed {self.seed}" if self.seed_chosen else "a fresh seed (shown at the end)"
        term.say(
            f"Craits — {game.num_players} players, {plural(len(rules.hand_sizes), 'hand')}, "
            f"{seed}; "
            f"you are player_{self.seat}. Lowest total wins. Type help for moves.",
            style="bold",
        )
        term.say(*(f"  {label}" for label in self.labels))
        status = 1
        try:
            told = self._tell(self.table.start())
            status = self._loop() if told == _GO_ON else self._stop(told)
        finally:
            if not self.seed_chosen:
                term.say(f"The seed was {self.seed} (--seed {self.seed} deals this game again).")
            self._save()
        return status

    def _loop(self) -> int:
        term, game = self.term, self.game
        bots = self.table.bots()
        while not game.is_over:
            p = game.current_player
            if p != self.seat:
                try:
                    bots.run()  # the bots move until the human's turn (the arena)
                except _Stopped as stop:
                    return self._stop(stop.why)
                except IllegalAction as e:  # the engine refused it: nothing changed
                    p = e.seat
                    term.say(
                        f"error: bot {self.seats[p]} (player_{p}) failed: illegal action "
                        f"{e.action} {e.position}"
                    )
                    return 1
                except Exception as e:  # a faulty bot ends the game, not the program
                    term.say(f"error: bot {self.seats[p]} (player_{p}) failed: {e}")
                    return 1
                continue
            forced = game.forced_action()
            if forced is not None:
                only = "draw" if forced == DRAW else self.text.card(forced)
                term.say(f"(your only legal move: {only})")
                choice: int | str | None = forced
            else:
                term.say(*table_lines(game, self.seat, self.labels, self.text))
                choice = self._ask()
            if choice is None or isinstance(choice, str):
                return self._stop(choice)
            try:
                self.table.decide(choice)
            except _Stopped as stop:
                return self._stop(stop.why)
        term.say("", *self.narrator.standings(game, self.labels))
        return 0

    def _stop(self, why: str | None) -> int:
        """End the game unfinished: at the end of input (``None``), on :data:`QUIT`, or
        after too many invalid moves; the exit status."""
        term, game = self.term, self.game
        hand = game.hand_index + 1
        if why == _TOO_MANY_INVALID:
            print(
                f"craits play: stopped after {MAX_INVALID_IN_A_ROW} invalid moves in a row "
                f"(hand {hand})",
                file=self._errors or sys.stderr,
                flush=True,
            )
            return 2
        if why == QUIT:
            term.say(f"You quit in hand {hand}: the game is abandoned.")
        else:
            term.say(f"End of input: the game stops unfinished in hand {hand}.")
        term.say(*self.narrator.standings(game, self.labels))
        return 0 if why == QUIT else 1

    def _ask(self) -> int | str | None:
        """The human's move, :data:`QUIT`, ``None`` at the end of input, or
        ``_TOO_MANY_INVALID`` when piped input has given too many invalid moves."""
        while True:
            line = self.term.ask("your move> ")
            if line is None:
                return None
            try:
                choice = parse_move(line, self.game, self.seat)
            except MoveError as e:
                self.term.say(f"  ✗ {e}")
                self.invalid_in_a_row += 1
                if not self.interactive and self.invalid_in_a_row >= MAX_INVALID_IN_A_ROW:
                    return _TOO_MANY_INVALID
                continue
            if choice == HELP:
                self.term.say(HELP_TEXT)
                continue
            self.invalid_in_a_row = 0
            return choice

    def _tell(self, parts: list[list[str]]) -> str | None:
        """Say the narrator's ``parts``; when interactive, wait for Enter after each hand's
        results that another deal follows. :data:`_GO_ON`, or why the game stops there:
        ``None`` (end of input) or :data:`QUIT`."""
        for k, part in enumerate(parts):
            self.term.say(*part)
            if self.interactive and k + 1 < len(parts) and parts[k + 1]:
                answer = self.term.ask(NEXT_HAND_PROMPT)
                if answer is None or answer.strip().lower() in ("quit", "exit"):
                    return None if answer is None else QUIT
        return _GO_ON

    def _save(self) -> None:
        if self.record_path is None:
            return
        append_record(self.record_path, self.table.record())
        self.term.say(f"The game record was appended to {os.fspath(self.record_path)}.")


def play_game(
    opponents: Sequence[str],
    *,
    seat: int = 0,
    seed: int | None = None,
    rules: Rules | None = None,
    record: str | os.PathLike[str] | None = None,
    input: TextIO | None = None,
    output: TextIO | None = None,
    color: bool | None = None,
    interactive: bool | None = None,
) -> int:
    """Play one game in the terminal (``input``/``output`` default to stdin/stdout);
    returns the exit status. ``interactive``: see the module docstring (default: both
    streams are terminals). Bad arguments raise ``ValueError``."""
    term = Terminal(output or sys.stdout, input or sys.stdin, color)
    session = PlaySession(
        opponents, term, seat=seat, seed=seed, rules=rules, record=record, interactive=interactive
    )
    return session.run()
