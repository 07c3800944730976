"""A game told in plain words: each decision and what it caused, hand results, standings.

:class:`Narrator` watches a :class:`~craits_env.engine.Game` from one seat (``craits
play``: "player_2 played 7♣ — you drew 1 card (K♥)") or from above (``craits replay``,
``viewer=None``: every drawn card is named). From a seat it never names a card another
seat drew or holds during a hand; at a hand's end every hand is shown, as it is laid
down for scoring, with what each 3 cancelled (R8.3).

A decision can end a hand, and the engine deals the next one inside the same ``apply``;
the narrator then asks ``hand_end(i)`` for the game as it stood when hand ``i`` was
scored (:func:`craits_env.records.replay` with ``hands=i + 1`` gives exactly that).
The ``…_by_hand`` methods give the same lines in parts, split after each hand's summary,
for a caller that pauses between hands.

A decision is one line, with what it caused after a dash ("you played 4♣ — skips
player_1"). A suit call or a one-card declaration that lets an earlier card take effect
stands alone, and what followed gets its own line, named by that card: ``you declared
"one card"`` then ``your 4♣: skips player_1``. Text only: no I/O, no colours.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
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
from craits_env.rules import Rules
from craits_env.scoring import GOING_OUT_BONUS, explain_hand, pressure_cost

SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")


class CardText:
    """Cards and suits as text: ``7♣`` with suit symbols, ``7c`` without."""

    def __init__(self, symbols: bool = True) -> None:
        self.suits = SUIT_SYMBOLS if symbols else SUIT_CHARS

    def card(self, c: int) -> str:
        return RANK_CHARS[RANK_OF[c]] + self.suits[SUIT_OF[c]]

    def cards(self, cards: Sequence[int]) -> str:
        return " ".join(self.card(c) for c in cards)

    def suit(self, s: int) -> str:
        """``"♥ hearts"``"""
        return f"{self.suits[s]} {SUIT_NAMES[s]}"


@dataclass
class _Seen:
    """What the narrator remembers of the game before a decision."""

    hand_index: int
    hands: list[list[int]]
    drawn: list[int]
    pressures: list[int]
    one_card_penalty_pending: list[bool]
    went_out: list[int]
    count: int
    king_left: int

    @classmethod
    def of(cls, g: Game) -> _Seen:
        return cls(
            g.hand_index, [list(h) for h in g.hands], list(g.drawn), list(g.shuffle_pressures),
            list(g.one_card_penalty_pending), list(g.went_out), g.count, g.king_left,
        )  # fmt: skip


class Narrator:
    """Turns decisions into lines of plain text (see the module docstring).

    Args:
        names: a name per seat (``player_0`` …).
        viewer: the seat whose point of view is told (it is "you"); ``None``: from above.
        hand_end: ``hand_end(i)`` is the game as it stood when hand ``i`` was scored.
        cards: how cards are written.
    """

    def __init__(
        self,
        names: Sequence[str],
        viewer: int | None,
        hand_end: Callable[[int], Game],
        cards: CardText | None = None,
    ) -> None:
        self.names = list(names)
        self.viewer = viewer
        self._hand_end = hand_end
        self.text = cards or CardText()
        self._seen: _Seen | None = None
        self._pending: tuple[int, int, str] | None = None  # card, player, context
        self._finished = 0  # hands already summarised

    # ------------------------------------------------------------------ public

    def who(self, seat: int) -> str:
        return "you" if seat == self.viewer else self.names[seat]

    def start(self, game: Game) -> list[str]:
        """Lines for the start of the game: hands that ended at once, then the first deal."""
        return _joined(self.start_by_hand(game))

    def start_by_hand(self, game: Game) -> list[list[str]]:
        """:meth:`start`'s lines in parts, each hand's summary closing a part; the last
        part (the first deal, or nothing when the game is over) closes none."""
        parts = self._finish_hands(game)
        parts.append(self._hand_start(game) if not game.is_over else [])
        self._seen = _Seen.of(game)
        return parts

    def after(self, game: Game, player: int, action: int) -> list[str]:
        """Lines for ``player``'s decision ``action``, just applied to ``game``."""
        return _joined(self.after_by_hand(game, player, action))

    def after_by_hand(self, game: Game, player: int, action: int) -> list[list[str]]:
        """:meth:`after`'s lines in parts, each hand's summary closing a part (a pause
        between hands goes between parts); the last part (the next deal, or nothing when
        the game is over) closes none. A hand that did not end gives one part."""
        before = self._seen
        if before is None:
            raise ValueError("Narrator.after before Narrator.start")
        ended = len(game.hand_points) > before.hand_index
        end = self._end_state(game, before.hand_index) if ended else game
        line = self._decision(before, end, player, action)
        resolved, extra = self._consequences(before, end, player, action, ended)
        if resolved is None or (action < NUM_CARDS and resolved[2] != "starter"):
            lines = [line + (" — " + "; ".join(extra) if extra else "")]
        else:  # a call or declaration let an earlier card take effect: say so apart
            lines = [line] + ([f"{self._card_of(*resolved)}: " + "; ".join(extra)] if extra else [])
        if not ended:
            parts = [lines]
        else:
            parts = self._finish_hands(game, (before.hand_index, end))
            parts[0] = lines + parts[0]
            parts.append(self._hand_start(game) if not game.is_over else [])
        self._seen = _Seen.of(game)
        return parts

    def standings(self, game: Game, labels: Sequence[str] | None = None) -> list[str]:
        """The final (or current) standings, lowest total first (R8.6)."""
        labels = list(labels or self.names)
        width = max(len(x) for x in labels)
        best = min(game.scores)
        title = "Final standings" if game.is_over else "Standings"
        lines = [f"{title} (lowest total wins, R8.6):"]
        order = sorted(range(game.num_players), key=lambda s: (game.scores[s], s))
        for rank, s in enumerate(order, 1):
            k = game.shuffle_pressures[s]
            mark = "  winner" if game.is_over and game.scores[s] == best else ""
            lines.append(
                f" {rank:>2}. {labels[s]:<{width}}  {game.scores[s]:>6} points"
                + (f"  ({k} shuffle pressure{'s' if k != 1 else ''})" if k else "")
                + mark
            )
        return lines

    # ------------------------------------------------------------------ decisions

    def _decision(self, before: _Seen, end: Game, p: int, action: int) -> str:
        t, who = self.text, self.who(p)
        if action < NUM_CARDS:
            if before.count:
                count = before.count + (1 if RANK_OF[action] == Rank.ACE else 2)
                self._pending = (action, p, "count")
                return f"{who} played {t.card(action)} (the count is now {count})"
            self._pending = (action, p, "free" if before.king_left > 1 else "normal")
            return f"{who} played {t.card(action)}"
        if action == DRAW:
            got = self._drawn(before, end, p, before.count or 1, None)
            if before.count:
                return f"{who} took the count: {got}"
            return f"{who} {got}"
        if CALL_BASE <= action < DECLARE:
            return f"{who} called {t.suit(action - CALL_BASE)}"
        if action == DECLARE:
            return f'{who} declared "one card"'
        if end.rules.idiot_penalty == "draw_one":
            got = self._drawn(before, end, p, 1, None)
            return f"{who} stayed silent (caught: {got} at once)"
        return f"{who} stayed silent (caught: two cards instead of the next turn)"

    def _consequences(
        self, before: _Seen, end: Game, p: int, action: int, ended: bool
    ) -> tuple[tuple[int, int, str] | None, list[str]]:
        """What the decision caused: the card's function, draws, reshuffles, going out;
        with the card (card, player, context) that took effect now, if one did."""
        out: list[str] = []
        pending = resolved = self._pending
        if pending is not None:
            card, owner, ctx = pending
            waiting = end.phase in (PHASE_CALL_SUIT, PHASE_DECLARE) and (
                ctx == "starter" or end.current_player == owner
            )
            if ended or not waiting:
                self._pending = None
                out += self._function(card, owner, ctx, end)
            else:
                resolved = None
        played = action if action < NUM_CARDS else None
        own = {p: before.count or 1} if action == DRAW else {}
        if action == STAY_SILENT and end.rules.idiot_penalty == "draw_one":
            own = {p: 1}
        n = end.num_players
        for q in ((p + k) % n for k in range(n)):
            for k in range(before.pressures[q] + 1, end.shuffle_pressures[q] + 1):
                out.append(
                    f"the stock ran out: {self.who(q)} paid a shuffle pressure of "
                    f"{pressure_cost(k)} points"
                )
        for q in ((p + k) % n for k in range(n)):
            owed = before.one_card_penalty_pending[q]
            paid = owed and not end.one_card_penalty_pending[q]  # R7.1
            delta = end.drawn[q] - before.drawn[q] - own.get(q, 0) - (2 if paid else 0)
            if delta <= 0 and not paid:
                continue
            who = self.who(q)
            cards = "" if q in own else self._which(before, end, q, played if q == p else None)
            if paid and delta > 0:
                text = f"{who} drew {_cards(delta)} and paid the one-card penalty"
                out.append(f"{text}: two more cards, turn lost{cards}")
            elif paid:
                out.append(f"{who} paid the one-card penalty: two cards{cards}, turn lost")
            else:
                out.append(f"{who} drew {_cards(delta)}{cards}")
        for q in end.went_out:
            if q not in before.went_out:
                out.append(f"{self.who(q)} went out")
        return resolved, out

    def _card_of(self, card: int, p: int, ctx: str) -> str:
        """``the starter 4♣``, ``your 4♣``, ``player_2's 4♣``."""
        if ctx == "starter":  # after the declarations on the deal (R7.3)
            return f"the starter {self.text.card(card)}"
        owner = "your" if p == self.viewer else f"{self.names[p]}'s"
        return f"{owner} {self.text.card(card)}"

    def _function(self, card: int, p: int, ctx: str, end: Game) -> list[str]:
        """The effect of ``card`` played by ``p`` once it is resolved (R4, R5, R9)."""
        if ctx == "count":
            return []
        if ctx == "free":
            return ["no function in a king's sequence"]
        rank, who, n = RANK_OF[card], self.who(p), end.num_players
        face = end.rules.face_cards
        if rank == Rank.TWO:
            return ["the count starts at 2"]
        if rank == Rank.FOUR:
            return [f"skips {self.who((p + end.direction) % n)}"]
        if rank == Rank.SIX:
            return [f"another play for {who}"]
        if rank == Rank.TEN:
            return ["play now goes " + ("left" if end.direction == 1 else "right")]
        if rank == Rank.KING and face:
            return [f"three more cards for {who}"]
        if face and (rank == Rank.JACK or card == QUEEN_OF_SPADES):
            victim = (p + end.direction) % n
            return [f"{self.who(victim)} {'lose' if victim == self.viewer else 'loses'} the turn"]
        return []

    def _drawn(self, before: _Seen, end: Game, q: int, expected: int, played: int | None) -> str:
        got = min(expected, end.drawn[q] - before.drawn[q])
        if got <= 0:
            return "could not draw: the cards ran out"
        return f"drew {_cards(got)}" + self._which(before, end, q, played)

    def _which(self, before: _Seen, end: Game, q: int, played: int | None) -> str:
        """`` (K♥ 4♣)``: the cards ``q`` gained, if the viewer may see them."""
        if self.viewer is not None and q != self.viewer:
            return ""
        held = Counter(before.hands[q])
        if played is not None:
            held[played] -= 1
        gained = sorted((Counter(end.hands[q]) - held).elements())
        return f" ({self.text.cards(gained)})" if gained else ""

    # ------------------------------------------------------------------ hands

    def _end_state(self, game: Game, i: int) -> Game:
        if game.is_over and len(game.hand_points) == i + 1:
            return game  # the last hand: the finished game still holds it
        return self._hand_end(i)

    def _hand_start(self, game: Game) -> list[str]:
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
            extra += self._function(starter, game.dealer, "starter", game)
        for s in range(game.num_players):
            if game.drawn[s]:
                extra.append(f"{self.who(s)} drew {_cards(game.drawn[s])}")
        if extra:
            lines.append("  the starter counts as played by the dealer: " + "; ".join(extra))
        return lines

    def _finish_hands(self, game: Game, decided: tuple[int, Game] | None = None) -> list[list[str]]:
        """Summaries of the hands finished since the last call, one list of lines each;
        ``decided``: the hand that a decision just ended and its end state (others ended
        before any decision)."""
        parts: list[list[str]] = []
        while self._finished < len(game.hand_points):
            i = self._finished
            lines: list[str] = []
            if decided is not None and decided[0] == i:
                state = decided[1]
            else:
                state = self._end_state(game, i)
                lines += ["", f"Hand {i + 1}: the hand ended before any decision"]
            parts.append(lines + self.hand_summary(state, i, game.hand_points))
            self._finished += 1
        return parts

    def hand_summary(self, end: Game, i: int, hand_points: Sequence[Sequence[int]]) -> list[str]:
        """Hand ``i``'s points per player, with its cards, what the threes cancelled and
        the penalties; ``end`` is the game as the hand was scored."""
        rules: Rules = end.rules
        t = self.text
        out = [self.who(s) for s in end.went_out]
        head = f"Hand {i + 1} is over: " + (
            f"{', '.join(out)} went out" if out else "nobody went out"
        )
        width = max(len(self.who(s)) for s in range(end.num_players))
        lines = ["", head]
        totals = [sum(p[s] for p in hand_points[: i + 1]) for s in range(end.num_players)]
        for s, hand in enumerate(end.hands):
            points = hand_points[i][s]
            notes: list[str] = []
            if s in end.went_out:
                card_points = GOING_OUT_BONUS if rules.going_out_bonus else 0
                shown = "(out)"
            else:
                score = explain_hand(hand, rules)
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
                f"  {self.who(s):<{width}}  {points:>5} points  (total {totals[s]:>5})  {shown}"
                + (f"  [{'; '.join(notes)}]" if notes else "")
            )
        return lines


def _joined(parts: list[list[str]]) -> list[str]:
    return [line for part in parts for line in part]


def _cards(k: int) -> str:
    return f"{k} card" if k == 1 else f"{k} cards"
