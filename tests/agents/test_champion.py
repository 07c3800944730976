"""The committed champion (craits.agents.champion): its specs, identities and errors, and its
playing weights (craits.agents.playing_weights): the training checkpoint's export byte for
byte, the checkpoint's moves on thousands of positions, no torch."""

from __future__ import annotations

import hashlib
import pickle
import random
from pathlib import Path

import numpy as np
import pytest

import craits.agents.champion as champion
from craits.agents.checkpoint_agent import PPOAgent
from craits.agents.pimc import PIMCAgent
from craits.agents.playing_weights import PlayingWeightsAgent, read_playing_weights
from craits.agents.specs import make_agent, resolve_agent
from craits_env import Game, Rules
from craits_env.public import PublicGame
from experiments.export_champion import checkpoint_from_weights, export_bytes

from ..champion_checkpoint import champion_checkpoint
from ..repository.test_light_install import run_blocked

CHECKPOINT = champion_checkpoint()  # the shipped policy as a checkpoint

SHORT = Rules(hand_sizes=(4, 3, 2, 1))
IDENTITY = "ppo@b62472a47bbf09e6"  # the checkpoint's: stored results are keyed by it
WEIGHTS_SHA256 = "ae75d13420624115c395fa364b536b8fdea98d08b560eaa7567eb95f9c2876af"


def play(specs: list[str], seed: int) -> Game:
    agents = [
        make_agent(s, seed + i, num_players=len(specs), rules=SHORT) for i, s in enumerate(specs)
    ]
    game = Game(len(specs), SHORT, seed=seed)
    public = PublicGame(game)
    while not game.is_over:
        p = game.current_player
        action = agents[p].act(public.view(p))
        assert action in game.legal_actions()
        public.apply(action)
    return game


def test_champion_plays_the_shipped_weights_under_the_checkpoint_s_identity() -> None:
    agent, identity = resolve_agent("champion", 0, num_players=4)
    assert isinstance(agent, PlayingWeightsAgent) and isinstance(agent, PPOAgent)
    assert agent.name == "champion" and Path(agent.path) == champion.WEIGHTS
    assert identity == IDENTITY  # the training checkpoint's: keyed by its weights
    assert PPOAgent(str(CHECKPOINT)).identity != IDENTITY  # a zero value head: another agent
    again = pickle.loads(pickle.dumps(agent))
    assert type(again) is PlayingWeightsAgent and again.identity == IDENTITY
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
    monkeypatch.setattr(champion, "WEIGHTS", tmp_path / "none.npz")
    with pytest.raises(ValueError, match=r"^agent spec 'champion': its weights .* are not in"):
        make_agent("champion")
    with pytest.raises(ValueError, match=r"^agent spec 'champion': its weights"):
        make_agent("champion-search")


def test_the_weights_are_an_export_and_come_back_from_a_checkpoint_exactly() -> None:
    shipped = champion.WEIGHTS.read_bytes()
    assert hashlib.sha256(shipped).hexdigest() == WEIGHTS_SHA256
    weights = read_playing_weights(champion.WEIGHTS)
    again = read_playing_weights("re-exported", export_bytes(CHECKPOINT))  # there and back
    assert export_bytes(CHECKPOINT) == export_bytes(CHECKPOINT)  # deterministic bytes
    for (w, b), (w2, b2) in zip(
        [*weights.hidden, weights.policy], [*again.hidden, again.policy], strict=True
    ):
        assert np.array_equal(w, w2) and np.array_equal(b, b2) and w2.dtype == np.float32
    assert again.meta["digest"] != weights.meta["digest"]  # the zero value head is hashed too
    spec = {"obs_size": 245, "hidden_sizes": [256, 256], "activation": "tanh", "num_actions": 59}
    assert checkpoint_from_weights()["network"] == spec
    assert len(shipped) < 1_000_000 and weights.obs_size == 245
    assert [w.shape for w, _ in weights.hidden] == [(256, 245), (256, 256)]
    assert weights.policy[0].shape == (59, 256) and weights.policy[0].dtype == np.float32
    meta = weights.meta
    assert (meta["activation"], meta["observation"], meta["num_players"]) == ("tanh", "belief", 4)
    assert Rules.from_dict(meta["rules"]) == Rules() and f"ppo@{meta['digest'][:16]}" == IDENTITY


@pytest.mark.slow
def test_champion_plays_the_checkpoint_s_moves_on_every_seat_s_positions() -> None:
    """Random games (every seat a random player): at every decision every seat's view goes
    through both policies — the logits are the same floats — and the acting seat's move is
    the same; champion-search:16 against PIMC with the checkpoint as prior, in lockstep."""
    shipped = make_agent("champion", num_players=4)
    reference = PPOAgent(str(CHECKPOINT))
    rng = random.Random(2026)
    decisions = views = 0
    for seed in range(12):
        game = Game(4, Rules(hand_sizes=(8, 6, 4, 3, 2, 1)), seed=seed)
        public = PublicGame(game)
        while not game.is_over:
            for seat in range(4):
                view = public.view(seat)
                a, b = shipped.features(view), reference.features(view)
                assert np.array_equal(a, b)
                assert np.array_equal(shipped._logits(a), reference._logits(b))
                views += 1
            view = public.view(game.current_player)
            assert shipped.act(view) == reference.act(view)
            decisions += 1
            public.apply(rng.choice(game.legal_actions()))
    assert decisions >= 3000 and views == 4 * decisions
    searched = make_agent("champion-search:16", seed=7, num_players=4)
    same = PIMCAgent(16, seed=7, prior=PPOAgent(str(CHECKPOINT)))
    others = [make_agent("expert", seed=s) for s in range(3)]
    for seed in range(3):
        game = Game(4, SHORT, seed=seed)
        public = PublicGame(game)
        searched.reset(seed)
        same.reset(seed)
        while not game.is_over:
            p = game.current_player
            if p == 0:
                action = searched.act(public.view(0))
                assert action == same.act(public.view(0))
            else:
                action = others[p - 1].act(public.view(p))
            public.apply(action)


@pytest.mark.slow
def test_champion_plays_without_torch() -> None:
    proc = run_blocked(
        """
        from craits.agents.specs import make_agent
        from craits_env import Game, Rules
        from craits_env.public import PublicGame
        rules = Rules(hand_sizes=(3, 2, 1))
        agents = [make_agent(s, seed=i, num_players=4, rules=rules)
                  for i, s in enumerate(["champion", "champion-search:8", "expert", "champion"])]
        game = Game(4, rules, seed=1)
        public = PublicGame(game)
        while not game.is_over:
            public.apply(agents[game.current_player].act(public.view(game.current_player)))
        assert "torch" not in sys.modules
        print("champion ok", agents[0].identity)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["champion", "ok", IDENTITY]


def test_a_damaged_weights_file_is_refused_in_one_line(tmp_path: Path) -> None:
    with np.load(champion.WEIGHTS) as z:
        entries = {name: z[name] for name in z.files}
    entries["policy.bias"] = entries["policy.bias"] + np.float32(1e-3)  # the meta unchanged
    altered = tmp_path / "altered.npz"
    np.savez(altered, **entries)
    cases = {
        altered: r"^playing weights .*altered\.npz: the weights do not match weights_sha256$",
        tmp_path / "none.npz": r"^playing weights .*none\.npz: no such file$",
        tmp_path / "text.npz": r"^playing weights .*text\.npz: not a readable \.npz file",
        CHECKPOINT: r"^playing weights .*champion\.pt: no readable 'meta' entry$",
    }
    (tmp_path / "text.npz").write_text("not weights")
    for path, message in cases.items():
        with pytest.raises(ValueError, match=message):
            PlayingWeightsAgent(str(path))
