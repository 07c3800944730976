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
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from craits_env import Game, Rules
from craits_env.deck import deck_cards, draw_first_dealer, shuffled
from craits_env.fileio import atomic_write_json
from craits_env.jsonl import JsonlError, append_jsonl, find_jsonl, read_jsonl, write_jsonl
from craits_env.public import PublicGame
from craits_env.records import GameRecorder, append_records
from craits_env.rules import RULES_REVISION
from craits_env.seeding import derive_rng, derive_seed, draw_seed

from .arena import IllegalAction, engine_table
from .base import Agent
from .specs import resolve_agent

SCHEDULES = ("all", "cycle")
ROTATIONS = ("all", "one")
GAMES_FILE = "games.jsonl"
RECORDS_FILE = "records.jsonl"
CONFIG_FILE = "tournament.json"


class TournamentError(Exception):
    """A tournament cannot go on (an illegal action, a corrupt results file …)."""


class TournamentRefused(TournamentError):
    """A tournament cannot start: its results directory holds another tournament's games."""


@dataclass(frozen=True)
class TournamentConfig:
    """What defines a tournament: the same config gives the same table."""

    specs: tuple[str, ...]
    players: int
    deals: int
    seed: int
    rules: Rules = field(default_factory=Rules)
    schedule: str = "all"
    """With more specs than players: "all" plays every line-up on every deal; "cycle" plays
    line-up ``deal % L`` on deal ``deal`` (each deal still under every rotation), so every
    line-up gets an equal share of the deals for 1/L of the games."""
    agents: tuple[str, ...] = ()
    """the identity of each spec's agent (:func:`identify`); empty: not resolved yet"""
    rotations: str = "all"
    """"all" plays each line-up of a deal under every seat rotation; "one" under rotation
    ``deal % players`` only (a line-up's first spec in seat ``-deal % players``): one game per
    deal and line-up, for many deals at a quarter of the cost (no duplicate cancelling
    within a deal; two tournaments of the same seed still pair deal by deal)."""

    def __post_init__(self) -> None:
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule: got {self.schedule!r}, allowed 'all', 'cycle'")
        if self.rotations not in ROTATIONS:
            raise ValueError(f"rotations: got {self.rotations!r}, allowed 'all', 'one'")
        if len(self.specs) < self.players:
            raise ValueError(
                f"{len(self.specs)} agent spec(s) for {self.players} players: give at least "
                f"{self.players} (repeat a spec to seat it more than once)"
            )
        if self.deals < 1:
            raise ValueError(f"deals: got {self.deals}, allowed an int >= 1")
        if self.agents and len(self.agents) != len(self.specs):
            raise ValueError(f"agents: got {len(self.agents)}, need one per spec")

    def lineups(self) -> list[tuple[str, ...]]:
        """The line-ups: the specs themselves, or every combination of ``players`` of them."""
        if len(self.specs) == self.players:
            return [self.specs]
        return [tuple(c) for c in itertools.combinations(self.specs, self.players)]

    def to_dict(self) -> dict[str, Any]:
        d = {
            "specs": list(self.specs),
            "players": self.players,
            "deals": self.deals,
            "seed": self.seed,
            "rules": self.rules.to_dict(),
            "rules_revision": RULES_REVISION,
        }
        if self.schedule != "all":
            d["schedule"] = self.schedule
        if self.rotations != "all":
            d["rotations"] = self.rotations
        if self.agents:
            d["agents"] = list(self.agents)
        return d


def identify(config: TournamentConfig) -> TournamentConfig:
    """``config`` with the identity of every spec's agent, each checked for the table.

    An unknown spec, a missing checkpoint or one trained for another table raises
    ``ValueError`` (one line) — before any game.
    """
    ids = tuple(
        resolve_agent(spec, num_players=config.players, rules=config.rules)[1]
        for spec in config.specs
    )
    return dataclasses.replace(config, agents=ids)


@dataclass(frozen=True)
class GameTask:
    """One game: deal ``deal``, line-up ``lineup``, seat rotation ``rotation``."""

    deal: int
    lineup: int
    rotation: int

    @property
    def key(self) -> str:
        return f"{self.deal}-{self.lineup}-{self.rotation}"


def plan(config: TournamentConfig) -> list[GameTask]:
    """Every game of the tournament, deal by deal (so partial results cover whole deals)."""
    n_lineups = len(config.lineups())

    def rotations(deal: int) -> range:
        if config.rotations == "one":
            return range(deal % config.players, deal % config.players + 1)
        return range(config.players)

    if config.schedule == "cycle":
        return [GameTask(d, d % n_lineups, r) for d in range(config.deals) for r in rotations(d)]
    return [
        GameTask(d, lineup, r)
        for d in range(config.deals)
        for lineup in range(n_lineups)
        for r in rotations(d)
    ]


def seats_of(lineup: Sequence[str], rotation: int) -> list[str]:
    """The spec at each seat: seat ``s`` gets ``lineup[(s + rotation) % n]``."""
    n = len(lineup)
    return [lineup[(s + rotation) % n] for s in range(n)]


def deal_cards(config: TournamentConfig, deal: int) -> tuple[int, list[bytes], int]:
    """The first dealer, every hand's deck order and the reshuffle seed of a deal."""
    rng = derive_rng(config.seed, deal, 0xDEA1)
    rules = config.rules
    deck = deck_cards(rules.decks_for(config.players), rules.remove_kings_queens)
    dealer = draw_first_dealer(rng, config.players, deck)
    orders = [shuffled(deck, rng) for _ in rules.hand_sizes]
    return dealer, orders, draw_seed(rng)


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
        game = Game(n, config.rules, dealer=dealer, deals=orders,
                    rng=np.random.default_rng(reshuffle_seed), record=self.record)  # fmt: skip
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
            meta = {"source": "craits tournament", "key": task.key, "deal": task.deal,
                    "tournament_seed": config.seed, "agent_seeds": agent_seeds}  # fmt: skip
            recorder = GameRecorder(game, specs, meta=meta, apply=public.apply)
        table = engine_table(game, agents, public=public, names=specs,
                             apply=None if recorder is None else recorder.apply,
                             context=f" in game {task.key} (deal {task.deal})")  # fmt: skip
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


# ----------------------------------------------------------------------------- storage


_NAMES = ("specs", "deals")  # what may differ between a store and the same tournament


def _same_games(stored: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """Whether ``stored`` is the tournament ``wanted`` (same agents), maybe with fewer deals
    and other spec texts for the same agents."""
    return (
        {k: v for k, v in stored.items() if k not in _NAMES}
        == {k: v for k, v in wanted.items() if k not in _NAMES}
        and isinstance(stored.get("deals"), int)
        and stored["deals"] <= wanted["deals"]
        and isinstance(stored.get("specs"), list)
        and len(stored["specs"]) == len(wanted["specs"])
    )


def _refusal(out: Path, stored: dict[str, Any], wanted: dict[str, Any]) -> str:
    """Why ``out``'s games are not those of ``wanted`` (one line)."""
    head = f"{out} holds results of a different tournament"
    tail = "use another results directory or delete it"
    if "agents" not in stored or "rules_revision" not in stored:
        return f"{head} (stored without agent identities by an older craits); {tail}"
    if stored["rules_revision"] != wanted["rules_revision"]:
        return (
            f"{head}: its games were played under rules revision "
            f"{stored['rules_revision']}, this engine is revision {RULES_REVISION}; {tail}"
        )
    old, new = stored.get("agents", []), wanted["agents"]
    if old != new:
        return (f"{head}: its agents are {', '.join(map(str, old))}; this tournament's are "
                f"{', '.join(new)} (an overwritten checkpoint or a new bot version is another "
                f"agent); {tail}")  # fmt: skip
    keys = [k for k in wanted if k not in _NAMES and stored.get(k) != wanted[k]]
    if keys:
        return f"{head} (other {', '.join(keys)}); {tail}"
    return f"{head} (more deals than asked: only the number of deals may grow); {tail}"


def _read_games(path: Path, rename: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The games of a ``games.jsonl`` by key (a torn last line dropped: it is played again)."""
    games: dict[str, dict[str, Any]] = {}
    try:
        for number, game in read_jsonl(path):
            if not isinstance(game, dict) or not isinstance(game.get("key"), str):
                raise TournamentRefused(f"{path} line {number}: not a game of a tournament")
            if rename:
                game["specs"] = [rename.get(s, s) for s in game["specs"]]
            games[game["key"]] = game
    except JsonlError as e:
        raise TournamentRefused(str(e)) from None
    except OSError as e:
        raise TournamentRefused(f"{path}: unreadable ({e.strerror or e})") from None
    return games


class ResultStore:
    """``DIR/games.jsonl``: one finished game per line, appended and flushed as games end.

    A game's ``"record"``, if any, goes to ``DIR/records.jsonl`` instead, written first.
    """

    def __init__(self, out: Path, config: TournamentConfig) -> None:
        self.out = out
        self.path = out / GAMES_FILE
        wanted = config.to_dict()
        stored, rename = self.check(out, config)
        out.mkdir(parents=True, exist_ok=True)
        self.games: dict[str, dict[str, Any]] = {}
        packed = find_jsonl(self.path)
        if packed != self.path:  # a committed tournament keeps its games compressed
            write_jsonl(self.path, (game for _, game in read_jsonl(packed)))
        if self.path.exists():
            self.games = _read_games(self.path, rename)
            if rename:  # the renamed seats are written back before the new description
                write_jsonl(self.path, self.games.values())
        if stored != wanted:
            atomic_write_json(out / CONFIG_FILE, wanted)

    @staticmethod
    def check(out: Path, config: TournamentConfig) -> tuple[dict[str, Any] | None, dict[str, str]]:
        """Whether ``out`` can hold ``config``'s games, writing nothing.

        Returns the stored description (or ``None``) and the renaming of stored spec texts
        to ``config``'s; raises :class:`TournamentRefused` with the reason otherwise.
        """
        if not config.agents:
            raise ValueError("ResultStore: the config's agents are not identified (identify())")
        config_path = out / CONFIG_FILE
        if not config_path.exists():
            return None, {}
        try:
            stored = json.loads(config_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise TournamentRefused(f"{config_path}: unreadable ({e})") from None
        wanted = config.to_dict()
        if not isinstance(stored, dict):
            raise TournamentRefused(f"{config_path}: not a tournament description")
        rename: dict[str, str] = {}
        if stored != wanted:
            if not _same_games(stored, wanted):
                raise TournamentRefused(_refusal(out, stored, wanted))
            # More deals of the same tournament, or its agents named by other texts (a moved
            # checkpoint): a game depends only on the seed, its deal, line-up and rotation
            # and the agents, so the games played stay valid; their seats are renamed.
            rename = dict(zip(stored["specs"], wanted["specs"], strict=True))
        if (out / GAMES_FILE).exists():
            _read_games(out / GAMES_FILE, rename)  # a corrupt line refuses here
        return stored, rename

    def append(self, games: Iterable[dict[str, Any]]) -> None:
        games = list(games)
        records = [g.pop("record") for g in games if "record" in g]
        if records:  # before the results: a result never lacks its record after a crash
            append_records(self.out / RECORDS_FILE, records)
        append_jsonl(self.path, games)  # a torn last line of a crash is dropped first
        for game in games:
            self.games[game["key"]] = game


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


def config_from_dict(d: dict[str, Any]) -> TournamentConfig:
    return TournamentConfig(
        specs=tuple(d["specs"]),
        players=d["players"],
        deals=d["deals"],
        seed=d["seed"],
        rules=Rules.from_dict(d["rules"]),
        schedule=d.get("schedule", "all"),
        agents=tuple(d.get("agents", ())),
        rotations=d.get("rotations", "all"),
    )


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
