"""Even timing (issue 43, F): a searching bot's move is answered no sooner than its recent
moves took (:mod:`craits.web.timing`), so the latency of a move's answer no longer tells
whether the bot had more than one real option — checked with the attack of the issue
(experiments/bench_web_timing.py: a latency threshold fitted on half the answers, judged
on the others, against the base rate)."""

from __future__ import annotations

import asyncio

import pytest

from craits.web.costs import expected_seconds
from craits.web.timing import COLD_MARGIN, MARGIN, MIN_SAMPLES, SAMPLES, WARM_UP, MoveFloors
from craits_env import Rules
from experiments.bench_web_timing import Answer, attack, run


def test_the_floor_is_learnt_per_kind_from_the_moves_before_they_wait() -> None:
    floors = MoveFloors(cap=10.0)
    for _ in range(WARM_UP):
        floors.add("pimc", 30.0)  # a fresh thinker's first searches: loading, not counted
    assert floors.floor("pimc") == 0.0
    floors.add("pimc", 0.2)
    assert floors.floor("pimc") == pytest.approx(0.2 * COLD_MARGIN)
    for _ in range(MIN_SAMPLES):
        floors.add("pimc", 0.001)  # moves without a choice
    floors.add("pimc", 0.4)
    assert floors.floor("pimc") == pytest.approx(0.4 * MARGIN)  # the slowest of few
    for _ in range(SAMPLES):
        floors.add("pimc", 0.001)
    assert floors.floor("pimc") == pytest.approx(0.001 * MARGIN)  # the old searches forgotten
    assert floors.floor("expert") == 0.0  # another kind
    for _ in range(WARM_UP + 1):
        floors.add("huge", 500.0)
    assert floors.floor("huge") == 10.0  # never beyond the cap
    for _ in range(WARM_UP + 1):
        floors.add("k", 0.05)
    waited = asyncio.run(floors.pad("k", 0.01))  # the agent answered in 10 ms
    assert waited == pytest.approx(0.05 * COLD_MARGIN - 0.01)
    assert asyncio.run(floors.pad("k", 5.0)) == 0.0  # a slow search waits for nothing
    with pytest.raises(ValueError, match="cap: got 0"):
        MoveFloors(cap=0)


def test_the_first_moves_of_a_kind_wait_for_the_expected_search() -> None:
    """Before any move of a kind is known (the first :data:`WARM_UP` + 1 of them went
    unpadded), the floor is the measured cost of such a search times ``MARGIN``; known
    moves take over once there are enough."""
    floors = MoveFloors(cap=10.0)
    expected = expected_seconds("pimc:2048", 2, Rules())
    assert expected == pytest.approx(2048 * 5.0e-5)  # craits/web/costs.py's measured cost
    assert floors.floor("pimc", expected) == pytest.approx(expected * MARGIN)
    waited = asyncio.run(floors.pad("pimc", 0.001, expected))  # a first move without choice
    assert waited == pytest.approx(expected * MARGIN - 0.001)
    for _ in range(WARM_UP):
        floors.add("pimc", 0.3)
    assert floors.floor("pimc", expected) == pytest.approx(0.3 * COLD_MARGIN)  # the slower
    for _ in range(MIN_SAMPLES):
        floors.add("pimc", 0.01)
    assert floors.floor("pimc", expected) == pytest.approx(0.3 * MARGIN)  # learnt: the prior off
    assert floors.floor("other", 500.0) == 10.0  # the cap holds
    assert expected_seconds("expert", 4, Rules()) == 0.0  # not a search: no prior
    assert expected_seconds("pimc:x", 4, Rules()) == 0.0


def test_the_attack_scores_a_leaking_and_an_even_server() -> None:
    leaking = [Answer(0.1 if s else 0.001, 1, s) for s in [True, False, False] * 20]
    assert attack(leaking)["accuracy"] == 1.0 and attack(leaking)["base_rate"] == pytest.approx(
        2 / 3
    )
    even = [Answer(0.1, 1, s) for s in [True, False, False] * 20]
    assert attack(even)["accuracy"] == pytest.approx(2 / 3)


@pytest.mark.slow
def test_the_latency_of_a_move_no_longer_tells_whether_the_bot_searched() -> None:
    """pimc:2048, two players, 6 short games (~290 answers) each way, a thread thinking."""
    before = run("pimc:2048", games=6, even_timing=False, workers=0)
    after = run("pimc:2048", games=6, even_timing=True, workers=0)
    assert before["judged"] > 100 and after["judged"] == before["judged"]
    assert before["accuracy"] >= before["base_rate"] + 0.08, before  # the attack works...
    assert after["accuracy"] <= after["base_rate"] + 0.06, after  # ...and no longer does
