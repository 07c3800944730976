"""Deal sets: the fixed deals a benchmark suite is played on, shipped as data files.

A deal is what the cards do in one game whatever the agents do: the first dealer, the
deck order of every hand and the seed of the reshuffles (R6) — made from the set's seed
and the deal's number by :func:`craits.agents.duplicate_tournament.deal_cards`, before any
agent acts, so no agent's randomness can change one. A set's file
(``craits/benchmark/deals/SUITE/NAME.json``) holds what makes its deals — the table
(``players``, ``rules``), the ``seed``, the number of ``deals`` — with the engine's
``rules_revision`` and the ``sha256`` of every deal's content (:func:`content_hash`). A set
is checked when it is loaded: a file edited by hand, or an engine or numpy that deals other
cards from the same seed, is refused in one line naming the set (:class:`DealSetError`)
instead of giving other numbers under the same name.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from craits.agents.duplicate_tournament import TournamentConfig, deal_cards
from craits_env.rules import RULES_REVISION, Rules

DEALS_DIR = Path(__file__).resolve().parent / "deals"
"""The deal sets shipped with the package, one folder per suite."""


class DealSetError(ValueError):
    """A deal set that cannot be used (the message names it and why)."""


@dataclass(frozen=True)
class DealSet:
    """One deal set (see the module docstring)."""

    name: str
    suite: str
    players: int
    rules: Rules
    seed: int
    deals: int
    rules_revision: int = RULES_REVISION
    sha256: str = ""

    def config(self, specs: tuple[str, ...]) -> TournamentConfig:
        """The duplicate tournament of ``specs`` (one per seat) on these deals."""
        return TournamentConfig(specs, self.players, self.deals, self.seed, self.rules)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "suite": self.suite,
            "players": self.players,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "deals": self.deals,
            "rules_revision": self.rules_revision,
            "sha256": self.sha256,
        }

    @property
    def label(self) -> str:
        """``NAME (N deals, sha256 PREFIX)``, for tables."""
        return f"{self.name} ({self.deals} deals, sha256 {self.sha256[:12]})"


def content_hash(players: int, rules: Rules, seed: int, deals: int) -> str:
    """The sha256 of every deal's content: per deal, the first dealer, each hand's deck
    order and the reshuffle seed, in order."""
    config = TournamentConfig(("random",) * players, players, deals, seed, rules)
    digest = hashlib.sha256()
    for deal in range(deals):
        dealer, orders, reshuffle_seed = deal_cards(config, deal)
        digest.update(dealer.to_bytes(1, "little"))
        for order in orders:
            digest.update(len(order).to_bytes(2, "little") + bytes(order))
        digest.update(reshuffle_seed.to_bytes(8, "little"))
    return digest.hexdigest()


def make(name: str, suite: str, players: int, rules: Rules, seed: int, deals: int) -> DealSet:
    """A new deal set with its hash (to be written with :func:`write`)."""
    return DealSet(
        name,
        suite,
        players,
        rules,
        seed,
        deals,
        RULES_REVISION,
        content_hash(players, rules, seed, deals),
    )


def first_deals(deal_set: DealSet, deals: int, name: str) -> DealSet:
    """The first ``deals`` deals of a (checked) set, as a set named ``name``: a deal depends
    only on the seed and its number, so they are the same deals, with their own hash."""
    deals = min(deals, deal_set.deals)
    return dataclasses.replace(
        deal_set,
        name=name,
        deals=deals,
        sha256=content_hash(deal_set.players, deal_set.rules, deal_set.seed, deals),
    )


def write(deal_set: DealSet, folder: Path = DEALS_DIR) -> Path:
    from craits_env.fileio import atomic_write_json

    path = folder / deal_set.suite / f"{deal_set.name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, deal_set.to_dict())
    return path


def load(suite: str, name: str, folder: Path = DEALS_DIR) -> DealSet:
    """The deal set ``name`` of ``suite``, checked (:class:`DealSetError` otherwise)."""
    path = folder / suite / f"{name}.json"
    where = f"deal set {suite}/{name}"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        deal_set = DealSet(
            name=data["name"],
            suite=data["suite"],
            players=int(data["players"]),
            rules=Rules.from_dict(data["rules"]),
            seed=int(data["seed"]),
            deals=int(data["deals"]),
            rules_revision=int(data["rules_revision"]),
            sha256=str(data["sha256"]),
        )
    except FileNotFoundError:
        raise DealSetError(f"{where}: no such set (see {folder / suite})") from None
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise DealSetError(f"{where}: unreadable ({type(e).__name__}: {e})") from None
    if deal_set.rules_revision != RULES_REVISION:
        raise DealSetError(
            f"{where}: made under rules revision {deal_set.rules_revision}, "
            f"this engine plays {RULES_REVISION}"
        )
    found = content_hash(deal_set.players, deal_set.rules, deal_set.seed, deal_set.deals)
    if found != deal_set.sha256:
        raise DealSetError(
            f"{where}: its deals hash to {found[:12]}…, the file says "
            f"{deal_set.sha256[:12]}… (another engine or numpy deals other cards "
            "from this seed: these would not be the benchmark's deals)"
        )
    return deal_set
