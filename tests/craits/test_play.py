"""``craits play``: moves typed by a person, a scripted game to the end (in process and
through the command line with piped input), hidden cards, plain output, exit statuses."""

from __future__ import annotations

import io
import os
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from craits.agents.base import RandomAgent
from craits.agents.specs import register
from craits.narrate import Narrator
from craits.play import (
    HELP,
    MAX_INVALID_IN_A_ROW,
    NEXT_HAND_PROMPT,
    QUIT,
    MoveError,
    PlaySession,
    parse_move,
)
from craits.terminal import Terminal
from craits_env import CALL_BASE, DECLARE, DRAW, STAY_SILENT, Phase, Rules, card_str, score_hand
from craits_env.cards import make_deck
from craits_env.engine import Game
from craits_env.records import read_records, replay
from craits_env.scoring import explain_hand
from craits_env.testing.scenario import stacked_game

from ..craits_env.test_invariants import random_config

# Another seat's drawn cards, named: "player_2 drew 1 card (K♥)".
REVEALED = re.compile(r"player_\d+ (took the count: )?(drew|paid) [^;—(]*\(")
# A suit call or declaration with what an earlier card did appended after a dash.
JOINED = re.compile(r'(declared "one card"|stayed silent \(.*\)|called \S+ \w+) — ')

# ----------------------------------------------------------------------------- parsing moves


def two_player_game(starter: str = "Qh") -> Game:
    """player_0 to play on ``starter`` with 7♣ 9♦ K♥ 5♠ (player_1 dealt)."""
    return stacked_game([["7c", "9d", "Kh", "5s"], ["2c", "3c", "4c", "6c"]], starter, dealer=1)


def test_cards_by_name_symbol_or_number() -> None:
    g = two_player_game()
    assert g.current_player == 0 and g.legal_actions() == (21, 38)  # 9d, Kh
    for text in ("Kh", "kh", " KH ", "K♥", "3"):
        assert parse_move(text, g, 0) == 38
    assert parse_move("9♦", g, 0) == parse_move("2", g, 0) == 21
    assert parse_move("help", g, 0) == HELP and parse_move("QUIT", g, 0) == QUIT


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("7c", "7♣ cannot be played now: on Q♥ play a card of suit ♥ or rank Q"),
        ("1", "7♣ cannot be played now"),
        ("9", "no card number 9: your cards are numbered 1 to 4"),
        ("0", "no card number 0"),
        ("As", "you do not hold A♠"),
        ("draw", "you cannot draw: you hold a playable card (9♦, K♥)"),
        ("zz", "'zz' is not a move: type a card (7c) or its number"),
        ("", "legal now: 9♦ (2), K♥ (3)"),
        ("h", "'h' is not a move"),
        ("declare", "is not a move"),
    ],
)
def test_invalid_moves_say_what_is_allowed(text: str, fragment: str) -> None:
    g = two_player_game()
    before = g.snapshot()
    with pytest.raises(MoveError) as info:
        parse_move(text, g, 0)
    assert fragment in str(info.value) and "\n" not in str(info.value)
    assert g.snapshot() == before


def test_suit_call_declaration_and_count() -> None:
    g = stacked_game([["9d", "Kh"], ["2c", "3c"]], "Qh", dealer=1)
    g.apply(21)  # 9♦: keep ♦ or switch to ♥
    assert parse_move("h", g, 0) == parse_move("Hearts", g, 0) == CALL_BASE + 2
    assert parse_move("call d", g, 0) == parse_move("♦", g, 0) == CALL_BASE + 1
    with pytest.raises(MoveError, match=r"a 9 keeps its suit .* call d .* or h"):
        parse_move("s", g, 0)
    with pytest.raises(MoveError, match="'kh' is not a suit"):
        parse_move("Kh", g, 0)
    g.apply(CALL_BASE + 2)  # one card left: the declaration comes next (R7.1)
    assert parse_move("declare", g, 0) == parse_move("one", g, 0) == DECLARE
    assert parse_move("silent", g, 0) == 58
    with pytest.raises(MoveError, match="declare"):
        parse_move("draw", g, 0)
    count = two_player_game("2h")  # the starter starts the count (R5.1)
    assert count.count == 2 and parse_move("d", count, 0) == DRAW
    with pytest.raises(MoveError, match=r"the count is on \(2\)"):
        parse_move("Kh", count, 0)
    with pytest.raises(MoveError, match="not your turn"):
        parse_move("2c", count, 1)


@pytest.mark.slow
def test_explain_hand_matches_score_hand() -> None:
    """The hand results shown after each hand: the same points, the highest cards cancelled."""
    r = random.Random(0)
    deck = make_deck(2)
    for _ in range(2000):
        rules = Rules(
            threes_cancel_eights=r.random() < 0.5,
            punitive_threes=r.random() < 0.5,
            three_points=r.choice((3, 0, -1)),
        )
        hand = r.sample(deck, r.randint(0, 9)) + [2, 15, 28][: r.choice((0, 0, 1, 2, 3))]
        result = explain_hand(hand, rules)
        assert result.points == score_hand(hand, rules)
        threes = sorted(c for c in hand if c % 13 == 2)
        if result.only_threes:
            assert threes == sorted(hand) and not result.cancelled
            continue
        used = sorted([t for t, _ in result.cancelled] + list(result.lonely_threes))
        assert used == threes
        cancelled = Counter(c for _, c in result.cancelled)
        assert not cancelled - Counter(hand)  # cards of the hand, each once at most
        assert all(c % 13 != 2 and (c % 13 != 7 or rules.threes_cancel_eights) for c in cancelled)
        if result.lonely_threes:  # nothing left that a three could cancel
            left = Counter(hand) - cancelled
            assert all(
                c % 13 in (2, 7) or (c % 13 == 0 and rules.punitive_threes) for c in left.elements()
            )


@pytest.mark.slow
def test_narration_over_random_games_and_options() -> None:
    """Every decision of random games is told; every hand gets its summary; from a seat,
    no other seat's drawn card is ever named."""
    r = random.Random(3)
    for i in range(50):
        n, rules = random_config(r)
        game = Game(n, rules, seed=i)
        viewer = r.choice((None, r.randrange(n)))
        narrator = Narrator([f"player_{s}" for s in range(n)], viewer)
        lines = narrator.start(game)
        while not game.is_over:
            legal, p = game.legal_actions(), game.current_player
            action = legal[r.randrange(len(legal))]
            told = narrator.after(game, p, action, game.apply(action))
            assert told[0].startswith("you " if p == viewer else f"player_{p} ")
            lines += told
        assert sum(" is over: " in line for line in lines) == len(rules.hand_sizes)
        for line in lines:
            assert not JOINED.search(line), line
            if viewer is not None and not line.startswith("  "):
                assert not REVEALED.search(line), line


def test_a_cards_effect_gets_its_own_line_after_the_declaration() -> None:
    """4♣ played down to one card takes effect after the declaration (R7.1): the
    declaration is one line, the skip the next, never 'declared "one card" — skips …'."""
    g = stacked_game([["4c", "5h"], ["2d", "3d"], ["6d", "Td"]], "Qc", dealer=2)
    narrator = Narrator(["player_0", "player_1", "player_2"], 0)
    narrator.start(g)
    events = g.apply(g.legal_actions()[0])
    assert narrator.after(g, 0, 3, events) == ["you played 4♣"]
    events = g.apply(DECLARE)
    assert narrator.after(g, 0, DECLARE, events) == [
        'you declared "one card"',
        "your 4♣: skips player_1",
    ]
    assert g.current_player == 2
    from_above = Narrator(["player_0", "player_1", "player_2"], None)
    g = stacked_game([["6c", "5h"], ["2d", "3d"], ["6d", "Td"]], "Qc", dealer=2)
    from_above.start(g)
    for action in (g.legal_actions()[0], STAY_SILENT):
        told = from_above.after(g, 0, action, g.apply(action))
    assert told == [
        "player_0 stayed silent (caught: two cards instead of the next turn)",
        "player_0's 6♣: another play for player_0",
    ]


# ----------------------------------------------------------------------------- whole games


class ScriptedHuman(io.TextIOBase):
    """Answers each prompt with a legal move in varied spellings, and every fourth prompt
    with something invalid first; keeps every line it typed."""

    INVALID = ("zz", "99", "", "Zq", "help")

    def __init__(self, stop_after: int | None = None) -> None:
        self.session: PlaySession | None = None
        self.lines: list[str] = []
        self.invalid = 0
        self.stop_after = stop_after

    def readline(self, size: int | None = -1) -> str:
        assert self.session is not None
        if self.stop_after is not None and len(self.lines) >= self.stop_after:
            return ""
        g, k = self.session.game, len(self.lines)
        if k % 4 == 1:
            line = self.INVALID[(k // 4) % len(self.INVALID)]
            self.invalid += line != "help"
        else:
            line = self.move(g, g.legal_actions()[k % len(g.legal_actions())], k)
        self.lines.append(line)
        return line + "\n"

    def move(self, g: Game, a: int, k: int) -> str:
        if a < DRAW:
            hand = g.hands[self.session.seat]  # type: ignore[union-attr]
            return (card_str(a), card_str(a).lower(), str(hand.index(a) + 1))[k % 3]
        if a == DRAW:
            return ("draw", "d")[k % 2]
        if a < DECLARE:
            return ("c", "diamonds", "h", "♠")[a - CALL_BASE]
        return ("declare", "one")[k % 2] if a == DECLARE else "silent"


def play_scripted(
    tmp_path: Path,
    seat: int = 1,
    stop_after: int | None = None,
    opponents: tuple[str, ...] = ("greedy", "random"),
    rules: Rules | None = None,
) -> tuple[int, str, ScriptedHuman, Path]:
    human = ScriptedHuman(stop_after)
    out = io.StringIO()
    path = tmp_path / "played.jsonl"
    session = PlaySession(
        list(opponents),
        Terminal(out, human),
        seat=seat,
        seed=11,
        rules=rules or Rules(hand_sizes=(5, 2, 1, 3)),
        record=path,
    )
    human.session = session
    return session.run(), out.getvalue(), human, path


def test_scripted_game_to_the_end_in_process(tmp_path: Path) -> None:
    status, out, human, path = play_scripted(tmp_path)
    assert status == 0
    assert human.invalid >= 3 and out.count("  ✗ ") == human.invalid
    assert "Final standings (lowest total wins, R8.6):" in out and "winner" in out
    for i in range(1, 5):
        assert f"Hand {i} is over: " in out
    assert "your move> zz\n  ✗ 'zz' is not" in out  # piped input is echoed, then the message
    assert "\x1b[" not in out  # plain text when the output is not a terminal
    ((_, record),) = read_records(path)
    assert record["seats"] == ["greedy", "human", "random"] and record["finished"]
    assert record["seed"] == 11 and replay(record).scores == record["scores"]
    assert f"{record['scores'][1]:>6} points" in out


def test_opponents_cards_stay_hidden(tmp_path: Path) -> None:
    _, out, _, _ = play_scripted(tmp_path, seat=0, rules=Rules(hand_sizes=(8, 6)))
    during_hands = [line for line in out.splitlines() if not line.startswith("  ")]
    drew = [line for line in during_hands if re.search(r"player_\d drew \d+ cards?", line)]
    assert drew, "opponents should have drawn"
    for line in drew:
        assert not REVEALED.search(line), line
    assert re.search(r"you drew \d+ cards? \([2-9TJQKA]", out)  # your own draws are named
    # Hands are shown as they are scored, never as they are dealt (that is replay's view).
    assert not re.search(r"^  player_\d\s+[2-9TJQKA][♣♦♥♠]", out, re.MULTILINE)
    assert re.search(r"^  player_\d\s+-?\d+ points", out, re.MULTILINE)


class PausingTerminalUser(io.TextIOBase):
    """A person at a terminal: types ``at_pause`` at the pause between hands (Enter; an
    empty string ends the input), and :class:`ScriptedHuman`'s moves otherwise."""

    def __init__(self, out: io.StringIO, at_pause: str = "\n") -> None:
        self.out, self.at_pause = out, at_pause
        self.human = ScriptedHuman()
        self.pauses: list[str] = []  # what was on screen before each pause

    def readline(self, size: int | None = -1) -> str:
        if self.out.getvalue().endswith(NEXT_HAND_PROMPT):
            self.pauses.append(self.out.getvalue())
            return self.at_pause
        return self.human.readline(size)


def play_at_a_terminal(
    tmp_path: Path, at_pause: str = "\n"
) -> tuple[int, str, PausingTerminalUser]:
    out = io.StringIO()
    user = PausingTerminalUser(out, at_pause)
    session = PlaySession(
        ["greedy", "random"],
        Terminal(out, user),
        seat=1,
        seed=11,
        rules=Rules(hand_sizes=(5, 2, 1, 3)),
        record=tmp_path / "t.jsonl",
        interactive=True,
    )
    user.human.session = session
    return session.run(), out.getvalue(), user


def test_a_terminal_pauses_after_each_hand_and_a_pipe_does_not(tmp_path: Path) -> None:
    status, out, user = play_at_a_terminal(tmp_path)
    assert status == 0 and len(user.pauses) == 3  # between the four hands, not after the last
    for i, shown in enumerate(user.pauses, 1):
        _, hand_over, after = shown.rpartition(f"Hand {i} is over: ")
        assert hand_over and f"Hand {i + 1}/4:" not in after and f"Hand {i + 1}/4:" in out
    # Without the pauses it is the piped game, line for line.
    _, piped, _, _ = play_scripted(tmp_path)
    assert NEXT_HAND_PROMPT not in piped
    assert out.replace(NEXT_HAND_PROMPT + "\n", "").splitlines()[:-1] == piped.splitlines()[:-1]


@pytest.mark.parametrize(
    "at_pause, status, said",
    [
        ("", 1, "\nEnd of input: the game stops unfinished in hand 2."),
        ("quit\n", 0, "quit\nYou quit in hand 2: the game is abandoned."),
    ],
)
def test_end_of_input_or_quit_at_the_pause(
    tmp_path: Path, at_pause: str, status: int, said: str
) -> None:
    got, out, user = play_at_a_terminal(tmp_path, at_pause)
    assert got == status and len(user.pauses) == 1
    assert out.split(NEXT_HAND_PROMPT)[1].startswith(
        said + "\nStandings: the game was abandoned in hand 2 of 4, after 1 hand scored; no "
        "winner:\n"
    )
    ((_, record),) = read_records(tmp_path / "t.jsonl")
    assert not record["finished"] and len(record["hand_points"]) == 1


def test_a_terminal_is_interactive_and_a_pipe_is_not() -> None:
    pty = pytest.importorskip("pty")
    leader, follower = pty.openpty()
    tty_out = open(follower, "w", encoding="utf-8")  # noqa: SIM115
    tty_in = open(os.dup(follower), encoding="utf-8")  # noqa: SIM115
    with tty_out, tty_in:
        assert Terminal(tty_out, tty_in).interactive  # type: ignore[arg-type]
        assert not Terminal(tty_out, io.StringIO()).interactive  # type: ignore[arg-type]
        assert not Terminal(io.StringIO(), tty_in).interactive  # type: ignore[arg-type]
        assert not Terminal(tty_out).interactive  # type: ignore[arg-type]
    os.close(leader)


class InvalidHuman(ScriptedHuman):
    """Types ``xyz`` except every ``every``-th line, a legal move; ends after ``lines``."""

    def __init__(self, every: int, lines: int) -> None:
        super().__init__(stop_after=lines)
        self.every = every

    def readline(self, size: int | None = -1) -> str:
        if self.stop_after is not None and len(self.lines) >= self.stop_after:
            return ""
        g, k = self.session.game, len(self.lines)  # type: ignore[union-attr]
        valid = (k + 1) % self.every == 0
        self.lines.append(self.move(g, g.legal_actions()[0], k) if valid else "xyz")
        return self.lines[-1] + "\n"


def test_piped_input_stops_after_too_many_invalid_moves_in_a_row() -> None:
    out, errors = io.StringIO(), io.StringIO()
    term = Terminal(out, io.StringIO("xyz\n" * 150))
    session = PlaySession(["random"], term, seed=1, errors=errors)  # piped: not interactive
    assert session.run() == 2
    assert out.getvalue().count("  ✗ ") == MAX_INVALID_IN_A_ROW == 100
    assert errors.getvalue() == "craits play: stopped after 100 invalid moves in a row (hand 1)\n"
    # A valid move resets the count: 99 invalid moves between valid ones go on to the end.
    human = InvalidHuman(every=MAX_INVALID_IN_A_ROW, lines=350)
    errors = io.StringIO()
    out = io.StringIO()
    session = PlaySession(["random"], Terminal(out, human), seed=1, errors=errors)
    human.session = session
    assert session.run() == 1 and errors.getvalue() == ""  # the input ended first
    assert out.getvalue().count("  ✗ ") == 350 - 3
    # At a terminal there is no limit: a person may keep trying.
    human = InvalidHuman(every=1000, lines=150)
    session = PlaySession(["random"], Terminal(io.StringIO(), human), seed=1, interactive=True)
    human.session = session
    assert session.run() == 1


def test_end_of_input_and_quit(tmp_path: Path) -> None:
    status, out, _, path = play_scripted(tmp_path, stop_after=6)
    stopped = re.search(r"End of input: the game stops unfinished in hand (\d+)\.", out)
    assert status == 1 and stopped is not None
    ((_, record),) = read_records(path)  # the unfinished game is recorded and replays
    assert not record["finished"]
    assert int(stopped[1]) == replay(record).hand_index + 1
    human = ScriptedHuman()
    human.readline = lambda size=-1: "quit\n"  # type: ignore[method-assign]
    session = PlaySession(["random"], Terminal(io.StringIO(), human), seed=1)
    human.session = session
    assert session.run() == 0


class _Faulty(RandomAgent):
    name = "faulty"

    def act(self, observation):  # type: ignore[no-untyped-def]
        return 58 if observation.phase != Phase.DECLARE else 0  # never legal in that phase


register("test-play-faulty", lambda arg, seed: _Faulty(seed))


def test_a_faulty_bot_ends_the_game_cleanly(tmp_path: Path) -> None:
    status, out, _, path = play_scripted(tmp_path, opponents=("test-play-faulty", "random"))
    assert status == 1
    assert "error: bot test-play-faulty (player_0) failed: illegal action 58" in out
    ((_, record),) = read_records(path)
    assert not record["finished"]


def test_colours_only_when_asked(tmp_path: Path) -> None:
    out = io.StringIO()
    Terminal(out, color=True).say("player_1 played 7♥ — you drew 1 card (K♠)")
    assert "\x1b[" in out.getvalue() and "7♥" in out.getvalue()
    ascii_out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    term = Terminal(ascii_out)  # type: ignore[arg-type]
    term.say("player_1 played 7♥ — you drew 1 card (K♠)")
    ascii_out.seek(0)
    assert ascii_out.read() == "player_1 played 7h - you drew 1 card (Ks)\n"


# ----------------------------------------------------------------------------- command line


def run_cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    env["PYTHONIOENCODING"] = "utf-8"
    return subprocess.run(
        [sys.executable, "-m", "craits", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.mark.slow
def test_scripted_game_through_the_command_line_with_piped_input(tmp_path: Path) -> None:
    status, out, human, _ = play_scripted(tmp_path)  # the same seed gives the same game
    assert status == 0
    path = tmp_path / "cli.jsonl"
    proc = run_cli(
        "play",
        "--opponents",
        "greedy",
        "random",
        "--seat",
        "1",
        "--seed",
        "11",
        "-r",
        "hand_sizes=5,2,1,3",
        "--record",
        str(path),
        stdin="".join(line + "\n" for line in human.lines),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.splitlines()[:-1] == out.splitlines()[:-1]  # all but the record's path
    assert proc.stdout.count("  ✗ ") == human.invalid >= 3
    assert "Final standings" in proc.stdout
    ((_, record),) = read_records(path)
    assert record["finished"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, fragment",
    [
        (["play"], "--opponents"),
        (["play", "-o", "random", "--seat", "2"], "seat: got 2, allowed 0 to 1"),
        (["play", "-o", "nobody"], "unknown agent spec 'nobody'"),
        (["play", "-o", *["random"] * 10], "opponents: got 10, allowed 1 to 9"),
        (["play", "-o", "random", "-r", "hand_sizes=30"], "cannot deal"),
    ],
)
def test_bad_play_arguments_are_one_line(args: list[str], fragment: str) -> None:
    proc = run_cli(*args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], proc.stderr


@pytest.mark.slow
def test_the_command_stops_an_endless_stream_of_invalid_moves() -> None:
    craits = Path(sys.executable).with_name("craits")
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    env["PYTHONIOENCODING"] = "utf-8"
    proc = subprocess.run(
        [str(craits), "play", "-o", "random", "--seed", "3"],
        input="xyz\n" * 150,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "craits play: stopped after 100 invalid moves in a row (hand 1)"
    ]
    assert proc.stdout.count("  ✗ ") == 100


@pytest.mark.slow
def test_help_of_play_and_replay() -> None:
    for sub in ("play", "replay"):
        proc = run_cli(sub, "--help")
        assert proc.returncode == 0 and f"usage: craits {sub}" in proc.stdout
