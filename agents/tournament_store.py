"""Where a tournament's games are kept: ``DIR/games.jsonl``, one finished game a line.

Stored games are keyed by what the agents *are* (:func:`craits.agents.specs.agent_identity`,
in ``DIR/tournament.json``): a results directory whose agents changed is refused
(:class:`~craits.agents.tournament_plan.TournamentRefused`), never mixed; one whose agents
are the same under other spec texts (a moved checkpoint) resumes, its seats renamed. The
agents' behavioural fingerprints (:mod:`craits.agents.fingerprint`) are kept beside their
identities: an agent that declares the same identity but plays differently on the probe
positions (a wrapper that reads other weights from a file) is refused the same way. A side
without a fingerprint (a store of an older craits, an agent not probed) compares by identity.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from craits_env.fileio import atomic_write_json
from craits_env.jsonl import JsonlError, append_jsonl, find_jsonl, read_jsonl, write_jsonl
from craits_env.records import append_records
from craits_env.rules import RULES_REVISION

from .tournament_plan import TournamentConfig, TournamentRefused

GAMES_FILE = "games.jsonl"
RECORDS_FILE = "records.jsonl"
CONFIG_FILE = "tournament.json"

_NAMES = ("specs", "deals")  # what may differ between a store and the same tournament
_PRINTS = "fingerprints"  # compared on their own (_fingerprint_refusal)


def _same_games(stored: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """Whether ``stored`` is the tournament ``wanted`` (same agents), maybe with fewer deals
    and other spec texts for the same agents."""
    skip = (*_NAMES, _PRINTS)
    return (
        {k: v for k, v in stored.items() if k not in skip}
        == {k: v for k, v in wanted.items() if k not in skip}
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
        return (
            f"{head}: its agents are {', '.join(map(str, old))}; this tournament's are "
            f"{', '.join(new)} (an overwritten checkpoint or a new bot version is another "
            f"agent); {tail}"
        )
    keys = [k for k in wanted if k not in (*_NAMES, _PRINTS) and stored.get(k) != wanted[k]]
    if keys:
        return f"{head} (other {', '.join(keys)}); {tail}"
    return f"{head} (more deals than asked: only the number of deals may grow); {tail}"


def _probed(fingerprint: object) -> bool:
    return isinstance(fingerprint, str) and fingerprint.startswith("fp-")


def _fingerprint_refusal(out: Path, stored: dict[str, Any], wanted: dict[str, Any]) -> str | None:
    """Why ``out``'s games are not those of ``wanted``'s agents although their identities are
    the same: an agent whose fingerprint changed (one line); ``None`` if none did. A side
    without a fingerprint (stored by an older craits, or an agent not probed) is not compared.
    """
    old, new = stored.get(_PRINTS), wanted.get(_PRINTS)
    if not isinstance(old, list) or not isinstance(new, list) or len(old) != len(new):
        return None
    for spec, agent, before, now in zip(wanted["specs"], wanted["agents"], old, new, strict=True):
        if _probed(before) and _probed(now) and before != now:
            return (
                f"{out} holds results of a different tournament: agent {spec} ({agent}) plays "
                f"differently now (fingerprint {now} on the probe positions, {before} when its "
                "games were played: its weights or code changed under the same version); use "
                "another results directory or delete it"
            )
    return None


def _merged(stored: dict[str, Any] | None, wanted: dict[str, Any]) -> dict[str, Any]:
    """``wanted`` keeping a stored fingerprint where this run has none (an agent not probed
    this time, e.g. over the time limit)."""
    old, new = (stored or {}).get(_PRINTS), wanted.get(_PRINTS)
    if not isinstance(old, list) or not isinstance(new, list) or len(old) != len(new):
        return wanted
    kept = [b if _probed(b) and not _probed(n) else n for b, n in zip(old, new, strict=True)]
    return {**wanted, _PRINTS: kept}


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
        wanted = _merged(stored, wanted)
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
            changed = _fingerprint_refusal(out, stored, wanted)
            if changed:
                raise TournamentRefused(changed)
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
