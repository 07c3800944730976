"""How much the luck-adjusted estimator narrows the benchmark's intervals, per zoo member.

Each agent of ``--agents`` plays against three ``expert`` on the first ``--deals`` deals of
suite v1's standard table (``standard_4p``, every seat rotation: the games of the committed
cards, which this checks score for score), each game's chance events are corrected by the
shipped value model (:class:`craits.agents.luck.LuckEstimator`), and the 95% percentile
bootstrap intervals over deals (2,000 resamples, every rotation of a deal together, as a
report card's) of the plain and the adjusted mean score, and of the paired estimate against
``expert`` plain and adjusted, are compared. Also: the mean correction per game with its
interval (zero if the estimator is unbiased) and the plain and adjusted means' agreement.
Writes ``experiments/results/luck/widths.md`` and ``widths.json``; with ``--cards`` (the
cards' 1,000 deals), the committed card of each of ``--agents`` has its entry against
``expert`` on the standard table made again by the card's own code with the corrections,
checked figure for figure against the committed one, and written with its adjusted figures
and the estimator's name (``card.json``, ``.md``, ``.png``).

``--luck rollouts:R:K`` corrects by compiled rollout values instead
(:class:`craits.agents.luck_tournament.RolloutEstimator`, seconds a game: a deal's rotations
that are one game, as a table of four ``expert``'s, are corrected once) and writes
``widths-rollouts-R-K.md`` and ``.json``. Its corrections are kept deal by deal, as they are
done, in ``--store`` (by default the committed ``experiments/results/luck/corrections/``, to a
thousandth of a point): a run stopped part way goes on where it stopped, a later session adds
deals to an earlier one's, and the stored deals' games are only played again (checked score
for score against the stored ones). ``--keep`` keeps each agent's whole games, so that a rerun
plays nothing. Usage::

    python experiments/luck_widths.py --deals 1000 --workers 2 --keep runs/luck/widths --cards
    python experiments/luck_widths.py --deals 1000 --agents expert --luck rollouts:128:16 \
        --keep runs/luck/widths --cards
    python experiments/luck_widths.py --deals 1000 --agents random greedy tactician champion \
        --luck rollouts:128:16:32 --step 25 --cards

``--step N`` first fills the store ``N`` deals at a time, every agent in turn (the stored
deals not played again), so that a run stopped at any point leaves the agents about even.

``--set search`` measures the searching members (``pimc``, ``champion-search``,
``belief-search``: their rollouts play their seats as ``expert``) on the deals of their search
cards (``standard_4p_search``: 100 deals of a seed of their own, ``expert``'s games there the
reference), its files named ``…-standard_4p_search-…`` and ``widths-…-search.md``::

    python experiments/luck_widths.py --set search --luck rollouts:128:16:32 --workers 2 --cards
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing as mp
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from craits.agents.duplicate_tournament import GamePlayer, identify, plan
from craits.agents.luck import LuckEstimator
from craits.agents.luck_tournament import estimator as luck_estimator
from craits.agents.luck_tournament import record_salt
from craits.benchmark.card import Matchup, agent_seat, matchup_entry
from craits.benchmark.deal_sets import first_deals, load
from craits.benchmark.evaluate import write
from craits_env.fileio import atomic_write_bytes
from craits_env.jsonl import JsonlError, encode, read_jsonl

OUT = Path("experiments/results/luck")
CARDS = Path("experiments/results/benchmark/v1")
AGENTS = ("random", "greedy", "tactician", "expert", "champion")
# --set: the standard table's deals of the policy members' full cards, or of the searching
# members' search cards (100 deals, a seed of their own); a store's and a table's file names
# carry the set where it is not the full one
SETS = {"full": "standard_4p", "search": "standard_4p_search"}
SEARCH_AGENTS = ("pimc", "champion-search", "belief-search")
RESAMPLES = 2000
# the rollout estimators' corrections, committed (hours of compute a card): one gzipped JSON
# line a deal, {"deal": D, "games": [{"key", "scores", "luck"}, ...]}, to a thousandth of a point
STORE = OUT / "corrections"

Stored = dict[int, dict[str, dict[str, Any]]]  # deal -> game key -> {"scores", "luck"}


class StoreError(ValueError):
    """Stored corrections that are not of the games played (raised in a worker: the run
    stops with its message)."""


def _games(job: tuple[str, int, int, int, str, Stored, str]) -> list[dict]:
    """Deals lo..hi's games of the deal set ``name`` (the tournament's result, less its
    record) with ``luck``: every seat's correction by the estimator ``by`` (a rollout
    estimator's to a thousandth of a point, as stored; a game recorded alike twice, corrected
    once), or as ``known`` has it for a game it holds — whose stored scores must be the
    game's."""
    spec, deals, lo, hi, by, known, name = job
    deal_set = first_deals(load("v1", name), deals, "luck")
    config = identify(deal_set.config((spec, "expert", "expert", "expert")))
    player = GamePlayer(config, record=True)
    estimator = luck_estimator(by, config.players, config.rules)
    out = []
    done: dict[int, list[float]] = {}
    for task in plan(config):
        if lo <= task.deal < hi:
            result = player.play(task)
            record = result.pop("record")
            stored = known.get(task.deal, {}).get(result["key"])
            if stored is not None:
                if stored["scores"] != result["scores"]:
                    raise StoreError(
                        f"stored corrections of game {result['key']} are of another game "
                        f"(scores {stored['scores']}, this game's {result['scores']})"
                    )
                luck = stored["luck"]
            else:
                salt = record_salt(record)
                if salt not in done:  # a rollout estimator's to a thousandth, as stored
                    found = [float(x) for x in estimator.game(record).corrections]
                    done[salt] = found if by == "model" else [round(x, 3) for x in found]
                luck = done[salt]
            out.append({**result, "luck": luck, "luck_by": estimator.model_id})
    return out


def _keep(part: list[dict], partial: Path | None, path: Path | None, stored: Stored) -> None:
    """A job's games kept: appended to the model's ``partial``; the rollout corrections the
    store lacks added to ``stored`` and the store written again (``path``)."""
    if partial is not None:
        partial.parent.mkdir(parents=True, exist_ok=True)
        with partial.open("a") as f:
            f.write(json.dumps(part) + "\n")
    new = [g for g in part if g["key"] not in stored.get(g["deal"], {})]
    if path is not None and new:
        for g in new:
            stored.setdefault(g["deal"], {})[g["key"]] = {"scores": g["scores"], "luck": g["luck"]}
        write_store(path, stored)


def read_store(path: Path) -> Stored:
    """The corrections kept in ``path`` (nothing where it is absent); a line that is not a
    deal's games is refused in one line naming the file and the line."""
    if not path.is_file():
        return {}
    found: Stored = {}
    try:
        for number, row in read_jsonl(path):
            try:
                games = {
                    str(g["key"]): {"scores": [int(x) for x in g["scores"]],
                                    "luck": [float(x) for x in g["luck"]]}
                    for g in row["games"]
                }  # fmt: skip
                found[int(row["deal"])] = games
            except (KeyError, TypeError, ValueError):
                raise SystemExit(
                    f"{path} line {number}: not a deal's corrections "
                    '({"deal": D, "games": [{"key", "scores", "luck"}, ...]})'
                ) from None
    except JsonlError as e:
        raise SystemExit(str(e)) from None
    except (OSError, EOFError, zlib.error) as e:  # unreadable, or a gzip cut short
        raise SystemExit(f"{path}: {e}") from None
    return found


def write_store(path: Path, stored: Stored) -> None:
    """All of ``stored``, by deal, gzipped (``-9``, no time stamp: the same bytes on every
    machine), written atomically (the old store or the whole new one)."""
    text = "".join(
        encode({"deal": d, "games": [{"key": k, **g} for k, g in stored[d].items()]}) + "\n"
        for d in sorted(stored)
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, gzip.compress(text.encode(), compresslevel=9, mtime=0))


def interval(per_deal: np.ndarray, idx: np.ndarray) -> list[float]:
    lo, hi = np.percentile(per_deal[idx].mean(axis=1), [2.5, 97.5])
    return [float(lo), float(hi)]


def width_ratio(plain: list[float], adjusted: list[float]) -> float:
    """The adjusted interval's width over the plain one's (NaN where the plain one has none:
    a single deal)."""
    wide = plain[1] - plain[0]
    return (adjusted[1] - adjusted[0]) / wide if wide > 0 else float("nan")


def _file_name(model: str) -> str:
    """An estimator's identity as a file name's part."""
    return "".join(c if c.isalnum() or c in "-." else "_" for c in model)


def _on(name: str) -> str:
    """What a file's name adds for the deal set ``name``: nothing for the full cards' set."""
    return "" if name == SETS["full"] else f"-{name}"


def measure(
    specs: list[str],
    deals: int,
    workers: int,
    keep: Path | None,
    by: str = "model",
    store: Path | None = None,
    name: str = SETS["full"],
) -> dict[str, dict]:
    """Each agent's games on the deal set ``name`` with their corrections by the estimator
    ``by``; with ``keep``, read from and written to ``keep/SPEC-DEALS-ESTIMATOR.json`` (a
    rerun plays nothing twice). The shipped model's games are also kept 25 deals at a time in
    ``keep/SPEC-ESTIMATOR.jsonl``; a rollout estimator's corrections, deal by deal, in
    ``store/SPEC-ESTIMATOR.jsonl.gz`` (a run stopped part way goes on where it stopped, a
    run on fewer deals reads the first ones, and a stored deal's games are only played
    again); ``SPEC-SET-…`` on another set than the full cards' (:func:`_on`)."""
    found: dict[str, dict] = {}
    named = luck_estimator(by, 4, load("v1", name).rules).model_id
    model = _file_name(named)
    if by == "model":
        store = None
    with mp.get_context("spawn").Pool(workers) as pool:
        for spec in specs:
            start = time.monotonic()
            cached = None if keep is None else keep / f"{spec}{_on(name)}-{deals}-{model}.json"
            if cached is not None and cached.is_file():
                games = json.loads(cached.read_text())
            else:
                games = _play(pool, spec, deals, by, keep, store, model, start, name=name)
                games.sort(key=lambda g: (g["deal"], g["rotation"]))
                if cached is not None:
                    cached.parent.mkdir(parents=True, exist_ok=True)
                    cached.write_text(json.dumps(games))
            for g in games:  # games kept before they named their estimator
                g.setdefault("luck_by", named)
            seats = [agent_seat(g) for g in games]
            score = np.array([g["scores"][s] for g, s in zip(games, seats, strict=True)], float)
            corr = np.array([g["luck"][s] for g, s in zip(games, seats, strict=True)])
            found[spec] = {
                "games": games,
                "score": score.reshape(deals, 4),
                "correction": corr.reshape(deals, 4),
                "seconds": time.monotonic() - start,
            }
            print(f"{spec}: {len(games)} games in {found[spec]['seconds']:.0f} s", flush=True)
    return found


def _play(
    pool: Any,
    spec: str,
    deals: int,
    by: str,
    keep: Path | None,
    store: Path | None,
    model: str,
    start: float,
    again: bool = True,
    name: str = SETS["full"],
) -> list[dict]:
    """The first ``deals`` deals' games of ``spec`` on the deal set ``name`` with their
    corrections, resumed from what ``keep`` (the model's) or ``store`` (a rollout
    estimator's) holds and kept there; without ``again``, only the deals the store lacks (the
    stored ones not played again)."""
    kept: list[dict] = []
    spec_on = f"{spec}{_on(name)}"
    partial = None if keep is None or store is not None else keep / f"{spec_on}-{model}.jsonl"
    if partial is not None and partial.is_file():
        for line in partial.read_text().splitlines():
            try:
                part = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn line: its chunk is done again
            kept.extend(g for g in part if g["deal"] < deals)
    path = None if store is None else store / f"{spec_on}-{model}.jsonl.gz"
    stored = {} if path is None else read_store(path)
    have = {g["deal"] for g in kept}
    jobs = []  # runs of consecutive deals alike (stored or not), at most a chunk each
    for d in range(deals):
        if d in have or (d in stored and not again):
            continue
        chunk = 25 if by == "model" or d in stored else 1
        last = jobs[-1] if jobs else None
        if (
            last is not None
            and last[3] == d
            and d - last[2] < chunk
            and (d in stored) == (last[2] in stored)
        ):
            jobs[-1] = (*last[:3], d + 1, *last[4:])
        else:
            jobs.append((spec, deals, d, d + 1, by, {}))
    jobs = [(*j[:5], {d: stored[d] for d in range(j[2], j[3]) if d in stored}, name) for j in jobs]
    games = kept
    try:
        for part in pool.imap(_games, jobs):
            games.extend(part)
            _keep(part, partial, path, stored)
            if partial is not None or path is not None:
                done = {g["deal"] for g in games} | {d for d in stored if d < deals}
                print(f"{spec}: {len(done)}/{deals} deals, {time.monotonic() - start:.0f} s",
                      flush=True)  # fmt: skip
    except StoreError as e:
        raise SystemExit(f"{path}: {e}") from None
    return games


def fill(
    specs: list[str],
    deals: int,
    step: int,
    workers: int,
    by: str,
    store: Path,
    name: str = SETS["full"],
) -> None:
    """The store's corrections of the first ``deals`` deals of the set ``name`` of every
    agent of ``specs``, computed ``step`` deals at a time, every agent in turn (a run stopped
    at any point leaves them about even); the stored deals are not played again here."""
    model = _file_name(luck_estimator(by, 4, load("v1", name).rules).model_id)
    with mp.get_context("spawn").Pool(workers) as pool:
        for upto in range(step, deals + step, step):
            for spec in specs:
                start = time.monotonic()
                upto_deals = min(upto, deals)
                _play(pool, spec, upto_deals, by, None, store, model, start, False, name)


def write_cards(
    found: dict[str, dict], deals: int, agents: list[str], name: str = SETS["full"]
) -> list[str]:
    """The committed card of each of ``agents``: its entry against ``expert`` on the deal set
    ``name`` of the standard table, made again from these games by the card's own code
    (:func:`craits.benchmark.card.matchup_entry`) with the luck corrections (the paired
    estimate against ``expert``'s games corrected alike), naming the estimator: every figure
    but the adjusted ones must come out as committed (the same games, the same resamples),
    else no card is written. The cards (``card.json``, ``.md``, ``.png``) are written again
    with the adjusted figures; returns what was written."""
    deal_set = load("v1", name)
    if deals != deal_set.deals:
        raise SystemExit(f"--cards needs the cards' {deal_set.deals} deals, not --deals {deals}")
    reference = found["expert"]["games"]
    cards = []
    for spec in agents:
        f = found[spec]
        path = CARDS / spec / "card.json"
        if not path.is_file():
            continue
        card = json.loads(path.read_text())
        entries = card["tables"][0]["opponents"]
        k = next(
            (
                i
                for i, o in enumerate(entries)
                if o["opponent"] == "expert" and o["deal_set"] == name
            ),
            None,
        )
        if k is None:
            raise SystemExit(f"{path}: no entry against expert on the deal set {name}")
        old = entries[k]
        matchup = Matchup(
            "expert", old["identity"], f["games"], None if spec == "expert" else reference
        )
        new = {**matchup_entry(matchup, deal_set.seed), "deal_set": old["deal_set"]}
        plain = {key: v for key, v in new.items() if key != "adjusted"}
        if plain.get("paired"):
            plain["paired"] = {
                key: v for key, v in plain["paired"].items() if not key.startswith("adjusted")
            }
        kept = {key: v for key, v in old.items() if key != "adjusted"}
        if kept.get("paired"):
            kept["paired"] = {
                key: v for key, v in kept["paired"].items() if not key.startswith("adjusted")
            }
        if plain != kept:
            differ = sorted(key for key in kept if plain.get(key) != kept[key])
            raise SystemExit(f"{path}: these games do not give the committed entry ({differ})")
        entries[k] = new
        cards.append((card, path.parent))
    for card, folder in cards:
        write(card, folder)
    return [str(folder) for _, folder in cards]


def committed_scores(spec: str, deals: int, name: str = SETS["full"]) -> np.ndarray | None:
    path = CARDS / spec / "card.json"
    if not path.is_file():
        return None
    card = json.loads(path.read_text())
    for o in card["tables"][0]["opponents"]:
        if o["opponent"] == "expert" and o["deal_set"] == name:
            return np.array(o["scores"][: 4 * deals]).reshape(deals, 4)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--agents",
        nargs="+",
        help=f"default: {' '.join(AGENTS)}; with --set search, {' '.join(SEARCH_AGENTS)}",
    )
    parser.add_argument(
        "--set",
        choices=sorted(SETS),
        default="full",
        help="the standard table's deals: the policy members' full cards' (1,000) or the "
        "searching members' search cards' (100) (default: %(default)s)",
    )
    parser.add_argument("--deals", type=int, help="default: all the set's (1,000 or 100)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--cards",
        action="store_true",
        help="write the adjusted figures into the committed cards of --agents, their entries "
        "against expert (checked: every other figure as committed; needs all the set's deals)",
    )
    parser.add_argument(
        "--out", type=Path, default=OUT, help="where the tables go (default: %(default)s)"
    )
    parser.add_argument(
        "--store",
        type=Path,
        default=STORE,
        help="where a rollout estimator's corrections are kept, deal by deal (default: the "
        "committed ones, %(default)s)",
    )
    parser.add_argument(
        "--keep", type=Path, help="a folder to keep each agent's games in (a rerun reuses them)"
    )
    parser.add_argument(
        "--step",
        type=int,
        help="with a rollout estimator: first fill the store STEP deals at a time, every agent "
        "in turn (a run stopped at any point leaves the agents about even)",
    )
    parser.add_argument(
        "--luck",
        default="model",
        help="the estimator: model (the shipped value model) or rollouts:R[:K[:S]]",
    )
    args = parser.parse_args()
    name = SETS[args.set]
    if args.agents is None:
        args.agents = list(AGENTS if args.set == "full" else SEARCH_AGENTS)
    most = load("v1", name).deals
    args.deals = most if args.deals is None else args.deals
    if not 1 <= args.deals <= most:
        parser.error(f"--deals: got {args.deals}, allowed 1 to {most} (--set {args.set})")
    try:
        estimator = luck_estimator(args.luck, 4, load("v1", name).rules)
    except ValueError as e:
        parser.error(str(e))
    specs = list(dict.fromkeys(["expert", *args.agents]))
    if args.step is not None:
        if args.luck == "model" or args.step < 1:
            parser.error(
                f"--step: got {args.step} with --luck {args.luck}; allowed a number of deals "
                "of 1 or more with a rollout estimator (rollouts:R[:K[:S]])"
            )
        fill(specs, args.deals, args.step, args.workers, args.luck, args.store, name)
    found = measure(specs, args.deals, args.workers, args.keep, args.luck, args.store, name)
    idx = np.random.default_rng(0).integers(0, args.deals, (RESAMPLES, args.deals))
    ref = found["expert"]
    ref_adj = (ref["score"] - ref["correction"]).mean(axis=1)
    command = (
        "python experiments/luck_widths.py --deals {} --agents {}".format(
            args.deals, " ".join(args.agents)
        )
        + ("" if args.luck == "model" else f" --luck {args.luck}")
        + ("" if args.set == "full" else f" --set {args.set}")
    )
    by = (
        f"value model `{estimator.model_id}`"
        if isinstance(estimator, LuckEstimator)
        else f"rollout values `{estimator.model_id}` (docs/luck.md)"
    )
    lines = [
        "# The luck-adjusted estimator: interval widths against three `expert`",
        "",
        f"Suite v1's standard table (deal set `{name}`), the first {args.deals} deals, every "
        "seat rotation "
        f"({4 * args.deals} games an agent); {by}; 95% "
        "percentile bootstrap over deals (2,000 resamples). `plain` and `adjusted`: the mean "
        "game score; `paired`: minus `expert`'s score in the same seat of the same deal. "
        "`ratio`: adjusted width ÷ plain width (at most 0.5 is the target); `deals for the "
        "plain width`: the deals an adjusted estimate needs to be as narrow as the plain one "
        f"on {args.deals} deals (ratio² × deals). `correction`: the mean correction a game "
        "with its interval (zero: unbiased).",
        "",
        f"`{command}`",
        "",
        "| agent | plain [95%] | adjusted [95%] | width ratio | deals for the plain width "
        "| correction a game [95%] | paired plain [95%] | paired adjusted [95%] | paired ratio "
        "| same games as the card |",
        "|---|---|---|---:|---:|---|---|---|---:|---|",
    ]
    summary = {
        "command": command,
        "model": estimator.model.sha256
        if isinstance(estimator, LuckEstimator)
        else estimator.model_id,
        "agents": {},
    }
    for spec in specs:
        f = found[spec]
        plain = f["score"].mean(axis=1)
        adjusted = (f["score"] - f["correction"]).mean(axis=1)
        corr = f["correction"].mean(axis=1)
        p_ci, a_ci, c_ci = interval(plain, idx), interval(adjusted, idx), interval(corr, idx)
        ratio = width_ratio(p_ci, a_ci)
        pp = interval(plain - ref["score"].mean(axis=1), idx)
        pa = interval(adjusted - ref_adj, idx)
        paired_ratio = width_ratio(pp, pa) if spec != "expert" else float("nan")
        card = committed_scores(spec, args.deals, name)
        same = "—" if card is None else ("yes" if np.array_equal(card, f["score"]) else "NO")
        summary["agents"][spec] = {
            "plain": [float(plain.mean()), p_ci],
            "adjusted": [float(adjusted.mean()), a_ci],
            "width_ratio": ratio,
            "correction": [float(corr.mean()), c_ci],
            "paired_plain": [float((plain - ref["score"].mean(axis=1)).mean()), pp],
            "paired_adjusted": [float((adjusted - ref_adj).mean()), pa],
            "paired_width_ratio": paired_ratio,
            "same_games_as_card": same,
            "seconds": f["seconds"],
        }

        def fmt(mean: float, ci: list[float]) -> str:
            return f"{mean:.1f} [{ci[0]:.1f}, {ci[1]:.1f}]"

        paired = "(the reference)" if spec == "expert" else None
        lines.append(
            f"| `{spec}` | {fmt(plain.mean(), p_ci)} | {fmt(adjusted.mean(), a_ci)} | "
            f"{ratio:.2f} | {ratio**2 * args.deals:.0f} | {fmt(corr.mean(), c_ci)} | "
            + (
                f"{paired} | {paired} | — "
                if paired
                else f"{fmt((plain - ref['score'].mean(axis=1)).mean(), pp)} | "
                f"{fmt((adjusted - ref_adj).mean(), pa)} | {paired_ratio:.2f} "
            )
            + f"| {same} |"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    text = "\n".join(lines) + "\n"
    table = "widths" if args.luck == "model" else "widths-" + args.luck.replace(":", "-")
    table += "" if args.set == "full" else f"-{args.set}"
    (args.out / f"{table}.md").write_text(text)
    (args.out / f"{table}.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(text)
    if args.cards:
        for folder in write_cards(found, args.deals, list(dict.fromkeys(args.agents)), name):
            print(f"wrote {folder}/card.json, card.md, card.png")


if __name__ == "__main__":
    main()
