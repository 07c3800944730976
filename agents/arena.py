"""The arena: the one game loop that seats agents at a table.

A :class:`Table` is a game seen through three functions — who acts
(``to_act``), what a seat sees (``view``) and how an action is applied
(``apply``) — and one agent per seat, or ``None`` for a seat played from
outside (a learner, a person at the terminal). :meth:`Table.run` lets the
seated agents act until an outside seat must act or the game ends. Every
driver uses it: tournaments (:mod:`craits.agents.duplicate_tournament`), the Gymnasium view's
opponents (:mod:`craits.agents.gym_env`), ``craits play``, the demo and the tests'
mini-tournaments. :func:`engine_table` builds the usual table on an engine
:class:`~craits_env.engine.Game` (views are :class:`~craits_env.public.SeatView`s).

An action the game refuses raises :class:`IllegalAction` (a ``ValueError``)
naming the agent, the seat, the action, the position and the legal actions;
the game is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from craits_env import Game, action_str
from craits_env.actions import PHASE_NAMES
from craits_env.public import PublicGame

from .base import Agent, Observation


class IllegalAction(ValueError):
    """An agent returned an action the game refused (the game is unchanged)."""

    def __init__(self, message: str, seat: int, action: object, position: str) -> None:
        super().__init__(message)
        self.seat = seat
        self.action = action
        self.position = position  # "in hand 2, decision 5, phase play; legal: …"


@dataclass
class Table:
    """Agents seated at a game (see the module docstring)."""

    agents: Sequence[Agent | None]
    to_act: Callable[[], int | None]  # the seat to act; None once the game is over
    view: Callable[[int], Observation]
    apply: Callable[[int], object]  # what it returns (the events) is not read
    on_move: Callable[[int, int], None] | None = None  # called after each agent's move
    describe: Callable[[int, object], str] | None = None  # the position, for IllegalAction
    names: Sequence[str] | None = None  # each seat's name in messages (default: agent.name)
    context: str = ""  # where, in messages: " in game 3-0-1"

    def run(self) -> int:
        """Seated agents act until an outside seat must act or the game ends; decisions made."""
        made = 0
        agents, to_act, view, apply, on_move = (
            self.agents,
            self.to_act,
            self.view,
            self.apply,
            self.on_move,
        )
        while (p := to_act()) is not None:
            agent = agents[p]
            if agent is None:
                break
            action = agent.act(view(p))
            try:
                apply(action)
            except ValueError as e:
                where = self.describe(p, action) if self.describe else f"({e})"
                name = self.names[p] if self.names else getattr(agent, "name", type(agent).__name__)
                message = f"agent {name!r} (seat {p}){self.context} returned illegal action "
                raise IllegalAction(f"{message}{action!r} {where}", p, action, where) from None
            made += 1
            if on_move is not None:
                on_move(p, int(action))
        return made


def engine_table(
    game: Game,
    agents: Sequence[Agent | None],
    *,
    public: PublicGame | None = None,
    apply: Callable[[int], object] | None = None,
    on_move: Callable[[int, int], None] | None = None,
    names: Sequence[str] | None = None,
    context: str = "",
) -> Table:
    """The table of an engine game: seat views of ``public`` (made here if not given),
    actions applied by ``apply`` (default ``public.apply``: the engine validates them)."""
    public = public or PublicGame(game)
    views = public.views

    def to_act() -> int | None:
        return None if game.is_over else game.current_player

    def describe(seat: int, action: object) -> str:
        legal = ", ".join(action_str(a) for a in game.legal_actions())
        phase = PHASE_NAMES[game.phase]
        return (
            f"in hand {game.hand_index + 1}, decision {game.hand_decisions + 1}, phase "
            f"{phase}; legal: {legal}"
        )

    return Table(
        agents, to_act, views.__getitem__, apply or public.apply, on_move, describe, names, context
    )


def play_game(
    game: Game,
    agents: Sequence[Agent],
    seeds: Sequence[int | None] | None = None,
    **table: object,
) -> int:
    """Reset each agent (with ``seeds``) and play ``game`` to its end; the decisions made."""
    for agent, seed in zip(agents, seeds or [None] * len(agents), strict=True):
        agent.reset(seed)
    return engine_table(game, agents, **table).run()  # type: ignore[arg-type]
