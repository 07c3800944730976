"""The last ``info`` of every agent of ``craits_v0`` holds ``winners``, ``scores`` and
``place`` (as the Gymnasium view's does); before the game's end every info is ``{}``."""

from __future__ import annotations

import numpy as np
import pytest

from craits_env import Rules, craits_v0


@pytest.mark.parametrize("seed", range(6))
def test_every_agent_s_last_info_names_the_winners_scores_and_its_place(
    env_backend: str, seed: int
) -> None:
    n = 2 + seed % 3
    env = craits_v0.env(num_players=n, rules=Rules(hand_sizes=(3, 2, 1)))
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    last: dict[str, dict] = {}
    for agent in env.agent_iter():
        obs, _, termination, truncation, info = env.last()
        if termination or truncation:
            last[agent] = info
            env.step(None)
            continue
        assert info == {}
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    game = env.unwrapped.game
    scores = list(game.scores)
    assert sorted(last) == [f"player_{i}" for i in range(n)]
    for i in range(n):
        info = last[f"player_{i}"]
        assert info["winners"] == [s for s in range(n) if scores[s] == min(scores)]
        assert info["scores"] == scores
        assert info["place"] == 1 + sum(s < scores[i] for s in scores)
        assert (info["place"] == 1) == (i in info["winners"])


def test_places_share_the_better_rank_on_ties() -> None:
    infos = craits_v0.game_over_infos(["a", "b", "c", "d"], [1, 2], [30, 10, 10, 50])
    assert [infos[a]["place"] for a in "abcd"] == [3, 1, 1, 4]
    assert all(infos[a]["winners"] == [1, 2] for a in "abcd")
