"""The learned champion: ``champion`` (the policy alone) and ``champion-search`` (it guiding PIMC).

``champion`` plays the strongest policy ``craits train`` has produced here (how it was
trained, and where it stands on the ladder: ``experiments/results/champion/README.md``) as
``ppo:PATH`` plays its checkpoint: the argmax of the policy over the legal actions, no search.
Its weights ship in the package, ``weights/champion.npz`` (playing weights only, numpy:
:mod:`craits.agents.playing_weights`, exported from the training checkpoint by
``experiments/export_champion.py``), so it plays without torch, with the checkpoint's moves
and identity.

``champion-search`` (``champion-search:N``) is :class:`~craits.agents.pimc.PIMCAgent` with the
champion as its prior: the champion's move is played wherever PIMC does not search, and
at the end of a hand (some player holds ``ENDGAME`` cards or fewer) ``N`` determinized
greedy rollouts (compiled) per decision must beat the champion's move by a margin to
replace it. Its identity includes the champion's weights, so stored results of an older
champion are never reused for a new one.

``belief-search`` (``belief-search:N``) is ``champion-search`` drawing its worlds from
:class:`~craits.agents.belief.PolicyBelief` (the expert as the opponent model) instead of the
uniform consistent sampler (at temperature :data:`BELIEF_TEMPERATURE`; where no opponent
decision is read, the very worlds ``champion-search`` draws); its identity names the belief's
settings.

An installation without the weights file gets a one-line error naming it.
"""

from __future__ import annotations

from pathlib import Path

from .base import Agent
from .belief import PolicyBelief
from .pimc import PIMCAgent, budget
from .playing_weights import PlayingWeightsAgent

CHAMPION = "champion"
CHAMPION_SEARCH = "champion-search"
BELIEF_SEARCH = "belief-search"
BELIEF_SEARCH_VERSION = 3
"""Bump when ``belief-search`` plays differently (its belief or its budget). 2: the belief at
temperature :data:`BELIEF_TEMPERATURE` (1 before), and the uniform draw itself where no opponent
decision is read; 3: the opponent model sees the public inferences as they stood at each past
decision (:func:`~craits.agents.belief.past_inferences`; version 2 rebuilt them from the
current tracker, off where a void was re-learned later), and its choices are kept across the
hand's decisions (``experiments/results/belief/README.md``)."""
BELIEF_TEMPERATURE = 2.0
"""The belief's temperature in ``belief-search``: the best log score of the hidden cards'
locations among T = 2, 3, 5, and calibrated (the belief README's sweep)."""
WEIGHTS = Path(__file__).resolve().parent / "weights" / "champion.npz"
SEARCH_SIMULATIONS = 2048
"""Rollouts per searched decision of ``champion-search`` (its time: the champion README)."""


def champion_weights() -> Path:
    """The champion's playing weights (``ValueError`` if this installation lacks them)."""
    if not WEIGHTS.is_file():
        raise ValueError(
            f"agent spec {CHAMPION!r}: its weights {WEIGHTS} are not in this installation "
            "(reinstall craits); play a checkpoint with ppo:PATH"
        )
    return WEIGHTS


def make_champion(arg: str, seed: int | None) -> Agent:
    """The spec ``champion``: the committed policy, no search."""
    if arg:
        raise ValueError(f"agent spec {CHAMPION!r} takes no argument, got {CHAMPION}:{arg}")
    agent = PlayingWeightsAgent(str(champion_weights()), seed)
    agent.name = CHAMPION
    agent.spec_label = CHAMPION  # type: ignore[attr-defined]
    return agent


def _simulations(name: str, arg: str) -> int:
    """The N of ``name:N`` (default :data:`SEARCH_SIMULATIONS`); ``ValueError`` if not one."""
    simulations = SEARCH_SIMULATIONS
    if arg:
        simulations = budget(arg)
        if simulations < 1:
            raise ValueError(
                f"agent spec '{name}:{arg}': expected '{name}:N', "
                "N rollouts per searched move (N >= 1)"
            )
    return simulations


def make_champion_search(arg: str, seed: int | None) -> Agent:
    """The spec ``champion-search`` / ``champion-search:N`` (N rollouts per searched move)."""
    simulations = _simulations(CHAMPION_SEARCH, arg)
    prior = make_champion("", seed)
    agent = PIMCAgent(simulations, seed=seed, prior=prior)
    agent.name = CHAMPION_SEARCH if not arg else f"{CHAMPION_SEARCH}:{simulations}"
    agent.identity = (  # type: ignore[attr-defined]
        f"{agent.name}@{PIMCAgent.version}+{prior.identity}"  # type: ignore[attr-defined]
    )
    return agent


def make_belief_search(arg: str, seed: int | None) -> Agent:
    """The spec ``belief-search`` / ``belief-search:N``: ``champion-search`` whose worlds come
    from the expert-weighted belief."""
    simulations = _simulations(BELIEF_SEARCH, arg)
    prior = make_champion("", seed)
    belief = PolicyBelief("expert", temperature=BELIEF_TEMPERATURE)
    agent = PIMCAgent(simulations, seed=seed, prior=prior, sampler=belief)
    agent.name = BELIEF_SEARCH if not arg else f"{BELIEF_SEARCH}:{simulations}"
    agent.identity = (  # type: ignore[attr-defined]
        f"{agent.name}@{BELIEF_SEARCH_VERSION}+{belief.identity}+"
        f"{prior.identity}"  # type: ignore[attr-defined]
    )
    return agent
