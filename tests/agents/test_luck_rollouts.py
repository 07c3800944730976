"""The compiled rollout values of the luck estimator (craits.agents.luck_rollouts)."""

from __future__ import annotations

import numpy as np
import pytest

from craits.agents.arena import engine_table
from craits.agents.luck import LuckError
from craits.agents.luck_rollouts import (
    RolloutLuck,
    free_copy,
    reveals,
    seat_players,
)
from craits.agents.luck_tournament import estimator as luck_estimator
from craits.agents.rollout_rows import INCREMENT
from craits.agents.specs import make_agent
from craits_env import Game, Rules
from craits_env.public import PublicGame
from craits_env.public_tracker import PublicTracker
from craits_env.records import GameRecorder


def experts() -> list:
    agents = [make_agent("expert") for _ in range(4)]
    for a in agents:
        a.reset(0)
    return agents


def python_rollout(
    values: RolloutLuck,
    game: Game,
    salt: tuple[int, ...],
    specs: tuple[str, ...] = ("expert",) * 4,
    tracker: PublicTracker | None = None,
    j: int = 0,
) -> list[int]:
    """What :meth:`RolloutLuck.value`'s rollout ``j`` plays, on the Python engine: the stock
    in the rollout's key order (the highest key next), its generator seeded as the row's,
    ``specs`` at the seats (knowing what ``tracker`` inferred of the hand so far)."""
    keys, seeds = values._keys(2, *salt)
    hi, lo = (int(v) & (2**64 - 1) for v in seeds[j])
    generator = np.random.Generator(np.random.PCG64())
    generator.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": (hi << 64) | lo, "inc": INCREMENT},
        "has_uint32": 0,
        "uinteger": 0,
    }
    snap = game.snapshot(resume=True)
    g = Game.from_snapshot(snap, rng=generator)
    g.restack(sorted(g.stock, key=lambda c: -keys[j][c]))
    if tracker is None and specs == ("expert",) * 4:
        engine_table(g, experts()).run()
        return list(g.scores)
    public = PublicGame(g)
    if tracker is not None:
        public.tracker = tracker.copy_for(g)
    agents = [make_agent(s) for s in specs]
    for a in agents:
        a.reset(0)
    hand = g.hand_index
    while not g.is_over and g.hand_index == hand:
        seat = g.current_player
        public.apply(agents[seat].act(public.views[seat]))
    return list(g.scores)


@pytest.mark.parametrize("seed", range(12))
def test_a_rollout_is_four_experts_playing_the_restacked_hand(seed: int) -> None:
    """One rollout from a hand's first decision = the Python engine and ExpertAgent playing
    the hand with the stock restacked by the rollout's keys (reshuffles included, R10.1)."""
    rules = Rules(hand_sizes=(6,))
    game = Game(4, rules, seed=100 + seed)
    values = RolloutLuck(4, rules, rollouts=1, seed=5)
    got = values.value(game, (seed,))
    assert got.tolist() == python_rollout(values, game, (seed,))


def mid_hand(seed: int, rules: Rules, decisions: int) -> tuple[PublicGame, int, Game]:
    """Four experts' game ``decisions`` decisions in, the next decision, and the game."""
    public = PublicGame(Game(4, rules, seed=seed))
    agents = experts()
    for _ in range(decisions):
        seat = public.game.current_player
        public.apply(agents[seat].act(public.views[seat]))
    seat = public.game.current_player
    return public, agents[seat].act(public.views[seat]), public.game


# positions (hand size, game seed, decisions in) where what the hand showed changes how the
# experts play it out (a player who drew showed a void, R3.3: _p_block, _call_weights)
REMEMBERED = [(4, 230, 6, 30), (5, 203, 9, 3), (5, 220, 3, 20), (5, 247, 3, 47)]


@pytest.mark.parametrize(("size", "seed", "decisions", "salt"), REMEMBERED)
def test_a_rollout_remembers_what_the_hand_showed(
    size: int, seed: int, decisions: int, salt: int
) -> None:
    """With the hand's public trackers, the rollouts from mid-hand = the Python engine and
    experts who followed the hand playing it out; without them, experts who did not — and
    here the two differ."""
    rules = Rules(hand_sizes=(size,))
    public, action, game = mid_hand(seed, rules, decisions)
    before, tracker_before = free_copy(game), public.tracker.copy_for(game)
    public.apply(action)
    after = free_copy(public.game)
    assert after.hand_index == 0
    values = RolloutLuck(4, rules, rollouts=4, alternatives=1, seed=11)
    memory = (tracker_before, public.tracker.copy_for(after))
    v = values.values(before, action, after, (salt,), memory=memory)[0][0]
    knew = [python_rollout(values, after, (salt,), tracker=public.tracker, j=j) for j in range(4)]
    assert v.tolist() == np.mean(knew, axis=0).tolist()
    forgetful = RolloutLuck(4, rules, rollouts=4, alternatives=1, seed=11, remember=False)
    f = forgetful.values(before, action, after, (salt,))[0][0]
    fresh = [python_rollout(values, after, (salt,), j=j) for j in range(4)]
    assert f.tolist() == np.mean(fresh, axis=0).tolist()
    assert f.tolist() != v.tolist()


@pytest.mark.parametrize("seed", range(6))
def test_a_rollout_plays_each_seat_as_the_table_did(seed: int) -> None:
    """``seat_players``: the compiled greedy, tactician and expert at their seats = the
    Python agents; a random seat plays legal moves of its own generator, the same in every
    sample of an event (common random numbers)."""
    rules = Rules(hand_sizes=(6,))
    game = Game(4, rules, seed=300 + seed)
    specs = ("greedy", "tactician", "expert", "greedy")
    values = RolloutLuck(4, rules, rollouts=1, seed=7)
    got = values.value(game, (seed,), seat_players(specs))
    assert got.tolist() == python_rollout(values, game, (seed,), specs)
    table = seat_players(("random", "pimc:8", "champion", "expert"))
    assert table.tolist() == seat_players(("random", "expert", "expert", "expert")).tolist()
    many = RolloutLuck(4, rules, rollouts=16, seed=7)
    v = many.value(game, (seed,), table)
    assert v.tolist() == many.value(game, (seed,), table).tolist()


def test_clipped_rollouts_count_at_most_clip_points_a_seat() -> None:
    """``clip``: each rollout's points of a seat bounded either way (any value keeps the
    corrections' mean zero); here the mean of the clipped Python rollouts."""
    rules = Rules(hand_sizes=(6,))
    game = Game(4, rules, seed=104)
    values = RolloutLuck(4, rules, rollouts=3, seed=5, clip=20)
    python = [python_rollout(values, game, (1,), j=j) for j in range(3)]
    assert max(max(p) for p in python) > 20  # the clip bites
    got = values.value(game, (1,))
    assert got.tolist() == np.mean(np.clip(python, -20, 20), axis=0).tolist()


def test_a_rollout_past_53_bits_counts_the_clip() -> None:
    """A seat whose pressures (R10.1) put its hand points past 53 bits: each rollout counts
    the clip for it; unclipped, the value is refused in one line."""
    from craits_env.vector.step_rewards import EXACT_PRESSURES

    rules = Rules(hand_sizes=(4,))
    snap = Game(4, rules, seed=3).snapshot(resume=True)
    snap["shuffle_pressures"] = [EXACT_PRESSURES + 1, 0, 0, 0]
    game = Game.from_snapshot(snap)
    clipped = RolloutLuck(4, rules, rollouts=3, clip=600).value(game, (1,))
    assert clipped[0] == 600 and np.all(clipped[1:] < 600)
    with pytest.raises(LuckError, match="more than 53 bits"):
        RolloutLuck(4, rules, rollouts=3, clip=None).value(game, (1,))


def test_a_table_of_unknown_players_is_refused() -> None:
    values = RolloutLuck(4, Rules(hand_sizes=(3,)), rollouts=1)
    with pytest.raises(ValueError, match="table: got"):
        values.value(Game(4, Rules(hand_sizes=(3,)), seed=1), (), [2, 2, 2, 7])


def test_the_first_deal_corrections_have_mean_zero() -> None:
    """The first deal's correction (its value less the mean of other deals by the same
    dealer) averages zero over games dealt at random; and it is counted as an event."""
    rules = Rules(hand_sizes=(3,))
    values = RolloutLuck(4, rules, rollouts=4, alternatives=4, seed=21)
    got = np.array([values.deal_correction(Game(4, rules, seed=900 + i), (i,)) for i in range(300)])
    per_game = got.mean(axis=1)
    half = 3 * per_game.std(ddof=1) / np.sqrt(len(per_game))
    assert abs(per_game.mean()) < half
    assert got.std() > 1  # it corrects something
    deal = RolloutLuck(4, rules, rollouts=4, alternatives=4, seed=21, remember=False)
    plain = RolloutLuck(4, rules, rollouts=4, alternatives=4, seed=21, first_deal=False,
                        remember=False)  # fmt: skip
    record = played(5, rules)
    assert deal.game(record).events == plain.game(record).events + 1


def test_values_are_means_of_rollouts_and_reproducible() -> None:
    rules = Rules(hand_sizes=(5,))
    game = Game(4, rules, seed=9)
    one = RolloutLuck(4, rules, rollouts=1, seed=2)
    many = RolloutLuck(4, rules, rollouts=8, seed=2)
    v = many.value(game, (0,))
    assert many.value(game, (0,)).tolist() == v.tolist()
    assert not np.array_equal(many.value(game, (1,)), v)
    # the first of the 8 rollouts is the 1-rollout value (the keys come from the same seed)
    keys8, _ = many._keys(2, 0)
    keys1, _ = one._keys(2, 0)
    assert np.array_equal(keys8[:1], keys1)
    assert v.shape == (4,) and np.all(v >= -100)


def played(seed: int, rules: Rules) -> dict:
    game = Game(4, rules, seed=seed)
    public = PublicGame(game)
    recorder = GameRecorder(game, ["expert"] * 4, apply=public.apply)
    agents = experts()
    while not game.is_over:
        seat = game.current_player
        recorder.apply(agents[seat].act(public.views[seat]))
    return recorder.record()


def test_a_game_is_corrected_at_each_decision_that_reveals_cards() -> None:
    rules = Rules(hand_sizes=(4, 3))
    record = played(31, rules)
    values = RolloutLuck(4, rules, rollouts=4, alternatives=2, seed=1, first_deal=False)
    luck = values.game(record, (7,))
    decisions = 0
    game = Game(4, rules, seed=31)
    public = PublicGame(game)
    agents = experts()
    while not game.is_over:
        seat = game.current_player
        decisions += reveals(public.apply(agents[seat].act(public.views[seat])))
    assert luck.events == decisions > 0
    assert luck.scores.tolist() == list(game.scores)
    assert np.allclose(luck.adjusted, luck.scores - luck.corrections)
    assert values.game(record, (7,)).corrections.tolist() == luck.corrections.tolist()
    assert values.game(record, (8,)).corrections.tolist() != luck.corrections.tolist()


def first_draw(rules: Rules, seed: int) -> tuple[Game, int, Game]:
    """The state before the first decision of a game that draws, that decision, the state
    after it (free copies)."""
    game = Game(4, rules, seed=seed)
    public = PublicGame(game)
    agents = experts()
    while True:
        before = free_copy(game)
        seat = game.current_player
        action = agents[seat].act(public.views[seat])
        if reveals(public.apply(action)):
            return before, action, free_copy(game)


def test_a_draw_is_corrected_against_every_card_the_stock_could_give() -> None:
    """Stratified samples: one per distinct card of the stock, weighted by its copies; the
    correction is the actual value less their weighted mean."""
    rules = Rules(hand_sizes=(5,))
    before, action, after = first_draw(rules, 3)
    values = RolloutLuck(4, rules, rollouts=3, alternatives=4, seed=0)
    v, weights = values.values(before, action, after, (1,))
    stock = np.bincount(before.stock, minlength=52)
    assert weights.tolist() == pytest.approx((stock[stock > 0] / stock.sum()).tolist())
    assert v.shape == (len(weights) + 1, 4)
    got = values.corrections(before, action, after, (1,))
    assert np.allclose(got, v[0] - weights @ v[1:])
    assert v[0].tolist() == values.value(after, (1,)).tolist()  # the same rollout keys
    plain = RolloutLuck(4, rules, rollouts=3, alternatives=4, seed=0, stratify=False)
    v, weights = plain.values(before, action, after, (1,))
    assert v.shape == (5, 4) and weights.tolist() == [0.25] * 4


def single_card_draw(rules: Rules) -> tuple[Game, int, Game, int]:
    """The first game's first draw of a single card from the stock (the state before, the
    action, the state after) and the row of its stratum in ``values()`` (1 + its index)."""
    for seed in range(40):
        before, action, after = first_draw(rules, seed)
        seat = before.current_player
        drawn = [c for c in after.hands[seat] if c not in before.hands[seat]]
        if action == 52 and len(drawn) == 1 and after.stock_size == before.stock_size - 1:
            stock = np.bincount(before.stock, minlength=52)
            return before, action, after, 1 + list(np.flatnonzero(stock)).index(drawn[0])
    raise AssertionError("no game's first draw was a single card from the stock")


def test_a_sample_drawing_the_actual_card_is_valued_as_the_actual_state() -> None:
    """Coupled keys: the stratum of the card actually drawn (one copy in the stock) restacks
    the rest as the actual state's rollouts do, so its value is the actual value exactly."""
    rules = Rules(hand_sizes=(5,))
    before, action, after, stratum = single_card_draw(rules)
    values = RolloutLuck(4, rules, rollouts=4, seed=2)
    v, _ = values.values(before, action, after, (5,))
    assert v[stratum].tolist() == v[0].tolist()
    uncoupled = RolloutLuck(4, rules, rollouts=4, seed=2, couple=False)
    assert uncoupled.values(before, action, after, (5,))[0][0].tolist() == v[0].tolist()


def test_samples_valued_by_fewer_rollouts_take_the_actual_states_first_ones() -> None:
    """``sample_rollouts=S``: each sample is valued by the first S of the R rollouts (the
    actual state's value keeps all R): the stratum of the card actually drawn is the mean of
    the actual state's first S rollouts, so the strata at S = 1..R give back its R rollouts,
    whose mean is the actual value."""
    rules = Rules(hand_sizes=(5,))
    before, action, after, stratum = single_card_draw(rules)
    full, weights = RolloutLuck(4, rules, rollouts=4, seed=2).values(before, action, after, (5,))
    means = []
    for s in range(1, 5):
        v, w = RolloutLuck(4, rules, rollouts=4, seed=2, sample_rollouts=s).values(
            before, action, after, (5,)
        )
        assert v[0].tolist() == full[0].tolist() and w.tolist() == weights.tolist()
        means.append(v[stratum])
        if s < 4:
            assert not np.array_equal(v[1:], full[1:])
    assert means[3].tolist() == full[stratum].tolist() == full[0].tolist()
    each = [means[0]] + [(s + 1) * means[s] - s * means[s - 1] for s in range(1, 4)]
    assert np.allclose(np.mean(each, axis=0), full[0])
    assert len({tuple(e) for e in np.round(each, 6)}) > 1  # four different rollouts


def test_an_estimators_identity_names_fewer_rollouts_a_sample() -> None:
    """``rollouts:R:K:S``: S < R is another estimator (its corrections never mixed with
    another's); S = R is ``rollouts:R:K`` (the stored corrections stay valid)."""
    named = {
        spec: luck_estimator(spec, 4, Rules()).model_id
        for spec in ("rollouts:8:4", "rollouts:8:4:8", "rollouts:8:4:2")
    }
    assert named["rollouts:8:4"] == named["rollouts:8:4:8"]
    assert named["rollouts:8:4"].startswith("rollouts-8-4/v5/clip600/seated:")
    assert named["rollouts:8:4:2"] == named["rollouts:8:4"].replace("8-4/", "8-4-2/", 1)
    for bad in ("rollouts:8:4:9", "rollouts:8:4:0", "rollouts:8:4:2:1"):
        with pytest.raises(ValueError, match=f"luck estimator: got {bad!r}, allowed model, "):
            luck_estimator(bad, 4, Rules())


def test_bad_arguments_and_unfinished_games_are_refused() -> None:
    with pytest.raises(ValueError, match=r"sample_rollouts: got 5, allowed 1 to rollouts \(4\)"):
        RolloutLuck(4, Rules(), rollouts=4, sample_rollouts=5)
    with pytest.raises(ValueError, match="sample_rollouts: got 0"):
        RolloutLuck(4, Rules(), rollouts=4, sample_rollouts=0)
    with pytest.raises(ValueError, match="allowed 1 or more"):
        RolloutLuck(4, Rules(), rollouts=0)
    with pytest.raises(ValueError, match="clip: got -1"):
        RolloutLuck(4, Rules(), clip=-1)
    record = played(1, Rules(hand_sizes=(2,)))
    record = {**record, "finished": False}
    with pytest.raises(LuckError, match="unfinished"):
        RolloutLuck(4, Rules(hand_sizes=(2,))).game(record)


def random_decision(rules: Rules, seed: int) -> tuple[Game, int, Game, list[int]]:
    """The first decision of a ``random`` player (seat 0, three ``expert``) with more than one
    legal move and none of them a draw: the state before, its move, the state after, the
    legal moves."""
    game = Game(4, rules, seed=seed)
    public = PublicGame(game)
    agents = [make_agent("random", 5), *experts()[1:]]
    while True:
        before, seat = free_copy(game), game.current_player
        legal = game.legal_actions()
        action = agents[seat].act(public.views[seat])
        public.apply(action)
        if seat == 0 and len(legal) > 1 and 52 not in legal:
            return before, action, free_copy(game), legal


def test_a_random_players_choice_is_corrected_against_each_of_its_moves() -> None:
    """``choices``: the samples are the random player's legal moves, each applied to the
    state before as it stands, weighted alike and valued by every rollout: the sample of the
    move made is valued exactly as the actual state, and each is the value of the state
    that move makes."""
    rules = Rules(hand_sizes=(5,))
    for seed in range(40):
        before, action, after, legal = random_decision(rules, seed)
        if after.hand_index == before.hand_index:
            break
    values = RolloutLuck(4, rules, rollouts=4, seed=2, sample_rollouts=2)
    v, w = values.values(before, action, after, (3,), None, None, legal)
    assert w.tolist() == [1 / len(legal)] * len(legal)
    assert v[1 + legal.index(action)].tolist() == v[0].tolist()
    for k, move in enumerate(legal):
        made = free_copy(before)
        made.apply(move)
        assert v[1 + k].tolist() == values.value(made, (3,)).tolist()
    assert len({tuple(row) for row in v[1:]}) > 1


def test_a_random_players_choices_are_corrected_with_mean_zero() -> None:
    """Over games of ``random`` against three ``expert``: the choice corrections (a game's
    corrections less those without them) average zero, and narrow ``random``'s adjusted
    score."""
    rules = Rules(hand_sizes=(3, 2))
    on = RolloutLuck(4, rules, rollouts=8, alternatives=2, seed=3)
    off = RolloutLuck(4, rules, rollouts=8, alternatives=2, seed=3, choices=False)
    rows, choices = [], 0
    for k in range(60):
        record = played_by(["random", "expert", "expert", "expert"], 700 + k, rules)
        a, b = on.game(record, (k,)), off.game(record, (k,))
        assert a.events >= b.events
        choices += a.events - b.events
        rows.append((a.scores[0], a.corrections[0], b.corrections[0]))
    assert choices > 60
    scores, with_choices, without = np.array(rows).T
    extra = with_choices - without
    assert abs(extra.mean()) < 3 * extra.std(ddof=1) / np.sqrt(len(extra))
    assert (scores - with_choices).std() < (scores - without).std()
    assert RolloutLuck(4, rules, rollouts=8, seated=False).choices is False


def played_by(seats: list[str], seed: int, rules: Rules) -> dict:
    game = Game(4, rules, seed=seed)
    public = PublicGame(game)
    recorder = GameRecorder(game, seats, apply=public.apply)
    agents = [make_agent(spec, seed + i) for i, spec in enumerate(seats)]
    for a in agents:
        a.reset(seed)
    while not game.is_over:
        seat = game.current_player
        recorder.apply(agents[seat].act(public.views[seat]))
    return recorder.record()
