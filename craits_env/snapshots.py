"""Snapshots: :meth:`Game.snapshot <craits_env.engine.Game.snapshot>` and
:meth:`Game.from_snapshot <craits_env.engine.Game.from_snapshot>` (:class:`GameSnapshots`).

``Game.snapshot()`` writes every documented key (docs/interface.md) plus what a rebuild
needs; ``snapshot(resume=True)`` adds the generator state and the deck orders scheduled
but not used yet. Reading one back checks it key by key — a missing or unknown key, a
wrong type, cards that are not the deck, values that contradict each other: one-line
``ValueError`` naming the key — and builds the game. :func:`generator_state` /
:func:`generator_from_state` turn a numpy generator into JSON and back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, NoReturn, Self

import numpy as np

from .actions import (
    NO_PLAYER,
    PHASE_CALL_SUIT,
    PHASE_COUNT,
    PHASE_DECLARE,
    PHASE_GAME_OVER,
    PHASE_NAMES,
    PHASE_PLAY,
)
from .cards import (
    CARD_STRS,
    SUIT_CHARS,
    parse_card,
)
from .deck import as_order, deck_cards
from .game_state import CTX_NORMAL, PENDING_ROLES, GameState
from .hands import check_dealable
from .rules import Rules

# ---------------------------------------------------------------------- generators


def plain_state(value: Any) -> Any:
    """A bit generator's state with numpy arrays and integers as plain lists and ints."""
    if isinstance(value, dict):
        return {k: plain_state(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.integer):
        return int(value)
    return value


def generator_state(rng: np.random.Generator) -> dict[str, Any]:
    """The state of ``rng``'s bit generator as a JSON-serialisable dict (arrays as lists)."""
    return plain_state(rng.bit_generator.state)


def generator_from_state(state: Any, name: str = "generator") -> np.random.Generator:
    """A new generator continuing exactly where :func:`generator_state`'s ``state`` was taken.

    ``ValueError`` starting with ``name`` if ``state`` is not a numpy bit generator's state.
    """
    kind = state.get("bit_generator") if isinstance(state, dict) else None
    bit_generator_cls = getattr(np.random, kind, None) if isinstance(kind, str) else None
    if not (
        isinstance(bit_generator_cls, type)
        and issubclass(bit_generator_cls, np.random.BitGenerator)
    ):
        _fail(name, state, "a numpy bit generator's state (generator_state(rng))")
    bit_generator = bit_generator_cls(0)
    try:
        bit_generator.state = state
    except (TypeError, ValueError, KeyError, IndexError, OverflowError) as e:
        message = " ".join(str(e).split())
        raise ValueError(f"{name}: not a valid {kind} state ({message})") from None
    return np.random.Generator(bit_generator)


# ---------------------------------------------------------------------- snapshots

# Every key of snapshot(); "resume" is added by snapshot(resume=True).
_SNAPSHOT_KEYS = (
    "num_players", "hand_index", "dealer", "current_player", "phase", "direction", "top",
    "active_suit", "count", "hands", "stock", "discard", "scores", "shuffle_pressures",
    "hand_points", "went_out", "deal", "reshuffles", "hand_size", "first_dealer",
    "legal_actions", "extra_play", "king_cards_left", "jack_run", "one_card_penalty_pending",
    "hand_decisions", "drawn", "winners", "rules", "deal_declarations_left", "pending_role",
)  # fmt: skip
_RESUME_KEYS = ("generator", "scheduled_deals", "scheduled_reshuffles", "recorded")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _fail(name: str, got: object, allowed: str) -> NoReturn:
    raise ValueError(f"{name}: got {_short(got)}, allowed {allowed}")


def _int(value: object, name: str, lo: int | None = None, hi: int | None = None) -> int:
    if type(value) is not int or (lo is not None and value < lo) or (hi is not None and value > hi):
        if lo is None:
            _fail(name, value, "an int")
        _fail(name, value, f"an int from {lo} to {hi}" if hi is not None else f"an int >= {lo}")
    return value


def _bool(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        _fail(name, value, "True or False")
    return value


def _list(value: object, name: str, length: int | None = None) -> list[Any]:
    if not isinstance(value, list | tuple) or (length is not None and len(value) != length):
        _fail(name, value, "a list" if length is None else f"a list of {length}")
    return list(value)


def _ints(value: object, name: str, length: int, lo: int | None = None) -> list[int]:
    return [_int(v, f"{name}[{i}]", lo) for i, v in enumerate(_list(value, name, length))]


def _seats(value: object, name: str, n: int) -> list[int]:
    seats = [_int(v, f"{name}[{i}]", 0, n - 1) for i, v in enumerate(_list(value, name))]
    if len(set(seats)) != len(seats):
        _fail(name, value, "distinct seats")
    return seats


def _cards(value: object, name: str) -> list[int]:
    cards = []
    for i, c in enumerate(_list(value, name)):
        if not isinstance(c, str):
            _fail(f"{name}[{i}]", c, "a card string such as 'As'")
        try:
            cards.append(parse_card(c))
        except ValueError as e:
            raise ValueError(f"{name}[{i}]: {e}") from None
    return cards


def _order(value: object, name: str, deck: list[int]) -> bytes:
    """A deck order: exactly the cards of ``deck``."""
    return as_order(_cards(value, name), deck, name)


def _strs(cards: Iterable[int]) -> list[str]:
    """Card indices as card strings."""
    return [CARD_STRS[c] for c in cards]


class GameSnapshots(GameState):
    """The snapshot of a game and the game of a snapshot (see the module docstring)."""

    __slots__ = ()

    def snapshot(self, *, resume: bool = False) -> dict[str, Any]:
        """The whole state (every hand: god's view), JSON-serialisable (docs/interface.md).

        :meth:`from_snapshot` rebuilds the game from it. ``resume=True`` adds the key
        ``"resume"``: what the game's future needs beyond the table — the generator's
        state, the deck orders given (``deals``, ``reshuffles``) but not used yet and,
        with ``record=True``, the earlier hands' deck orders — so that the rebuilt game
        continues bit-identically with no seed. It is left out by default because a
        seeded game and its replay from deck orders have equal snapshots.
        """
        over = self.phase == PHASE_GAME_OVER
        phase = self.phase
        pending = phase in (PHASE_CALL_SUIT, PHASE_DECLARE)
        snap = {
            "num_players": self.num_players,
            "hand_index": self.hand_index,
            "dealer": self.dealer,
            "current_player": None if over else self.current_player,
            "phase": PHASE_NAMES[self.phase],
            "direction": self.direction,
            "top": CARD_STRS[self.discard[-1]],
            "active_suit": SUIT_CHARS[self.active_suit],
            "count": self.count,
            "hands": [_strs(h) for h in self.hands],
            "stock": _strs(reversed(self._stock)),
            "discard": _strs(self.discard),
            "scores": list(self.scores),
            "shuffle_pressures": list(self.shuffle_pressures),
            "hand_points": [list(p) for p in self.hand_points],
            "went_out": list(self.went_out),
            "deal": _strs(self._deal),
            "reshuffles": [_strs(r) for r in self._reshuffles],
            # Beyond docs/interface.md's minimum:
            "hand_size": self.hand_size,
            "first_dealer": self.first_dealer,
            "legal_actions": list(self.legal_actions()),
            "extra_play": self.extra_play,
            "king_cards_left": self.king_left,
            "jack_run": self.jack_run,
            "one_card_penalty_pending": list(self.one_card_penalty_pending),
            "hand_decisions": self.hand_decisions,
            "drawn": list(self.drawn),
            "winners": self.winners() if over else None,
            "rules": self.rules.to_dict(),
            "deal_declarations_left": self._deal_declarers[::-1],
            "pending_role": PENDING_ROLES[self._pend_ctx] if pending else None,
        }
        if resume:
            snap["resume"] = self._resume_snapshot()
        return snap

    def _resume_snapshot(self) -> dict[str, Any]:
        """``snapshot(resume=True)["resume"]``: the generator and the deck orders still to come."""
        h, last = self.hand_index, len(self.rules.hand_sizes)
        reshuffles: list[list[bytes]] = []
        if h < min(last, len(self._script_reshuffles)):
            reshuffles = [self._script_reshuffles[h][len(self._reshuffles) :]]
            reshuffles += self._script_reshuffles[h + 1 : last]
            while reshuffles and not reshuffles[-1]:
                reshuffles.pop()
        generator: dict[str, Any] | None = None
        if self._rng is not None:
            generator = generator_state(self._rng)
        elif self._rng_state is not None:  # a clone that has not shuffled yet
            generator = plain_state(self._rng_state[1])
        recorded = None
        if self._deal_log is not None and self._reshuffle_log is not None:
            recorded = {  # the last entries are this hand's "deal" and "reshuffles"
                "deals": [_strs(d) for d in self._deal_log[:-1]],
                "reshuffles": [[_strs(o) for o in hand] for hand in self._reshuffle_log[:-1]],
            }
        return {
            "generator": generator,
            "scheduled_deals": [_strs(d) for d in self._script_deals[h + 1 : last]],
            "scheduled_reshuffles": [[_strs(o) for o in hand] for hand in reshuffles],
            "recorded": recorded,
        }

    @classmethod
    def from_snapshot(
        cls,
        snapshot: dict[str, Any],
        *,
        seed: int | None = None,
        rng: np.random.Generator | None = None,
    ) -> Self:
        """The game that :meth:`snapshot` described, continuing identically under the same actions.

        Randomness (reshuffles, later deals) continues from ``seed`` or ``rng`` if one is
        given; otherwise from the generator state of ``snapshot(resume=True)``, which
        makes the rebuilt game continue bit-identically; otherwise the game has no
        generator and raises ``ValueError`` when it needs a random choice (as a game made
        from ``deals`` does). A snapshot with ``"resume"`` also brings the deck orders
        scheduled but not used yet and, for ``record=True``, :meth:`deck_orders`.

        An invalid snapshot (a missing or unknown key, a wrong type, cards that are not
        the deck, values that contradict each other) raises ``ValueError`` naming the key.
        """
        if seed is not None and rng is not None:
            raise ValueError("give seed or rng, not both")
        if rng is not None and not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng: got {type(rng).__name__}, expected numpy.random.Generator")
        g = cls.__new__(cls)
        g._restore(snapshot)
        if rng is None and seed is not None:
            rng = np.random.default_rng(seed)
        if rng is not None:
            g._rng = rng
        return g

    def deck_orders(self) -> tuple[list[list[str]], list[list[list[str]]]]:
        """Every hand's deal so far and its reshuffles; ``Game(deals=…, reshuffles=…)`` replays.

        Needs a game made with ``record=True``.
        """
        if self._deal_log is None or self._reshuffle_log is None:
            raise ValueError("deck_orders() needs a game made with record=True")
        deals = [[CARD_STRS[c] for c in d] for d in self._deal_log]
        reshuffles = [[[CARD_STRS[c] for c in r] for r in hand] for hand in self._reshuffle_log]
        return deals, reshuffles

    def _restore(self, s: Any) -> None:
        """Become the game of snapshot ``s`` (without a generator): every key checked, then the
        state set (:meth:`from_snapshot`)."""
        if not isinstance(s, dict):
            raise ValueError(
                f"snapshot: got {type(s).__name__}, expected a dict of Game.snapshot()"
            )
        for key in _SNAPSHOT_KEYS:
            if key not in s:
                raise ValueError(
                    f"snapshot[{key!r}]: missing (every key of Game.snapshot() is needed)"
                )
        unknown = sorted(str(k) for k in set(s) - {*_SNAPSHOT_KEYS, "resume"})
        if unknown:
            raise ValueError(f"snapshot: unknown key(s) {unknown}")

        def k(key: str) -> str:
            return f"snapshot[{key!r}]"

        n = _int(s["num_players"], k("num_players"), 2, 10)
        if not isinstance(s["rules"], dict):
            _fail(k("rules"), s["rules"], "a dict of Rules.to_dict()")
        try:
            rules = Rules.from_dict(s["rules"])
            decks = check_dealable(n, rules)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{k('rules')}: {e}") from None
        last = len(rules.hand_sizes)
        h = _int(s["hand_index"], k("hand_index"), 0, last)
        if s["phase"] not in PHASE_NAMES:
            _fail(k("phase"), s["phase"], ", ".join(map(repr, PHASE_NAMES)))
        phase = PHASE_NAMES.index(s["phase"])
        over = phase == PHASE_GAME_OVER
        if over != (h == last):
            raise ValueError(f"{k('phase')}: {s['phase']!r} at hand_index {h} of {last} hands")
        if over:
            if s["current_player"] is not None:
                _fail(k("current_player"), s["current_player"], "None once the game is over")
            current = NO_PLAYER
        else:
            current = _int(s["current_player"], k("current_player"), 0, n - 1)
        if s["direction"] not in (1, -1) or type(s["direction"]) is not int:
            _fail(k("direction"), s["direction"], "1 or -1")
        if not isinstance(s["active_suit"], str) or s["active_suit"] not in tuple(SUIT_CHARS):
            _fail(k("active_suit"), s["active_suit"], ", ".join(map(repr, SUIT_CHARS)))
        count = _int(s["count"], k("count"), 0)
        if (
            not over
            and phase in (PHASE_PLAY, PHASE_COUNT)
            and (count > 0) != (phase == PHASE_COUNT)
        ):
            raise ValueError(f"{k('count')}: {count} in phase {s['phase']!r}")

        # The cards: hands, stock and discard pile hold the deck exactly.
        hands = [
            sorted(_cards(c, f"{k('hands')}[{i}]"))
            for i, c in enumerate(_list(s["hands"], k("hands"), n))
        ]
        stock = _cards(s["stock"], k("stock"))
        discard = _cards(s["discard"], k("discard"))
        if not discard:
            _fail(k("discard"), discard, "a pile of at least one card (the top)")
        deck = deck_cards(decks, rules.remove_kings_queens)
        held, want = Counter(stock + discard + [c for hand in hands for c in hand]), Counter(deck)
        if held != want:
            extra = " ".join(CARD_STRS[c] for c in sorted((held - want).elements()))
            missing = " ".join(CARD_STRS[c] for c in sorted((want - held).elements()))
            raise ValueError(
                f"snapshot['hands'] + ['stock'] + ['discard']: must hold the {len(deck)} cards of"
                f" the deck; extra: {extra or 'none'}; missing: {missing or 'none'}"
            )
        if s["top"] != CARD_STRS[discard[-1]]:
            _fail(k("top"), s["top"], f"the top of the discard pile, {CARD_STRS[discard[-1]]!r}")
        deal = (
            b"" if s["deal"] == [] else _order(s["deal"], k("deal"), deck)
        )  # [] once determinized
        reshuffles = [
            bytes(_cards(o, f"{k('reshuffles')}[{i}]"))
            for i, o in enumerate(_list(s["reshuffles"], k("reshuffles")))
        ]

        # Scores: this hand's penalties are the scores beyond the finished hands' points.
        scores = _ints(s["scores"], k("scores"), n)
        pressures = _ints(s["shuffle_pressures"], k("shuffle_pressures"), n, 0)
        points = [
            tuple(_ints(p, f"{k('hand_points')}[{i}]", n))
            for i, p in enumerate(_list(s["hand_points"], k("hand_points"), h))
        ]
        penalties = [scores[q] - sum(p[q] for p in points) for q in range(n)]
        if min(penalties) < 0:
            _fail(
                k("scores"), scores, "at least the sums of hand_points (plus this hand's penalties)"
            )
        went_out = _seats(s["went_out"], k("went_out"), n)
        if any(hands[q] for q in went_out):
            _fail(k("went_out"), went_out, "seats that hold no card")

        size = rules.hand_sizes[min(h, last - 1)]
        if s["hand_size"] != size:
            _fail(k("hand_size"), s["hand_size"], f"{size} (hand_sizes[{min(h, last - 1)}])")
        limit = rules.hand_decision_limit
        decisions = _int(s["hand_decisions"], k("hand_decisions"), 0, limit if over else limit - 1)
        declarers = _seats(s["deal_declarations_left"], k("deal_declarations_left"), n)
        if declarers and not over and (phase != PHASE_DECLARE or declarers[0] != current):
            _fail(
                k("deal_declarations_left"),
                declarers,
                "[] unless the current player declares first",
            )
        role = s["pending_role"]
        if not over and (phase in (PHASE_CALL_SUIT, PHASE_DECLARE)):
            if role not in PENDING_ROLES:
                _fail(k("pending_role"), role, ", ".join(map(repr, PENDING_ROLES)))
        elif role is not None:
            _fail(k("pending_role"), role, f"None in phase {s['phase']!r}")

        self.rules = rules
        self.num_players = n
        self.hand_index = h
        self.dealer = _int(s["dealer"], k("dealer"), 0, n - 1)
        self.first_dealer = _int(s["first_dealer"], k("first_dealer"), 0, n - 1)
        self.direction = s["direction"]
        self.current_player = current
        self.phase = phase
        self.hands = hands
        self.discard = discard
        self.active_suit = SUIT_CHARS.index(s["active_suit"])
        self.count = count
        self.jack_run = _int(s["jack_run"], k("jack_run"), 0)
        self.king_left = _int(s["king_cards_left"], k("king_cards_left"), 0, 3)
        self.extra_play = _bool(s["extra_play"], k("extra_play"))
        pending = _list(s["one_card_penalty_pending"], k("one_card_penalty_pending"), n)
        self.one_card_penalty_pending = [
            _bool(v, f"{k('one_card_penalty_pending')}[{i}]") for i, v in enumerate(pending)
        ]
        self.scores = scores
        self.shuffle_pressures = pressures
        self.hand_points = points
        self.went_out = went_out
        self.hand_decisions = decisions
        self.drawn = _ints(s["drawn"], k("drawn"), n, 0)
        self._stock = stock[::-1]
        self._hand_penalties = penalties
        self._pend_card = discard[
            -1
        ]  # the card waiting for its suit call or declaration is the top
        self._pend_ctx = PENDING_ROLES.index(role) if role is not None else CTX_NORMAL
        self._deal_declarers = declarers[::-1]
        self._legal = () if over else None
        self._deal = deal
        self._reshuffles = reshuffles
        self._deck_key = (decks, rules.remove_kings_queens)
        self._deck_top = None  # used only while the first hand is dealt
        self._rng = self._rng_state = None
        self._script_deals, self._script_reshuffles = [], []
        self._deal_log = self._reshuffle_log = None
        self._events, self.start_events = [], ()
        if "resume" in s:
            self._resume(s["resume"], deck)

        for key, derived in (
            ("legal_actions", list(self.legal_actions())),
            ("winners", self.winners() if over else None),
        ):
            if s[key] != derived:
                _fail(k(key), s[key], f"what the state gives, {_short(derived)}")

    def _resume(self, resume: Any, deck: list[int]) -> None:
        """Set ``g``'s generator and deck orders still to come from ``snapshot()["resume"]``."""
        name = "snapshot['resume']"
        if not isinstance(resume, dict):
            _fail(name, resume, "a dict of Game.snapshot(resume=True)")
        for key in _RESUME_KEYS:
            if key not in resume:
                raise ValueError(f"{name}[{key!r}]: missing")
        unknown = sorted(str(key) for key in set(resume) - set(_RESUME_KEYS))
        if unknown:
            raise ValueError(f"{name}: unknown key(s) {unknown}")
        if resume["generator"] is not None:
            self._rng = generator_from_state(resume["generator"], f"{name}['generator']")
        h = self.hand_index
        what = f"{name}['scheduled_deals']"
        deals = [
            _order(d, f"{what}[{i}]", deck)
            for i, d in enumerate(_list(resume["scheduled_deals"], what))
        ]
        self._script_deals = [b""] * (h + 1) + deals  # hands up to this one are dealt already
        what = f"{name}['scheduled_reshuffles']"
        scheduled = [
            [
                bytes(_cards(o, f"{what}[{i}][{j}]"))
                for j, o in enumerate(_list(hand, f"{what}[{i}]"))
            ]
            for i, hand in enumerate(_list(resume["scheduled_reshuffles"], what))
        ]
        if scheduled:  # from this hand on; this hand's earlier reshuffles are done
            self._script_reshuffles = [[] for _ in range(h)]
            self._script_reshuffles += [
                [b""] * len(self._reshuffles) + scheduled[0],
                *scheduled[1:],
            ]
        recorded = resume["recorded"]
        if recorded is not None:
            what = f"{name}['recorded']"
            if not isinstance(recorded, dict) or set(recorded) != {"deals", "reshuffles"}:
                _fail(what, recorded, "None or a dict of 'deals' and 'reshuffles'")
            past = [
                _order(d, f"{what}['deals'][{i}]", deck)
                for i, d in enumerate(_list(recorded["deals"], f"{what}['deals']"))
            ]
            done = _list(recorded["reshuffles"], f"{what}['reshuffles']", len(past))
            past_reshuffles = [
                [
                    bytes(_cards(o, f"{what}['reshuffles'][{i}][{j}]"))
                    for j, o in enumerate(_list(hand, f"{what}['reshuffles'][{i}]"))
                ]
                for i, hand in enumerate(done)
            ]
            self._deal_log = [*past, self._deal]
            self._reshuffle_log = [*past_reshuffles, self._reshuffles]  # this hand's list, shared
