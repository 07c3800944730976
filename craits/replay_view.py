"""``craits replay``: re-run game records through the engine and tell them in plain words.

One game (``--game I``, or a file that holds a single game) is shown in full, from
above: every hand as play begins, each decision with what it caused, each hand's
points with what the threes cancelled, the standings, and the check that the replayed
scores equal the recorded ones. A file of several games is checked game by game, one
line each. ``step`` waits for Enter after each decision (``q`` stops; at the end of
the input it goes on without waiting). Problems raise
:class:`~craits_env.records.RecordError` naming the file and line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from craits_env.engine import Game
from craits_env.events import Event
from craits_env.records import RecordError, read_records, replay
from craits_env.rules import Rules

from .narrate import Narrator, plural
from .terminal import Terminal


class _Stop(Exception):
    """The viewer typed q while stepping."""


def show_replay(
    path: str | os.PathLike[str],
    terminal: Terminal,
    *,
    game: int | None = None,
    step: bool = False,
) -> int:
    """Replay the record file ``path`` (see the module docstring); returns 0."""

    def torn(line: int) -> None:
        terminal.say(
            f"note: {os.fspath(path)} line {line} was cut short by an interrupted "
            "write and is skipped"
        )

    if game is None:
        records = list(read_records(path, verify=False, on_torn=torn))
        if len(records) == 1:
            return _show_one(path, *records[0], terminal, step)
        for i, (line, record) in enumerate(records, 1):
            _check(path, line, record)
            terminal.say(record_line(i, line, record))
        terminal.say(
            f"{plural(len(records), 'game')} replayed: every score matches its record. "
            "Use --game I to see game I in full."
        )
        return 0
    i = 0
    for i, (line, record) in enumerate(read_records(path, verify=False, on_torn=torn), 1):
        if i == game:
            return _show_one(path, line, record, terminal, step)
    raise RecordError(
        f"{os.fspath(path)}: there is no game {game} (the file holds {plural(i, 'game')})"
    )


def _check(path: str | os.PathLike[str], line: int, record: dict[str, Any]) -> Game:
    try:
        return replay(record)
    except RecordError as e:
        raise RecordError(f"{os.fspath(path)} line {line}: {e}") from None


def record_line(i: int, line: int, record: dict[str, Any]) -> str:
    """Game ``i`` of a record file (at ``line``) in one line: seats, hands, scores, end."""
    seats = ", ".join(f"p{s}:{spec}" for s, spec in enumerate(record["seats"]))
    decisions = sum(len(h["decisions"]) for h in record["hands"])
    end = "winners " + ", ".join(f"player_{s}" for s in record["winners"] or ())
    if not record["finished"]:
        end = "unfinished"
    return (
        f"game {i} (line {line}): {seats}; {plural(len(record['hands']), 'hand')}, "
        f"{plural(decisions, 'decision')}; "
        f"scores {record['scores']}; {end}"
    )


def _show_one(
    path: str | os.PathLike[str], line: int, record: dict[str, Any], term: Terminal, step: bool
) -> int:
    _check(path, line, record)  # the whole game replays before any of it is shown
    n = record["num_players"]
    names = [f"player_{s}" for s in range(n)]
    narrator = Narrator(names, None)
    rules = Rules.from_dict(record["rules"])
    term.say(
        f"Craits game record: {os.fspath(path)} line {line} — {n} players, "
        f"{plural(len(rules.hand_sizes), 'hand')}, first dealer player_{record['first_dealer']}"
        + (f", seed {record['seed']}" if record.get("seed") is not None else ""),
        style="bold",
    )
    term.say("seats: " + ", ".join(f"player_{s} {spec}" for s, spec in enumerate(record["seats"])))
    term.say("rules: " + rules_text(rules))
    if record.get("meta"):
        term.say("from: " + ", ".join(f"{k}={v}" for k, v in record["meta"].items()))
    counter = [0]
    stepping = [step]

    def start(game: Game, events: Sequence[Event]) -> None:
        term.say(*narrator.start(game, events))

    def decision(game: Game, player: int, action: int, events: list[Event]) -> None:
        counter[0] += 1
        first, *rest = narrator.after(game, player, action, events)
        term.say(f"{counter[0]:>5}. {first}", *rest)
        if stepping[0] and not game.is_over:
            answer = term.ask("[Enter: next decision, q: stop] ")
            if answer is None:
                stepping[0] = False
            elif answer.strip().lower() in ("q", "quit"):
                raise _Stop

    try:
        final = replay(record, on_start=start, on_decision=decision)
    except _Stop:
        term.say("Stopped.")
        return 0
    labels = [f"player_{s} ({spec})" for s, spec in enumerate(record["seats"])]
    term.say("", *narrator.standings(final, labels))  # an unfinished record's: "abandoned in…"
    term.say(f"Replayed scores match the record: {final.scores} (hand points too).")
    return 0


def rules_text(rules: Rules) -> str:
    """The options that differ from the defaults, as ``-r`` arguments would set them."""
    default = Rules().to_dict()
    changed = [
        f"{k}={','.join(map(str, v)) if isinstance(v, list) else str(v).lower()}"
        for k, v in rules.to_dict().items()
        if v != default[k]
    ]
    return " ".join(changed) if changed else "the standard rules"
