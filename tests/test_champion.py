"""The committed champion (craits.agents.champion): its specs, identities and errors."""

from __future__ import annotations

from pathlib import Path

import pytest

import craits.agents.champion as champion
from craits.agents.checkpoint_agent import PPOAgent
from craits.agents.pimc import PIMCAgent
from craits.agents.specs import make_agent, resolve_agent
from craits_env import Game, Rules
from craits_env.public import PublicGame

SHORT = Rules(hand_sizes=(4, 3, 2, 1))


def play(specs: list[str], seed: int) -> Game:
    agents = [make_agent(s, seed + i, num_players=len(specs), rules=SHORT)
              for i, s in enumerate(specs)]  # fmt: skip
    game = Game(len(specs), SHORT, seed=seed)
    public = PublicGame(game)
    while not game.is_over:
        p = game.current_player
        action = agents[p].act(public.view(p))
        assert action in game.legal_actions()
        public.apply(action)
    return game


def test_champion_is_the_committed_checkpoint_and_plays_legal_games() -> None:
    agent, identity = resolve_agent("champion", 0, num_players=4)
    assert isinstance(agent, PPOAgent) and agent.name == "champion"
    assert Path(agent.path) == champion.CHECKPOINT
    assert identity == PPOAgent(str(champion.CHECKPOINT)).identity  # keyed by its weights
    for seed in range(3):
        assert play(["champion", "expert", "greedy", "champion"], seed).is_over


def test_champion_search_is_pimc_with_the_champion_as_prior() -> None:
    agent, identity = resolve_agent("champion-search", 0, num_players=4)
    assert isinstance(agent, PIMCAgent) and agent.simulations == champion.SEARCH_SIMULATIONS
    assert isinstance(agent.prior, PPOAgent) and agent.prior.name == "champion"
    assert identity == f"champion-search@{PIMCAgent.version}+{agent.prior.identity}"
    small, small_id = resolve_agent("champion-search:64", 0, num_players=4)
    assert isinstance(small, PIMCAgent) and small.simulations == 64
    assert small.name == "champion-search:64"
    assert small_id.startswith(f"champion-search:64@{PIMCAgent.version}+ppo@")
    assert play(["champion-search:64", "expert", "champion", "pimc:32"], 5).is_over


def test_champion_specs_refuse_bad_arguments_and_a_missing_checkpoint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match=r"^agent spec 'champion' takes no argument"):
        make_agent("champion:3")
    for bad in ("champion-search:0", "champion-search:x", "champion-search:-2"):
        with pytest.raises(ValueError, match=r"expected 'champion-search:N'"):
            make_agent(bad)
    monkeypatch.setattr(champion, "CHECKPOINT", tmp_path / "none.pt")
    with pytest.raises(ValueError, match=r"^agent spec 'champion': its checkpoint .* is not in"):
        make_agent("champion")
    with pytest.raises(ValueError, match=r"^agent spec 'champion': its checkpoint"):
        make_agent("champion-search")
