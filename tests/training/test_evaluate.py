"""A training run's evaluations (craits.training.evaluate): the luck-adjusted mean score and
its interval beside the plain ones (``eval_adjusted``), in memory and stored (``luck.jsonl``:
a rerun computes nothing), by the shipped model or by rollouts (``eval_luck``), and in the
run's TensorBoard scalars."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from craits.agents.checkpoint import save_checkpoint
from craits.agents.duplicate_tournament import GamePlayer, identify, plan
from craits.agents.luck import LuckEstimator
from craits.agents.luck_tournament import estimator
from craits.agents.stats import summarize
from craits.training.evaluate import EVAL_SEED, eval_config, evaluate, tournament_command
from craits.training.state import TrainingState
from craits.training.train import train
from craits_env import Rules

from .test_training import tiny

SHORT = Rules(hand_sizes=(3, 2, 1))
DEALS = 3
ADJUSTED = ("adjusted_mean_score", "adjusted_mean_score_ci", "adjusted_width_ratio")


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-player checkpoint of an untrained network (tiny's table: hands of 3, 2 and 1)."""
    path = tmp_path_factory.mktemp("ckpt") / "final.pt"
    save_checkpoint(path, TrainingState(tiny(seed=3), torch.device("cpu"), "eval").checkpoint())
    return path


def independent_luck(ckpt: Path) -> tuple[list[dict], dict[str, list[float]]]:
    """The evaluation's games played again with their records, and each game's corrections
    from LuckEstimator on those records (by game key)."""
    config = identify(eval_config(ckpt, "greedy", 2, SHORT, DEALS))
    player = GamePlayer(config, record=True)
    estimator = LuckEstimator()
    games, luck = [], {}
    for task in plan(config):
        game = player.play(task)
        record = game.pop("record")
        luck[game["key"]] = [float(x) for x in estimator.game(record).corrections]
        assert estimator.adjusted_scores(record) == pytest.approx(
            [s - c for s, c in zip(game["scores"], luck[game["key"]], strict=True)]
        )
        games.append(game)
    return games, luck


@pytest.mark.slow
def test_in_memory_evaluation_adds_the_adjusted_figures_of_luck_estimator(ckpt: Path) -> None:
    result = evaluate(ckpt, "greedy", 2, SHORT, DEALS, adjusted=True)
    agent, spec = result["agent"], f"ppo:{ckpt}"
    games, luck = independent_luck(ckpt)
    assert len(games) == 2 * DEALS
    adjusted = [
        score - luck[g["key"]][seat]
        for g in games
        for seat, (who, score) in enumerate(zip(g["specs"], g["scores"], strict=True))
        if who == spec
    ]
    assert len(adjusted) == agent["games"] == 2 * DEALS
    assert agent["adjusted_mean_score"] == pytest.approx(np.mean(adjusted), abs=1e-9)
    assert agent["adjusted_mean_score"] != pytest.approx(agent["mean_score"])  # luck removed
    expected = summarize(games, [spec, "greedy"], EVAL_SEED, luck)
    row = next(r for r in expected["agents"] if r["spec"] == spec)
    assert agent["adjusted_mean_score_ci"] == row["adjusted_mean_score_ci"]
    (lo, hi), (alo, ahi) = agent["mean_score_ci"], agent["adjusted_mean_score_ci"]
    assert agent["adjusted_width_ratio"] == pytest.approx((ahi - alo) / (hi - lo))
    assert "adjusted_mean_score" in result["opponent"]
    assert "adjusted mean score [95% CI]" in result["markdown"]
    assert "--no-adjusted" not in result["markdown"]


@pytest.mark.slow
def test_adjusted_off_leaves_the_plain_rows(ckpt: Path, tmp_path: Path) -> None:
    on = evaluate(ckpt, "greedy", 2, SHORT, DEALS, adjusted=True)
    off = evaluate(ckpt, "greedy", 2, SHORT, DEALS)  # off by default, as eval_adjusted
    assert not set(ADJUSTED) & set(off["agent"]) and not set(ADJUSTED) & set(off["opponent"])
    assert off["agent"] == {k: v for k, v in on["agent"].items() if k not in ADJUSTED}
    assert "adjusted mean score" not in off["markdown"] and "--no-adjusted" in off["markdown"]
    stored = evaluate(ckpt, "greedy", 2, SHORT, DEALS, out=tmp_path / "e", adjusted=False)
    assert stored["agent"] == off["agent"]
    assert not (tmp_path / "e" / "luck.jsonl").exists()
    assert not (tmp_path / "e" / "records.jsonl").exists()


@pytest.mark.slow
def test_stored_evaluation_keeps_corrections_and_a_rerun_computes_nothing(
    ckpt: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "eval"
    ticks: list[tuple[int, int]] = []
    first = evaluate(
        ckpt, "greedy", 2, SHORT, DEALS, out=out, adjusted=True,
        luck_progress=lambda *t: ticks.append(t),
    )  # fmt: skip
    in_memory = evaluate(ckpt, "greedy", 2, SHORT, DEALS, adjusted=True)
    assert first["agent"] == in_memory["agent"]
    assert ticks[0] == (0, 2 * DEALS) and ticks[-1] == (2 * DEALS, 2 * DEALS)
    _, luck = independent_luck(ckpt)
    lines = [json.loads(line) for line in (out / "luck.jsonl").read_text().splitlines()]
    assert {line["key"]: line["corrections"] for line in lines} == luck
    assert {line["model"] for line in lines} == {LuckEstimator().model_id}
    assert not (out / "records.jsonl").exists()  # luck.jsonl keeps what counts
    stored = json.loads((out / "results.json").read_text())
    row = next(r for r in stored["agents"] if r["spec"] == f"ppo:{ckpt}")
    assert row["adjusted_mean_score"] == first["agent"]["adjusted_mean_score"]
    assert row["adjusted_mean_score_ci"] == first["agent"]["adjusted_mean_score_ci"]
    before = (out / "luck.jsonl").read_bytes(), (out / "luck.jsonl").stat().st_mtime_ns

    def refuse(*args: object) -> None:
        raise AssertionError("a correction computed again")

    monkeypatch.setattr(LuckEstimator, "game", refuse)
    again = evaluate(ckpt, "greedy", 2, SHORT, DEALS, out=out, adjusted=True)
    assert again["agent"] == first["agent"]
    assert ((out / "luck.jsonl").read_bytes(), (out / "luck.jsonl").stat().st_mtime_ns) == before


def test_the_reproducing_command_says_whether_the_table_is_adjusted() -> None:
    config = eval_config("runs/x/final.pt", "greedy", 2, SHORT, DEALS)
    plain = (
        "craits tournament ppo:runs/x/final.pt greedy --players 2 --deals 3 --seed 20251130 "
        "-r hand_sizes=3,2,1"
    )
    assert tournament_command(config) == plain + " --out DIR"
    assert tournament_command(config, adjusted=False) == plain + " --no-adjusted --out DIR"
    by_rollouts = tournament_command(config, luck="rollouts:8:2")
    assert by_rollouts == plain + " --luck rollouts:8:2 --out DIR"


ROLLOUTS = "rollouts:8:2"


@pytest.mark.slow
def test_an_evaluation_corrected_by_rollouts_is_the_estimators_own_and_names_it(
    ckpt: Path, tmp_path: Path
) -> None:
    """eval_luck = "rollouts:R:K": each game's corrections are the tournament estimator's on
    its record (the checkpoint's seat played by its network), stored under its identity."""
    config = identify(eval_config(ckpt, "greedy", 2, SHORT, DEALS))
    player = GamePlayer(config, record=True)
    chosen = estimator(ROLLOUTS, 2, SHORT)
    luck = {}
    games = []
    for task in plan(config):
        game = player.play(task)
        luck[game["key"]] = [float(x) for x in chosen.game(game.pop("record")).corrections]
        games.append(game)
    spec = f"ppo:{ckpt}"
    expected = summarize(games, [spec, "greedy"], EVAL_SEED, luck)
    row = next(r for r in expected["agents"] if r["spec"] == spec)

    in_memory = evaluate(ckpt, "greedy", 2, SHORT, DEALS, adjusted=True, luck=ROLLOUTS)
    out = tmp_path / "eval"
    stored = evaluate(ckpt, "greedy", 2, SHORT, DEALS, out=out, adjusted=True, luck=ROLLOUTS)
    by_model = evaluate(ckpt, "greedy", 2, SHORT, DEALS, adjusted=True)
    for result in (in_memory, stored):
        agent = result["agent"]
        assert agent["adjusted_mean_score"] == pytest.approx(row["adjusted_mean_score"], abs=1e-9)
        assert agent["adjusted_mean_score_ci"] == row["adjusted_mean_score_ci"]
        assert f"--luck {ROLLOUTS}" in result["markdown"]
        assert chosen.model_id in result["markdown"]  # the table says what corrected it
    assert in_memory["agent"]["adjusted_mean_score"] != pytest.approx(
        by_model["agent"]["adjusted_mean_score"]
    )
    lines = [json.loads(line) for line in (out / "luck.jsonl").read_text().splitlines()]
    assert {line["key"]: line["corrections"] for line in lines} == luck
    assert {line["model"] for line in lines} == {chosen.model_id}
    assert json.loads((out / "results.json").read_text())["luck_estimator"] == chosen.model_id


def test_eval_adjusted_is_a_checked_config_key() -> None:
    assert tiny().eval_adjusted is False and tiny(eval_adjusted=True).eval_adjusted is True
    with pytest.raises(ValueError, match=r"^config eval_adjusted: .*") as info:
        tiny(eval_adjusted="sometimes")
    assert "\n" not in str(info.value)


def test_eval_luck_is_a_checked_config_key() -> None:
    assert tiny().eval_luck == "model" and tiny(eval_luck=ROLLOUTS).eval_luck == ROLLOUTS
    for bad in ("rollouts:0", "rollouts:8:2:9", "modle"):
        with pytest.raises(ValueError, match=r"^config eval_luck: luck estimator: got .*") as info:
            tiny(eval_luck=bad)
        assert "\n" not in str(info.value) and "rollouts:R:K:S" in str(info.value)


def scalars(run: Path) -> dict[str, list[float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run))
    acc.Reload()
    return {t: [e.value for e in acc.Scalars(t)] for t in acc.Tags()["scalars"]}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("adjusted", "by"), [(True, "model"), (False, "model"), (True, "rollouts:4:2")]
)
def test_a_runs_evaluations_log_the_adjusted_figures_unless_off(
    tmp_path: Path, adjusted: bool, by: str
) -> None:
    config = tiny(
        total_steps=600, eval_every=1, final_eval_deals=2, eval_adjusted=adjusted, eval_luck=by
    )
    result = train(config, out=tmp_path, progress=False, echo=lambda s: None)
    logged = scalars(tmp_path)
    names = ("adjusted_mean_score", "adjusted_mean_score_ci_lo", "adjusted_mean_score_ci_hi")
    tags = [f"eval/greedy/{name}" for name in (*names, "adjusted_width_ratio")]
    final = result.evaluations["greedy"]["agent"]
    if not adjusted:
        assert not set(tags) & set(logged) and "adjusted_mean_score" not in final
        assert not (tmp_path / "eval" / "greedy" / "luck.jsonl").exists()
        return
    # a periodic evaluation after every update but the last, then the final one
    assert result.updates >= 2 and len(logged[tags[0]]) == result.updates
    lo, hi = final["adjusted_mean_score_ci"]
    assert [logged[t][-1] for t in tags] == pytest.approx(
        [final["adjusted_mean_score"], lo, hi, final["adjusted_width_ratio"]]
    )
    assert (tmp_path / "eval" / "greedy" / "luck.jsonl").is_file()
    assert not math.isnan(final["adjusted_mean_score"])
    named = json.loads((tmp_path / "eval" / "greedy" / "results.json").read_text())
    assert named["luck_estimator"] == estimator(by, config.num_players, config.rules).model_id
