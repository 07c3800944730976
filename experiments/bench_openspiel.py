"""OpenSpiel measurements: ``python_craits`` against OpenSpiel's C++ ``crazy_eights``, and the
time per decision of the search bots ``openspiel-ismcts:N`` and ``pimc``.

``speed`` — in one run, ``--rounds`` interleaved rounds of ``--seconds`` each per variant
(medians reported), random playouts of 4-player games driven through pyspiel's API by the
same Python loop (a chance node's outcome drawn by its probabilities, a decision's action
uniformly among the legal ones), every decision also building the acting player's
observation tensor:

* ``crazy_eights`` — OpenSpiel's C++ game (``players=4``, its other parameters default);
* ``python_craits`` — observation tensor (the ``craits_v0`` observation), default rules;
* ``python_craits`` — observation and information-state tensor (the perfect-recall history,
  :mod:`craits_env.integrations.openspiel_infostate`; ``crazy_eights`` has none, so this is
  reported beside the ratio, not in it).

Decisions per second (the players' moves; chance steps counted apart) and their ratio.
Writes ``experiments/results/openspiel/bench.json`` and ``bench.md`` atomically.

``decisions`` — per spec, the milliseconds of each ``act`` in 4-player games against three
``expert`` bots (``--hand-sizes``, default 3,2,1), the specs interleaved game by game on the
same deals and seats, one untimed warm-up game each first (numba compiles ``pimc``'s
rollouts): the mean and median per **searched** decision — a choice for ``openspiel-ismcts``
(it searches every one); a choice that is not a one-card declaration at the end of a hand
for ``pimc`` (what it searches) — and the mean over all decisions. Writes
``decision_times.json`` and ``.md`` beside ``bench.json``. Usage::

    python experiments/bench_openspiel.py speed --seconds 5 --rounds 3
    python experiments/bench_openspiel.py decisions --games 24 pimc openspiel-ismcts:2 \
        openspiel-ismcts:8 openspiel-ismcts:32
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import random
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import pyspiel

import craits_env.integrations.openspiel  # noqa: F401  (registers python_craits)
from craits.agents.pimc import ENDGAME
from craits.agents.specs import make_agent
from craits_env import Game, Phase, Rules
from craits_env.fileio import atomic_write_json, atomic_write_text
from craits_env.public import PublicGame

RESULTS = Path(__file__).resolve().parent / "results" / "openspiel"
PLAYERS = 4
VARIANTS = {
    "crazy_eights": ("crazy_eights(players=4)", False),
    "python_craits": ("python_craits(players=4)", False),
    "python_craits+infostate": ("python_craits(players=4)", True),
}
"""name -> (the game string, whether each decision also builds the information-state tensor)."""


# ----------------------------------------------------------------------------- speed


def playouts(game: pyspiel.Game, infostate: bool, seconds: float, r: random.Random) -> dict:
    """Random playouts for about ``seconds`` (whole games): decisions, chance steps, games."""
    decisions = chance = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(r.choices(actions, probs)[0])
                chance += 1
                continue
            player = state.current_player()
            state.observation_tensor(player)
            if infostate:
                state.information_state_tensor(player)
            legal = state.legal_actions()
            state.apply_action(legal[r.randrange(len(legal))])
            decisions += 1
        games += 1
    elapsed = time.perf_counter() - start
    return {
        "decisions_per_s": decisions / elapsed,
        "chance_steps_per_s": chance / elapsed,
        "games_per_s": games / elapsed,
        "decisions_per_game": decisions / games,
    }


def speed(seconds: float, rounds: int, seed: int) -> dict[str, Any]:
    games = {name: pyspiel.load_game(text) for name, (text, _) in VARIANTS.items()}
    runs: dict[str, list[dict]] = {name: [] for name in VARIANTS}
    r = random.Random(seed)
    for _ in range(rounds):
        for name, (_, infostate) in VARIANTS.items():
            runs[name].append(playouts(games[name], infostate, seconds, r))
    medians = {
        name: {key: statistics.median(run[key] for run in rs) for key in rs[0]}
        for name, rs in runs.items()
    }
    c8 = medians["crazy_eights"]["decisions_per_s"]
    pairs = zip(runs["crazy_eights"], runs["python_craits"], strict=True)
    per_round = [a["decisions_per_s"] / b["decisions_per_s"] for a, b in pairs]
    return {
        "variants": {name: text for name, (text, _) in VARIANTS.items()},
        "medians": medians,
        "rounds": runs,
        "ratio_crazy_eights_over_python_craits": c8 / medians["python_craits"]["decisions_per_s"],
        "ratio_per_round": per_round,
        "ratio_with_infostate": c8 / medians["python_craits+infostate"]["decisions_per_s"],
        "observation_sizes": {name: int(g.observation_tensor_size()) for name, g in games.items()},
        "information_state_size": int(games["python_craits"].information_state_tensor_size()),
    }


def speed_markdown(result: dict[str, Any]) -> str:
    m = result["medians"]
    lines = [
        "# python_craits against OpenSpiel's crazy_eights: random playouts with observations",
        "",
        _machine(result),
        "",
        "| game | decisions/s | chance steps/s | games/s | decisions/game |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, row in m.items():
        lines.append(
            f"| `{name}` | {row['decisions_per_s']:,.0f} | {row['chance_steps_per_s']:,.0f} | "
            f"{row['games_per_s']:,.2f} | {row['decisions_per_game']:,.0f} |"
        )
    size = result["observation_sizes"]
    lines += [
        "",
        f"**OpenSpiel's C++ `crazy_eights` makes "
        f"{result['ratio_crazy_eights_over_python_craits']:.1f}x the decisions per second of "
        f"`python_craits`** (the rounds' ratios {min(result['ratio_per_round']):.1f}x to "
        f"{max(result['ratio_per_round']):.1f}x), both building the observation tensor at every "
        f"decision ({size['crazy_eights']} floats against {size['python_craits']}). With the "
        f"information-state tensor too ({result['information_state_size']:,} floats, the "
        f"history bounded at 512 slots; `crazy_eights` has none) the ratio is "
        f"{result['ratio_with_infostate']:.0f}x: that tensor is encoded again from the seat's "
        f"view of every event so far at each call (about a thousand events by the middle of a "
        f"game) and pyspiel copies it into a Python list. The two games differ in length (a "
        f"`crazy_eights` game is one hand; `python_craits` plays the standard game's 15), so "
        f"decisions per second, not games, compare the engines. Both run under the same "
        f"Python loop through pyspiel's API (`chance_outcomes`, `legal_actions`, "
        f"`apply_action`), which is part of what is timed.",
        "",
        f"Reproduce: `{result['command']}`",
        "",
    ]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- decisions


def searched(spec: str, game: Game, legal: tuple[int, ...]) -> bool:
    """Whether ``spec`` searches this decision (module docstring)."""
    if len(legal) < 2:
        return False
    if spec.partition(":")[0] == "pimc":
        return game.phase != Phase.DECLARE and min(len(h) for h in game.hands) <= ENDGAME
    return True


def time_game(spec: str, rules: Rules, deal: int) -> tuple[list[float], list[float]]:
    """One game of ``spec`` at seat ``deal % 4`` against three experts: the seconds of its
    searched decisions and of all its decisions."""
    game = Game(PLAYERS, rules, seed=deal)
    pub = PublicGame(game)
    hero_seat = deal % PLAYERS
    agents = [make_agent("expert", deal * 10 + s) for s in range(PLAYERS)]
    agents[hero_seat] = make_agent(spec, deal)
    found: list[float] = []
    every: list[float] = []
    while not game.is_over:
        seat = game.current_player
        view = pub.view(seat)
        if seat != hero_seat:
            pub.apply(agents[seat].act(view))
            continue
        legal = view.legal_actions
        is_searched = searched(spec, game, legal)
        start = time.perf_counter()
        action = agents[seat].act(view)
        elapsed = time.perf_counter() - start
        every.append(elapsed)
        if is_searched:
            found.append(elapsed)
        pub.apply(action)
    return found, every


def decision_times(specs: list[str], rules: Rules, games: int, seed: int) -> dict[str, Any]:
    for spec in specs:
        time_game(spec, rules, seed - 1)  # warm-up (numba, OpenSpiel's imports)
    found: dict[str, list[float]] = {s: [] for s in specs}
    every: dict[str, list[float]] = {s: [] for s in specs}
    for g in range(games):
        order = specs[g % len(specs) :] + specs[: g % len(specs)]  # interleaved, rotating
        for spec in order:
            a, b = time_game(spec, rules, seed + g)
            found[spec] += a
            every[spec] += b
    rows = {}
    for spec in specs:
        ms = [1000 * t for t in found[spec]]
        rows[spec] = {
            "searched_decisions": len(ms),
            "ms_per_searched_mean": statistics.fmean(ms) if ms else None,
            "ms_per_searched_median": statistics.median(ms) if ms else None,
            "decisions": len(every[spec]),
            "ms_per_decision_mean": 1000 * statistics.fmean(every[spec]),
        }
    return {"hand_sizes": list(rules.hand_sizes), "games": games, "seed": seed, "specs": rows}


def decisions_markdown(result: dict[str, Any]) -> str:
    sizes = ",".join(map(str, result["hand_sizes"]))
    lines = [
        "# Milliseconds per decision: openspiel-ismcts:N and pimc against three experts",
        "",
        _machine(result),
        "",
        f"{result['games']} games per spec, 4 players, `hand_sizes={sizes}`, the spec at seat "
        "`game % 4` against three `expert` bots, the specs interleaved game by game on the same "
        "deals. A searched decision: any choice for `openspiel-ismcts` (it searches every one); "
        "a choice other than a one-card declaration once some player holds 3 cards or fewer "
        "for `pimc`.",
        "",
        "| spec | searched decisions | ms per searched decision: mean | median | × `pimc`'s "
        "mean | decisions | ms per decision: mean |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    pimc = result["specs"].get("pimc", {}).get("ms_per_searched_mean")
    for spec, row in result["specs"].items():
        mean, median = row["ms_per_searched_mean"], row["ms_per_searched_median"]
        times = "—" if not (pimc and mean) else f"{mean / pimc:,.1f}"
        lines.append(
            f"| `{spec}` | {row['searched_decisions']} | {_ms(mean)} | {_ms(median)} | {times} | "
            f"{row['decisions']} | {_ms(row['ms_per_decision_mean'])} |"
        )
    lines += ["", f"Reproduce: `{result['command']}`", ""]
    return "\n".join(lines)


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.2f}"


def _machine(result: dict[str, Any]) -> str:
    return (
        f"{result['date']}; {platform.machine()}, {result['cpus']} CPUs (load average "
        f"{result['load_average']:.1f} at the start: a shared machine), CPython "
        f"{platform.python_version()}, OpenSpiel {result['open_spiel']}, one process."
    )


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    sp = sub.add_parser("speed", help="python_craits against crazy_eights")
    sp.add_argument("--seconds", type=float, default=5.0, help="per variant and round")
    sp.add_argument("--rounds", type=int, default=3, help="interleaved rounds (medians)")
    sp.add_argument("--seed", type=int, default=0)
    dp = sub.add_parser("decisions", help="milliseconds per decision of search specs")
    dp.add_argument("specs", nargs="+", metavar="SPEC")
    dp.add_argument("--games", type=int, default=24, help="timed games per spec")
    dp.add_argument("--hand-sizes", default="3,2,1")
    dp.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    from importlib.metadata import version

    meta = {
        "date": datetime.date.today().isoformat(),
        "open_spiel": version("open_spiel"),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg()[0],
        "command": "python experiments/bench_openspiel.py "
        + shlex.join(sys.argv[1:] if argv is None else argv),
    }
    if args.what == "speed":
        result = {**meta, **speed(args.seconds, args.rounds, args.seed)}
        name, text = "bench", speed_markdown(result)
    else:
        rules = Rules(hand_sizes=tuple(int(s) for s in args.hand_sizes.split(",")))
        result = {**meta, **decision_times(args.specs, rules, args.games, args.seed)}
        name, text = "decision_times", decisions_markdown(result)
    atomic_write_json(args.out / f"{name}.json", result)
    atomic_write_text(args.out / f"{name}.md", text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
