"""The Watch page's frames (:func:`craits.web.replays.game_frames`): byte for byte what
they were before the frames were built incrementally, and a 400-hand game told whole.

The digests below are of the JSON the server sends (``JSONResponse``'s encoding) for
seeded games of random legal moves, computed with the frame builder that rebuilt every
hand for every frame (commit 15776f6). A change to the engine, the narrator or the frame
layout changes them on purpose: print :func:`frames_digest` for each case and update.
"""

from __future__ import annotations

import gc
import hashlib
import json
import random
from typing import Any

import pytest

from craits.web.replays import collector_paused, game_frames
from craits.web.sessions import ApiError
from craits_env.cards import CARD_STRS, RANK_CHARS, RANK_OF, SUIT_OF, SUIT_SYMBOLS
from craits_env.engine import Game
from craits_env.records import GameRecorder, RecordError
from craits_env.rules import STANDARD_HAND_SIZES, Rules

LONG_HANDS = 400
"""The hands of the long game (the size ``experiments/bench_web_replay.py`` times)."""


def play_random(n: int, rules: Rules, seed: int, stop: int | None = None) -> GameRecorder:
    """A game of uniformly random legal moves, recorded (``stop``: only that many
    decisions, an unfinished record); the recorder holds the game as it ended."""
    r = random.Random(seed)
    game = Game(n, rules, seed=seed, record=True)
    recorder = GameRecorder(game, ["random"] * n, seed=seed)
    while not game.is_over and (stop is None or len(recorder.decisions) < stop):
        legal = game.legal_actions()
        recorder.apply(legal[r.randrange(len(legal))])
    return recorder


def random_game(n: int, rules: Rules, seed: int, stop: int | None = None) -> dict[str, Any]:
    """The record of :func:`play_random`'s game."""
    return play_random(n, rules, seed, stop).record()


def long_rules(hands: int = LONG_HANDS) -> Rules:
    """The standard hand sizes (R2.2) over and over, ``hands`` of them."""
    sizes = STANDARD_HAND_SIZES
    return Rules(hand_sizes=tuple(sizes[i % len(sizes)] for i in range(hands)))


WINDOW_KEYS = ("frame_count", "frames_from", "hand_starts")  # added with windows of frames


def frames_digest(frames: dict[str, Any]) -> str:
    """The first 16 hex digits of the SHA-256 of ``frames`` as the server encodes them (the
    window's keys left out: the digests were taken before there were windows)."""
    frames = {k: v for k, v in frames.items() if k not in WINDOW_KEYS}
    text = json.dumps(frames, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


GAMES: dict[str, tuple[int, Rules, int, int | None]] = {
    "standard_4p": (4, Rules(), 3, None),
    "faces_3p": (
        3,
        Rules(
            face_cards=True,
            idiot_penalty="draw_one",
            seven_hits="next_but_one",
            voluntary_draw=True,
            going_out_bonus=True,
            hand_decision_limit=300,
        ),
        5,
        None,
    ),
    "ones_2p": (
        2,
        Rules(hand_sizes=(1, 1, 2, 1), one_card_on_deal=True, count_out_can_return=True),
        7,
        None,
    ),
    "two_decks_6p": (
        6,
        Rules(
            num_decks=2,
            punitive_threes=True,
            threes_cancel_eights=True,
            dealer_follows_direction=True,
        ),
        11,
        None,
    ),
    "limited_5p": (
        5,
        Rules(one_card="auto", hand_decision_limit=25, remove_kings_queens=True, three_points=7),
        13,
        None,
    ),
    "unfinished_4p": (4, Rules(), 17, 150),
}
"""Seeded games that between them take every rule option off its default."""

DIGESTS: dict[tuple[str, int | None], str] = {
    ("faces_3p", None): "9d4ee3dd22f4901a",
    ("faces_3p", 0): "126e92d3966adcf4",
    ("faces_3p", 1): "5d493686d085f3a9",
    ("faces_3p", 2): "6a1cc815683dbb1f",
    ("limited_5p", None): "c463335482cb1733",
    ("limited_5p", 0): "02d3555645bbb410",
    ("limited_5p", 1): "8d0907223031b2ef",
    ("limited_5p", 2): "3ce97cee9cd654ba",
    ("limited_5p", 3): "5030bed2e98db858",
    ("limited_5p", 4): "63eefde41c940706",
    ("ones_2p", None): "c327678801e8933d",
    ("ones_2p", 0): "9eb9cc271034e914",
    ("ones_2p", 1): "808a718b23988fb6",
    ("standard_4p", None): "92a0472fc6bafe81",
    ("standard_4p", 0): "8e8333b4b8efaa63",
    ("standard_4p", 1): "c97e97ae110bd388",
    ("standard_4p", 2): "efe76cc4ae642787",
    ("standard_4p", 3): "d677c6103eba9def",
    ("two_decks_6p", None): "f2276d5ddab69880",
    ("two_decks_6p", 0): "f818e967192742ee",
    ("two_decks_6p", 1): "eff3b8e326898b31",
    ("two_decks_6p", 2): "ae3e44809cadef6b",
    ("two_decks_6p", 3): "47ebb91bc86b3ecc",
    ("two_decks_6p", 4): "a470e00da822693b",
    ("two_decks_6p", 5): "0668fbfcff72c742",
    ("unfinished_4p", None): "c570a0f54be3fe25",
    ("unfinished_4p", 0): "af012e18117a7b6e",
    ("unfinished_4p", 1): "b63ccfe7a60fd17e",
    ("unfinished_4p", 2): "7a95088854fd7c84",
    ("unfinished_4p", 3): "78bb0bfe175b85b3",
}
"""The digest of each game's frames from above (``None``) and from each seat."""


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(GAMES))
def test_replay_frames_are_byte_for_byte_those_of_the_full_rebuild(name: str) -> None:
    n, rules, seed, stop = GAMES[name]
    record = random_game(n, rules, seed, stop)
    got = {(name, seat): frames_digest(game_frames(record, seat)) for seat in [None, *range(n)]}
    assert got == {key: d for key, d in DIGESTS.items() if key[0] == name}


def _table(game: Game, seat: int | None) -> dict[str, Any]:
    """What a frame shows of ``game`` (all but ``decision`` and ``lines``), read from the
    engine directly."""
    return {
        "hand_index": game.hand_index,
        "hand_size": game.hand_size,
        "dealer": game.dealer,
        "hands": [
            [CARD_STRS[c] for c in h] if seat in (None, s) else None
            for s, h in enumerate(game.hands)
        ],
        "hand_sizes": [len(h) for h in game.hands],
        "top": CARD_STRS[game.top],
        "active_suit": "cdhs"[game.active_suit],
        "count": game.count,
        "direction": game.direction,
        "phase": "game_over" if game.is_over else "play",
        "current_player": None if game.is_over else game.current_player,
        "scores": list(game.scores),
        "stock_size": game.stock_size,
        "went_out": list(game.went_out),
    }


@pytest.mark.slow
@pytest.mark.parametrize("seat", [None, 0])
def test_a_400_hand_game_replays_to_one_frame_per_decision(seat: int | None) -> None:
    rules = long_rules()
    recorder = play_random(4, rules, 1)
    record, end = recorder.record(), recorder.game
    got = game_frames(record, seat)
    frames = got["frames"]
    assert len(record["hands"]) == LONG_HANDS and record["finished"]
    assert len(frames) == 1 + len(recorder.decisions) == 44_697

    start = Game(4, rules, seed=1)  # the same deal, not yet played
    first = frames[0]
    assert {k: v for k, v in first.items() if k not in ("decision", "lines")} == _table(start, seat)
    assert first["decision"] is None and first["phase"] == "play"
    assert first["lines"][0] == {
        "hand": 0,
        "kind": "deal",
        "text": f"Hand 1/{LONG_HANDS}: 8 cards each, player_{start.dealer} deals; the starter "
        f"is {RANK_CHARS[RANK_OF[start.top]]}{SUIT_SYMBOLS[SUIT_OF[start.top]]}",
    }
    assert {line["kind"] for line in first["lines"]} == {"deal"}
    assert len(first["lines"]) == (6 if seat is None else 2)  # the hands shown from above

    _, player, action = recorder.decisions[-1]
    last = frames[-1]
    assert {k: v for k, v in last.items() if k not in ("decision", "lines")} == _table(end, seat)
    assert last["scores"] == record["scores"] and last["hand_index"] == LONG_HANDS
    assert last["decision"] == {"player": player, "action": action, "label": "play Qs"}
    kinds = [line["kind"] for line in last["lines"]]
    assert kinds == ["move"] + ["scoring"] * 5 and {line["hand"] for line in last["lines"]} == {399}
    assert last["lines"][1]["text"] == f"Hand {LONG_HANDS} is over: " + (
        "player_0 went out" if seat is None else "you went out"
    )
    assert got["standings"][0] == "Final standings (lowest total wins, R8.6):"
    assert [f["hand_index"] for f in frames] == sorted(f["hand_index"] for f in frames)
    expected = {None: "7697cd94c9046c7e", 0: "cc643d948bea1227"}[seat]
    assert frames_digest(got) == expected
    assert got["frame_count"] == len(frames) and got["frames_from"] == 0
    starts = got["hand_starts"]
    assert [h["hand"] for h in starts] == list(range(LONG_HANDS + 1))
    assert all(frames[h["frame"]]["hand_index"] == h["hand"] for h in starts)
    assert all(frames[h["frame"] - 1]["hand_index"] == h["hand"] - 1 for h in starts[1:])

    window = game_frames(record, seat, 30_000, 2000)  # a page: the same frames, only those
    assert window["frames"] == frames[30_000:32_000] and window["frames_from"] == 30_000
    assert window["frame_count"] == len(frames) and window["hand_starts"] == starts
    assert game_frames(record, seat, len(frames) - 3, 2000)["frames"] == frames[-3:]
    with pytest.raises(ApiError, match=f"from: got {len(frames)}, the game has {len(frames)}"):
        game_frames(record, seat, len(frames), 10)


def test_a_seat_that_the_record_has_not_is_refused() -> None:
    record = random_game(2, Rules(hand_sizes=(1,)), 3)
    with pytest.raises(ApiError, match="seat: got 2, allowed 0 to 1 or none"):
        game_frames(record, 2)


def test_the_collector_is_paused_while_frames_are_made_and_restored_after() -> None:
    assert gc.isenabled()
    seen = []
    with collector_paused():
        with collector_paused():
            seen.append(gc.isenabled())
        seen.append(gc.isenabled())  # the outer block still holds it
    assert seen == [False, False] and gc.isenabled()
    with pytest.raises(RecordError), collector_paused():
        raise RecordError("a record that does not replay")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # left off as it was
    finally:
        gc.enable()
