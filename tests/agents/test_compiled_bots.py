"""The compiled heuristic bots against their Python twins, decision for decision.

Rows of a :class:`~craits_env.vector.VectorGame` and Python games made from the same generators
(row ``b`` *is* the sequence of games ``Game(n, rules, rng=default_rng(derive_seed(seed, b)))``)
advance in lockstep over random-option games (``craits_env.testing.random_rules``: 2-10
players, one and two decks, every option); at every decision of every row, the compiled bot's
action equals the Python bot's ``act(view)`` on the same position. The games advance by the
bot's action or, now and then, a random legal one (positions the bot would not reach).
"""

from __future__ import annotations

import doctest
import json
import random
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest

from craits.agents import compiled_bots
from craits.agents.compiled_bots import COMPILED_BOTS, CompiledBot
from craits.agents.heuristics import ExpertAgent, GreedyAgent, TacticianAgent
from craits_env import Game, Phase, Rules
from craits_env.actions import DRAW, action_str
from craits_env.cards import RANK_OF
from craits_env.public import PublicGame
from craits_env.scoring import CARD_POINTS
from craits_env.seeding import derive_seed
from craits_env.testing.random_rules import random_config
from craits_env.vector import VectorGame

TWINS: dict[str, type[GreedyAgent]] = {
    "greedy": GreedyAgent,
    "tactician": TacticianAgent,
    "expert": ExpertAgent,
}


@dataclass
class Tally:
    positions: int = 0  # decisions with a choice (two legal actions or more)
    phases: Counter[str] = field(default_factory=Counter)
    ties: int = 0  # play or count decisions where two legal cards tie on points
    players: set[int] = field(default_factory=set)
    decks: set[int] = field(default_factory=set)


def _mismatch(game: Game, seat: int, got: int, expected: int, where: str) -> str:
    legal = [action_str(a) for a in game.legal_actions()]
    return (
        f"{where}: seat {seat}, phase {Phase(game.phase).name}, legal {legal}: compiled "
        f"{action_str(got)!r}, Python {action_str(expected)!r}; the position: "
        f"Game.from_snapshot({json.dumps(game.snapshot())})"
    )


def _new_game(n: int, rules: Rules, rng: np.random.Generator) -> PublicGame:
    """The row's next game (the vector engine skips games over before any decision)."""
    game = Game(n, rules, rng=rng)
    while game.is_over:
        game = Game(n, rules, rng=rng)
    return PublicGame(game)


def play_lockstep(
    name: str, seed: int, configs: int, rows: int, steps: int, bot_chance: float = 0.7
) -> Tally:
    """``configs`` random configurations, ``rows`` games each, ``steps`` decisions per row
    (new games begin as games end); every compiled action is checked against the Python
    bot's. Returns what was seen."""
    r = random.Random(seed)
    bot, twin = CompiledBot(name), TWINS[name]()
    tally = Tally()
    for k in range(configs):
        n, rules = random_config(r)
        tally.players.add(n)
        tally.decks.add(rules.decks_for(n))
        vseed = r.randrange(1 << 30)
        vg = VectorGame(rows, n, rules, seed=vseed, auto_reset=True)
        rngs = [np.random.default_rng(derive_seed(vseed, b)) for b in range(rows)]
        pubs = [_new_game(n, rules, rngs[b]) for b in range(rows)]
        bot.forget(vg)  # a new VectorGame: the expert's memory follows it
        for step in range(steps):
            got = bot.act(vg)
            actions = np.empty(rows, np.int64)
            for b, pub in enumerate(pubs):
                game = pub.game
                seat = game.current_player
                legal = game.legal_actions()
                expected = twin.act(pub.view(seat))
                if got[b] != expected:
                    where = f"config {k} (n={n}, {rules!r}), row {b}, step {step}"
                    pytest.fail(_mismatch(game, seat, int(got[b]), expected, where))
                if len(legal) > 1:
                    tally.positions += 1
                    tally.phases[Phase(game.phase).name] += 1
                    points = [CARD_POINTS[RANK_OF[a]] for a in legal if a < DRAW]
                    tally.ties += len(points) > 1 and points.count(max(points)) > 1
                actions[b] = expected if r.random() < bot_chance else r.choice(legal)
            bot.observe(vg, actions)
            _, done = vg.step(actions)
            for b, pub in enumerate(pubs):
                pub.apply(int(actions[b]))
                assert pub.game.is_over == done[b]
                if done[b]:
                    pubs[b] = _new_game(n, rules, rngs[b])
    return tally


def test_greedy_is_the_python_greedy_fast() -> None:
    """A few hundred positions (the fast lane)."""
    tally = play_lockstep("greedy", seed=1, configs=8, rows=8, steps=16)
    assert tally.positions > 500 and tally.decks == {1, 2}, tally


@pytest.mark.slow
def test_greedy_is_the_python_greedy() -> None:
    """Thousands of positions of random-option games: every phase (R3 play, R5 count, R3.2 /
    R4 suit calls, R7.1 declarations), ties on points, 2-10 players, one and two decks."""
    tally = play_lockstep("greedy", seed=2, configs=200, rows=16, steps=40)
    assert tally.positions > 50_000, tally
    assert min(tally.phases[p.name] for p in Phase if p != Phase.GAME_OVER) > 1000, tally
    assert tally.ties > 5000, tally
    assert tally.decks == {1, 2} and len(tally.players) == 9, tally


def test_tactician_is_the_python_tactician_fast() -> None:
    tally = play_lockstep("tactician", seed=3, configs=10, rows=8, steps=16)
    assert tally.positions > 500 and tally.decks == {1, 2}, tally


@pytest.mark.slow
def test_tactician_is_the_python_tactician() -> None:
    """Thousands of positions of random-option games, every phase: the values' doubles
    (threes, chains of 6s and kings, the count, wilds kept) as the Python bot's."""
    tally = play_lockstep("tactician", seed=4, configs=200, rows=16, steps=40)
    assert tally.positions > 50_000, tally
    assert min(tally.phases[p.name] for p in Phase if p != Phase.GAME_OVER) > 1000, tally
    assert tally.decks == {1, 2} and len(tally.players) == 9, tally


def test_expert_is_the_python_expert_fast() -> None:
    tally = play_lockstep("expert", seed=5, configs=10, rows=8, steps=16)
    assert tally.positions > 500 and tally.decks == {1, 2}, tally


@pytest.mark.slow
def test_expert_is_the_python_expert() -> None:
    """Thousands of positions of random-option games, every phase, with the public memory
    (voids shown by draws, the count taken) learnt over long stretches of play."""
    tally = play_lockstep("expert", seed=6, configs=200, rows=16, steps=40)
    assert tally.positions > 50_000, tally
    assert min(tally.phases[p.name] for p in Phase if p != Phase.GAME_OVER) > 1000, tally
    assert tally.decks == {1, 2} and len(tally.players) == 9, tally


def test_the_twins_are_the_same_players() -> None:
    """A compiled bot is its Python twin's player: the same name and version (stored results
    are keyed by them, so a change of the Python bot's play must reach its twin)."""
    assert COMPILED_BOTS == ("greedy", "tactician", "expert")
    for name in COMPILED_BOTS:
        bot, twin = CompiledBot(name), TWINS[name]
        assert (bot.name, bot.version) == (twin.name, twin.version)
        assert repr(bot) == f"CompiledBot({name!r})"


@pytest.mark.parametrize("name", COMPILED_BOTS)
def test_act_takes_rows_and_out(name: str) -> None:
    """Some rows or all, into ``out`` or not: the same actions (as a vector env asks only the
    rows where a bot's seat acts)."""
    vg = VectorGame(6, 3, Rules(), seed=4)
    bot = CompiledBot(name)
    for _ in range(12):
        every = bot.act(vg)
        assert every.dtype == np.int64 and every.shape == (6,)
        assert bot.act(vg, rows=[4, 1]).tolist() == [every[4], every[1]]
        assert bot.act(vg, rows=[]).shape == (0,)
        out = np.full(2, -5, np.int64)
        assert bot.act(vg, rows=np.array([0, 5]), out=out) is out
        assert out.tolist() == [every[0], every[5]]
        bot.observe(vg, every)
        vg.step(every)


def test_bad_input_is_refused_in_one_line() -> None:
    vg = VectorGame(3, 2, Rules(hand_sizes=(1,)), seed=0, auto_reset=False)
    bot = CompiledBot("greedy")
    cases: list[tuple[object, object, str]] = [
        ([3], None, "allowed 0 to 2"),
        ([-1], None, "allowed 0 to 2"),
        ([[0, 1]], None, "a list of row indices"),
        (["a"], None, "a list of row indices"),
        (None, np.zeros(3, np.int32), "out: got int32"),
        (None, np.zeros(2, np.int64), "allowed C-contiguous int64 \\(3,\\)"),
    ]
    for rows, out, match in cases:
        with pytest.raises(ValueError, match=match) as info:
            bot.act(vg, rows=rows, out=out)
        assert "\n" not in str(info.value)
    one = VectorGame(1, 2, Rules(hand_sizes=(1,)), seed=0, auto_reset=False)
    while not one.is_over()[0]:  # played to its end: no seat has a decision
        one.step(bot.act(one))
    with pytest.raises(ValueError, match="row 0 is over") as info:
        bot.act(one)
    assert "\n" not in str(info.value)
    with pytest.raises(
        ValueError, match=re.escape(f"allowed one of {list(COMPILED_BOTS)}")
    ) as info:
        CompiledBot("random")


def test_the_expert_refuses_a_step_it_was_not_told() -> None:
    """Within a hand the memory must be told every step, once; a new game needs no telling."""
    vg = VectorGame(2, 3, Rules(), seed=1)
    bot = CompiledBot("expert")
    vg.step(bot.act(vg))  # not told: both rows moved within their first hand
    with pytest.raises(ValueError, match="row 0 has not advanced by exactly") as info:
        bot.act(vg)
    assert "\n" not in str(info.value)
    bot.forget(vg, rows=[0])
    with pytest.raises(ValueError, match="row 1 has not advanced"):
        bot.act(vg)
    bot.forget(vg)
    actions = bot.act(vg)
    bot.observe(vg, actions)
    with pytest.raises(ValueError, match="row 0 has not advanced"):  # told twice, no step
        bot.observe(vg, actions)
    vg.reset()  # new games: every row's memory starts afresh, nothing to refuse
    assert bot.act(vg).shape == (2,)
    with pytest.raises(ValueError, match="remembers another VectorGame") as info:
        bot.act(VectorGame(2, 3, Rules(), seed=1))
    assert "\n" not in str(info.value)
    for bad in ([1, 2, 3], [[1, 2]], ["a", "b"]):
        with pytest.raises(ValueError, match="allowed ints \\(2,\\)") as info:
            bot.observe(vg, bad)
        assert "\n" not in str(info.value)


def test_the_module_example_runs() -> None:
    failed, attempted = doctest.testmod(compiled_bots)
    assert attempted > 0 and failed == 0
