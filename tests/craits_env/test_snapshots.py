"""Saving, loading and branching: ``Game.snapshot`` / ``Game.from_snapshot`` and
``raw_env.state`` / ``restore`` / ``clone`` / ``copy.deepcopy``.

Over random positions of random games (2–10 players, one and two decks, random
options): every snapshot key round-trips, through JSON too; the rebuilt game, the
cloned, deep-copied and restored environments continue identically under the same
actions — legal sets, snapshots, observations, rewards and final scores, through
reshuffles and later deals; copies are independent; bad snapshots and states raise
one-line ``ValueError`` naming the key and change nothing.
"""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from typing import Any

import numpy as np
import pytest

from craits_env import Game, Rules, craits_v0
from craits_env.snapshots import generator_from_state, generator_state
from craits_env.testing.scenario import stacked_game

from .test_invariants import random_config

PHASES = {"play", "count", "call_suit", "declare", "game_over"}


def random_action(g: Game, r: random.Random) -> int:
    legal = g.legal_actions()
    return legal[r.randrange(len(legal))]


def advance(g: Game, r: random.Random, steps: int) -> None:
    for _ in range(steps):
        if g.is_over:
            return
        g.apply(random_action(g, r))


def through_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def assert_every_key_equal(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert got.keys() == want.keys()
    for key in want:
        assert got[key] == want[key], key


# ---------------------------------------------------------------------- Game round trip


def check_round_trip(g: Game) -> None:
    """``from_snapshot`` of ``g``'s snapshot, through JSON, gives every key back (with and
    without ``resume``) and the same legal actions."""
    for resume in (False, True):
        s = g.snapshot(resume=resume)
        rebuilt = Game.from_snapshot(through_json(s))
        assert_every_key_equal(rebuilt.snapshot(resume=resume), s)
        assert rebuilt.legal_actions() == g.legal_actions()


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(4))
def test_every_snapshot_key_round_trips_over_random_positions(chunk: int) -> None:
    """Over 1,000 positions in all (up to 8 per game on the way, then the end of the game)."""
    r = random.Random(500 + chunk)
    phases: Counter[str] = Counter()
    decks: set[int] = set()
    players: set[int] = set()
    for i in range(60):
        n, rules = random_config(r)
        g = Game(n, rules, seed=chunk * 10_000 + i, record=r.random() < 0.3)
        decks.add(rules.decks_for(n))
        players.add(n)
        taken = 0
        while True:
            if g.is_over or (taken < 8 and r.random() < 0.2):
                check_round_trip(g)
                phases[g.snapshot()["phase"]] += 1
                taken += 1
            if g.is_over:
                break
            g.apply(random_action(g, r))
    assert sum(phases.values()) - phases["game_over"] >= 250, phases
    assert set(phases) >= PHASES, phases
    assert decks == {1, 2} and len(players) >= 7


@pytest.mark.slow
def test_round_trip_and_continuation_during_the_declarations_after_a_one_card_deal() -> None:
    """R7.3: each seat declares right after the deal; the seats still to declare round-trip."""
    r = random.Random(6)
    for i in range(30):
        rules = Rules(
            hand_sizes=(1, 2, 1),
            one_card_on_deal=True,
            idiot_penalty=r.choice(("forfeit", "draw_one")),
        )
        g = Game(r.randint(2, 10), rules, seed=i)
        while not g.is_over:
            if g.snapshot()["deal_declarations_left"]:
                check_round_trip(g)
                continue_both(g.clone(), Game.from_snapshot(g.snapshot(resume=True)), r)
            g.apply(random_action(g, r))
        check_round_trip(g)


@pytest.mark.slow
def test_round_trip_of_scripted_stacked_recorded_and_determinized_games() -> None:
    r = random.Random(3)
    for i in range(40):
        n, rules = random_config(r)
        ref = Game(n, rules, seed=i, record=True)
        actions = []
        while not ref.is_over:
            actions.append(random_action(ref, r))
            ref.apply(actions[-1])
        deals, reshuffles = ref.deck_orders()
        scripted = Game(n, rules, dealer=ref.first_dealer, deals=deals, reshuffles=reshuffles)
        for a in actions[: r.randrange(len(actions) + 1)]:
            scripted.apply(a)
        recorded = Game(n, rules, seed=i + 1, record=True)
        advance(recorded, r, r.randrange(60))
        for g in (scripted, recorded):
            for resume in (False, True):
                s = g.snapshot(resume=resume)
                assert_every_key_equal(Game.from_snapshot(s).snapshot(resume=resume), s)
        d = recorded.clone()
        if not d.is_over:
            seat = d.current_player
            others = {s: d.hands[s] for s in range(n) if s != seat}
            det = d.determinized(seat, others, d.stock, rng=np.random.default_rng(i))
            s = det.snapshot(resume=True)
            assert s["deal"] == []
            assert_every_key_equal(Game.from_snapshot(s).snapshot(resume=True), s)
    g = stacked_game([["7c", "Kd"], ["7d", "2s"]], starter="8h", stock=["As", "5c"])
    assert g.snapshot()["phase"] == "call_suit" and g.snapshot()["pending_role"] == "starter"
    s = g.snapshot(resume=True)
    assert_every_key_equal(Game.from_snapshot(s).snapshot(resume=True), s)


def test_rebuilt_game_sets_every_slot() -> None:
    g = Game(4, Rules(hand_sizes=(2, 1)), seed=0, record=True)
    rebuilt = Game.from_snapshot(g.snapshot(resume=True))
    assert all(hasattr(rebuilt, slot) for slot in Game.__slots__)


# ---------------------------------------------------------------------- Game continuation


def continue_both(a: Game, b: Game, r: random.Random) -> tuple[int, int]:
    """Play ``a`` and ``b`` on with the same random actions, comparing every step to the end;
    ``(reshuffles, deals)`` that happened on the way."""
    start, pressures, steps = a.hand_index, sum(a.shuffle_pressures), 0
    while not a.is_over:
        assert a.legal_actions() == b.legal_actions()
        action = random_action(a, r)
        a.apply(action)
        b.apply(action)
        steps += 1
        if steps % 16 == 0 or a.hand_index != b.hand_index:
            assert a.snapshot(resume=True) == b.snapshot(resume=True)
    assert b.is_over and a.snapshot(resume=True) == b.snapshot(resume=True)
    return sum(a.shuffle_pressures) - pressures, a.hand_index - start  # a pressure per reshuffle


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(4))
def test_rebuilt_game_continues_identically_through_reshuffles_and_later_deals(chunk: int) -> None:
    """From ``snapshot(resume=True)`` with no seed: the generator's state continues bit for bit.
    With ``seed``/``rng`` the given generator is used instead: equal to a clone given it."""
    r = random.Random(900 + chunk)
    totals = Counter[str]()
    for i in range(40):
        n, rules = random_config(r)
        if i % 4 == 0:
            rules = rules.replace(voluntary_draw=True)  # long hands: reshuffles
        g = Game(n, rules, seed=chunk * 10_000 + i)
        advance(g, r, r.randrange(150))
        snap = through_json(g.snapshot(resume=True))
        for key, value in zip(
            ("reshuffles", "deals"),
            continue_both(g.clone(), Game.from_snapshot(snap), r),
            strict=True,
        ):
            totals[key] += value
        k = r.randrange(10**6)
        from_seed = Game.from_snapshot(through_json(g.snapshot()), seed=k)
        continue_both(g.clone(rng=np.random.default_rng(k)), from_seed, r)
        from_rng = Game.from_snapshot(snap, rng=np.random.default_rng(k))
        continue_both(g.clone(rng=np.random.default_rng(k)), from_rng, r)
    assert totals["reshuffles"] >= 20 and totals["deals"] >= 20, totals


@pytest.mark.slow
def test_scripted_game_resumes_its_scheduled_deck_orders_and_record() -> None:
    r = random.Random(8)
    rules = Rules(voluntary_draw=True, hand_sizes=(5, 3, 4))
    ref = Game(4, rules, seed=2, record=True)
    actions = []
    while not ref.is_over:
        actions.append(random_action(ref, r))
        ref.apply(actions[-1])
    deals, reshuffles = ref.deck_orders()
    assert any(reshuffles)
    for cut in (0, 1, len(actions) // 3, len(actions) // 2, len(actions) - 1):
        replay = Game(
            4, rules, dealer=ref.first_dealer, deals=deals, reshuffles=reshuffles, record=True
        )
        for a in actions[:cut]:
            replay.apply(a)
        resumed = Game.from_snapshot(through_json(replay.snapshot(resume=True)))  # no generator
        for a in actions[cut:]:
            replay.apply(a)
            resumed.apply(a)
        assert resumed.snapshot(resume=True) == replay.snapshot(resume=True)
        assert resumed.snapshot() == ref.snapshot()
        assert resumed.deck_orders() == ref.deck_orders()


def test_snapshot_without_resume_takes_its_randomness_from_seed_or_rng() -> None:
    g = Game(3, Rules(hand_sizes=(2, 2)), seed=4)
    s = g.snapshot()
    assert "resume" not in s
    rebuilt = Game.from_snapshot(s)  # no generator: the next deal cannot be shuffled
    with pytest.raises(ValueError, match="random generator"):
        advance(rebuilt, random.Random(0), 10_000)
    with pytest.raises(ValueError, match="seed or rng"):
        Game.from_snapshot(s, seed=1, rng=np.random.default_rng(1))
    with pytest.raises(ValueError, match="rng"):
        Game.from_snapshot(s, rng=random.Random(1))  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"])
def test_every_numpy_bit_generator_state_resumes_through_json(kind: str) -> None:
    rng = np.random.Generator(getattr(np.random, kind)(7))
    rng.random(5)
    copy_ = generator_from_state(through_json(generator_state(rng)))
    assert (copy_.permutation(60) == rng.permutation(60)).all()
    g = Game(4, seed=0)
    g._rng = rng  # a game on any bit generator resumes bit for bit
    a = Game.from_snapshot(through_json(g.snapshot(resume=True)))
    continue_both(g, a, random.Random(1))


def test_rebuilt_game_is_independent_and_rejects_illegal_actions_unchanged() -> None:
    r = random.Random(4)
    g = Game(5, Rules(face_cards=True), seed=5)
    advance(g, r, 300)
    before = json.dumps(g.snapshot(resume=True))
    b = Game.from_snapshot(g.snapshot(resume=True))
    advance(b, r, 500)
    assert json.dumps(g.snapshot(resume=True)) == before
    c = Game.from_snapshot(g.snapshot(resume=True))
    illegal = next(a for a in range(59) if a not in c.legal_actions())
    with pytest.raises(ValueError, match="illegal action"):
        c.apply(illegal)
    assert json.dumps(c.snapshot(resume=True)) == before


# ---------------------------------------------------------------------- bad snapshots


def assert_one_line_error(build: Any, arg: Any, *names: str) -> None:
    with pytest.raises(ValueError) as info:
        build(arg)
    message = str(info.value)
    assert "\n" not in message
    for name in names:
        assert name in message, (name, message)


def positions_for_errors() -> list[Game]:
    """Positions in every phase, at the game's end, with a generator and a record."""
    r = random.Random(12)
    found: dict[str, Game] = {}
    for i in range(200):
        n, rules = random_config(r)
        g = Game(n, rules, seed=i, record=True)
        while True:
            found.setdefault(g.snapshot()["phase"], g.clone())
            if g.is_over:
                break
            g.apply(random_action(g, r))
        if set(found) >= PHASES:
            break
    return list(found.values())


def test_bad_snapshots_raise_one_line_value_errors_naming_the_key() -> None:
    for g in positions_for_errors():
        good = g.snapshot(resume=True)
        Game.from_snapshot(good)
        for key in good:
            missing = {k: v for k, v in good.items() if k != key}
            if key != "resume":  # optional: without it the game needs seed or rng for randomness
                assert_one_line_error(Game.from_snapshot, missing, repr(key), "missing")
            for bad in ("nonsense", 1.5, {"bad": 1}, [None]):
                assert_one_line_error(Game.from_snapshot, {**good, key: bad}, repr(key))
        for key in good["resume"]:
            resume = {k: v for k, v in good["resume"].items() if k != key}
            assert_one_line_error(Game.from_snapshot, {**good, "resume": resume}, repr(key))
            for bad in ("nonsense", 1.5, [None]):
                resume = {**good["resume"], key: bad}
                assert_one_line_error(Game.from_snapshot, {**good, "resume": resume}, repr(key))
        assert_one_line_error(Game.from_snapshot, {**good, "extra": 1}, "unknown", "extra")
        assert Game.from_snapshot(good).snapshot(resume=True) == good  # nothing was changed
    assert_one_line_error(Game.from_snapshot, "nonsense", "snapshot")


def test_impossible_cards_and_contradictions_are_refused() -> None:
    g = Game(4, seed=1)
    advance(g, random.Random(1), 40)
    s = through_json(g.snapshot())
    seat = next(q for q in range(4) if s["hands"][q])
    card = s["hands"][seat][0]
    resume = g.snapshot(resume=True)["resume"]
    cases: list[tuple[dict[str, Any], tuple[str, ...]]] = [
        (
            {**s, "hands": [[*h, card] if q == seat else h for q, h in enumerate(s["hands"])]},
            ("hands", "extra: " + card),
        ),
        ({**s, "stock": s["stock"][1:]}, ("stock", "missing")),
        (
            {**s, "hands": [["Xx"] if q == seat else h for q, h in enumerate(s["hands"])]},
            (f"['hands'][{seat}][0]", "invalid card"),
        ),
        ({**s, "top": "Ac" if s["top"] != "Ac" else "Ad"}, ("'top'",)),
        ({**s, "phase": "game_over"}, ("'phase'",)),
        ({**s, "legal_actions": [58]}, ("'legal_actions'",)),
        ({**s, "scores": [-1000] * 4}, ("'scores'",)),
        ({**s, "hand_points": [[0, 0, 0, 0]]}, ("'hand_points'",)),
        ({**s, "deal": s["deal"][:-1]}, ("'deal'", "missing")),
        ({**s, "num_players": 3}, ("'hands'",)),
        ({**s, "rules": {**s["rules"], "one_card": "never"}}, ("'rules'", "one_card")),
        ({**s, "rules": {**s["rules"], "hand_sizes": [20]}}, ("'rules'", "cannot deal")),
        (
            {**s, "resume": {**resume, "generator": {"bit_generator": "PCG64"}}},
            ("'generator'", "PCG64"),
        ),
    ]
    for bad, names in cases:
        assert_one_line_error(Game.from_snapshot, bad, *names)


# ---------------------------------------------------------------------- the environment


def random_env_args(r: random.Random) -> dict[str, Any]:
    n, rules = random_config(r)
    return {
        "num_players": n,
        "rules": rules,
        "reward": r.choice(craits_v0.REWARD_MODES),
        "auto_forced": r.random() < 0.5,
        "max_steps": r.choice((None, None, r.randint(1, 80))),
        "track_public": r.random() < 0.5,
    }


def make_env(args: dict[str, Any], seed: int) -> craits_v0.raw_env:
    """A reset environment whose action spaces are seeded too (``sample`` is reproducible)."""
    env = craits_v0.raw_env(**args)
    env.reset(seed=seed)
    for s, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(seed * 100 + s)
    return env


def env_step(env: craits_v0.raw_env, r: random.Random) -> int | None:
    """One AEC step the standard way (sampling the action space); the action taken."""
    agent = env.agent_selection
    if env.terminations[agent] or env.truncations[agent]:
        env.step(None)
        return None
    mask = env.observe(agent)["action_mask"]
    action = int(env.action_space(agent).sample(mask)) if r.random() < 0.5 else None
    if action is None:
        legal = np.flatnonzero(mask)
        action = int(legal[r.randrange(len(legal))])
    env.step(action)
    return action


def assert_same_env(a: craits_v0.raw_env, b: craits_v0.raw_env, full: bool = True) -> None:
    """Equal PettingZoo attributes and ``last()``; with ``full``, every agent's observation,
    the game's snapshot and the public tracker too."""
    assert a.agents == b.agents and a.agent_selection == b.agent_selection
    assert a.rewards == b.rewards and a._cumulative_rewards == b._cumulative_rewards
    assert a.terminations == b.terminations and a.truncations == b.truncations
    assert a.infos == b.infos
    for agent in a.possible_agents if full else [a.agent_selection]:
        oa, ob = a.observe(agent), b.observe(agent)
        assert np.array_equal(oa["observation"], ob["observation"])
        assert np.array_equal(oa["action_mask"], ob["action_mask"])
    if a.agents:
        la, lb = a.last(), b.last()
        assert la[1:] == lb[1:]
    if not full:
        return
    assert a.game is not None and b.game is not None
    assert a.game.snapshot() == b.game.snapshot()
    if a.public is not None:
        assert b.public is not None and a.public.tracker.state() == b.public.tracker.state()


def copies(env: craits_v0.raw_env, args: dict[str, Any]) -> list[craits_v0.raw_env]:
    restored = craits_v0.raw_env(**args)
    restored.restore(through_json(env.state()))
    return [env.clone(), copy.deepcopy(env), restored]


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(4))
def test_cloned_deepcopied_and_restored_envs_continue_identically(chunk: int) -> None:
    """Same actions (sampled from the action spaces half the time): same observations,
    masks, rewards, terminations and scores to the end, then through a reset without seed."""
    r = random.Random(300 + chunk)
    episodes_done = 0
    for i in range(10):
        args = random_env_args(r)
        env = make_env(args, seed=chunk * 1000 + i)
        for _ in range(r.randrange(120)):
            if not env.agents:
                break
            env_step(env, r)
        others = copies(env, args)
        for _episode in range(2):
            for other in others:
                assert_same_env(env, other)
            steps = 0
            while env.agents:
                seed = r.randrange(10**6)
                action = env_step(env, random.Random(seed))
                steps += 1
                for other in others:
                    assert env_step(other, random.Random(seed)) == action
                    assert_same_env(env, other, full=steps % 16 == 0 or not env.agents)
            episodes_done += 1
            scores = env.game.scores  # type: ignore[union-attr]
            assert all(o.game.scores == scores for o in others)  # type: ignore[union-attr]
            for e in (env, *others):
                e.reset()  # continues the env's generator
    assert episodes_done == 20


def test_env_state_is_json_and_restores_identically() -> None:
    r = random.Random(21)
    for i in range(20):
        args = random_env_args(r)
        env = make_env(args, seed=i)
        for _ in range(r.randrange(100)):
            if env.agents:
                env_step(env, r)
        state = env.state()
        text = json.dumps(state)
        assert json.loads(text) == state
        other = craits_v0.raw_env(**args)
        other.restore(json.loads(text))
        assert json.dumps(other.state()) == text
        assert_same_env(env, other)
    # Halfway through the dead steps at the end: PettingZoo has cleared the rewards to int 0.
    env = make_env({"num_players": 4, "rules": Rules(hand_sizes=(2,))}, seed=1)
    while not any(env.terminations.values()):
        env_step(env, r)
    env_step(env, r)
    text = json.dumps(env.state())
    assert 0 < len(env.agents) < 4 and 0 in env.rewards.values()
    other = craits_v0.raw_env(4, Rules(hand_sizes=(2,)))
    other.restore(json.loads(text))
    assert json.dumps(other.state()) == text


def test_clone_is_independent_of_the_original() -> None:
    r = random.Random(2)
    env = make_env({"num_players": 5, "track_public": True}, seed=2)
    for _ in range(50):
        env_step(env, r)
    before = json.dumps(env.state())
    clone = env.clone()
    for _ in range(300):
        if clone.agents:
            env_step(clone, r)
    assert json.dumps(env.state()) == before
    after_clone = json.dumps(clone.state())
    for _ in range(300):
        if env.agents:
            env_step(env, r)
    assert json.dumps(clone.state()) == after_clone
    # One state restored twice: the environments share nothing with it or each other.
    state = json.loads(before)
    a, b = craits_v0.raw_env(5, track_public=True), craits_v0.raw_env(5, track_public=True)
    a.restore(state)
    b.restore(state)
    env_step(a, r)
    a.infos[a.agents[0]]["note"] = 1
    assert json.dumps(state) == before and json.dumps(b.state()) == before


def test_illegal_action_on_a_clone_changes_nothing() -> None:
    env = make_env({"num_players": 3, "max_steps": 500}, seed=6)
    for _ in range(20):
        env_step(env, random.Random(0))
    before = json.dumps(env.state())
    clone = env.clone()
    legal = set(np.flatnonzero(clone.observe(clone.agent_selection)["action_mask"]).tolist())
    for action in [a for a in range(59) if a not in legal][:5]:
        with pytest.raises(ValueError, match="illegal action"):
            clone.step(action)
    assert json.dumps(clone.state()) == before and json.dumps(env.state()) == before


def test_deepcopy_of_the_wrapped_env_and_before_reset() -> None:
    env = craits_v0.env(num_players=4)
    env.reset(seed=1)
    for _ in range(30):
        env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    dup = copy.deepcopy(env)
    assert dup.unwrapped is not env.unwrapped
    assert dup._raw is dup.unwrapped  # the fast wrappers forward to the same copy
    assert dup.unwrapped.state() == env.unwrapped.state()
    for e in (env, dup):
        for _ in range(30):
            e.step(int(np.flatnonzero(e.last()[0]["action_mask"])[-1]))
    assert dup.unwrapped.state() == env.unwrapped.state()
    fresh = craits_v0.raw_env(3)
    assert fresh.clone().game is None and copy.deepcopy(fresh).game is None
    with pytest.raises(ValueError, match="before reset"):
        fresh.state()


def test_restore_refuses_bad_states_naming_the_key_and_changes_nothing() -> None:
    r = random.Random(5)
    env = make_env({"num_players": 4, "track_public": True, "reward": "win"}, seed=5)
    for _ in range(40):
        env_step(env, r)
    good = through_json(env.state())
    target = craits_v0.raw_env(4, track_public=True, reward="win")
    target.reset(seed=99)
    before = json.dumps(target.state())
    for key in good:
        assert_one_line_error(
            target.restore, {k: v for k, v in good.items() if k != key}, repr(key)
        )
        for bad in ("nonsense", 1.5, [None]):
            assert_one_line_error(target.restore, {**good, key: bad}, repr(key))
    for key in good["public"]:
        public = {**good["public"], key: "nonsense"}
        assert_one_line_error(target.restore, {**good, "public": public}, "'public'", repr(key))
    assert_one_line_error(target.restore, {**good, "extra": 1}, "unknown", "extra")
    game = {**good["game"], "stock": [*good["game"]["stock"], "As"]}
    assert_one_line_error(target.restore, {**good, "game": game}, "'game'", "'stock'", "extra: As")
    assert json.dumps(target.state()) == before
    for other in (
        craits_v0.raw_env(4, track_public=True),
        craits_v0.raw_env(4, reward="win"),
        craits_v0.raw_env(5, track_public=True, reward="win"),
    ):
        other.reset(seed=0)
        assert_one_line_error(other.restore, good, "'options'", "same options")
