"""The policy network's frozen copy (agents/network.py: frozen_network), the one way the code
makes an acting copy: a checkpoint's policy, the opponent pool's snapshots, the rollouts' actor."""

from __future__ import annotations

import pytest
import torch

from craits.agents.network import PolicyNet, frozen_network


def test_a_frozen_copy_plays_as_its_source_and_cannot_learn() -> None:
    torch.manual_seed(0)
    source = PolicyNet(12, (8, 8), hands_out=3)
    net = frozen_network(source.spec(), source.state_dict())
    assert net is not source and net.spec() == source.spec()
    assert not net.training and source.training
    assert not any(p.requires_grad for p in net.parameters())
    assert {p.device.type for p in net.parameters()} == {"cpu"}
    obs = torch.randn(5, 12)
    for frozen, learning in zip(net.with_hands(obs), source.with_hands(obs), strict=True):
        assert not frozen.requires_grad
        assert torch.equal(frozen, learning.detach())
    before = net.logits(obs)
    with torch.no_grad():
        source.policy.bias.add_(1.0)  # the copy holds weights of its own
    assert torch.equal(net.logits(obs), before)
    assert not torch.equal(source.logits(obs).detach(), before)


def test_a_frozen_copy_without_weights_loads_them_later_and_refuses_others() -> None:
    torch.manual_seed(1)
    source = PolicyNet(12, (8,))
    net = frozen_network(source.spec())
    net.load_state_dict(source.state_dict())
    obs = torch.randn(3, 12)
    assert torch.equal(net.logits(obs), source.logits(obs).detach())
    assert not any(p.requires_grad for p in net.parameters())  # still frozen once loaded
    with pytest.raises(RuntimeError, match=r"size mismatch for trunk\.0\.weight"):
        frozen_network(source.spec(), PolicyNet(12, (9,)).state_dict())
