"""Craits as an OpenSpiel game: ``python_craits`` (``pip install 'craits[openspiel]'``).

Importing this module registers the game; then ``pyspiel.load_game("python_craits(players=4)")``
runs OpenSpiel's search bots (IS-MCTS, MCTS), ``random_sim_test`` and its RL environment
(``rl_environment.Environment(game, observation_type=ObservationType.OBSERVATION)``: the
default is the information-state tensor, 46,137 floats at 4 players), not the algorithms
that walk the whole tree (policy evaluation, CFR: 53 chance nodes come before the first
decision).
docs/openspiel.md has the details and what was checked.

Parameters: ``players`` (2–10) and every :class:`~craits_env.rules.Rules` option under its
own name (``face_cards=True``, ``seven_hits=next_but_one`` …). Two differ in spelling, for
OpenSpiel's parameter types and its game strings (a comma separates parameters):
``hand_sizes`` is a string of sizes separated by ``;`` (``hand_sizes=3;2;1``; one size as
``5;``, since a bare ``5`` reads as an int), and ``num_decks=0`` means ``None``.
``history_slots`` (default 512) bounds the information-state tensor
(:mod:`.openspiel_infostate`).

``GameType``: sequential, **explicit stochastic**: the first dealer (R2.1: uniform over the
seats, by symmetry) and every deck order — each hand's deal and each reshuffle, card by
card, each chance outcome the next card (a card index, probability its copies left over
the cards left) — are chance nodes, the engine holding no generator. (OpenSpiel's
sampled-stochastic mode would need the game's generator state from a Python game, which
pyspiel cannot take: its ``random_sim_test(serialize=True)`` fails with ``GetRNGState
unimplemented``.) Imperfect information, zero-sum, terminal rewards: ``returns()`` is the
``"win"`` reward of :mod:`craits_env.rewards` (the winners of R8.6 share +1, the others −1;
all 0 if every seat ties), 0 before the end. Information state: perfect recall
(:mod:`.openspiel_infostate`); observation: the ``craits_v0`` observation
(:class:`~craits_env.observation.ObservationEncoder`) and a one-line string. Serialization
is OpenSpiel's (the action history, replayed).

``state.resample_from_infostate(player, sampler)`` deals the cards ``player`` cannot see
again, uniformly over the deals consistent with what the public history proves
(:mod:`craits_env.consistent_deals`, from a numpy generator seeded by two draws of
``sampler``, OpenSpiel's ``UniformProbabilitySampler``). A ``sampler`` with a method
``sample(view, n, rng)`` — a belief over hands: ``view`` the player's
:class:`~craits_env.public.SeatView`, ``n`` = 1, ``rng`` a numpy generator — returning
``[(hands, stock)]`` (seat -> cards of every other seat; the stock, next card first)
supplies the world instead; it is checked to be a deal of the unseen cards
(``craits.agents.belief.BeliefSampler(PolicyBelief(), seed)`` is one: worlds weighted by how
likely the opponents' decisions are under the expert). The new world
holds the player's view of the past; its history is not a replayable action list.

A bot seated at a live game sees a :class:`~craits_env.public.SeatView` — the position and
the public inferences, not the events before it. :func:`state_from_view` makes the state such
a bot searches from: that position, with hidden cards the caller dealt from the seat's
information only, and every seat's view of the past the public position
(:class:`~.openspiel_infostate.Resampled` entries), so that ``resample_from_infostate`` works
from it and keeps the seat's information-state string. :func:`params_from_rules` gives the
game's parameters for a table.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from ..extras import require

require("openspiel", "craits_env.integrations.openspiel", ("pyspiel",))

import pyspiel  # noqa: E402

from ..actions import NUM_ACTIONS, action_str  # noqa: E402
from ..cards import CARD_STRS, NUM_CARDS, SUIT_CHARS  # noqa: E402
from ..consistent_deals import deal_consistent, seat_bounds  # noqa: E402
from ..deck import deck_cards  # noqa: E402
from ..engine import Game  # noqa: E402
from ..events import event_from_dict  # noqa: E402
from ..game_state import NeedsRandomness  # noqa: E402
from ..observation import ObservationEncoder  # noqa: E402
from ..public import PublicGame, PublicTracker, SeatView, public_step  # noqa: E402
from ..rewards import win_shares  # noqa: E402
from ..rules import Rules, check_num_players  # noqa: E402
from .openspiel_infostate import InfoStateLayout, Resampled, info_string, seat_view  # noqa: E402

GAME_NAME = "python_craits"
_DEFAULT_RULES = Rules()
_RULE_FIELDS = [f.name for f in dataclasses.fields(Rules)]


def _param_default(name: str) -> Any:
    value = getattr(_DEFAULT_RULES, name)
    if name == "hand_sizes":
        return hand_sizes_param(value)
    if name == "num_decks":
        return 0
    return value


def hand_sizes_param(sizes: tuple[int, ...]) -> str:
    """``hand_sizes`` as the game's string parameter: ``"3;2;1"``, one size as ``"5;"``
    (OpenSpiel reads a bare ``5`` as an int and a comma separates parameters)."""
    return ";".join(map(str, sizes)) + (";" if len(sizes) == 1 else "")


PARAMETERS: dict[str, Any] = {
    "players": 4,
    **{name: _param_default(name) for name in _RULE_FIELDS},
    "history_slots": 512,
}
"""The game's parameters and their defaults (OpenSpiel's types: int, bool, str)."""

GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Craits (Python)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=10,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=PARAMETERS,
)


def params_from_rules(num_players: int, rules: Rules) -> dict[str, Any]:
    """The game's parameters for ``num_players`` seats playing ``rules`` (those that differ from
    the defaults): the inverse of :func:`rules_from_params`."""
    params: dict[str, Any] = {"players": num_players}
    for name in _RULE_FIELDS:
        value = getattr(rules, name)
        if name == "hand_sizes":
            value = hand_sizes_param(value)
        elif name == "num_decks":
            value = value or 0
        if value != PARAMETERS[name]:
            params[name] = value
    return params


def rules_from_params(params: dict[str, Any]) -> tuple[int, Rules, int]:
    """``(players, rules, history_slots)`` from the game's parameters; ``ValueError``."""
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise ValueError(
            f"{GAME_NAME}: unknown parameter(s) {unknown}; allowed {sorted(PARAMETERS)}"
        )
    p = {**PARAMETERS, **params}
    options = {name: p[name] for name in _RULE_FIELDS}
    sizes = str(options["hand_sizes"]).replace(",", ";").rstrip(";")
    try:
        options["hand_sizes"] = tuple(int(s) for s in sizes.split(";"))
    except ValueError:
        raise ValueError(
            f"{GAME_NAME}: hand_sizes got {sizes!r}, allowed ints separated by ';' such as '3;2;1'"
        ) from None
    options["num_decks"] = options["num_decks"] or None
    rules = Rules(**options)
    n = check_num_players(p["players"])
    slots = p["history_slots"]
    if not isinstance(slots, int) or slots < 1:
        raise ValueError(f"{GAME_NAME}: history_slots got {slots!r}, allowed an int >= 1")
    return n, rules, slots


class CraitsGame(pyspiel.Game):
    """``python_craits``: see the module docstring."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        n, rules, slots = rules_from_params(dict(params or {}))
        Game(n, rules, seed=0)  # a configuration that cannot be dealt fails here (R1.5)
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=NUM_CARDS,
            num_players=n,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=(rules.hand_decision_limit + 2 * NUM_CARDS) * len(rules.hand_sizes),
        )
        super().__init__(GAME_TYPE, info, {**PARAMETERS, **(params or {})})
        self.players, self.rules = n, rules
        self.encoder = ObservationEncoder(n, rules)
        self.layout = InfoStateLayout(n, slots)

    def new_initial_state(self) -> CraitsState:
        """The game before its first chance node: the first dealer."""
        return CraitsState(self)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> InfoStateObserver | CraitsObserver:
        if params:
            raise ValueError(f"{GAME_NAME}: observation parameters not supported; got {params}")
        if iig_obs_type is not None and iig_obs_type.perfect_recall:
            return InfoStateObserver(self.layout)
        return CraitsObserver(self.encoder)


class _Cheap:
    """Copies its ``value`` with ``copy_fn`` when the state is deep-copied (OpenSpiel's clone)."""

    __slots__ = ("copy_fn", "value")

    def __init__(self, value: Any, copy_fn: Callable[[Any], Any]) -> None:
        self.value, self.copy_fn = value, copy_fn

    def __deepcopy__(self, memo: dict[int, Any]) -> _Cheap:
        return _Cheap(self.copy_fn(self.value), self.copy_fn)


def _copy_core(core: tuple[Any, ...]) -> tuple[Any, ...]:
    engine, tracker, log = core
    if engine is None:
        return core[0], None, log[:]
    copy = engine.clone()
    return copy, None if tracker is None else tracker.copy_for(copy), log[:]


class CraitsState(pyspiel.State):
    """One game of :class:`CraitsGame`: an engine :class:`~craits_env.engine.Game` without a
    generator (every random choice is a chance node), its event log and its public tracker."""

    def __init__(self, game: CraitsGame, engine: Game | None = None) -> None:
        super().__init__(game)
        self.players, self.rules = game.players, game.rules
        log = [] if engine is None else list(engine.start_events)
        tracker = None if engine is None else PublicTracker(engine)
        self._core = _Cheap((engine, tracker, log), _copy_core)
        self._pending: int | None = None  # the decision waiting for a deck order
        self._dealer: int | None = None if engine is None else engine.first_dealer
        self._need: tuple[Any, ...] | None = ("dealer",) if engine is None else None  # chance
        self._order: list[int] = []
        self._left: list[int] = []  # per card index, copies still to place in the order
        self._installed: list[tuple[Any, bytes]] = []  # orders chosen before the game exists

    @property
    def engine(self) -> Game | None:
        """The engine game (``None`` before the first deal)."""
        return self._core.value[0]

    @engine.setter
    def engine(self, game: Game | None) -> None:
        self._core.value = (game, *self._core.value[1:])

    @property
    def _tracker(self) -> PublicTracker | None:
        return self._core.value[1]

    @_tracker.setter
    def _tracker(self, tracker: PublicTracker | None) -> None:
        engine, _, log = self._core.value
        self._core.value = (engine, tracker, log)

    @property
    def _log(self) -> list[Any]:
        return self._core.value[2]

    @_log.setter
    def _log(self, log: list[Any]) -> None:
        engine, tracker, _ = self._core.value
        self._core.value = (engine, tracker, log)

    # -- chance: the first dealer (R2.1, uniform by symmetry) and every deck order --------

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._need == ("dealer",):
            return [(s, 1.0 / self.players) for s in range(self.players)]
        total = sum(self._left)
        return [(c, k / total) for c, k in enumerate(self._left) if k]

    def _ask(self, need: tuple[Any, ...], cards: list[int]) -> None:
        self._need, self._order = need, []
        self._left = [0] * NUM_CARDS
        for c in cards:
            self._left[c] += 1

    def _chance(self, action: int) -> None:
        if self._need == ("dealer",):
            self._dealer, self._need = action, None
            self._advance([])
            return
        if not self._left[action]:
            raise ValueError(f"chance outcome {action}: not a card left to place")
        self._left[action] -= 1
        self._order.append(action)
        if any(self._left):
            return
        need, order = self._need, bytes(self._order)
        self._need = None
        self._advance([(need, order)])

    def _advance(self, orders: list[tuple[Any, bytes]]) -> None:
        """Start the game or apply the pending decision with the deck ``orders`` installed;
        a chance node again if it needs another order."""
        try:
            if self.engine is None:
                by_hand = {need[1]: o for need, o in [*self._installed, *orders]}
                deals = [by_hand[k] for k in range(len(by_hand))]
                engine = Game(self.players, self.rules, dealer=self._dealer, deals=deals)
                events: list[Any] = list(engine.start_events)
            else:
                engine = self.engine.clone()
                for need, order in orders:
                    _install(engine, need, order)
                events = engine.apply(self._pending)  # type: ignore[arg-type]
        except NeedsRandomness as e:
            self._need_from(e, orders)
            return
        self._installed = []
        if self.engine is None:
            self._log = list(events)
            self._tracker = PublicTracker(engine)
        else:
            assert self._tracker is not None
            step = public_step(self.engine, self._pending)  # type: ignore[arg-type]
            self._tracker.bind(engine)
            self._tracker.observe(events, step)  # the hand's decisions: a belief reads them
            self._log.extend(events)
        self.engine, self._pending = engine, None

    def _need_from(self, error: NeedsRandomness, orders: list[tuple[Any, bytes]]) -> None:
        if error.kind == "first_dealer":
            raise error
        self._installed = [*self._installed, *orders]
        if self.engine is not None:
            for need, order in self._installed:
                _install(self.engine, need, order)
            self._installed = []
        deck = deck_cards(self.rules.decks_for(self.players), self.rules.remove_kings_queens)
        if error.kind == "deal":
            self._ask(("deal", error.hand_index), deck)
            return
        assert self.engine is not None
        probe = self.engine.clone()
        with contextlib.suppress(ValueError):  # stops where the reshuffle needs its order
            probe.apply(self._pending)  # type: ignore[arg-type]
        rest = list(deck)
        for cards in (*probe.hands, probe.discard, probe.stock):
            for c in cards:
                rest.remove(c)
        self._ask(("reshuffle", error.hand_index, error.index), rest)

    # -- the OpenSpiel API ------------------------------------------------------------

    def current_player(self) -> int:
        if self._need is not None:
            return pyspiel.PlayerId.CHANCE
        g = self.engine
        assert g is not None
        return pyspiel.PlayerId.TERMINAL if g.is_over else g.current_player

    def _legal_actions(self, player: int) -> list[int]:
        g = self.engine
        if self._need is not None or g is None or g.is_over or player != g.current_player:
            return []
        return list(g.legal_actions())

    def _apply_action(self, action: int) -> None:
        if self._need is not None:
            self._chance(int(action))
            return
        assert self.engine is not None
        if int(action) not in self.engine.legal_actions():
            self.engine.apply(int(action))  # the engine's one-line ValueError
        self._pending = int(action)
        self._advance([])

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return (
                f"dealer {action}"
                if self._need == ("dealer",)
                else f"next card {CARD_STRS[action]}"
            )
        return action_str(action)

    def is_terminal(self) -> bool:
        return self._need is None and self.engine is not None and self.engine.is_over

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self.players
        g = self.engine
        assert g is not None
        return win_shares(g.winners(), g.num_players)

    def __str__(self) -> str:
        g = self.engine
        if g is None:
            return f"before the deal: dealer {self._dealer}, {len(self._order)} cards ordered"
        hands = " | ".join(" ".join(CARD_STRS[c] for c in h) for h in g.hands)
        chance = "" if self._need is None else f" chance {self._need} {len(self._order)} ordered"
        return (
            f"hand {g.hand_index} decision {g.hand_decisions} player {g.current_player} "
            f"top {CARD_STRS[g.top]}{SUIT_CHARS[g.active_suit]} stock {g.stock_size} "
            f"scores {g.scores} hands {hands}{chance}"
        )

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> CraitsState:
        """A state ``player_id`` cannot tell from this one (see the module docstring)."""
        g = self.engine
        if g is None or self._need is not None or g.is_over:
            return self.clone()
        assert self._tracker is not None
        public = PublicGame(g)
        public.tracker = self._tracker
        view = public.view(player_id)
        unseen = view.unseen_cards()
        others = [s for s in range(g.num_players) if s != player_id]
        rng = np.random.default_rng(_seed_from(probability_sampler))
        sample: Callable[..., Any] | None = getattr(probability_sampler, "sample", None)
        if sample is not None:
            (hands, stock), *_ = sample(view, 1, rng)
        else:
            start = {s: list(g.hands[s]) for s in others}
            bounds = {s: b for s in others if (b := seat_bounds(self._tracker, s)) is not None}
            hands, stock = deal_consistent(unseen, start, bounds, rng)
        world = g.determinized(player_id, hands, stock, rng, unseen)
        world.forget_randomness()  # chance nodes again from here
        other = CraitsState(self.get_game())
        other.engine, other._need, other._dealer = world, None, g.first_dealer
        other._log = seat_view(self._log, player_id) + [
            Resampled(s, tuple(world.hands[s])) for s in others
        ]
        other._tracker = self._tracker.copy_for(world)
        return other

    # -- views -------------------------------------------------------------------------

    def hand(self, seat: int) -> list[int]:
        """``seat``'s cards now (none before the first deal)."""
        return [] if self.engine is None else list(self.engine.hands[seat])

    def seat_log(self, seat: int) -> list[Any]:
        """``seat``'s view of the game's events so far (its information state)."""
        return seat_view(self._log, seat)


def state_from_view(
    game: CraitsGame, view: SeatView, hands: dict[int, list[int]], stock: list[int]
) -> CraitsState:
    """A state of ``game`` in the position of ``view`` (see the module docstring): the other
    seats hold ``hands`` (seat -> cards) and the stock is ``stock`` (next card first), a deal
    of ``view.unseen_cards()`` within every seat's public bounds that the caller drew from
    the seat's information alone (R11); chance nodes from here. ``ValueError`` if the table
    is not ``game``'s or the deal is not such a deal."""
    if (view.num_players, view.rules) != (game.players, game.rules):
        other = "" if view.rules == game.rules else ", other rules"
        raise ValueError(
            f"state_from_view: the view's table ({view.num_players} players{other}) is not "
            f"the game's ({game.players} players)"
        )
    tracker = view.tracker
    for s, cards in hands.items():
        bound = None if s == view.seat else seat_bounds(tracker, s)
        if bound is not None and not bound.holds(cards):
            raise ValueError(f"state_from_view: seat {s}'s hand breaks what its draws showed")
    world = view.determinize(hands, stock, None)  # ValueError unless a deal of the unseen cards
    world.forget_randomness()
    state = CraitsState(game)
    state.engine, state._need, state._dealer = world, None, world.first_dealer
    state._log = [Resampled(s, tuple(h)) for s, h in enumerate(world.hands)]
    state._tracker = tracker.copy_for(world)
    return state


def _install(engine: Game, need: tuple[Any, ...], order: bytes) -> None:
    """Schedule ``order`` for the deal or reshuffle ``need`` (``("deal", hand)`` or
    ``("reshuffle", hand, index)``)."""
    if need[0] == "deal":
        engine.schedule_deal(need[1], order)
    else:
        engine.schedule_reshuffle(need[1], need[2], order)


class InfoStateObserver:
    """The perfect-recall information state (:mod:`.openspiel_infostate`)."""

    def __init__(self, layout: InfoStateLayout) -> None:
        self.layout = layout
        self.tensor = np.zeros(layout.size, np.float32)
        self.dict = _named_views(self.tensor, layout.shape_dict())

    def set_from(self, state: CraitsState, player: int) -> None:
        self.layout.encode(state.seat_log(player), player, state.hand(player), self.tensor)

    def string_from(self, state: CraitsState, player: int) -> str:
        return info_string(state.seat_log(player), player, state.hand(player))


class CraitsObserver:
    """The ``craits_v0`` observation of the current position and its one-line string."""

    def __init__(self, encoder: ObservationEncoder) -> None:
        self.encoder = encoder
        self.tensor = np.zeros(encoder.size, np.float32)
        shapes: dict[str, tuple[int, ...]] = {
            name: (s.stop - s.start,) for name, s in encoder.slices.items()
        }
        self.dict = _named_views(self.tensor, shapes)

    def set_from(self, state: CraitsState, player: int) -> None:
        if state.engine is None:
            self.tensor.fill(0.0)
        else:
            self.tensor[:] = self.encoder.encode(state.engine, player)

    def string_from(self, state: CraitsState, player: int) -> str:
        g = state.engine
        if g is None:
            return f"p{player} before the deal"
        own = " ".join(CARD_STRS[c] for c in g.hands[player])
        return (
            f"p{player} hand:{own} top:{CARD_STRS[g.top]} suit:{SUIT_CHARS[g.active_suit]} "
            f"to_play:{g.current_player} phase:{g.phase} count:{g.count} "
            f"sizes:{[len(h) for h in g.hands]} stock:{g.stock_size} "
            f"scores:{g.scores} hand:{g.hand_index}"
        )


def _named_views(tensor: np.ndarray, shapes: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    views, start = {}, 0
    for name, shape in shapes.items():
        size = int(np.prod(shape))
        views[name] = tensor[start : start + size].reshape(shape)
        start += size
    return views


def _seed_from(sampler: Any) -> int:
    """A 64-bit seed from OpenSpiel's probability sampler (two of its uniform draws)."""
    if callable(sampler):
        hi, lo = int(sampler() * (1 << 32)), int(sampler() * (1 << 32))
        return (hi << 32) | lo
    return int(np.random.default_rng().integers(1 << 63))


def _entry_from_dict(data: Any) -> Any:
    if isinstance(data, dict) and data.get("kind") == "resampled":
        from ..cards import parse_card

        return Resampled(int(data["seat"]), tuple(parse_card(c) for c in data["hand"]))
    return event_from_dict(data)


pyspiel.register_game(GAME_TYPE, CraitsGame)
