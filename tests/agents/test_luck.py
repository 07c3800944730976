"""The luck-adjusted estimator (craits.agents.luck): exact arithmetic on a stacked deck, every
event's corrections averaging zero over its possible cards, the tracking against the engine,
the shipped model's hash, the training seeds apart from the suite's, and unbiasedness over
many games (slow)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from craits.agents.duplicate_tournament import (
    GamePlayer,
    GameTask,
    TournamentConfig,
    deal_cards,
    plan,
)
from craits.agents.luck import (
    MODEL_FILE,
    MODEL_SHA256,
    LuckError,
    LuckEstimator,
    ValueModel,
    candidates,
    chance_events,
    default_model,
    model_bytes,
    read_model,
    recipient_values,
    values,
    weights_hash,
)
from craits.agents.luck_features import (
    INPUTS,
    STAGE_DEAL,
    STAGE_END,
    STAGE_PLAY,
    STAGE_STARTER,
    hand_points,
)
from craits_env import Game, Rules
from craits_env.cards import CARD_STRS, RANK_OF, parse_card
from craits_env.records import GameRecorder
from craits_env.scoring import score_ranks
from craits_env.testing.scenario import stacked_game


def own_points_model() -> ValueModel:
    """A value model that is each seat's points if the hand ended now, floored at 0 (input 1 is
    the seat's own points / 100)."""
    arrays = {
        "w0": np.zeros((INPUTS, 1), np.float32),
        "b0": np.zeros(1, np.float32),
        "w1": np.ones((1, 1), np.float32),
        "b1": np.zeros(1, np.float32),
        "lin": np.zeros(INPUTS, np.float32),
    }
    arrays["w0"][1, 0] = 1.0
    return ValueModel(arrays, {"weights_sha256": weights_hash(arrays)})


def game_record(players: int, rules: Rules, specs: tuple[str, ...], deal: int) -> dict:
    config = TournamentConfig(specs, players, deal + 1, 4101, rules)
    return GamePlayer(config, record=True).play(GameTask(deal, 0, 0))["record"]


@pytest.mark.parametrize(
    "rules",
    [
        Rules(),
        Rules(threes_cancel_eights=True),
        Rules(punitive_threes=True),
        Rules(three_points=0),
    ],
)
def test_hand_points_are_the_engines_scoring(rules: Rules) -> None:
    rng = np.random.default_rng(5)
    ranks = np.zeros((3000, 13))
    for row in ranks:
        for _ in range(rng.integers(0, 12)):
            row[rng.choice([2, 2, 2, *range(13)])] += 1  # threes often: R8.3
    expected = [
        score_ranks([r for r in range(13) for _ in range(int(row[r]))], rules) for row in ranks
    ]
    assert hand_points(ranks, rules).tolist() == expected


def test_scripted_game_corrections_exactly() -> None:
    """R2.3: seat 1 is dealt Kh, seat 0 Qd, the starter Jd; Kh cannot be played on Jd (R3.1),
    so seat 1 draws Ac (R3.3) and seat 0 goes out with Qd (R6.1). With V = the seat's points
    if the hand ended now, a card's correction is its points less the mean over the cards it
    could have been."""
    game = stacked_game([["Qd"], ["Kh"]], starter="Jd", stock=["Ac"], dealer=0)
    recorder = GameRecorder(game, ["a", "b"])
    while not game.is_over:
        recorder.apply(game.legal_actions()[0])
    record = recorder.record()
    assert record["scores"] == [0, 11]  # Kh + Ac (R8.2)
    ev = chance_events(record)
    assert ev.stage.tolist() == [STAGE_DEAL, STAGE_DEAL, STAGE_STARTER, STAGE_PLAY]
    assert ev.recipient.tolist() == [1, 0, -1, 1]
    assert [CARD_STRS[c] for c in ev.card] == ["Kh", "Qd", "Jd", "Ac"]
    corrections = LuckEstimator(own_points_model()).events(ev)

    deck = list(range(52))

    def points(cards: list[int]) -> float:
        return max(score_ranks([RANK_OF[c] for c in cards]), 0)

    def mean(hand: list[int], left: list[int]) -> float:
        return sum(points([*hand, c]) for c in left) / len(left)

    kh, qd, jd, ac = (parse_card(c) for c in ("Kh", "Qd", "Jd", "Ac"))
    after_deal = [c for c in deck if c not in (kh, qd, jd)]
    expected = np.array(
        [
            [0.0, 10 - mean([], deck)],  # Kh to seat 1: 10 points less 254 / 13
            [10 - mean([], [c for c in deck if c != kh]), 0.0],
            [0.0, 0.0],  # the starter changes no seat's points
            [0.0, points([kh, ac]) - mean([kh], after_deal)],  # a 3 would have cancelled Kh
        ]
    )
    assert corrections == pytest.approx(expected, abs=1e-3)
    luck = LuckEstimator(own_points_model()).game(record)
    assert luck.adjusted == pytest.approx(np.array([0, 11]) - expected.sum(axis=0), abs=1e-3)


@pytest.mark.parametrize(
    "players, rules, specs",
    [
        (4, Rules(hand_sizes=(8, 3, 1)), ("expert", "random", "greedy", "tactician")),
        (2, Rules(hand_sizes=(6, 1, 2)), ("random", "expert")),
        (6, Rules(hand_sizes=(5, 2), face_cards=True, voluntary_draw=True), ("random",) * 6),
        (
            3,
            Rules(hand_sizes=(4, 2), remove_kings_queens=True, count_out_can_return=True),
            ("random",) * 3,
        ),
    ],
)
def test_every_events_corrections_average_zero_over_its_cards(
    players: int, rules: Rules, specs: tuple[str, ...]
) -> None:
    """Unbiased by construction: given the history, the correction's mean over the cards the
    event could reveal (each weighted by its copies in the stock) is zero, for every seat."""
    record = game_record(players, rules, specs, 2)
    ev = chance_events(record)
    assert {STAGE_DEAL, STAGE_STARTER, STAGE_PLAY} <= set(ev.stage.tolist())
    model = default_model()
    event, card, weight = candidates(ev)
    assert np.allclose(np.bincount(event, weights=weight), 1.0)
    v = values(model, ev, event, card)
    expected = np.zeros((len(ev), players))
    np.add.at(expected, event, v * weight[:, None])
    centred = v - expected[event]
    total = np.zeros_like(expected)
    np.add.at(total, event, centred * weight[:, None])
    assert np.abs(total).max() < 1e-6
    # the fast path (the recipient's and the stock's features moved) is the full one
    fast = (ev.stage[event] == STAGE_DEAL) | (ev.stage[event] == STAGE_PLAY)
    quick = recipient_values(model, ev, event[fast], card[fast])
    assert quick == pytest.approx(v[fast], abs=2e-3)


def test_tracking_follows_the_engine_and_ending_draws_are_exact() -> None:
    """The hands rebuilt from the events are the engine's at every hand's end (checked inside),
    and a draw by a decision that ends its hand (R6.1, R5.3 with R6.2) is valued by the hand's
    own scoring."""
    seen_end = False
    for deal in range(6):
        record = game_record(4, Rules(hand_sizes=(3, 2, 1, 2)), ("random",) * 4, deal)
        ev = chance_events(record)
        assert len(ev.hand_points) == 4
        remaining = ev.remaining()
        ends = np.nonzero(ev.stage == STAGE_END)[0]
        seen_end |= len(ends) > 0
        for e in ends:  # the last draw of its hand: the hand's points less what was paid
            if e + 1 == len(ev) or ev.hand[e + 1] != ev.hand[e]:
                hands = ev.hands[e].astype(float)
                hands[ev.recipient[e], ev.card[e]] += 1
                v = values(default_model(), ev, np.array([e]), ev.card[[e]])[0]
                ranks = hands @ np.eye(13)[np.array(RANK_OF)]
                assert v.tolist() == hand_points(ranks, Rules()).tolist()
                out = remaining[e] == 0
                assert (v[~out] == remaining[e][~out]).all() or ev.accrued[e].any()
    assert seen_end


def test_the_shipped_model_is_checked_by_its_hash(tmp_path: Path) -> None:
    model = read_model(MODEL_FILE, MODEL_SHA256)
    assert model.sha256 == MODEL_SHA256 == weights_hash(model.arrays)
    assert model.meta["training"]["command"].startswith("python experiments/luck_model.py")
    arrays = {k: v.copy() for k, v in model.arrays.items()}
    arrays["b0"][0] += 0.001
    other = tmp_path / "other.npz"
    other.write_bytes(model_bytes(arrays, model.meta))
    with pytest.raises(LuckError, match=r"hash to .*expected .*\(an altered or another model\)"):
        read_model(other, MODEL_SHA256)
    read_model(other)  # consistent with its own meta: usable when asked for by path
    altered = tmp_path / "altered.npz"
    content = bytearray(MODEL_FILE.read_bytes())
    content[-200] ^= 1
    altered.write_bytes(bytes(content))
    with pytest.raises(LuckError) as e:
        read_model(altered)
    assert len(str(e.value).splitlines()) == 1
    with pytest.raises(LuckError, match="no such file"):
        read_model(tmp_path / "missing.npz")


def test_an_unfinished_game_is_refused() -> None:
    game = Game(2, Rules(hand_sizes=(2,)), seed=1)
    recorder = GameRecorder(game, ["a", "b"])
    recorder.apply(game.legal_actions()[0])
    with pytest.raises(LuckError, match="unfinished"):
        LuckEstimator().game(recorder.record())


@pytest.mark.slow
def test_training_deals_are_none_of_the_suites() -> None:
    """The value model's games (experiments/luck_model.py) share no deal with suite v1."""
    from craits.benchmark.deal_sets import load
    from craits.benchmark.suite import V1
    from experiments.luck_model import LINEUPS, SEED

    suite = []
    for table in V1.tables:
        for name in (table.full, table.search):
            suite.append(load("v1", name))
    seeds = {d.seed for d in suite}
    assert not seeds & {SEED + k for k in range(len(LINEUPS))}
    firsts = {
        deal_cards(d.config(("random",) * d.players), k)[1][0]
        for d in suite
        for k in range(d.deals)
    }
    for k, (players, rules, specs, deals) in enumerate(LINEUPS):
        config = TournamentConfig(specs, players, deals, SEED + k, rules, rotations="one")
        assert not {deal_cards(config, t.deal)[1][0] for t in plan(config)} & firsts


@pytest.mark.slow
def test_corrections_average_zero_and_adjusted_agrees_with_plain() -> None:
    """Over 96 games of the short game (random and expert against expert, every rotation),
    the mean correction a game is zero within its 99% interval, and the adjusted mean score
    agrees with the plain one, with a smaller spread."""
    rules = Rules(hand_sizes=(8, 7, 6, 5, 4, 3, 2, 1))
    estimator = LuckEstimator()
    corrections, plain, adjusted = [], [], []
    for spec in ("random", "expert"):
        config = TournamentConfig((spec, "expert", "expert", "expert"), 4, 12, 4102, rules)
        player = GamePlayer(config, record=True)
        for task in plan(config):
            result = player.play(task)
            luck = estimator.game(result["record"])
            corrections += list(luck.corrections)
            seat = (-task.rotation) % 4
            plain.append(luck.scores[seat])
            adjusted.append(luck.adjusted[seat])
    c = np.array(corrections)
    assert abs(c.mean()) < 2.58 * c.std() / np.sqrt(len(c))
    p, a = np.array(plain), np.array(adjusted)
    assert abs(p.mean() - a.mean()) < 2.58 * np.hypot(p.std(), a.std()) / np.sqrt(len(p))
    assert a.std() < p.std()


def test_summarize_adds_the_adjusted_mean_score_from_the_same_resamples() -> None:
    """Zero corrections give the plain mean and interval to the digit (the same resamples of
    deals); the plain fields do not move; a constant correction moves the mean and the
    interval by it."""
    from craits.agents.stats import summarize

    rng = np.random.default_rng(2)
    games = [
        {
            "key": f"{d}-0-{r}",
            "deal": d,
            "specs": ["a", "b"] if r == 0 else ["b", "a"],
            "scores": [int(x) for x in rng.integers(0, 400, 2)],
            "hand_points": [[1, 2]],
            "winners": [0],
            "decisions": 3,
        }
        for d in range(30)
        for r in range(2)
    ]
    plain = summarize(games, ["a", "b"], 7)
    zero = summarize(games, ["a", "b"], 7, luck={g["key"]: [0.0, 0.0] for g in games})
    shifted = summarize(games, ["a", "b"], 7, luck={g["key"]: [10.0, 10.0] for g in games})
    for p, z, s in zip(plain["agents"], zero["agents"], shifted["agents"], strict=True):
        assert {k: v for k, v in z.items() if not k.startswith("adjusted")} == p
        assert "adjusted_mean_score" not in p
        assert z["adjusted_mean_score"] == p["mean_score"]
        assert z["adjusted_mean_score_ci"] == p["mean_score_ci"]
        assert s["adjusted_mean_score"] == pytest.approx(p["mean_score"] - 10)
        assert s["adjusted_mean_score_ci"] == pytest.approx([x - 10 for x in p["mean_score_ci"]])
