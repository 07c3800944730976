"""The live games of ``craits serve`` (issue 28): their SQLite store, the caps that never
evict a game in play, a game rebuilt from the store going on exactly, the thinkers' budget
and their fair queue — in process (the real server is killed in tests/web/test_web_durable.py)."""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time
from collections.abc import Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import pytest

from craits.web.bots import FairQueue, Job, Move, Thinkers, is_quick
from craits.web.database import MEMORY, GameDatabase, StoredGame, StoreError
from craits.web.requests import ApiError, NewGame
from craits.web.sessions import GameSession, SessionStore, StoreLimits
from craits.web.views import seat_view
from craits_env.engine import Game
from craits_env.rules import Rules

T = TypeVar("T")
QUICK = Rules(hand_sizes=(3, 2))


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def make_store(
    path: Path | str = MEMORY, clock: Clock | None = None, **limits: Any
) -> SessionStore:
    clock = clock or Clock()
    return SessionStore(
        GameDatabase(path, clock=clock), Thinkers(0), StoreLimits(**limits), clock=clock
    )


def new(
    opponents: tuple[str, ...] = ("random",), seed: int | None = 1, rules: Rules = QUICK
) -> NewGame:
    return NewGame(opponents, 0, seed, rules)


def stored_game(game_id: str = "g1", client: str = "10.0.0.1") -> StoredGame:
    return StoredGame(
        game_id=game_id,
        token="t" * 32,
        client=client,
        opponents=("expert",),
        seat=1,
        seed=2**127 + 5,
        seed_chosen=False,
        rules=QUICK.to_dict(),
        actions=[3, 4],
    )


# ----------------------------------------------------------------------------- the database


def test_a_game_and_its_actions_survive_closing_the_file(tmp_path: Path) -> None:
    clock = Clock()
    db = GameDatabase(tmp_path / "live.sqlite3", clock=clock)
    db.add(stored_game())
    clock.now += 10
    db.add_actions("g1", 2, [7, 8, 9])
    db.set_saved("g1", {"file": "0:x.jsonl", "name": "x.jsonl"})
    db.close()
    again = GameDatabase(tmp_path / "live.sqlite3", clock=clock)
    game = again.load("g1")
    assert game is not None and game.actions == [3, 4, 7, 8, 9]
    assert game.seed == 2**127 + 5 and game.seat == 1 and game.opponents == ("expert",)
    assert game.rules == QUICK.to_dict() and game.client == "10.0.0.1"
    assert game.moved - game.created == 10 and game.saved == {
        "file": "0:x.jsonl",
        "name": "x.jsonl",
    }
    assert again.load("nothing") is None


def test_an_action_index_is_written_once() -> None:
    db = GameDatabase(MEMORY)
    db.add(stored_game())
    with pytest.raises(sqlite3.IntegrityError):
        db.add_actions("g1", 1, [5])  # index 1 holds an action already
    game = db.load("g1")
    assert game is not None and game.actions == [3, 4]  # the failed write left nothing


def test_games_in_play_are_counted_by_client_until_they_end_or_idle() -> None:
    clock = Clock()
    db = GameDatabase(MEMORY, clock=clock)
    db.add(stored_game("a1", "A"))
    db.add(stored_game("a2", "A"))
    db.add(stored_game("b1", "B"))
    assert db.live(0) == 3 and db.live(0, "A") == 2 and db.live(0, "C") == 0
    db.end("a1", resigned=True)
    db.end("b1", failed="bot expert (player_0) failed: boom")
    assert db.live(0) == 1 and db.live(0, "A") == 1
    game = db.load("b1")
    assert game is not None and game.failed == "bot expert (player_0) failed: boom"
    clock.now += 100
    db.add_actions("a2", 2, [1], finished=True)
    assert db.live(0) == 0
    db.add(stored_game("c1", "C"))
    assert db.live(clock.now - 50) == 1
    assert db.forget_before(clock.now - 50) == 2 and len(db) == 2  # a1 and b1 moved last long ago
    assert db.load("a1") is None  # its actions went with it (ON DELETE CASCADE)


def test_a_file_that_is_no_store_is_refused_in_one_line(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError, match="not a Craits game store") as e:
        GameDatabase(junk)
    assert "\n" not in str(e.value)
    newer = tmp_path / "newer.sqlite3"
    conn = sqlite3.connect(newer)
    conn.execute("PRAGMA user_version=99")
    conn.close()
    with pytest.raises(StoreError, match="schema version 99, this craits reads 1"):
        GameDatabase(newer)


# ----------------------------------------------------------------------------- the caps


def test_the_cap_refuses_new_games_and_never_evicts_one_in_play() -> None:
    clock = Clock()
    store = make_store(clock=clock, max_games=2, idle_seconds=60)
    first = run(store.create(new(), "A"))
    second = run(store.create(new(), "B"))
    with pytest.raises(ApiError) as e:
        run(store.create(new(), "C"))
    assert e.value.status == 503 and "holds 2 games in play, its limit" in e.value.message
    for game in (first, second):  # both still there, unchanged
        assert run(store.get(game.game_id, game.token)) is game
    clock.now += 61  # neither has moved for a minute: they stop counting
    third = run(store.create(new(), "C"))
    assert len(store) == 2  # at most max_games held in memory: the oldest left it ...
    again = run(store.get(first.game_id, first.token))  # ... and comes back from the store
    assert again is not first and again.table.actions == first.table.actions
    assert seat_view(again, 0) == seat_view(first, 0)
    assert run(store.get(third.game_id, third.token)) is third


def test_one_client_holds_at_most_its_share_of_the_games_in_play() -> None:
    store = make_store(client_games=2)
    a1 = run(store.create(new(), "A"))
    run(store.create(new(), "A"))
    with pytest.raises(ApiError) as e:
        run(store.create(new(), "A"))
    assert e.value.status == 429 and "holds 2 games in play" in e.value.message
    run(store.create(new(), "B"))  # another client is not held back
    run(store.resign(a1))  # a game resigned is no longer in play
    run(store.create(new(), "A"))


def test_a_client_whose_bots_thought_their_share_waits_and_nothing_changes() -> None:
    store = make_store(client_think=1e-9)
    game = run(store.create(new(("expert", "greedy"), seed=3), "A"))
    while len(game.table.actions) < 2:  # until the bots have moved, thinking some time
        run(store.act(game, game.game.legal_actions()[0]))
    before = list(game.table.actions)
    with pytest.raises(ApiError) as e:
        run(store.act(game, game.game.legal_actions()[0]))
    assert e.value.status == 429 and "--client-think" in e.value.message
    assert game.table.actions == before
    with pytest.raises(ApiError):
        run(store.create(new(), "A"))
    run(store.create(new(), "B"))


# ----------------------------------------------------------------------------- rebuilt games


def play(store: SessionStore, session: GameSession, moves: int, rng: random.Random) -> None:
    for _ in range(moves):
        if session.closed:
            return
        run(store.act(session, rng.choice(session.game.legal_actions())))


@pytest.mark.parametrize(
    "opponents", [("pimc:16", "random", "expert"), ("champion", "random", "tactician")]
)
def test_a_game_rebuilt_from_the_store_goes_on_exactly_as_it_would_have(
    tmp_path: Path, opponents: tuple[str, ...]
) -> None:
    asked = NewGame(opponents, 1, 17, Rules(hand_sizes=(4, 3)))
    uninterrupted = make_store()
    game = run(uninterrupted.create(asked, "A"))
    path = tmp_path / "live.sqlite3"
    first = make_store(path)
    stopped = run(first.create(asked, "A"))
    play(uninterrupted, game, 6, random.Random(1))
    play(first, stopped, 6, random.Random(1))
    restarted = make_store(path)  # a new server on the same store
    rebuilt = run(restarted.get(stopped.game_id, stopped.token))
    assert rebuilt is not stopped and rebuilt.table.actions == game.table.actions
    assert seat_view(rebuilt, 0) | {"game_id": 0} == seat_view(game, 0) | {"game_id": 0}
    play(uninterrupted, game, 100, random.Random(2))
    play(restarted, rebuilt, 100, random.Random(2))
    assert rebuilt.table.actions == game.table.actions and game.closed
    assert rebuilt.game.scores == game.game.scores
    assert rebuilt.recorder.record()["scores"] == game.recorder.record()["scores"]


def test_a_wrong_token_is_refused_before_the_game_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "live.sqlite3"
    game = run(make_store(path).create(new(), "A"))
    restarted = make_store(path)
    with pytest.raises(ApiError) as e:
        run(restarted.get(game.game_id, "x" * 32))
    assert e.value.status == 403 and len(restarted) == 0  # nothing was rebuilt for it
    with pytest.raises(ApiError) as e:
        run(restarted.get("no-such-game", game.token))
    assert e.value.status == 404


def test_a_game_without_a_move_for_the_keep_days_leaves_the_store(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "live.sqlite3"
    old = run(make_store(path, clock, keep_seconds=3600).create(new(), "A"))
    restarted = make_store(path, clock, keep_seconds=3600)
    clock.now += 2 * 3600
    run(restarted.create(new(), "B"))  # a new game sweeps the store
    with pytest.raises(ApiError) as e:
        run(restarted.get(old.game_id, old.token))
    assert e.value.status == 404 and "without a move" in e.value.message


# ----------------------------------------------------------------------------- thinkers


def test_the_fair_queue_serves_one_job_of_each_client_in_turn() -> None:
    queue = FairQueue()

    def job(client: str, i: int) -> Job:
        return Job(f"{client}{i}", client, ("random",), 0, 1, {}, ())

    for client, i in [("A", 1), ("A", 2), ("A", 3), ("B", 1), ("C", 1), ("B", 2)]:
        queue.put(job(client, i), Future())
    order = []
    while len(queue):
        item = queue.get()
        assert item is not None
        order.append(item[0].game_id)
    assert order == ["A1", "B1", "C1", "A2", "B2", "A3"]
    assert queue.close() == [] and queue.get() is None


SLOW_AGENT = """
import time
import numpy as np

class Slow:
    def act(self, observation):
        time.sleep(30)
        return int(np.flatnonzero(observation["action_mask"])[0])
"""


@pytest.mark.slow
def test_a_move_over_the_budget_stops_its_thinker_and_the_next_one_takes_over(
    tmp_path: Path,
) -> None:
    agent = tmp_path / "slow.py"
    agent.write_text(SLOW_AGENT)
    thinkers = Thinkers(workers=1, move_seconds=1.0)
    seed = next(s for s in range(100) if Game(2, Rules(), seed=s).current_player == 0)

    async def moves() -> tuple[Move, Move]:  # the person at seat 1: the bot moves first
        slow = Job("g1", "A", (f"{agent}:Slow",), 1, seed, Rules().to_dict(), ())
        quick = Job("g2", "A", ("random",), 1, seed, Rules().to_dict(), ())
        return await thinkers.move(slow), await thinkers.move(quick)

    try:
        slow, quick = run(moves())
    finally:
        thinkers.close()
    assert slow.action is None and slow.error == "took longer than the server's 1 s a move"
    assert quick.error is None and quick.action is not None  # a new process answered it


@pytest.mark.slow
def test_a_quick_bot_never_waits_behind_a_search(tmp_path: Path) -> None:
    agent = tmp_path / "slow.py"
    agent.write_text(SLOW_AGENT)
    thinkers = Thinkers(workers=1, move_seconds=20.0)
    seed = next(s for s in range(100) if Game(2, Rules(), seed=s).current_player == 0)
    assert is_quick("expert") and not is_quick("champion") and not is_quick("pimc")
    assert not is_quick("pimc:64") and not is_quick("ppo:runs/x")

    async def moves() -> tuple[Move, float, bool]:
        slow = Job("g1", "A", (f"{agent}:Slow",), 1, seed, Rules().to_dict(), ())
        quick = Job("g2", "B", ("expert",), 1, seed, Rules().to_dict(), (), quick=True)
        busy = asyncio.ensure_future(thinkers.move(slow))
        await asyncio.sleep(0.5)
        start = time.monotonic()
        answered = await thinkers.move(quick)
        return answered, time.monotonic() - start, busy.done()

    try:
        answered, seconds, slow_done = run(moves())
    finally:
        thinkers.close()
    assert answered.error is None and answered.action is not None
    assert seconds < 5 and not slow_done  # answered while the process was still busy


@pytest.mark.slow
def test_a_move_past_its_share_while_others_wait_is_stopped_in_one_line(
    tmp_path: Path,
) -> None:
    """Issue 43, A: a search holding the only thinker is stopped past ``share_seconds`` once
    another client's job waits (the thinker goes to it); with nobody waiting it goes on."""
    agent = tmp_path / "slow.py"
    agent.write_text(SLOW_AGENT)
    thinkers = Thinkers(workers=1, move_seconds=60.0, share_seconds=1.0)
    seed = next(s for s in range(100) if Game(2, Rules(), seed=s).current_player == 0)
    rules = Rules().to_dict()

    async def moves() -> tuple[Move, Move, float]:
        slow = Job("g1", "A", (f"{agent}:Slow",), 1, seed, rules, ())
        other = Job("g2", "B", ("pimc:8",), 1, seed, rules, ())
        busy = asyncio.ensure_future(thinkers.move(slow))
        await asyncio.sleep(2.5)  # past the share, but nobody waits: it goes on
        assert not busy.done()
        start = time.monotonic()
        answered = await thinkers.move(other)
        return await busy, answered, time.monotonic() - start

    try:
        slow, other, waited = run(moves())
    finally:
        thinkers.close()
    assert slow.action is None and slow.error == (
        "took longer than the 1 s a move may take while other players' bots wait; stopped"
    )
    assert other.error is None and other.action is not None
    assert waited < 20  # (a new thinker started and warmed up), not the slow move's 30 s


def test_a_champion_is_thought_of_in_the_bot_processes() -> None:
    """Issue 43, E: a network's forward pass goes to the processes, not the server's thread."""
    thinkers = Thinkers(workers=1)
    thinkers._started = True  # no lanes: the job stays where it was put
    job = Job("g", "A", ("champion",) * 3, 0, 1, Rules().to_dict(), (), quick=is_quick("champion"))

    async def put() -> None:
        task = asyncio.ensure_future(thinkers.move(job))
        await asyncio.sleep(0.05)
        assert len(thinkers.queue) == 1 and len(thinkers.quick) == 0
        thinkers.close()
        assert (await task).error == "the server is stopping"

    run(put())


def test_bots_of_a_client_over_its_thinking_share_wait_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 43, A: the share was checked only before a person's move; now each bot move
    of a client that thought its share waits until the window frees it."""
    from craits.web import sessions

    monkeypatch.setattr(sessions, "THINK_WINDOW", 1.0)
    store = SessionStore(GameDatabase(MEMORY), Thinkers(0), StoreLimits(client_think=0.5))

    async def main() -> tuple[float, float]:
        start = time.monotonic()
        await store._await_share("A")  # nothing thought: no wait
        free = time.monotonic() - start
        store._count_thinking("A", 0.8)
        start = time.monotonic()
        await store._await_share("A")
        await store._await_share("B")  # another client: no wait
        return free, time.monotonic() - start

    free, waited = run(main())
    assert free < 0.05 and 0.8 < waited < 2.5
