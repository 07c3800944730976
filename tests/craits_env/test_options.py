"""The one typed parser of options (craits_env.options): Rules in Python, from tables and from
the command line, and training configurations — the same checks and the same one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from craits.training.config import DEVICES, TrainConfig, load_config, to_toml
from craits_env import Rules, options
from craits_env.rules import IDIOT_PENALTY, ONE_CARD, SEVEN_HITS

from ..training.test_training import tiny


def test_rules_fields_are_typed_and_converted() -> None:
    assert SEVEN_HITS == ("next", "next_but_one") and ONE_CARD == ("declare", "auto", "off")
    assert IDIOT_PENALTY == ("forfeit", "draw_one")
    assert Rules(hand_sizes=[3, 2]).hand_sizes == (3, 2)  # a list (JSON, TOML) is a tuple
    assert Rules.from_dict(Rules(num_decks=2).to_dict()) == Rules(num_decks=2)
    cases = {
        "num_decks": (3, "Rules.num_decks: got 3, allowed None or 1, 2"),
        "seven_hits": ("far", "Rules.seven_hits: got 'far', allowed 'next', 'next_but_one'"),
        "face_cards": (1, "Rules.face_cards: got 1, allowed True or False"),
        "three_points": (True, "Rules.three_points: got True, allowed an int"),
        "hand_sizes": ((), "Rules.hand_sizes: got (), allowed a non-empty tuple of ints >= 1"),
        "hand_decision_limit": (0, "Rules.hand_decision_limit: got 0, allowed an int >= 1"),
    }
    for name, (value, message) in cases.items():
        with pytest.raises(ValueError) as info:
            Rules(**{name: value})
        assert str(info.value) == message


def test_command_line_text_goes_through_the_same_types() -> None:
    text = {
        "face_cards": "yes",
        "hand_sizes": "5,4, 3",
        "num_decks": "none",
        "seven_hits": "next_but_one",
        "three_points": "-2",
    }
    parsed = {k: options.from_text(Rules, k, v) for k, v in text.items()}
    assert parsed == {
        "face_cards": True,
        "hand_sizes": (5, 4, 3),
        "num_decks": None,
        "seven_hits": "next_but_one",
        "three_points": -2,
    }
    assert options.from_text(Rules, "num_decks", "2") == 2
    for name, raw, allowed in (
        ("face_cards", "maybe", "True or False"),
        ("num_decks", "3", "None or 1, 2"),
        ("hand_sizes", "8,x", "a list of ints"),
        ("one_card", "loud", "'declare', 'auto', 'off'"),
    ):
        with pytest.raises(ValueError, match=f"got '{raw}', allowed {allowed}"):
            options.from_text(Rules, name, raw)


def test_train_config_rules_is_rules_and_errors_name_the_key() -> None:
    c = tiny(rules={"hand_sizes": [3, 2, 1], "face_cards": True})
    assert isinstance(c.rules, Rules) and c.rules.face_cards and c.rules.hand_sizes == (3, 2, 1)
    assert TrainConfig.from_dict(c.to_dict()) == c
    assert "[rules]\nhand_sizes = [3, 2, 1]\nface_cards = true\n" in to_toml(c)  # only changes
    assert DEVICES == ("auto", "cpu", "cuda")
    for override, message in (
        ("rules.face_cards=3", "config rules: Rules.face_cards: got 3, allowed True or False"),
        ("opponents.greedy=true", "config opponents: greedy: got True, allowed a number"),
        ("device=tpu", "config device: got 'tpu', allowed 'auto', 'cpu', 'cuda'"),
        (
            "reward=money",
            "config reward: got 'money', allowed 'relative', 'bounded', 'score', 'win'",
        ),
        ("hidden_sizes=[1.5]", "config hidden_sizes: got [1.5], allowed a list of ints"),
    ):
        with pytest.raises(ValueError) as info:
            load_config("ppo_4p", [override])
        assert str(info.value) == message


def test_the_run_records_the_settings_it_used(tmp_path: Path) -> None:
    from craits.agents.checkpoint import load_checkpoint
    from craits.training.config import config_path
    from craits.training.train import train

    result = train(
        tiny(total_steps=200, device="auto"),
        out=tmp_path,
        total_steps=150,
        progress=False,
        echo=lambda s: None,
    )
    recorded = load_config(str(config_path(str(tmp_path / "config.toml"))))
    assert recorded.device == "cpu" and recorded.total_steps == 150  # what was used, not "auto"
    assert load_checkpoint(result.final_checkpoint)["config"]["device"] == "cpu"
