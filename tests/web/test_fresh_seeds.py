"""Seeds drawn when a user gave none have 128 bits from the operating system (a 31-bit seed
was recovered from one's own first hand in minutes, revealing every hand): they span the
128-bit range, two games never share one, and neither ``craits serve`` nor ``craits play``
shows a drawn seed before the game ends (or the player resigns)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from craits.play import PlaySession
from craits.terminal import Terminal
from craits_env.seeding import FRESH_SEED_BITS, fresh_seed

from ..webclient import client

QUICK = {"hand_sizes": [2, 1]}


def test_fresh_seeds_span_the_128_bit_range_and_never_repeat() -> None:
    seeds = [fresh_seed() for _ in range(4000)]
    assert FRESH_SEED_BITS == 128 and len(set(seeds)) == len(seeds)
    assert all(0 <= s < 2**128 for s in seeds)
    assert max(seeds).bit_length() == 128  # P(no top bit in 4,000) = 2**-4000
    top_bytes = {s >> 120 for s in seeds}
    assert len(top_bytes) > 240  # the high byte takes (almost) all of its 256 values


def test_the_server_draws_a_fresh_seed_and_shows_it_only_when_the_game_is_over(
    tmp_path: Path,
) -> None:
    c: Any = client(tmp_path / "games")
    seeds = []
    for _ in range(12):
        r = c.post("/api/games", json={"opponents": ["random"], "rules": QUICK})
        assert r.status_code == 201, r.text
        game_id, token = r.json()["game_id"], r.json()["token"]
        v = c.get(f"/api/games/{game_id}", params={"token": token}).json()
        if not v["game_over"]:
            assert v["seed"] is None and v["seed_text"] is None
            v = c.post(f"/api/games/{game_id}/resign", json={"token": token}).json()
        assert (v["game_over"] or v["resigned"]) and str(v["seed"]) == v["seed_text"]
        seeds.append(v["seed"])
    assert len(set(seeds)) == len(seeds)
    assert max(seeds) >= 2**64  # P(all 12 below) = 2**-768


def test_craits_play_shows_a_drawn_seed_only_at_the_end() -> None:
    out = io.StringIO()
    session = PlaySession(["random"], Terminal(out, io.StringIO("quit\n")), rules=None)
    assert session.run() == 0
    lines = out.getvalue().splitlines()
    assert "a fresh seed (shown at the end)" in lines[0]
    assert str(session.seed) not in "\n".join(lines[:-1])
    again = f"The seed was {session.seed} (--seed {session.seed} deals this game again)."
    assert lines[-1] == again
