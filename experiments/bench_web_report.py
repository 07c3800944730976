"""The reports of ``experiments/bench_web.py``: ``bench_web.md`` (the load) and
``bench_web_thinking.md`` (the thinking runs side by side).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

# A script's module: its own directory is on sys.path, so its sibling module imports by name.
from bench_web_thinking import PROBES, TARGET_MS


def to_markdown(out: dict[str, Any]) -> str:
    c, load, one, anchor = out["config"], out["load"], out["one_client"], out["in_process"]
    rows = []
    for label, r in (
        ("in process (no HTTP), one game at a time", anchor),
        ("HTTP, one client, one game at a time", one),
        (f"HTTP, {load['games']} games at once", load),
    ):
        m = r["move"]
        rows.append(
            f"| {label} | {m['n']:,} | {m['p50_ms']} | {m['p95_ms']} | {m['p99_ms']} | "
            f"{m['max_ms']} |"
        )
    in_flight = load["games"] / load["requests_per_s"]  # Little's law: the queueing wait
    served = {
        k: round(1000 / r["move"]["mean_ms"], 1) for k, r in (("anchor", anchor), ("one", one))
    }
    restart = out["restart"]
    return "\n".join(
        [
            "# `craits serve` under load (same run)",
            "",
            f"{out['date']}; {out['machine']}; {os.cpu_count()} cores shared by the server and the "
            f"clients. Every game: you (random legal moves) against {', '.join(c['opponents'])}, "
            f"hands {'-'.join(map(str, c['hand_sizes']))}.",
            "",
            f"**{load['games']} games at once** (peak {load['peak_open_games']} open on the "
            "server): "
            f"{load['finished']}/{load['games']} finished, {load['requests']:,} requests in "
            f"{load['seconds']} s = **{load['requests_per_s']} requests/s**, "
            f"{load['error_count']} errors.",
            "",
            "Latency of a move (the person's move, the bots' replies, the narration, "
            "the new view):",
            "",
            "| where | moves | p50 ms | p95 ms | p99 ms | max ms |",
            "|---|---:|---:|---:|---:|---:|",
            *rows,
            "",
            f"Throughput, same run: {served['anchor']:,} moves/s in process, {served['one']:,} "
            f"moves/s over HTTP for one client, {load['requests_per_s']} requests/s for "
            ""
            f"{load['games']} clients at once ({load['requests_per_s'] / served['one']:.2f}× one "
            f"client: one Python process, {os.cpu_count()} cores shared with the clients), "
            "so under "
            f"load a request mostly waits its turn: with {load['games']} always in flight the "
            f"expected wait is {load['games']} / {load['requests_per_s']} ≈ {in_flight:.2f} s "
            f"(Little's law), the "
            f"median measured {load['move']['p50_ms'] / 1000:.2f} s. Creating a game under load: "
            f"p50 {load['create']['p50_ms']} ms, p95 {load['create']['p95_ms']} ms; a view: p50 "
            f"{load['view']['p50_ms']} ms, p95 {load['view']['p95_ms']} ms. Load average of the "
            f"machine (other work included) at the start and the end: {out['load_average']}.",
            "",
            f"Restart: {restart['saved']} games saved, the server stopped and started again on the "
            f"same folder: {restart['listed_after_restart']} records listed, "
            f"{restart['scores_match']} with the scores the game ended with; the first replays: "
            f"{restart['first_replays']}.",
            "",
            f"Reproduce: `{out['command']}`",
            "",
        ]
    )


def thinking_markdown(runs: dict[str, dict[str, Any]]) -> str:
    """The runs of ``bench_web_thinking.json`` side by side (one column group per label)."""
    labels = list(runs)
    first = runs[labels[0]]
    c = first["config"]
    bots = c["opponents"]
    kinds = [k for k in PROBES if any(k in r["probes"] for r in runs.values())]
    head = (
        "| probe (client 127.0.1.2) | "
        + " | ".join(f"{lab} p50 ms | {lab} p95 ms | {lab} max ms | {lab} n" for lab in labels)
        + " |"
    )
    rows = []
    for kind in kinds:
        cells = []
        for lab in labels:
            q = runs[lab]["probes"].get(kind, {"n": 0})
            cells += (
                [str(q["p50_ms"]), f"**{q['p95_ms']}**", str(q["max_ms"]), str(q["n"])]
                if q["n"]
                else ["–", "–", "–", "0"]
            )
        rows.append(f"| {PROBES[kind]} | " + " | ".join(cells) + " |")

    def line(name: str, value: Any) -> str:
        return f"| {name} | " + " | ".join(str(value(runs[lab])) for lab in labels) + " |"

    def thinkers(r: dict[str, Any]) -> str:
        kids = [x for x in r["cpu"]["processes"] if x["role"] == "child" and x["cores"] > 0.01]
        return ", ".join(f"{x['cores']} (nice {x['nice']})" for x in kids) or "none"

    verdicts = []
    for lab in labels:
        missed = [
            PROBES[k]
            for k, q in runs[lab]["probes"].items()
            if k not in ("move", "new_game") and not (q["n"] and q["p95_ms"] < TARGET_MS)
        ]
        verdicts.append(
            f"- **{lab}**: " + ("met" if not missed else "missed by " + "; ".join(missed))
        )
    hands = "-".join(map(str, c["hand_sizes"])) if c["hand_sizes"] else "the rules' default"
    expected = {lab: r["window_s"] / r["config"]["probe_every"] for lab, r in runs.items()}
    sent = {lab: sum(q["n"] for q in r["probes"].values()) for lab, r in runs.items()}
    few = [
        f"{lab}: {sent[lab]} probes in {r['window_s']:g} s where {expected[lab]:.0f} were "
        "due: a probe waits for the one before it (one connection), so a frozen server "
        "is probed seldom; each of its samples is one long wait.\n"
        for lab, r in runs.items()
        if sent[lab] < expected[lab] / 2
    ]
    caps = "; ".join(
        f"{lab}: " + ", ".join(f"`{f} 0`" for f in r["caps_off"]) for lab, r in runs.items()
    )
    facts: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
        ("warm-up s (every thinking game had a move answered)", lambda r: r["warmup_s"]),
        (
            "thinking games warm / started",
            lambda r: f"{r['thinking_games_warm']} / {r['thinking']['games_started']}",
        ),
        ("thinking client: moves answered / s", lambda r: r["thinking"]["moves_posted_per_s"]),
        ("thinking client: bot moves told / s", lambda r: r["thinking"]["bot_moves_per_s"]),
        (
            "… per CPU second of the server's processes (itself, its thinkers)",
            lambda r: round(
                r["thinking"]["bot_moves_per_s"]
                / max(1e-9, r["cpu"]["server_cores"] + r["cpu"]["children_cores"]),
                1,
            ),
        ),
        (
            "errors: thinking client, probes",
            lambda r: f"{r['thinking']['errors']}, {r['probe_errors']}",
        ),
        ("server process, cores", lambda r: r["cpu"]["server_cores"]),
        ("its child processes (the thinkers), cores", thinkers),
        ("both clients (this script), cores", lambda r: r["cpu"]["client_cores"]),
        (
            "the machine: busy cores of all",
            lambda r: f"{r['cpu']['machine_cores_busy']} of {r['cpu']['machine_cores']:g}",
        ),
        ("load average at start, end", lambda r: ", ".join(map(str, r["load_average"]))),
    ]
    reproduce = [
        f"- {lab}: `{r['command']}` (server: `{r['server_command']}`, tree {r['tree']})"
        for lab, r in runs.items()
    ]
    return "\n".join(
        [
            "# `craits serve` while one client's bots think (issue 28, finding 2)",
            "",
            "; ".join(f"{lab}: {r['date']}" for lab, r in runs.items()) + f". {first['machine']}; "
            f"{os.cpu_count()} cores, shared by the server, its bot processes, both clients — and "
            "other work on the machine (its load, below): these are not quiet-machine numbers.",
            "",
            f"**The load.** One client (127.0.0.1) keeps {c['thinkers']} games thinking, each of "
            f"{len(bots)} × `{bots[0]}` against the person (seat 0), hands {hands}: each game "
            "posts a random legal move as soon as its last response came (a new game when one "
            "ends). Every per-client cap each server knows is off, so that the load is really "
            f"there ({caps}). A second client (127.0.1.2, one connection) probes every "
            f"{c['probe_every'] * 1000:g} ms, in turn, the kinds below; after the warm-up (every "
            f"thinking game has had a move answered) each run measures {c['seconds']:g} s. "
            "A probe's latency is from its request to its response, over its one connection.",
            "",
            head,
            "|---|" + "---:|" * (4 * len(labels)),
            *rows,
            "",
            *few,
            f"Target: p95 < {TARGET_MS:g} ms for every probe kind but the probe's own move (which "
            "waits for its expert's move in the same thinkers):",
            "",
            *verdicts,
            "",
            "| the run | " + " | ".join(labels) + " |",
            "|---|" + "---:|" * len(labels),
            *(line(name, value) for name, value in facts),
            "",
            "Bot moves told: the lines of the views' events that narrate a bot's move (a decision "
            "that says nothing, such as staying silent, is not counted; the same count in every "
            ""
            "run). CPU: from `/proc` over the measured window.",
            "",
            "Reproduce (`--server-commit C` serves `git archive C` from a temporary folder "
            "with the same interpreter, as `--server-root DIR` does for any folder):",
            "",
            *reproduce,
            "",
        ]
    )
