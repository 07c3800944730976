"""The human-vs-bots table that ``craits play`` and ``craits serve`` share.

A :class:`HumanTable` seats one person (``seat``) among agent specs: the game is made
from ``seed`` (``Game(n, rules, seed=seed)``), each bot's move from
:func:`bot_seed` (the seed, the seat and the number of decisions made so far): a bot's
move depends on the position alone, so the same seed, opponents and moves give the same
game in the terminal and in the browser, and a game rebuilt from its actions (``craits
serve`` after a restart, or a bot thinking in another process) goes on exactly as it
would have. Every decision, the person's or a bot's, goes through
:meth:`HumanTable.decide`: it applies it to the game once and hands the events it
returns (:mod:`craits_env.events`) to each listener — the public tracker the bots read
(:class:`~craits_env.public.PublicGame`), the recorder
(:class:`~craits_env.records.GameRecorder`) and the narrator, which tells the decision
from the person's seat (:class:`~craits.narrate.Narrator`) to ``on_told``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from craits.agents.arena import Table, engine_table
from craits.agents.specs import make_agent
from craits_env.engine import Game
from craits_env.events import Event
from craits_env.public import PublicGame
from craits_env.records import HUMAN, GameRecorder
from craits_env.rules import MAX_PLAYERS, MIN_PLAYERS, Rules
from craits_env.seeding import derive_seed

from .narrate import CardText, Narrator


def bot_seed(seed: int, seat: int, decision: int) -> int:
    """The seed a bot at ``seat`` is reset with before the game's ``decision``-th decision
    (0-based, counted over the whole game)."""
    return derive_seed(seed, seat, decision)


Told = Callable[[int, list[list[str]]], None]
"""``on_told(hand, parts)``: the narrator's parts for a decision made in hand ``hand``."""


class SeatError(ValueError):
    """An opponent's spec could not be seated (the message names it)."""

    def __init__(self, spec: str, error: Exception) -> None:
        super().__init__(f"opponent {spec!r}: {error}")
        self.spec = spec
        self.error = error


class HumanTable:
    """A person at ``seat`` against ``opponents`` (see the module docstring).

    ``ValueError`` for a bad number of opponents or seat, :class:`SeatError` for an
    opponent spec that cannot be made, and the engine's ``ValueError`` for rules that
    cannot be dealt. ``agents=False``: the bots are not made here (they think elsewhere,
    :mod:`craits.web.bots`; their specs were checked when the game began).
    """

    def __init__(
        self,
        opponents: Sequence[str],
        *,
        seat: int,
        seed: int,
        rules: Rules | None,
        source: str,
        text: CardText | None = None,
        agents: bool = True,
    ) -> None:
        n = len(opponents) + 1
        if not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise ValueError(
                f"opponents: got {len(opponents)}, allowed {MIN_PLAYERS - 1} to {MAX_PLAYERS - 1}"
            )
        if not 0 <= seat < n:
            raise ValueError(f"seat: got {seat}, allowed 0 to {n - 1} for {n} players")
        self.seat = seat
        self.seed = seed
        specs = list(opponents)
        self.seats = [*specs[:seat], HUMAN, *specs[seat:]]
        self.agents: list[Any] = []
        for s, spec in enumerate(self.seats):
            if s == seat or not agents:
                self.agents.append(None)
                continue
            try:
                agent = make_agent(spec, derive_seed(seed, s), num_players=n, rules=rules)
            except (ValueError, ImportError) as e:  # ImportError: an extra is missing (ppo)
                raise SeatError(spec, e) from None
            self.agents.append(agent)
        self.game = Game(n, rules, seed=seed)
        self.public = PublicGame(self.game)
        self.recorder = GameRecorder(self.game, self.seats, seed=seed, meta={"source": source})
        self.names = [f"player_{s}" for s in range(n)]
        self.labels = [
            f"you (player_{s})" if s == seat else f"player_{s} ({spec})"
            for s, spec in enumerate(self.seats)
        ]
        self.narrator = Narrator(self.names, seat, text or CardText())
        self.on_told: Told | None = None
        self.actions: list[int] = []  # every decision of the game, in order

    def start(self) -> list[list[str]]:
        """The narrator's parts for the start: hands that ended at once, the first deal."""
        return self.narrator.start_by_hand(self.game, self.game.start_events)

    def decide(self, action: int) -> list[Event]:
        """Apply the current player's ``action`` (``ValueError`` if it is not legal now;
        nothing changes then), give its events to every listener; the events."""
        game = self.game
        hand, player = self.game.hand_index, game.current_player
        events = game.apply(action)
        self.actions.append(int(action))
        self.public.tracker.observe(events)
        self.recorder.observe(player, action, events)
        parts = self.narrator.after_by_hand(game, player, action, events)
        if self.on_told is not None:
            self.on_told(hand, parts)
        return events

    def bot_to_move(self) -> int | None:
        """The seat of the bot to move now, or ``None`` (the person's turn, or the game over)."""
        game = self.game
        if game.is_over or game.current_player == self.seat:
            return None
        return game.current_player

    def bot_move(self) -> int:
        """The move of the bot to move now (:meth:`bot_to_move`), not applied: its agent
        reset with :func:`bot_seed`, then asked."""
        seat = self.bot_to_move()
        if seat is None:
            raise ValueError("bot_move: no bot is to move (the person's turn, or the game over)")
        return _Reseeded(self.agents[seat], self, seat).act(self.public.views[seat])

    def bots(self) -> Table:
        """The arena's table: the bots act through :meth:`decide` until the person's turn,
        each reset with :func:`bot_seed` before its move."""
        agents = [None if a is None else _Reseeded(a, self, s) for s, a in enumerate(self.agents)]
        return engine_table(
            self.game, agents, public=self.public, apply=self.decide, names=self.seats
        )

    def record(self) -> dict[str, Any]:
        """The game record so far (:mod:`craits_env.records`)."""
        return self.recorder.record()


class _Reseeded:
    """A seated agent reset with :func:`bot_seed` before each of its moves."""

    def __init__(self, agent: Any, table: HumanTable, seat: int) -> None:
        self.agent, self.table, self.seat = agent, table, seat
        self.name = getattr(agent, "name", type(agent).__name__)

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    def act(self, observation: Any) -> int:
        self.agent.reset(bot_seed(self.table.seed, self.seat, len(self.table.actions)))
        return int(self.agent.act(observation))
