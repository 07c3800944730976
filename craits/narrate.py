"""A game told in plain words: each decision and what it caused, hand results, standings.

:class:`Narrator` watches a :class:`~craits_env.engine.Game` from one seat (``craits
play``: "player_2 played 7♣ — you drew 1 card (K♥)") or from above (``craits replay``,
``viewer=None``: every drawn card is named). From a seat it never names a card another
seat drew or holds during a hand; at a hand's end every hand is shown, as it is laid
down for scoring, with what each 3 cancelled (R8.3).

It reads the events the engine returns (:mod:`craits_env.events`): ``after(game, player,
action, events)`` with the events of ``game.apply(action)``, ``start(game)`` with the
game's ``start_events``. A decision that ends a hand tells the hand's result from its
``hand_end`` event and the next deal from its ``deal`` event, so telling a game costs
the same at every hand. The ``…_by_hand`` methods give the same lines in parts, split
after each hand's summary, for a caller that pauses between hands.

A decision is one line, with what it caused after a dash ("you played 4♣ — skips
player_1"). A suit call or a one-card declaration that lets an earlier card take effect
stands alone, and what followed gets its own line, named by that card: ``you declared
"one card"`` then ``your 4♣: skips player_1``. Text only: no I/O, no colours.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from craits_env.actions import (
    CALL_BASE,
    DECLARE,
    DRAW,
    NUM_CARDS,
    PHASE_CALL_SUIT,
    PHASE_DECLARE,
    STAY_SILENT,
)
from craits_env.cards import (
    QUEEN_OF_SPADES,
    RANK_CHARS,
    RANK_OF,
    SUIT_CHARS,
    SUIT_OF,
    SUIT_SYMBOLS,
    Rank,
)
from craits_env.engine import Game
from craits_env.events import Drew, Event, HandScored, Reshuffled, Reversed, Skipped, WentOut
from craits_env.rules import Rules
from craits_env.scoring import GOING_OUT_BONUS, explain_hand, pressure_cost

SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")


class CardText:
    """Cards and suits as text: ``7♣`` with suit symbols, ``7c`` without (each card's text
    made once)."""

    def __init__(self, symbols: bool = True) -> None:
        self.suits = SUIT_SYMBOLS if symbols else SUIT_CHARS
        self._strs = tuple(
            RANK_CHARS[RANK_OF[c]] + self.suits[SUIT_OF[c]] for c in range(NUM_CARDS)
        )

    def card(self, c: int) -> str:
        return self._strs[c]

    def cards(self, cards: Sequence[int]) -> str:
        return " ".join([self._strs[c] for c in cards])

    def suit(self, s: int) -> str:
        """``"♥ hearts"``"""
        return f"{self.suits[s]} {SUIT_NAMES[s]}"


@dataclass
class _Seen:
    """What the narrator remembers of the table before a decision."""

    count: int
    king_left: int

    @classmethod
    def of(cls, g: Game) -> _Seen:
        return cls(g.count, g.king_left)


def _split(events: Sequence[Event]) -> tuple[list[Event], HandScored | None, list[list[Event]]]:
    """``events`` cut at the hands' ends: what happened in the hand under way (up to its
    ``hand_end``), that end (or ``None``), and each later hand from its ``deal`` on."""
    current: list[Event] = []
    scored: HandScored | None = None
    later: list[list[Event]] = []
    for e in events:
        if e.kind == "deal":
            later.append([e])
        elif later:
            later[-1].append(e)
        elif isinstance(e, HandScored):
            scored = e
        else:
            current.append(e)
    return current, scored, later


class Narrator:
    """Turns decisions into lines of plain text (see the module docstring).

    Args:
        names: a name per seat (``player_0`` …).
        viewer: the seat whose point of view is told (it is "you"); ``None``: from above.
        cards: how cards are written.
    """

    def __init__(
        self,
        names: Sequence[str],
        viewer: int | None,
        cards: CardText | None = None,
    ) -> None:
        self.names = list(names)
        self.viewer = viewer
        self.text = cards or CardText()
        self._seen: _Seen | None = None
        self._rules = Rules()
        self._pending: tuple[int, int, str] | None = None  # card, player, context

    # ------------------------------------------------------------------ public

    def who(self, seat: int) -> str:
        return "you" if seat == self.viewer else self.names[seat]

    def start(self, game: Game, events: Sequence[Event] | None = None) -> list[str]:
        """Lines for the start of the game: hands that ended at once, then the first deal;
        ``events``: the game's ``start_events`` (the default)."""
        return _joined(self.start_by_hand(game, events))

    def start_by_hand(self, game: Game, events: Sequence[Event] | None = None) -> list[list[str]]:
        """:meth:`start`'s lines in parts, each hand's summary closing a part; the last
        part (the first deal, or nothing when the game is over) closes none."""
        self._rules = game.rules
        _, _, hands = _split(game.start_events if events is None else events)
        parts = self._later_hands(game, hands)
        self._seen = _Seen.of(game)
        return parts

    def after(self, game: Game, player: int, action: int, events: Sequence[Event]) -> list[str]:
        """Lines for ``player``'s decision ``action``, just applied to ``game``, which
        returned ``events``."""
        return _joined(self.after_by_hand(game, player, action, events))

    def after_by_hand(
        self, game: Game, player: int, action: int, events: Sequence[Event]
    ) -> list[list[str]]:
        """:meth:`after`'s lines in parts, each hand's summary closing a part (a pause
        between hands goes between parts); the last part (the next deal, or nothing when
        the game is over) closes none. A hand that did not end gives one part."""
        before = self._seen
        if before is None:
            raise ValueError("Narrator.after before Narrator.start")
        self._rules = game.rules
        current, scored, later = _split(events)
        line = self._decision(before, current, player, action)
        resolved, extra = self._consequences(before, game, current, player, action, scored)
        if resolved is None or (action < NUM_CARDS and resolved[2] != "starter"):
            lines = [line + (" — " + "; ".join(extra) if extra else "")]
        else:  # a call or declaration let an earlier card take effect: say so apart
            lines = [line] + ([f"{self._card_of(*resolved)}: " + "; ".join(extra)] if extra else [])
        if scored is None:
            parts = [lines]
        else:
            parts = [lines + self.hand_summary(scored), *self._later_hands(game, later)]
        self._seen = _Seen.of(game)
        return parts

    def standings(self, game: Game, labels: Sequence[str] | None = None) -> list[str]:
        """The final standings, lowest total first (R8.6); of a game that is not over, the
        totals of the hands scored when it was abandoned, saying so (no winner)."""
        labels = list(labels or self.names)
        width = max(len(x) for x in labels)
        best = min(game.scores)
        if game.is_over:
            lines = ["Final standings (lowest total wins, R8.6):"]
        else:
            lines = [f"Standings: {abandoned(game)}; no winner:"]
        order = sorted(range(game.num_players), key=lambda s: (game.scores[s], s))
        for rank, s in enumerate(order, 1):
            k, score = game.shuffle_pressures[s], game.scores[s]
            mark = "  winner" if game.is_over and score == best else ""
            lines.append(
                f" {rank:>2}. {labels[s]:<{width}}  {score:>6} {noun(score, 'point')}"
                + (f"  ({plural(k, 'shuffle pressure')})" if k else "")
                + mark
            )
        return lines

    # ------------------------------------------------------------------ decisions

    def _decision(self, before: _Seen, events: list[Event], p: int, action: int) -> str:
        t, who = self.text, self.who(p)
        if action < NUM_CARDS:
            if before.count:
                count = before.count + (1 if RANK_OF[action] == Rank.ACE else 2)
                self._pending = (action, p, "count")
                return f"{who} played {t.card(action)} (the count is now {count})"
            self._pending = (action, p, "free" if before.king_left > 1 else "normal")
            return f"{who} played {t.card(action)}"
        if action == DRAW:
            got = self._drawn(events, p, ("draw", "count"))
            if before.count:
                return f"{who} took the count: {got}"
            return f"{who} {got}"
        if CALL_BASE <= action < DECLARE:
            return f"{who} called {t.suit(action - CALL_BASE)}"
        if action == DECLARE:
            return f'{who} declared "one card"'
        if self._rules.idiot_penalty == "draw_one":
            got = self._drawn(events, p, ("silence",))
            return f"{who} stayed silent (caught: {got} at once)"
        return f"{who} stayed silent (caught: two cards instead of the next turn)"

    def _consequences(
        self,
        before: _Seen,
        game: Game,
        events: list[Event],
        p: int,
        action: int,
        scored: HandScored | None,
    ) -> tuple[tuple[int, int, str] | None, list[str]]:
        """What the decision caused: the card's function, draws, reshuffles, going out;
        with the card (card, player, context) that took effect now, if one did."""
        out: list[str] = []
        pending = resolved = self._pending
        if pending is not None:
            card, owner, ctx = pending
            waiting = game.phase in (PHASE_CALL_SUIT, PHASE_DECLARE) and (
                ctx == "starter" or game.current_player == owner
            )
            if scored is not None or not waiting:
                self._pending = None
                out += self._function(card, owner, ctx, events)
            else:
                resolved = None
        own: tuple[str, ...] = ()  # the reasons of the decision's own draw
        if action == DRAW:
            own = ("draw", "count")
        elif action == STAY_SILENT and self._rules.idiot_penalty == "draw_one":
            own = ("silence",)
        shuffles: dict[int, list[Reshuffled]] = {}
        draws: dict[int, list[Drew]] = {}
        went_out: list[int] = []
        for e in events:
            if isinstance(e, Drew):
                if not (e.seat == p and e.reason in own):
                    draws.setdefault(e.seat, []).append(e)
            elif isinstance(e, Reshuffled):
                shuffles.setdefault(e.seat, []).append(e)
            elif isinstance(e, WentOut):
                went_out.append(e.seat)
        n = game.num_players
        order = [(p + k) % n for k in range(n)] if shuffles or draws else []
        for q in order:
            for e in shuffles.get(q, ()):
                out.append(
                    f"the stock ran out: {self.who(q)} paid a shuffle pressure of "
                    f"{pressure_cost(e.pressure)} points"
                )
        for q in order:
            mine = draws.get(q)
            if not mine:
                continue
            paid = any(e.reason == "one_card_penalty" for e in mine)  # R7.1
            delta = sum(e.number for e in mine if e.reason != "one_card_penalty")
            if delta <= 0 and not paid:
                continue
            who = self.who(q)
            cards = "" if q == p and own else self._which(q, mine)
            if paid and delta > 0:
                text = f"{who} drew {_cards(delta)} and paid the one-card penalty"
                out.append(f"{text}: two more cards, turn lost{cards}")
            elif paid:
                out.append(f"{who} paid the one-card penalty: two cards{cards}, turn lost")
            else:
                out.append(f"{who} drew {_cards(delta)}{cards}")
        out += [f"{self.who(q)} went out" for q in went_out]
        return resolved, out

    def _card_of(self, card: int, p: int, ctx: str) -> str:
        """``the starter 4♣``, ``your 4♣``, ``player_2's 4♣``."""
        if ctx == "starter":  # after the declarations on the deal (R7.3)
            return f"the starter {self.text.card(card)}"
        owner = "your" if p == self.viewer else f"{self.names[p]}'s"
        return f"{owner} {self.text.card(card)}"

    def _function(self, card: int, p: int, ctx: str, events: list[Event]) -> list[str]:
        """The effect of ``card`` played by ``p`` once it is resolved (R4, R5, R9), as the
        ``events`` of its resolution tell it."""
        if ctx == "count":
            return []
        if ctx == "free":
            return ["no function in a king's sequence"]
        rank = RANK_OF[card]
        face = self._rules.face_cards
        if rank == Rank.TWO:
            return ["the count starts at 2"]
        if rank == Rank.SIX:
            return [f"another play for {self.who(p)}"]
        if rank == Rank.KING and face:
            return [f"three more cards for {self.who(p)}"]
        if rank == Rank.TEN:
            turned = [e.direction for e in events if isinstance(e, Reversed)]
            return ["play now goes " + ("left" if turned[:1] == [1] else "right")]
        if rank == Rank.FOUR:
            reasons: tuple[str, ...] = ("four",)
        elif face and (rank == Rank.JACK or card == QUEEN_OF_SPADES):
            reasons = ("jack", "queen_of_spades")
        else:
            return []
        victims = [e.seat for e in events if isinstance(e, Skipped) and e.reason in reasons]
        if not victims:
            return []
        if rank == Rank.FOUR:
            return [f"skips {self.who(victims[0])}"]
        victim = victims[0]
        return [f"{self.who(victim)} {'lose' if victim == self.viewer else 'loses'} the turn"]

    def _drawn(self, events: list[Event], q: int, reasons: tuple[str, ...]) -> str:
        draws = [e for e in events if isinstance(e, Drew) and e.seat == q and e.reason in reasons]
        got = sum(e.number for e in draws)
        if got <= 0:
            return "could not draw: the cards ran out"
        return f"drew {_cards(got)}" + self._which(q, draws)

    def _which(self, q: int, draws: list[Drew]) -> str:
        """`` (K♥ 4♣)``: the cards ``q`` drew, if the viewer may see them."""
        if self.viewer is not None and q != self.viewer:
            return ""
        gained = sorted(c for e in draws for c in e.cards or ())
        return f" ({self.text.cards(gained)})" if gained else ""

    # ------------------------------------------------------------------ hands

    def _later_hands(self, game: Game, hands: list[list[Event]]) -> list[list[str]]:
        """The parts of the hands dealt after a decision (or at the start): each hand that
        ended before any decision, then the hand now under way (``[]`` once the game is over)."""
        parts: list[list[str]] = []
        for hand in hands:
            _, scored, _ = _split(hand[1:])
            if scored is not None:
                lines = ["", f"Hand {scored.hand_index + 1}: the hand ended before any decision"]
                parts.append(lines + self.hand_summary(scored))
        parts.append(self._hand_start(game, hands[-1]) if hands and not game.is_over else [])
        return parts

    def _hand_start(self, game: Game, events: list[Event]) -> list[str]:
        sizes = game.rules.hand_sizes
        starter = game.discard[0]
        lines = [
            "",
            f"Hand {game.hand_index + 1}/{len(sizes)}: {_cards(game.hand_size)} each, "
            f"{self.names[game.dealer]} deals; the starter is {self.text.card(starter)}",
        ]
        if self.viewer is None:
            width = max(len(x) for x in self.names)
            for s, hand in enumerate(game.hands):
                lines.append(f"  {self.names[s]:<{width}}  {self.text.cards(hand)}")
        self._pending = (starter, game.dealer, "starter")
        extra: list[str] = []
        if game.phase not in (PHASE_CALL_SUIT, PHASE_DECLARE):
            self._pending = None
            extra += self._function(starter, game.dealer, "starter", events)
        for s in range(game.num_players):
            drawn = sum(e.number for e in events if isinstance(e, Drew) and e.seat == s)
            if drawn:
                extra.append(f"{self.who(s)} drew {_cards(drawn)}")
        if extra:
            lines.append("  the starter counts as played by the dealer: " + "; ".join(extra))
        return lines

    def hand_summary(self, scored: HandScored) -> list[str]:
        """A hand's points per player, with its cards, what the threes cancelled and the
        penalties, from its ``hand_end`` event."""
        rules: Rules = self._rules
        t = self.text
        i = scored.hand_index
        n = len(scored.hands)
        out = [self.who(s) for s in scored.went_out]
        head = f"Hand {i + 1} is over: " + (
            f"{', '.join(out)} went out" if out else "nobody went out"
        )
        width = max(len(self.who(s)) for s in range(n))
        lines = ["", head]
        for s, hand in enumerate(scored.hands):
            points = scored.points[s]
            notes: list[str] = []
            if s in scored.went_out:
                card_points = GOING_OUT_BONUS if rules.going_out_bonus else 0
                shown = "(out)"
            else:
                score = explain_hand(list(hand), rules)
                card_points = score.points
                shown = t.cards(hand) or "(no cards)"
                notes += [f"{t.card(a)} cancels {t.card(b)}" for a, b in score.cancelled]
                if score.only_threes:
                    notes.append("only threes: -50 each")
                elif score.lonely_threes and rules.punitive_threes:
                    notes += [f"{t.card(a)} cancels nothing: 100" for a in score.lonely_threes]
            if points != card_points:
                notes.append(f"{points - card_points:+d} shuffle pressure")
            lines.append(
                f"  {self.who(s):<{width}}  {points:>5} {noun(points, 'point'):<6}  "
                f"(total {scored.scores[s]:>5})"
                f"  {shown}" + (f"  [{'; '.join(notes)}]" if notes else "")
            )
        return lines


def abandoned(game: Game) -> str:
    """When a game that is not over stopped: ``the game was abandoned in hand 3 of 15, after 2
    hands scored`` (``before any hand was scored`` in its first hand)."""
    hands, scored = len(game.rules.hand_sizes), len(game.hand_points)
    after = f"after {plural(scored, 'hand')} scored" if scored else "before any hand was scored"
    return f"the game was abandoned in hand {game.hand_index + 1} of {hands}, {after}"


def _joined(parts: list[list[str]]) -> list[str]:
    return [line for part in parts for line in part]


def noun(k: int, singular: str) -> str:
    """``singular`` for a count of 1 (or -1), else its plural (``card`` → ``cards``).

    >>> noun(1, "card"), noun(0, "card"), noun(-50, "point"), noun(2, "shuffle pressure")
    ('card', 'cards', 'points', 'shuffle pressures')
    """
    return singular if abs(k) == 1 else singular + "s"


def plural(k: int, singular: str) -> str:
    """``1 card``, ``2 cards``, ``0 cards`` (:func:`noun`)."""
    return f"{k} {noun(k, singular)}"


def _cards(k: int) -> str:
    return plural(k, "card")
