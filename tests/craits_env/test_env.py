"""The PettingZoo AEC environment craits_v0: conformance, masks, hidden information, rewards."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.utils import wrappers as pz_wrappers

from craits_env import NUM_ACTIONS, Game, Rules, craits_v0
from craits_env.observation import FIELDS, ObservationEncoder, slice_table

# Every test here runs on both backends of craits_v0 (tests/conftest.py: env_backend).
pytestmark = pytest.mark.usefixtures("env_backend")


def random_action(obs: dict[str, np.ndarray], r: random.Random) -> int:
    legal = np.flatnonzero(obs["action_mask"])
    return int(legal[r.randrange(len(legal))])


@pytest.mark.slow
@pytest.mark.parametrize("num_players", [2, 4, 7])
def test_pettingzoo_api_seed_and_render_tests(num_players: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(craits_v0.env(num_players=num_players), num_cycles=200)
        seed_test(lambda **kw: craits_v0.env(num_players=num_players, **kw), num_cycles=200)
        render_test(
            lambda render_mode=None: craits_v0.env(num_players=num_players, render_mode=render_mode)
        )


def test_env_has_pettingzoo_shape() -> None:
    e = craits_v0.env(num_players=5)
    assert isinstance(e, pz_wrappers.OrderEnforcingWrapper)
    assert isinstance(e.env, pz_wrappers.AssertOutOfBoundsWrapper)
    assert isinstance(e.env.env, pz_wrappers.TerminateIllegalWrapper)
    assert isinstance(e.unwrapped, craits_v0.raw_env)
    assert e.metadata["name"] == "craits_v0" and str(e) == "craits_v0"
    assert e.possible_agents == [f"player_{i}" for i in range(5)]
    with pytest.raises(AttributeError, match="before reset"):
        _ = e.agent_selection
    space = e.observation_space("player_0")
    assert space["action_mask"].shape == (NUM_ACTIONS,) and space["action_mask"].dtype == np.int8
    assert space["observation"].dtype == np.float32
    assert e.action_space("player_3").n == NUM_ACTIONS


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"num_players": 1}, "num_players"),
        ({"num_players": 11}, "num_players"),
        ({"reward": "points"}, "reward"),
        ({"render_mode": "png"}, "render_mode"),
        ({"max_steps": 0}, "max_steps"),
        ({"auto_forced": 1}, "auto_forced"),
        ({"num_players": 7, "rules": Rules(num_decks=1)}, "cannot deal"),
        ({"rules": {"face_cards": True}}, "rules"),
    ],
)
def test_bad_constructor_arguments(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        craits_v0.raw_env(**kwargs)


@pytest.mark.slow
def test_mask_equals_engine_legal_set_over_many_steps() -> None:
    r = random.Random(0)
    steps = 0
    for n, rules in [
        (2, Rules()),
        (4, Rules(face_cards=True, voluntary_draw=True)),
        (6, Rules.short_game()),
        (3, Rules(one_card_on_deal=True)),
    ]:
        e = craits_v0.raw_env(num_players=n, rules=rules)
        e.reset(seed=n)
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            game = e.game
            assert agent == f"player_{game.current_player}"
            expected = np.zeros(NUM_ACTIONS, np.int8)
            expected[list(game.legal_actions())] = 1
            assert np.array_equal(obs["action_mask"], expected)
            if steps % 50 == 0:
                for other in e.agents:
                    if other != agent:
                        assert not e.observe(other)["action_mask"].any()
            e.step(random_action(obs, r))
            steps += 1
    assert steps > 5000


def test_illegal_action_raw_env_raises_and_changes_nothing() -> None:
    e = craits_v0.raw_env(num_players=4)
    e.reset(seed=3)
    before = e.snapshot()
    obs = e.observe(e.agent_selection)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match=r"illegal action .* legal:"):
        e.step(illegal)
    assert e.snapshot() == before
    assert np.array_equal(e.observe(e.agent_selection)["observation"], obs["observation"])


def test_illegal_action_wrapped_env_follows_classic_convention() -> None:
    e = craits_v0.env(num_players=3)
    e.reset(seed=3)
    agent = e.agent_selection
    obs, *_ = e.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(illegal)
    assert all(e.terminations.values())
    assert e.rewards[agent] == -1
    assert all(v == 0 for a, v in e.rewards.items() if a != agent)


def test_same_seed_same_games_different_seed_different_deals() -> None:
    def run(seed: int | None, resets: int) -> list[list[str]]:
        e = craits_v0.raw_env(num_players=4)
        r = random.Random(1)
        deals = []
        for i in range(resets):
            e.reset(seed=seed if i == 0 else None)
            deals.append(e.snapshot()["deal"])
            for _ in range(300):
                obs, *_ = e.last()
                e.step(random_action(obs, r))
            deals.append(e.snapshot()["hands"][0])
        return deals

    assert run(7, 3) == run(7, 3)  # a sequence of resets reproduces from the first seed
    assert run(7, 1)[0] != run(8, 1)[0]
    first = run(7, 3)
    assert first[0] != first[2]  # later resets deal new games


def test_reset_options_deck_and_dealer() -> None:
    e = craits_v0.raw_env(num_players=3)
    e.reset(seed=0, options={"deck": ["As", "Kd", "7c"], "dealer": 2})
    s = e.snapshot()
    assert s["dealer"] == 2 and s["deal"][:3] == ["As", "Kd", "7c"]
    assert "As" in s["hands"][0] and "Kd" in s["hands"][1] and "7c" in s["hands"][2]
    with pytest.raises(ValueError, match="listed 2 times"):
        e.reset(seed=0, options={"deck": ["As", "As"]})
    with pytest.raises(ValueError, match="dealer"):
        e.reset(seed=0, options={"dealer": 3})
    with pytest.raises(ValueError, match="invalid card"):
        e.reset(seed=0, options={"deck": ["1x"]})


def hide(game: Game, seat: int, rng: np.random.Generator) -> Game:
    """A copy of ``game`` whose hidden cards (other hands, stock) are permuted, sizes kept."""
    g = game.clone()
    others = [s for s in range(g.num_players) if s != seat]
    pool = [c for s in others for c in g.hands[s]] + list(g._stock)
    perm = [pool[i] for i in rng.permutation(len(pool))]
    k = 0
    for s in others:
        size = len(g.hands[s])
        g.hands[s] = sorted(perm[k : k + size])
        k += size
    g._stock[:] = perm[k:]
    g._legal = None
    return g


def test_observation_depends_only_on_what_the_seat_may_know() -> None:
    """Permuting the hidden cards (opponents' hands, the stock) never changes a seat's view."""
    r = random.Random(4)
    rng = np.random.default_rng(4)
    checked = 0
    for n in (2, 4, 7):
        enc = ObservationEncoder(n, Rules(face_cards=True))
        g = Game(n, Rules(face_cards=True), seed=n)
        while not g.is_over and checked < 3000:
            for seat in range(n):
                h = hide(g, seat, rng)
                assert np.array_equal(enc.encode(g, seat), enc.encode(h, seat))
                checked += 1
            legal = g.legal_actions()
            g.apply(legal[r.randrange(len(legal))])
    assert checked >= 3000


@pytest.mark.slow
def test_two_deals_differing_in_opponents_cards_look_identical_while_play_agrees() -> None:
    """Two deals that differ only in the opponents' cards give a player identical
    observations for as long as the same actions are legal in both."""
    r = random.Random(9)
    total_lockstep = 0
    for trial in range(60):
        n = r.choice((3, 4, 5))
        size = r.choice((3, 5, 8))
        rules = Rules(hand_sizes=(size,))
        base = Game(n, rules, seed=trial, dealer=0)
        deal = base.snapshot()["deal"]
        focal = r.randrange(n)
        # Positions of the deal that go to opponents (R2.3: position i to seat (i % n) + 1).
        opp_positions = [i for i in range(n * size) if (i % n + 1) % n != focal]
        if len(opp_positions) < 2:
            continue
        i, j = r.sample(opp_positions, 2)
        other = list(deal)
        other[i], other[j] = other[j], other[i]
        envs = []
        for d in (deal, other):
            e = craits_v0.raw_env(num_players=n, rules=rules)
            e.reset(seed=123, options={"deck": d, "dealer": 0})
            envs.append(e)
        a, b = envs
        assert a.snapshot()["hands"][focal] == b.snapshot()["hands"][focal]
        while not (a.terminations[a.agent_selection] or b.terminations[b.agent_selection]):
            fa, fb = a.observe(f"player_{focal}"), b.observe(f"player_{focal}")
            assert np.array_equal(fa["observation"], fb["observation"])
            assert np.array_equal(fa["action_mask"], fb["action_mask"])
            if a.agent_selection != b.agent_selection:
                break
            ma = a.observe(a.agent_selection)["action_mask"]
            mb = b.observe(b.agent_selection)["action_mask"]
            if not np.array_equal(ma, mb):
                break  # the same actions are no longer legal in both
            action = random_action({"action_mask": ma}, r)
            a.step(action)
            b.step(action)
            total_lockstep += 1
    assert total_lockstep > 500


def test_observation_slice_table_matches_docstring_and_docs() -> None:
    import craits_env.observation as module

    table = slice_table()
    assert table in module.__doc__  # docs/environments.md generates it (test_extension_points)
    for n in (2, 4, 10):
        enc = ObservationEncoder(n, Rules())
        sizes = [enc.slices[f.name].stop - enc.slices[f.name].start for f in FIELDS]
        assert sum(sizes) == enc.size
        assert sizes == [f.size(n) for f in FIELDS]
        assert enc.slices["opponents"].stop - enc.slices["opponents"].start == 5 * (n - 1)
        assert enc.slices["dealer"].stop - enc.slices["dealer"].start == n


def test_observation_content_on_a_known_position() -> None:
    from craits_env.testing.scenario import deal_order

    order = deal_order(
        [["7c", "Kd", "Kd"], ["2s", "3h", "9c"], ["As", "5c", "8h"]],
        starter="7h",
        stock=["Tc"],
        rules=Rules(num_decks=2),
    )
    e = craits_v0.raw_env(num_players=3, rules=Rules(num_decks=2, hand_sizes=(3,)))
    e.reset(seed=0, options={"deck": order, "dealer": 0})
    # The starter 7h made player 1 draw the Tc (R2.5); player 1 is to play.
    assert e.agent_selection == "player_1"
    obs = e.observe("player_1")["observation"]
    sl = e.encoder.slices
    hand = obs[sl["hand"]]
    assert hand[13 * 3 + 1] == 1 and hand[2 * 13 + 2] == 1 and hand[8] == 1 and hand[9] == 1
    assert hand.sum() == 4
    assert obs[sl["top_card"]][2 * 13 + 6] == 1 and obs[sl["top_card"]].sum() == 1
    assert list(obs[sl["active_suit"]]) == [0, 0, 1, 0]
    assert list(obs[sl["phase"]]) == [1, 0, 0, 0]
    assert obs[sl["direction"]][0] == 1
    own = obs[sl["own_status"]]
    assert own[0] == pytest.approx(0.4)
    opp = obs[sl["opponents"]].reshape(2, 5)
    assert opp[0][0] == pytest.approx(0.3) and opp[1][0] == pytest.approx(0.3)  # seats 2, 0
    assert list(obs[sl["dealer"]]) == [0, 0, 1]  # dealer 0 is two places to the left of 1
    assert obs[sl["seen"]].sum() == 1
    player0 = e.observe("player_0")["observation"]
    assert player0[sl["hand"]][13 * 1 + 12] == 2  # two copies of Kd (two decks)


def play_episode(e, r: random.Random) -> dict[str, float]:
    totals = {a: 0.0 for a in e.possible_agents}
    for agent in e.agent_iter():
        obs, reward, term, trunc, _ = e.last()
        totals[agent] += reward
        e.step(None if term or trunc else random_action(obs, r))
    return totals


@pytest.mark.parametrize("mode", ["relative", "score", "win"])
def test_rewards_accumulate_through_last(mode: str) -> None:
    r = random.Random(2)
    rules = Rules(hand_sizes=(5, 3, 1, 4))
    e = craits_v0.env(num_players=4, rules=rules, reward=mode)
    e.reset(seed=5)
    totals = play_episode(e, r)
    g = e.unwrapped.game
    pts = g.hand_points
    if mode == "relative":
        for s in range(4):
            expected = sum(((sum(p) - p[s]) / 3 - p[s]) / 100 for p in pts)
            assert totals[f"player_{s}"] == pytest.approx(expected)
        assert sum(totals.values()) == pytest.approx(0, abs=1e-9)
    elif mode == "score":
        for s in range(4):
            assert totals[f"player_{s}"] == pytest.approx(-sum(p[s] for p in pts) / 100)
    else:
        winners = g.winners()
        for s in range(4):
            expected = 1 / len(winners) if s in winners else -1 / (4 - len(winners))
            assert totals[f"player_{s}"] == pytest.approx(expected)
        assert sum(totals.values()) == pytest.approx(0, abs=1e-9)


def test_auto_forced_never_asks_a_single_action_decision() -> None:
    r = random.Random(3)
    e = craits_v0.raw_env(num_players=4, auto_forced=True)
    e.reset(seed=1)
    asked = 0
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        assert obs["action_mask"].sum() > 1
        e.step(random_action(obs, r))
        asked += 1
    assert e.game.is_over and asked > 100


def test_max_steps_truncates() -> None:
    e = craits_v0.env(num_players=3, max_steps=25)
    e.reset(seed=0)
    r = random.Random(0)
    steps = 0
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            assert trunc and not term
            e.step(None)
            continue
        e.step(random_action(obs, r))
        steps += 1
    assert steps == 25


def test_render_ansi_and_human(capsys: pytest.CaptureFixture[str]) -> None:
    e = craits_v0.env(num_players=3, render_mode="ansi")
    e.reset(seed=0, options={"dealer": 0})
    text = e.render()
    game = e.unwrapped.game
    assert f"player_{game.current_player} to " in text
    assert "top " in text and "suit " in text and "score" in text and "▶" in text
    h = craits_v0.env(num_players=3, render_mode="human")
    h.reset(seed=0)
    assert h.render() is None
    assert "score" in capsys.readouterr().out


def test_render_after_the_end_shows_the_last_hand() -> None:
    """The engine's hand index is one past the last hand once the game is over."""
    for rules, hands, last in ((Rules.short_game(), 8, "1 card"), (Rules(), 15, "8 cards")):
        e = craits_v0.env(num_players=3, rules=rules, render_mode="ansi")
        e.reset(seed=1)
        r = random.Random(1)
        assert e.render().startswith(f"hand 1/{hands} (8 cards)  dealer player_")
        for _agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            e.step(None if term or trunc else random_action(obs, r))
        game = e.unwrapped.game
        assert game.is_over and game.hand_index == hands
        text = e.render()
        first = text.splitlines()[0]
        assert first.startswith(f"hand {hands}/{hands} ({last})  game over"), first
        assert f"hand {hands + 1}/" not in text and "game over — winner(s): " in text


def test_snapshot_through_unwrapped() -> None:
    e = craits_v0.env(num_players=4)
    e.reset(seed=0)
    s = e.unwrapped.snapshot()
    assert s["num_players"] == 4 and len(s["hands"]) == 4


def test_rgb_array_render_is_the_acting_seats_picture() -> None:
    from craits_env.render_rgb import picture_shape, table_picture

    env = craits_v0.env(num_players=3, render_mode="rgb_array")
    env.reset(seed=2)
    game = env.unwrapped.game
    frame = env.render()
    assert frame.shape == picture_shape(3) and frame.dtype == np.uint8
    expected = table_picture(game, game.current_player, list(env.unwrapped.possible_agents))
    np.testing.assert_array_equal(frame, expected)
