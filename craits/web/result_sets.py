"""Tournament results of the server's folders: a page of the ``results.json`` found, one of
them with its title and chart, and the benchmark's leaderboard from the report cards.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ..benchmark.card import FORMAT as CARD_FORMAT
from ..benchmark.leaderboard import CARD_FILE, row, rows
from .errors import plain, plain_json
from .folder_scan import MAX_PAGE, PAGE_SIZE, Folders, Found, Verdicts, page, shown
from .requests import ApiError

RESULTS_FILE = "results.json"
CHART_FILE = "results.png"
TITLE_FILE = "results.md"


class ResultSets(Folders):
    """The result sets and report cards of :class:`craits.web.library.Library` (which sets
    the attributes below)."""

    result_roots: list[Path]
    _results: Verdicts
    _cards: Verdicts

    # ------------------------------------------------------------------ results

    def result_sets(self, offset: object = 0, limit: object = PAGE_SIZE) -> dict[str, Any]:
        """A page of the ``results.json`` of the folders, newest first: ``results`` (each
        ``key``, ``title``, ``folder``, ``name``, ``players``, ``games``, ``agents`` — specs,
        best first —, ``chart`` — whether a chart is beside it), ``offset``, ``limit``,
        ``more``, ``complete`` (as :meth:`record_files`)."""
        offset, limit = page(offset, limit)

        def keep(found: Found) -> bool:
            return self._results.get(found, _result_summary) is not None

        def entry(i: int, root: Path, folder: str, found: Found) -> dict[str, Any]:
            name = found.path.parent.relative_to(root).as_posix()
            return {
                "key": self._key(i, root, found.path),
                "folder": folder,
                "name": plain(shown(found.path.parent) if name == "." else name),
                **self._results.get(found, _result_summary),
                "chart": (found.path.parent / CHART_FILE).is_file(),
            }

        sets, more, complete = self._listing(
            "results",
            self.result_roots,
            lambda name: name == RESULTS_FILE,
            keep,
            entry,
            offset,
            limit,
        )
        return {
            "results": sets,
            "offset": offset,
            "limit": limit,
            "more": more,
            "complete": complete,
        }

    def leaderboard(self, suite: object = "v1") -> dict[str, Any]:
        """The benchmark's leaderboard (:mod:`craits.benchmark.leaderboard`) from every report
        card (``card.json``) under the results folders: ``suite``, ``rows`` (best first),
        ``complete`` (as :meth:`record_files`)."""
        name = str(suite)

        def keep(found: Found) -> bool:
            card = self._cards.get(found, _read_card)
            return card is not None and card.get("suite") == name

        def entry(i: int, root: Path, folder: str, found: Found) -> dict[str, Any]:
            card: dict[str, Any] = self._cards.get(found, _read_card)
            return card

        cards, _, complete = self._listing(
            "cards", self.result_roots, lambda n: n == CARD_FILE, keep, entry, 0, MAX_PAGE
        )
        board = [
            {**r, "spec": plain(r["spec"]), "identity": plain(r["identity"])} for r in rows(cards)
        ]
        return {"suite": name, "rows": _finite(board), "complete": complete}

    def results(self, key: object) -> dict[str, Any]:
        """The ``results.json`` of ``key`` with its ``title`` and ``chart`` flag."""
        path = self._resolve(self.result_roots, key, "result set")
        data = _read_results(path) if path.name == RESULTS_FILE else None
        if data is None:
            raise ApiError(404, f"no result set {key!r} (see the listing for the keys)")
        return {
            "key": str(key),
            "title": plain(_title(path)),
            "chart": (path.parent / CHART_FILE).is_file(),
            **plain_json(_finite(data)),
        }

    def chart(self, key: object) -> Path:
        """The chart beside the ``results.json`` of ``key``."""
        path = self._resolve(self.result_roots, key, "result set")
        chart = path.parent / CHART_FILE
        if path.name != RESULTS_FILE or not chart.is_file():
            raise ApiError(404, f"result set {key!r} has no chart")
        return chart


def _result_summary(path: Path) -> dict[str, Any] | None:
    """What a listing shows of a ``results.json`` (``title``, ``players``, ``games``,
    ``agents``), or ``None`` (not a tournament's results)."""
    data = _read_results(path)
    if data is None:
        return None
    try:
        agents = [plain(str(a["spec"])) for a in data["agents"]]
    except (TypeError, KeyError):
        return None
    return {
        "title": plain(_title(path)),
        "players": data["config"].get("players"),
        "games": data.get("games"),
        "agents": agents,
    }


def _read_card(path: Path) -> dict[str, Any] | None:
    """A benchmark report card, or ``None`` (not one, or not one this craits reads)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("format") == CARD_FORMAT:
            row(data)  # a card the leaderboard can show
            return data
    except (OSError, ValueError, KeyError, TypeError, IndexError, ZeroDivisionError):
        pass
    return None


def _read_results(path: Path) -> dict[str, Any] | None:
    """A tournament's results (``config``, ``agents``, ``head_to_head`` …), or ``None``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("agents"), list):
        return None
    if not isinstance(data.get("config"), dict):
        return None
    return data


def _finite(obj: Any) -> Any:
    """``obj`` with every NaN or infinity as ``None`` (JSON has neither; an interval over
    no game is NaN in ``results.json``)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def _title(path: Path) -> str:
    """The Markdown title beside a ``results.json`` (its first ``# `` line), else the folder."""
    try:
        for line in (path.parent / TITLE_FILE).read_text(encoding="utf-8").splitlines():
            if line.startswith("# "):
                return line[2:].replace("`", "").strip()
    except OSError:
        pass
    return path.parent.name
