"""init_policy into a wider network: the same moves and values to start with, new units alive."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from craits.agents.checkpoint import load_policy
from craits.training.state import TrainingState
from craits.training.train import train

from .test_training import tiny

QUIET = {"progress": False, "echo": lambda s: None}


@pytest.mark.slow
def test_init_policy_widens_the_hidden_layers_and_plays_as_before(tmp_path: Path) -> None:
    train(tiny(total_steps=400, hidden_sizes=[16, 16]), out=tmp_path / "base", **QUIET)
    old, _ = load_policy(tmp_path / "base" / "final.pt")
    config = tiny(hidden_sizes=[24, 40], init_policy=str(tmp_path / "base"))
    state = TrainingState(config, torch.device("cpu"), "wide")
    state.init_policy(config.init_policy)
    net = state.net
    obs = torch.rand(9, net.obs_size)
    wide, narrow = net(obs), old(obs)
    torch.testing.assert_close(wide[0], narrow[0], rtol=0, atol=1e-6)  # the same logits
    torch.testing.assert_close(wide[1], narrow[1], rtol=0, atol=1e-6)  # and values
    first, second = net.trunk[0].weight, net.trunk[2].weight
    assert first[16:].abs().sum() > 0 and second[16:].abs().sum() > 0  # new units: fresh init
    assert not second[:16, 16:].any()  # the old units do not read the new ones
    assert not net.policy.weight[:, 16:].any() and not net.value.weight[:, 16:].any()
    (net(obs)[0].sum() + net(obs)[1].sum()).backward()
    assert net.policy.weight.grad[:, 16:].abs().sum() > 0  # the new units can learn
    state.close()
    for bad in ([8, 16], [16, 16, 16], [32]):  # narrower, deeper, shallower
        with pytest.raises(ValueError, match=r"^config init_policy: .* holds the network"):
            train(config.replace(hidden_sizes=bad, total_steps=200), out=tmp_path / "bad", **QUIET)
    tuned = train(config.replace(total_steps=600), out=tmp_path / "wide", **QUIET)
    assert tuned.final_checkpoint.exists()
