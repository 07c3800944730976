"""Duplicate tournaments between agent specs: planning, playing, resuming, parallel runs.

Every *deal* (one seed: the first dealer and every hand's deck order) is played
under every seat rotation of every line-up, so that the luck of the cards
cancels (duplicate format). With as many specs as players there is one
line-up; with more specs, every combination of ``players`` specs is a line-up.

A game is a :class:`GameTask` (deal, line-up, rotation): its cards come from the
deal's seed, its agents are seeded from the tournament seed and the task, so a
game's result does not depend on which process plays it or when. Results are
appended, one JSON line per game, to ``DIR/games.jsonl`` as they finish; an
interrupted tournament rerun with the same arguments plays only what is missing.

Stored games are keyed by what the agents *are* (:func:`craits.agents.specs.agent_identity`:
a checkpoint's weight hash, a bot's version), not by the spec texts: a results
directory whose agents changed (an overwritten checkpoint, a new bot version)
is refused (:class:`TournamentRefused`), never mixed; one whose agents are the
same under other spec texts (a moved checkpoint) resumes.
:mod:`craits.agents.stats` turns the games into the tables.

With ``record=True`` every game also yields its game record (:mod:`craits_env.records`),
appended to ``DIR/records.jsonl`` beside its result; :func:`collect_records` returns them
in plan order, so a record file is the same whatever the workers or the resumes.

This module plays the games; the configuration and the plan are
:mod:`craits.agents.tournament_plan`'s, the store :mod:`craits.agents.tournament_store`'s
(every name of ``__all__`` is importable from here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from craits_env import Game
from craits_env.jsonl import JsonlError, read_jsonl
from craits_env.public import PublicGame
from craits_env.records import GameRecorder
from craits_env.seeding import derive_seed

from .arena import IllegalAction, engine_table
from .base import Agent
from .specs import resolve_agent
from .tournament_plan import (
    ROTATIONS,
    SCHEDULES,
    GameTask,
    TournamentConfig,
    TournamentError,
    TournamentRefused,
    config_from_dict,
    deal_cards,
    identify,
    plan,
    seats_of,
)
from .tournament_store import CONFIG_FILE, GAMES_FILE, RECORDS_FILE, ResultStore


class GamePlayer:
    """Plays tasks of one tournament; keeps one agent per spec and seat between games.

    With ``record`` each result also holds the game's record under ``"record"``.
    """

    def __init__(self, config: TournamentConfig, record: bool = False) -> None:
        self.config = config
        self.record = record
        self._agents: dict[tuple[str, int], Agent] = {}
        self._lineups = config.lineups()

    def agent(self, spec: str, seat: int) -> Agent:
        key = (spec, seat)
        if key not in self._agents:
            config = self.config
            agent, identity = resolve_agent(spec, num_players=config.players, rules=config.rules)
            if config.agents:
                expected = config.agents[config.specs.index(spec)]
                if identity != expected:
                    raise TournamentError(
                        f"agent {spec!r} is now {identity}, the tournament's is {expected} "
                        "(it changed while the tournament ran)"
                    )
            self._agents[key] = agent
        return self._agents[key]

    def play(self, task: GameTask) -> dict[str, Any]:
        config = self.config
        n = config.players
        specs = seats_of(self._lineups[task.lineup], task.rotation)
        dealer, orders, reshuffle_seed = deal_cards(config, task.deal)
        game = Game(
            n,
            config.rules,
            dealer=dealer,
            deals=orders,
            rng=np.random.default_rng(reshuffle_seed),
            record=self.record,
        )
        public = PublicGame(game)
        agents = []
        agent_seeds = []
        for s, spec in enumerate(specs):
            agent = self.agent(spec, s)
            agent_seeds.append(derive_seed(config.seed, task.deal, task.lineup, task.rotation, s))
            agent.reset(agent_seeds[-1])
            agents.append(agent)
        recorder = None
        if self.record:
            meta = {
                "source": "craits tournament",
                "key": task.key,
                "deal": task.deal,
                "tournament_seed": config.seed,
                "agent_seeds": agent_seeds,
            }
            recorder = GameRecorder(game, specs, meta=meta, apply=public.apply)
        table = engine_table(
            game,
            agents,
            public=public,
            names=specs,
            apply=None if recorder is None else recorder.apply,
            context=f" in game {task.key} (deal {task.deal})",
        )
        try:
            decisions = table.run()
        except IllegalAction as e:  # the engine refused it and changed nothing
            raise TournamentError(str(e)) from None
        winners = game.winners()
        result = {
            "key": task.key,
            "deal": task.deal,
            "lineup": task.lineup,
            "rotation": task.rotation,
            "specs": specs,
            "scores": list(game.scores),
            "hand_points": [list(h) for h in game.hand_points],
            "winners": winners,
            "decisions": decisions,
        }
        if recorder is not None:
            result["record"] = recorder.record()
        return result


# ----------------------------------------------------------------------------- running

Chunk = list[tuple[int, int, int]]  # (deal, line-up, rotation) of each game
Executor = Callable[[TournamentConfig, list[Chunk], bool], Iterator[list[dict[str, Any]]]]
"""Plays chunks of games (``config``, ``chunks``, ``record``) and yields each chunk's results
as it finishes, in any order: :func:`play_here`, or the process pool / Ray of the ``craits``
command (:mod:`craits.tournament_workers`)."""


def play_here(
    config: TournamentConfig, chunks: list[Chunk], record: bool
) -> Iterator[list[dict[str, Any]]]:
    """The default executor: every chunk in this process, in order."""
    player = GamePlayer(config, record)
    for c in chunks:
        yield [player.play(GameTask(*t)) for t in c]


def _chunks(tasks: list[GameTask], size: int) -> Iterator[Chunk]:
    for i in range(0, len(tasks), size):
        yield [(t.deal, t.lineup, t.rotation) for t in tasks[i : i + size]]


def run_games(
    config: TournamentConfig,
    out: Path,
    progress: Callable[[int, int], None] | None = None,
    chunk: int | None = None,
    record: bool = False,
    executor: Executor = play_here,
) -> dict[str, dict[str, Any]]:
    """Play every missing game of ``config`` (resuming from ``out``); all games by key.

    Games are stored as each chunk finishes. With ``record`` the games played also save
    their game records (:func:`collect_records`).
    """
    if not config.agents:
        config = identify(config)  # an unknown spec or a bad checkpoint fails before any game
    store = ResultStore(out, config)
    todo = [t for t in plan(config) if t.key not in store.games]
    total = len(plan(config))
    done = total - len(todo)
    if progress:
        progress(done, total)
    if not todo:
        return store.games
    size = chunk or max(1, min(config.players * len(config.lineups()), 64))
    for games in executor(config, list(_chunks(todo, size)), record):
        store.append(games)
        done += len(games)
        if progress:
            progress(done, total)
    return store.games


def results_in_order(games: dict[str, dict[str, Any]], config: TournamentConfig) -> list[dict]:
    """The games in plan order (deal, line-up, rotation), whatever order they finished in."""
    return [games[t.key] for t in plan(config) if t.key in games]


def collect_records(
    config: TournamentConfig, out: Path, games: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """The game records of ``games`` (finished games by key) in plan order.

    Records come from ``DIR/records.jsonl``; a game finished by a run without records is
    played again (a game depends only on the config and its task) and must score the same.
    """
    stored: dict[str, dict[str, Any]] = {}
    path = out / RECORDS_FILE
    if path.exists():
        try:
            for number, rec in read_jsonl(path):
                try:
                    stored[rec["meta"]["key"]] = rec
                except (KeyError, TypeError):
                    why = f"{path} line {number}: not a record of a tournament game"
                    raise TournamentError(why) from None
        except JsonlError as e:
            raise TournamentError(str(e)) from None
    player: GamePlayer | None = None
    records = []
    for task in plan(config):
        if task.key not in games:
            continue
        rec = stored.get(task.key)
        if rec is None:
            player = player or GamePlayer(config, record=True)
            result = player.play(task)
            if result["scores"] != games[task.key]["scores"]:
                raise TournamentError(f"game {task.key} does not replay to its stored scores")
            rec = result["record"]
        records.append(rec)
    return records


__all__ = [
    "CONFIG_FILE",
    "GAMES_FILE",
    "RECORDS_FILE",
    "ROTATIONS",
    "SCHEDULES",
    "GamePlayer",
    "GameTask",
    "ResultStore",
    "TournamentConfig",
    "TournamentError",
    "TournamentRefused",
    "collect_records",
    "config_from_dict",
    "deal_cards",
    "identify",
    "plan",
    "play_here",
    "results_in_order",
    "run_games",
    "seats_of",
]
