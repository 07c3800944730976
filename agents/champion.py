"""The learned champion: ``champion`` (the policy alone) and ``champion-search`` (it guiding PIMC).

``champion`` plays the committed checkpoint ``experiments/results/champion/final.pt`` — the
strongest policy ``craits train`` has produced here (how it was trained, and where it stands
on the ladder: ``experiments/results/champion/README.md``) — as ``ppo:PATH`` does: the argmax of
the policy over the legal actions, no search.

``champion-search`` (``champion-search:N``) is :class:`~craits.agents.pimc.PIMCAgent` with the
champion as its prior: the champion's move is played wherever PIMC does not search, and
at the end of a hand (some player holds ``ENDGAME`` cards or fewer) ``N`` determinized
greedy rollouts (compiled) per decision must beat the champion's move by a margin to
replace it. Its identity includes the champion's weights, so stored results of an older
champion are never reused for a new one.

The checkpoint is found beside the package in a source checkout (``pip install -e .``);
elsewhere the spec is a one-line error naming the file (play any checkpoint as ``ppo:PATH``).
"""

from __future__ import annotations

from pathlib import Path

from .base import Agent
from .checkpoint_agent import PPOAgent
from .pimc import PIMCAgent

CHAMPION = "champion"
CHAMPION_SEARCH = "champion-search"
CHECKPOINT = Path(__file__).resolve().parents[1] / "experiments/results/champion/final.pt"
SEARCH_SIMULATIONS = 2048
"""Rollouts per searched decision of ``champion-search`` (its time: the champion README)."""


def champion_checkpoint() -> Path:
    """The committed champion's checkpoint (``ValueError`` if this installation lacks it)."""
    if not CHECKPOINT.is_file():
        raise ValueError(
            f"agent spec {CHAMPION!r}: its checkpoint {CHECKPOINT} is not in this installation "
            "(a source checkout of craits has it); play a checkpoint with ppo:PATH"
        )
    return CHECKPOINT


def make_champion(arg: str, seed: int | None) -> Agent:
    """The spec ``champion``: the committed policy, no search."""
    if arg:
        raise ValueError(f"agent spec {CHAMPION!r} takes no argument, got {CHAMPION}:{arg}")
    agent = PPOAgent(str(champion_checkpoint()), seed)
    agent.name = CHAMPION
    return agent


def make_champion_search(arg: str, seed: int | None) -> Agent:
    """The spec ``champion-search`` / ``champion-search:N`` (N rollouts per searched move)."""
    simulations = SEARCH_SIMULATIONS
    if arg:
        simulations = int(arg) if arg.isdigit() else 0
        if simulations < 1:
            raise ValueError(
                f"agent spec '{CHAMPION_SEARCH}:{arg}': expected '{CHAMPION_SEARCH}:N', "
                "N rollouts per searched move (N >= 1)"
            )
    prior = make_champion("", seed)
    agent = PIMCAgent(simulations, seed=seed, prior=prior)
    agent.name = CHAMPION_SEARCH if not arg else f"{CHAMPION_SEARCH}:{simulations}"
    agent.identity = (  # type: ignore[attr-defined]
        f"{agent.name}@{PIMCAgent.version}+{prior.identity}"  # type: ignore[attr-defined]
    )
    return agent
