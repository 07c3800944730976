"""OpenSpiel's IS-MCTS as a Craits agent: the spec ``openspiel-ismcts[:N]``.

``pip install 'craits[openspiel]'``. :class:`ISMCTSAgent` plays a seat of any Craits table
with OpenSpiel's Information Set Monte Carlo Tree Search (Cowling, Powley and Whitehouse
2012: ``open_spiel.python.algorithms.ismcts.ISMCTSBot``, UCT, random rollouts by OpenSpiel's
``RandomRolloutEvaluator``) on the game ``python_craits``
(:mod:`craits_env.integrations.openspiel`). At each decision with a choice:

1. **The position, from the seat's view alone.** A driver hands the agent a
   :class:`~craits_env.public.SeatView`: the position and the public inferences
   (:class:`~craits_env.public.PublicTracker`), not the events before it. The agent keeps
   nothing between decisions: ``craits play`` and ``craits serve`` reset a bot before each
   move, and a game rebuilt after a restart hands it a fresh view, so its move must follow
   from the view (and its seed) alone. The hidden cards are dealt once from the seat's
   information (:func:`~craits.agents.hidden_cards.sample_hidden`: the unseen cards, the
   hand sizes, what each seat's draws showed it lacks, R11) and
   :func:`~craits_env.integrations.openspiel.state_from_view` makes the ``python_craits``
   state of that position, every seat's past the public position.
2. **Search.** Every simulation starts from
   :meth:`~craits_env.integrations.openspiel.CraitsState.resample_from_infostate`: the
   hidden cards dealt again uniformly over the deals the public history allows; the tree
   is keyed by the information-state strings (each seat's view of the events since the
   decision began and its own cards). A rollout plays uniformly random actions and deck
   orders to the end of the **game** (``python_craits`` rewards only the game's result: +1
   shared by the winners, −1 for the others), so a simulation costs more the more hands
   are left (timings: ``experiments/results/openspiel/README.md``).
3. **The move**: the most visited action, ties broken at random; :attr:`ISMCTSAgent.last_policy`
   holds each action's share of the root's visits.

A decision with one legal action is answered at once. Everything random — the dealt
start, each simulation's world, the tree's tie-breaks, the rollouts — draws from the
agent's own generator (``numpy.random.default_rng(seed)``), so a seed fixes its play.
OpenSpiel's C++ ``pyspiel.ISMCTSBot`` is not used: pyspiel's Python-game bridge (``PyState``)
does not forward ``resample_from_infostate``, and that bot crashes on ``python_craits``.
The action ids are craits_env's 59 (``python_craits`` has ``num_distinct_actions`` 59, its
legal actions the engine's).
"""

from __future__ import annotations

import numpy as np

from craits_env.extras import require

require("openspiel", "the agent spec openspiel-ismcts", ("pyspiel",))

import pyspiel  # noqa: E402
from open_spiel.python.algorithms import ismcts, mcts  # noqa: E402

from craits_env.actions import forced_action  # noqa: E402
from craits_env.consistent_deals import seat_bounds  # noqa: E402
from craits_env.integrations.openspiel import (  # noqa: E402
    CraitsGame,
    CraitsState,
    params_from_rules,
    state_from_view,
)
from craits_env.public import SeatView  # noqa: E402
from craits_env.rules import Rules  # noqa: E402

from .base import Observation, legal_actions_of  # noqa: E402
from .hidden_cards import sample_hidden, seat_caps  # noqa: E402
from .pimc import budget  # noqa: E402

SPEC = "openspiel-ismcts"
DEFAULT_SIMULATIONS = 100
"""Simulations per decision for ``"openspiel-ismcts"``."""
MIN_SIMULATIONS, MAX_SIMULATIONS = 2, 10_000
"""The bounds of N: the first simulation only expands the root, so one cannot choose; a
simulation costs milliseconds to tenths of a second (the rest of the game is rolled out)."""
UCT_C = 2.0
"""UCT's exploration constant (the returns lie in [-1, 1]; OpenSpiel's examples use 2)."""
START_TRIES = 8
"""Dealt starts tried before giving up (the sampler drops the bounds after it fails four
times in a row, which no real position needs)."""


class ISMCTSAgent:
    """OpenSpiel's IS-MCTS over a :class:`~craits_env.public.SeatView` (module docstring).

    Args:
        simulations: IS-MCTS simulations per decision (:data:`MIN_SIMULATIONS` to
            :data:`MAX_SIMULATIONS`).
        seed: seeds every random draw of the agent; ``reset(seed)`` reseeds.
        uct_c: UCT's exploration constant.
    """

    name = SPEC
    # Bump when its play changes: stored results are keyed by it.
    version = 1

    def __init__(
        self, simulations: int = DEFAULT_SIMULATIONS, seed: int | None = None, uct_c: float = UCT_C
    ) -> None:
        if (
            isinstance(simulations, bool)
            or not isinstance(simulations, int)
            or not MIN_SIMULATIONS <= simulations <= MAX_SIMULATIONS
        ):
            raise ValueError(
                f"simulations: got {simulations!r}, allowed an int from {MIN_SIMULATIONS} "
                f"to {MAX_SIMULATIONS}"
            )
        self.simulations = simulations
        self.uct_c = uct_c
        self.name = SPEC if simulations == DEFAULT_SIMULATIONS else f"{SPEC}:{simulations}"
        self._rng = np.random.default_rng(seed)
        self._games: dict[tuple[int, Rules], CraitsGame] = {}
        self.last_policy: dict[int, float] | None = None  # the last search's visit shares

    def __getstate__(self) -> dict[str, object]:
        """Pickles without the loaded games (made again on first use)."""
        return self.__dict__ | {"_games": {}}

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def check_table(self, num_players: int, rules: Rules) -> None:
        """``ValueError`` (one line) if ``python_craits`` cannot be made for this table."""
        try:
            self._game(num_players, rules)
        except (ValueError, pyspiel.SpielError) as e:
            raise ValueError(f"agent {self.name!r} cannot play this table: {e}") from None

    def act(self, observation: Observation) -> int:
        legal = legal_actions_of(observation)
        if not legal:
            raise ValueError("ISMCTSAgent.act: no legal action in this observation")
        forced = forced_action(legal)
        if forced is not None:
            return int(forced)
        if not isinstance(observation, SeatView):
            raise TypeError(
                "ISMCTSAgent.act needs a craits_env.public.SeatView, got "
                + type(observation).__name__
            )
        root = self.root_state(observation)
        rng = self._rng
        evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(_seed32(rng)))
        bot = ismcts.ISMCTSBot(
            root.get_game(),
            evaluator,
            self.uct_c,
            self.simulations,
            random_state=np.random.RandomState(_seed32(rng)),
            final_policy_type=ismcts.ISMCTSFinalPolicyType.NORMALIZED_VISITED_COUNT,
        )
        # Each simulation's world: the integration's uniform consistent deal, seeded by two
        # draws of this callable (its UniformProbabilitySampler would take fresh entropy).
        bot.set_resampler(lambda state, player: state.resample_from_infostate(player, rng.random))
        policy = {int(a): float(p) for a, p in bot.get_policy(root)}
        self.last_policy = policy
        top = max(policy.values())
        best = sorted(a for a, p in policy.items() if p == top)
        return best[int(rng.integers(len(best)))] if len(best) > 1 else best[0]

    def root_state(self, view: SeatView) -> CraitsState:
        """The ``python_craits`` state the search starts from: ``view``'s position with the
        hidden cards dealt from the seat's information (draws from the agent's generator)."""
        seat = view.seat
        tracker = view.tracker
        sizes = {s: k for s, k in enumerate(view.hand_sizes) if s != seat}
        caps = {s: seat_caps(tracker, s) for s in sizes}
        bounds = {s: b for s in sizes if (b := seat_bounds(tracker, s)) is not None}
        unseen = view.unseen_cards()
        for _ in range(START_TRIES):
            hands, stock = sample_hidden(unseen, sizes, caps, self._rng)
            if all(b.holds(hands[s]) for s, b in bounds.items()):
                game = self._game(view.num_players, view.rules)
                return state_from_view(game, view, hands, stock)
        raise ValueError(
            f"{self.name}: no deal of the unseen cards within the public bounds in "
            f"{START_TRIES} tries (seat {seat}, hand {view.hand_index})"
        )

    def _game(self, num_players: int, rules: Rules) -> CraitsGame:
        """``python_craits`` for this table (loaded once)."""
        key = (num_players, rules)
        if key not in self._games:
            game = pyspiel.load_game("python_craits", params_from_rules(num_players, rules))
            assert isinstance(game, CraitsGame)
            self._games[key] = game
        return self._games[key]


def _seed32(rng: np.random.Generator) -> int:
    """A seed for numpy's legacy ``RandomState`` (OpenSpiel's Python bots take one)."""
    return int(rng.integers(1 << 32))


def make_ismcts(arg: str, seed: int | None) -> ISMCTSAgent:
    """The spec ``openspiel-ismcts`` (default budget) or ``openspiel-ismcts:N`` (N simulations
    per decision, :data:`MIN_SIMULATIONS` to :data:`MAX_SIMULATIONS`)."""
    if not arg:
        return ISMCTSAgent(seed=seed)
    simulations = budget(arg)
    if not MIN_SIMULATIONS <= simulations <= MAX_SIMULATIONS:
        raise ValueError(
            f"agent spec '{SPEC}:{arg}': expected '{SPEC}:N', N simulations per move "
            f"({MIN_SIMULATIONS} to {MAX_SIMULATIONS})"
        )
    return ISMCTSAgent(simulations, seed=seed)
