"""Rollout values where a network sits at the table (craits.agents.luck_networks): its seat's
rollouts played by the network itself, every rollout a row of its own; without a network the
batched rows give the one-row kernel's values exactly."""

from __future__ import annotations

import numpy as np
import pytest

from craits.agents import luck_networks
from craits.agents.compiled_table import EXPERT, NETWORK, RANDOM
from craits.agents.luck_networks import BatchedRollouts
from craits.agents.luck_rollouts import (
    ACTUAL,
    BEFORE,
    RolloutLuck,
    free_copy,
    load_memory,
    reveals,
    seat_players,
)
from craits_env import Game, Rules
from craits_env.public import PublicGame
from craits_env.vector import rows

from .test_luck_rollouts import experts, mid_hand, python_rollout

STANDARD = Rules()  # the champion's table (it refuses others)


@pytest.mark.parametrize("seed", range(3))
def test_a_network_seat_is_played_by_the_network_itself(seed: int) -> None:
    """A rollout from a hand's first decision = the Python engine with ``champion``
    (``PlayingWeightsAgent.act``, its belief features its own) and the bots at their seats
    playing the hand with the stock restacked by the rollout's keys."""
    game = Game(4, STANDARD, seed=500 + seed)
    specs = ("expert", "champion", "tactician", "greedy")
    values = RolloutLuck(4, STANDARD, rollouts=1, seed=7)
    table = values.players(specs)
    assert table.tolist() == [EXPERT, NETWORK, *seat_players(specs[2:]).tolist()]
    got = values.value(game, (seed,), table)
    assert got.tolist() == python_rollout(values, game, (seed,), specs)
    by_expert = RolloutLuck(4, STANDARD, rollouts=1, seed=7, networks=False)
    assert by_expert.players(specs).tolist() == seat_players(specs).tolist()
    # played by expert, the network's seat plays otherwise (what this estimator mends)
    assert by_expert.value(game, (seed,), by_expert.players(specs)).tolist() != got.tolist()


def test_a_network_remembers_what_the_hand_showed() -> None:
    """From mid-hand, with the hand's public trackers: each rollout = the Python engine
    with ``champion`` and experts who followed the hand playing it out."""
    public, action, game = mid_hand(20, STANDARD, 9)
    before, tracker_before = free_copy(game), public.tracker.copy_for(game)
    public.apply(action)
    after = free_copy(public.game)
    values = RolloutLuck(4, STANDARD, rollouts=3, alternatives=1, seed=11)
    specs = ("champion", "expert", "expert", "expert")
    table = values.players(specs)
    memory = (tracker_before, public.tracker.copy_for(after))
    v = values.values(before, action, after, (4,), table, memory)[0][0]
    knew = [
        python_rollout(values, after, (4,), specs, tracker=public.tracker, j=j) for j in range(3)
    ]
    assert v.tolist() == np.mean(knew, axis=0).tolist()
    by_expert = RolloutLuck(4, STANDARD, rollouts=3, alternatives=1, seed=11, networks=False)
    other = by_expert.values(before, action, after, (4,), by_expert.players(specs), memory)
    assert other[0][0].tolist() != v.tolist()


def events(seed: int, rules: Rules, every: int) -> list[tuple]:
    """Every ``every``-th decision of four experts' game that revealed cards: the state
    before, the action, the state after and their trackers."""
    game = Game(4, rules, seed=seed)
    public = PublicGame(game)
    agents = experts()
    found = []
    while not game.is_over:
        before, tracker = free_copy(game), public.tracker.copy_for(game)
        seat = game.current_player
        action = agents[seat].act(public.views[seat])
        if reveals(public.apply(action)):
            after = free_copy(game)
            found.append((before, action, after, (tracker, public.tracker.copy_for(after))))
    return found[::every]


@pytest.mark.parametrize(
    ("table", "chunk"), [([EXPERT] * 4, 2048), ([RANDOM, EXPERT, 0, 1], 2048), ([EXPERT] * 4, 5)]
)
def test_without_a_network_the_rows_give_the_one_row_values_exactly(
    table: list[int], chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same events valued by ``event_values`` (one work row) and by the batched rows
    (a row a rollout, played side by side, ``chunk`` at a time): the same values to the last
    bit (draws, deals, a random seat's own generator, the remembered hand)."""
    monkeypatch.setattr(luck_networks, "CHUNK", chunk)
    rules = Rules(hand_sizes=(5, 3))
    values = RolloutLuck(4, rules, rollouts=6, alternatives=3, seed=3, sample_rollouts=4)
    batched = BatchedRollouts(4, rules, 52, 6, 4, [])
    assert batched.chunk == min(chunk, 6 + 52 * 4)
    codes = np.array(table, np.int64)
    found = events(41, rules, 4)
    assert len(found) > 5
    for i, (before, action, after, memory) in enumerate(found):
        want, _ = values.values(before, action, after, (i,), codes, memory)
        state = batched.game.state
        rows.load_game(state, BEFORE, before, None)
        rows.load_game(state, ACTUAL, after, None)
        load_memory(batched.mem, state.st, BEFORE, memory[0])
        load_memory(batched.mem, state.st, ACTUAL, memory[1])
        alt, seeds = alternatives(values, before, after, (i,))
        keys = (alt, seeds, *values._keys(2, i))
        out = np.zeros((len(alt) + 1, 4))
        moves = np.full(len(alt), action, np.int64)
        code = batched.run(moves, before.hand_index, keys, 4, codes, True, True, 600.0, 5000, out)
        assert code == 0
        for h in range(before.hand_index, min(after.hand_index, len(after.hand_points))):
            out[0] += after.hand_points[h]
        assert out.tolist() == want.tolist()


def alternatives(values: RolloutLuck, before: Game, after: Game, salt: tuple) -> tuple:
    """The samples' keys and seeds :meth:`RolloutLuck.values` makes for an event."""
    rng = np.random.default_rng([values.seed, 1, *salt])
    stock = np.bincount(before.stock, minlength=52)
    if stock.any() and after.hand_index == before.hand_index:
        cards = np.flatnonzero(stock)
        keys = rng.random((len(cards), 52))
        keys[np.arange(len(cards)), cards] = 2.0
    else:
        keys = rng.random((values.alternatives, 52))
    return keys, rng.integers(0, 2**62, (len(keys), 2), dtype=np.int64)


def test_a_tournaments_estimator_seats_the_network_of_a_record() -> None:
    """``rollouts:R:K`` on a recorded standard game of ``champion`` against three ``expert``:
    the record's ``champion`` seat is played by the network, and its corrections are not
    those of ``expert`` in its place (version 3)."""
    from craits.agents.luck_tournament import RolloutEstimator, estimator, record_salt
    from craits.agents.specs import make_agent
    from craits_env.records import GameRecorder

    seats = ["expert", "expert", "champion", "expert"]
    game = Game(4, STANDARD, seed=77)
    public = PublicGame(game)
    recorder = GameRecorder(game, seats, apply=public.apply)
    agents = [make_agent(spec, i) for i, spec in enumerate(seats)]
    while not game.is_over:
        seat = game.current_player
        recorder.apply(agents[seat].act(public.views[seat]))
    record = recorder.record()
    chosen = estimator("rollouts:2:2", 4, STANDARD)
    assert chosen.model_id.startswith("rollouts-2-2/v5/")
    luck = chosen.game(record)
    assert chosen.values.players(seats).tolist() == [EXPERT, EXPERT, NETWORK, EXPERT]
    assert luck.scores.tolist() == list(game.scores)
    by_expert = RolloutLuck(4, STANDARD, 2, 2, seed=RolloutEstimator.SEED, networks=False).game(
        record, (record_salt(record),)
    )
    assert by_expert.events == luck.events
    assert not np.allclose(by_expert.corrections, luck.corrections)
