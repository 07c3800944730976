"""Heuristic bots on the public state: a ladder ``greedy`` < ``tactician`` < ``expert``.

Each bot acts on a :class:`craits_env.public.SeatView` (its own hand and the
public state, R11) and returns a legal action id. A decision costs a few
microseconds: no numpy, no observation encoding, tables built at import, and a
single legal action is returned at once. The bots are deterministic (every tie
is broken by a fixed rule); ``reset(seed)`` is accepted for the agent protocol.

* :class:`GreedyAgent` sheds the most points it can.
* :class:`TacticianAgent` plays the card functions at the player who threatens
  to go out, keeps its wilds and useful threes, and manages the count.
* :class:`ExpertAgent` adds card counting: the unseen cards and the suits the
  next player showed they lack.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from craits_env.actions import CALL_BASE, DECLARE, DRAW, Phase
from craits_env.cards import NUM_CARDS, QUEEN_OF_SPADES, RANK_OF, SUIT_OF, Rank
from craits_env.public import SeatView
from craits_env.scoring import CARD_POINTS, score_ranks

_PLAY, _COUNT, _CALL, _DECLARE = int(Phase.PLAY), int(Phase.COUNT), int(Phase.CALL_SUIT), int(
    Phase.DECLARE
)
_A, _TWO, _THREE, _FOUR, _FIVE, _SIX, _SEVEN, _EIGHT, _NINE, _TEN, _JACK, _QUEEN, _KING = range(13)
assert _KING == Rank.KING and _THREE == Rank.THREE

_PTS: tuple[int, ...] = tuple(CARD_POINTS[RANK_OF[c]] for c in range(NUM_CARDS))
_WILD: tuple[bool, ...] = tuple(RANK_OF[c] in (_EIGHT, _NINE) for c in range(NUM_CARDS))
_COUNTER: tuple[bool, ...] = tuple(RANK_OF[c] in (_A, _TWO) for c in range(NUM_CARDS))
_BITS = tuple(bin(m).count("1") for m in range(16))
_OTHER_SUIT_OF_COLOUR = (3, 2, 1, 0)  # c<->s, d<->h: what a 9 may call besides its own suit (R4)


def _view(observation: Mapping[str, Any]) -> SeatView:
    if not isinstance(observation, SeatView):
        raise TypeError(
            "heuristic bots act on a craits_env.public.SeatView (own hand and public state); "
            f"got {type(observation).__name__}: drive the game with PublicGame or "
            "raw_env(track_public=True).seat_view(agent)"
        )
    return observation


def _playable(card: int, suit: int, top_rank: int) -> bool:
    """R3.1 outside the count."""
    return SUIT_OF[card] == suit or RANK_OF[card] == top_rank or _WILD[card]


def _hand_points(hand: Sequence[int], rules: Any) -> int:
    """What ``hand`` would score now (R8.2-R8.4)."""
    return score_ranks([RANK_OF[c] for c in hand], rules)


def _shed_values(hand: list[int], cards: Sequence[int], rules: Any) -> dict[int, int]:
    """For each card, how many points playing it takes off the hand's score now.

    Threes make this differ from the card's points: a 3 that cancels a high card
    is worth keeping (R8.3), a lonely punitive 3 is worth shedding (R8.4).
    """
    if not any(RANK_OF[c] == _THREE for c in hand):
        return {c: _PTS[c] for c in cards}
    now = _hand_points(hand, rules)
    out = {}
    for c in cards:
        rest = hand[:]
        rest.remove(c)
        out[c] = now - _hand_points(rest, rules)
    return out


class GreedyAgent:
    """Greedy: shed the highest-scoring playable card.

    * Play: the legal card with the most points (R8.2); ties go to the highest
      card index. Draw only when no card is playable (or drawing is the only
      action).
    * Count: play an ace or a two if it has one (the two first: more points).
    * Suit call (8 or 9): the legal suit it holds most cards of; ties by the
      points held in the suit, then the lowest suit index.
    * Always declares "one card".
    """

    name = "greedy"

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng.seed(seed)

    def act(self, observation: Mapping[str, Any]) -> int:
        view = _view(observation)
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        if not legal:
            raise ValueError(f"{self.name}: seat {view.seat} has no decision to make")
        phase = view.phase
        if phase == _PLAY:
            return self.play(view, legal)
        if phase == _COUNT:
            return self.count(view, legal)
        if phase == _CALL:
            return self.call(view, legal)
        return DECLARE if DECLARE in legal else legal[0]

    # -- the decisions (legal holds at least two actions) --------------------

    def play(self, view: SeatView, legal: tuple[int, ...]) -> int:
        best, best_key = DRAW, (-1, -1)
        for a in legal:
            if a < DRAW and (_PTS[a], a) > best_key:
                best, best_key = a, (_PTS[a], a)
        return best

    def count(self, view: SeatView, legal: tuple[int, ...]) -> int:
        return self.play(view, legal)

    def call(self, view: SeatView, legal: tuple[int, ...]) -> int:
        held = [0, 0, 0, 0]
        pts = [0, 0, 0, 0]
        for c in view.hand:
            held[SUIT_OF[c]] += 1
            pts[SUIT_OF[c]] += _PTS[c]
        best, best_key = legal[0], (-1, -1, 0)
        for a in legal:
            s = a - CALL_BASE
            key = (held[s], pts[s], -s)
            if key > best_key:
                best, best_key = a, key
        return best


def _agent_factory(cls: type[GreedyAgent]) -> Any:
    return lambda arg, seed: cls(seed)


class _Table:
    """What a bot reads from the view once per decision."""

    __slots__ = (
        "danger", "direction", "face", "hand", "jack_run", "me", "n", "nxt", "prv", "rules",
        "seven_next", "sizes", "threat", "view", "draw_self", "press",
    )  # fmt: skip

    def __init__(
        self, view: SeatView, hand: list[int], threat_table: Sequence[float], scale: float = 1.0
    ) -> None:
        self.view = view
        self.hand = hand
        rules = self.rules = view.rules
        self.face = rules.face_cards
        self.seven_next = rules.seven_hits == "next"
        n = self.n = view.num_players
        me = self.me = view.seat
        d = self.direction = view.direction
        self.nxt = (me + d) % n
        self.prv = (me - d) % n
        sizes = self.sizes = view.hand_sizes
        last = len(threat_table) - 1
        self.threat = [scale * threat_table[min(h, last)] for h in sizes]
        self.threat[me] = 0.0
        self.danger = min(h for s, h in enumerate(sizes) if s != me)
        self.jack_run = view.jack_run
        self.draw_self = 0.0
        self.press = 0.0


class TacticianAgent(GreedyAgent):
    """Tactician: card functions aimed at the player about to go out; wilds kept for later.

    Each playable card gets a value and the best one is played:

    * Shedding: the points the card takes off the hand's score *now* (R8.2-R8.4),
      so a 3 that cancels a high card is kept (it would cost its cancelled card),
      and with ``punitive_threes`` a lonely 3 is shed.
    * Punishing cards, scaled by the threat of the player they hit (the fewer
      cards that player holds, the larger): 4 skips the next player, 5 makes
      everyone draw, 7 hits the next player (or the one after, ``seven_hits``),
      2 starts the count (worth more when the next player holds few cards and so
      probably no ace or two, a risk when it holds many and we hold none), T
      reverses (a gain when the next player is more dangerous than the previous
      one, who becomes next), and with ``face_cards`` J and Q♠ (draws and a
      forfeit). With two players, 4, J and Q♠ give a new turn, like a 6.
    * Escapes: 8s and 9s are kept while another card is playable; the keep value
      falls when the hand is small or an opponent is about to go out.
    * Chains: a 6 (and with ``face_cards`` a K's three-card sequence) is valued
      with the best continuation it allows from the hand; without one it costs a
      draw. A 6 or K never goes out, so neither is kept as a last card.
    * Last cards: with two cards left, keeps the one most likely to go out next
      turn (a wild best).
    * Suit: small bonus for keeping the active suit on one it still holds.

    The count: play a two before an ace (more points, a bigger count); an ace
    is kept for the next count. Suit calls: the suit it holds most of, weighted by
    the points of those cards (they are shed next). Always declares "one card".
    """

    name = "tactician"

    THREAT: tuple[float, ...] = (0.0, 55.0, 24.0, 12.0, 8.0, 6.0, 5.0, 4.0)
    """Threat of an opponent holding 0, 1, 2, … cards (the last entry for more)."""
    SKIP = 0.9  # a skipped or forfeited turn, times the threat of its player
    DRAW = 0.8  # a card drawn by an opponent, times its threat
    DRAW_SELF = 24.0  # a card we draw: about its points, and one more to shed
    KEEP_EIGHT = 40.0
    KEEP_NINE = 24.0
    KEEP_SMALL = 0.5  # the keep value is scaled by this with two cards or fewer left
    KEEP_DANGER = 0.4  # … and by this while an opponent holds one card
    OUT = 300.0  # going out
    LAST_WILD = 30.0  # the last card left is an 8 or 9 (plays at once next turn)
    LAST_BAD = 30.0  # the last card left is a 6 (or face K): cannot go out on it
    LAST_COUNTER = 6.0  # the last card left is an ace or two
    SUIT_KEEP = 2.0  # per card of the suit just set that stays in hand
    THREE_KEEP = 0.0  # a 3 kept may end the hand as a hand of threes (-50 each, R8.3)
    MY_REF = 0.0  # threats scale with our hand's points over this (0: no scaling)
    PRESS_KEEP = 0.0
    PRESS_COUNT = 0.0
    KEEP_WILD_SMALL = 0.0
    KEEP_LAST_WILD = 0.0
    KEEP_TWO = 0.0
    THREE_MIX = 0.0
    KEEP_COUNTER = 0.0  # our last ace or two: the defence against a count
    KEEP_PUNISH = 0.0  # a 4 or 7 while no opponent is about to go out
    FLEX = 0.0  # times the chance to hold a playable card next turn
    STAY = 0.4  # assumed chance that the suit we set is still active next turn
    REVERSE = 0.8  # threat difference between next and previous player
    COUNT_RISK = 30.0  # a count we started that may come back with no ace or two in hand
    COUNTER_SHARE = 0.16  # assumed share of aces and twos among unseen cards

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)

    # -- play -----------------------------------------------------------------

    def play(self, view: SeatView, legal: tuple[int, ...]) -> int:
        cards = [a for a in legal if a < DRAW]
        if not cards:
            return DRAW
        if len(cards) == 1:
            return cards[0]
        hand = view.hand
        scale = 1.0
        if self.MY_REF:
            now = _hand_points(hand, view.rules)
            scale = max(-1.0, min(3.0, now / self.MY_REF))
        t = _Table(view, hand, self.THREAT, scale)
        t.draw_self = self.DRAW_SELF
        shed = _shed_values(hand, cards, t.rules)
        if self.THREE_MIX:
            m = self.THREE_MIX
            shed = {c: m * _PTS[c] + (1 - m) * x for c, x in shed.items()}
        self._prepare(t)
        king_left = view.king_cards_left
        best, best_v = cards[0], -1e18
        for c in cards:
            v = self._value(t, c, hand, shed[c], king_left, 2)
            if v > best_v:
                best, best_v = c, v
        return best

    def _prepare(self, t: _Table) -> None:
        """Hook for subclasses: extra facts read once per decision."""

    def _value(self, t: _Table, c: int, hand: list[int], shed: float, king_left: int, depth: int) -> float:
        """The value of playing ``c`` from ``hand`` (which holds it)."""
        rank = RANK_OF[c]
        rest = hand[:]
        rest.remove(c)
        v = shed
        free = king_left > 1  # the first two cards of a king's sequence have no function
        again = free  # same player plays again
        nk = king_left - 1 if free else 0
        if not free:
            if rank == _SIX or (rank == _KING and t.face):
                again = True
                nk = 3 if rank == _KING and t.face else 0
            elif t.n == 2 and (
                rank == _FOUR or (t.face and (rank == _JACK or c == QUEEN_OF_SPADES))
            ):
                again = True  # R4.2: a new turn for the same player
        if not rest:
            if again:
                return v - t.draw_self
            return v + self.OUT
        if again:
            cont = self._continuation(t, c, rest, nk, depth)
            v += cont
        if _WILD[c]:
            keep = self.KEEP_EIGHT if rank == _EIGHT else self.KEEP_NINE
            keep += self.KEEP_WILD_SMALL / len(rest)
            if self.KEEP_LAST_WILD and not any(_WILD[x] for x in rest):
                keep += self.KEEP_LAST_WILD
            keep += self.PRESS_KEEP * t.press
            if len(rest) <= 1:
                keep *= self.KEEP_SMALL
            if t.danger <= 1:
                keep *= self.KEEP_DANGER
            v -= keep
        if not free:
            v += self._effect(t, c, rank, rest)
        if rank == _THREE and self.THREE_KEEP:
            others = sum(1 for x in rest if RANK_OF[x] != _THREE)
            v -= self.THREE_KEEP / max(others, 1)
        if rank == _TWO and not free:
            v -= self.KEEP_TWO
        if _COUNTER[c] and self.KEEP_COUNTER and not any(_COUNTER[x] for x in rest):
            v -= self.KEEP_COUNTER
        if self.KEEP_PUNISH and (rank == _FOUR or rank == _SEVEN) and t.danger > 2:
            v -= self.KEEP_PUNISH
        if len(rest) == 1 and not again:
            left = rest[0]
            lr = RANK_OF[left]
            if _WILD[left]:
                v += self.LAST_WILD
            elif lr == _SIX or (lr == _KING and t.face):
                v -= self.LAST_BAD
            elif _COUNTER[left]:
                v += self.LAST_COUNTER
        if not again:
            s = SUIT_OF[c]
            same = 0
            suits = 0
            wild = False
            for x in rest:
                if _WILD[x]:
                    wild = True
                else:
                    suits |= 1 << SUIT_OF[x]
                    if SUIT_OF[x] == s:
                        same += 1
            if not _WILD[c]:
                v += self.SUIT_KEEP * same
            if self.FLEX:
                if wild:
                    p = 1.0
                else:
                    held = _BITS[suits] / 4.0
                    p = self.STAY * (same > 0) + (1.0 - self.STAY) * held
                v += self.FLEX * p
        return v

    def _continuation(self, t: _Table, c: int, rest: list[int], king_left: int, depth: int) -> float:
        """The best value of the next play in the same turn after ``c`` (or a draw)."""
        if depth <= 0:
            return 0.0
        rank = RANK_OF[c]
        if rank == _EIGHT:
            suits: tuple[int, ...] = (0, 1, 2, 3)
        elif rank == _NINE:
            suits = (SUIT_OF[c], _OTHER_SUIT_OF_COLOUR[SUIT_OF[c]])
        else:
            suits = (SUIT_OF[c],)
        best = -t.draw_self
        for x in rest:
            if RANK_OF[x] == rank or _WILD[x] or SUIT_OF[x] in suits:
                v = self._value(t, x, rest, _PTS[x], king_left, depth - 1)
                if v > best:
                    best = v
        return best

    def _effect(self, t: _Table, c: int, rank: int, rest: list[int]) -> float:
        """What the card's function does to the others (R4, R5, R9)."""
        threat = t.threat
        if rank == _FOUR:
            return self.SKIP * threat[t.nxt] if t.n > 2 else 0.0
        if rank == _FIVE:
            return self.DRAW * sum(threat)
        if rank == _SEVEN:
            if t.seven_next:
                return self.DRAW * threat[t.nxt]
            victim = (t.nxt + t.direction) % t.n
            return -t.draw_self if victim == t.me else self.DRAW * threat[victim]
        if rank == _TEN:
            if t.n <= 2:
                return 0.0
            return self.REVERSE * (threat[t.nxt] - threat[t.prv])
        if rank == _TWO:
            return self._count_value(t, rest)
        if t.face and t.n > 2:
            if rank == _JACK:
                return threat[t.nxt] * (self.SKIP + self.DRAW * 2 * (t.jack_run + 1))
            if c == QUEEN_OF_SPADES:
                return threat[t.nxt] * (self.SKIP + self.DRAW * 5)
        return 0.0

    def _count_value(self, t: _Table, rest: list[int]) -> float:
        """Starting the count at the next player (R5.1)."""
        p_none = self._p_no_counter(t, t.nxt)
        risk = 0.0 if any(_COUNTER[x] for x in rest) else self.COUNT_RISK + self.PRESS_COUNT * t.press
        return p_none * self.DRAW * 2 * t.threat[t.nxt] - (1.0 - p_none) * risk

    def _p_no_counter(self, t: _Table, seat: int) -> float:
        return float((1.0 - self.COUNTER_SHARE) ** t.sizes[seat])

    # -- the count and suit calls -----------------------------------------------

    def count(self, view: SeatView, legal: tuple[int, ...]) -> int:
        twos = [a for a in legal if a < DRAW and RANK_OF[a] == _TWO]
        if twos:
            return twos[-1]
        aces = [a for a in legal if a < DRAW]
        return aces[-1] if aces else DRAW

    def call(self, view: SeatView, legal: tuple[int, ...]) -> int:
        weight = [0.0, 0.0, 0.0, 0.0]
        for c in view.hand:
            if not _WILD[c]:
                weight[SUIT_OF[c]] += 10.0 + _PTS[c]
        self._call_weights(view, weight)
        best, best_w = legal[0], -1e18
        for a in legal:
            w = weight[a - CALL_BASE]
            if w > best_w:
                best, best_w = a, w
        return best

    def _call_weights(self, view: SeatView, weight: list[float]) -> None:
        """Hook for subclasses: adjust the suit-call weights."""


_DECK_COUNTS: dict[tuple[int, bool], tuple[list[int], list[int]]] = {}


def _deck_counts(decks: int, remove_kq: bool) -> tuple[list[int], list[int]]:
    """Cards per suit and per rank in the deck in play (cached)."""
    key = (decks, remove_kq)
    counts = _DECK_COUNTS.get(key)
    if counts is None:
        per_suit, per_rank = [0] * 4, [0] * 13
        for c in range(NUM_CARDS):
            if remove_kq and RANK_OF[c] in (_QUEEN, _KING):
                continue
            per_suit[SUIT_OF[c]] += decks
            per_rank[RANK_OF[c]] += decks
        counts = _DECK_COUNTS[key] = (per_suit, per_rank)
    return counts


class ExpertAgent(TacticianAgent):
    """Expert: the tactician plus card counting from public memory.

    From the cards it cannot see (the deck minus its hand and the discard pile,
    as ``view.unseen_cards()``) it counts the unseen cards of each suit and rank,
    the unseen 8s and 9s and the unseen aces and twos. With the public record of
    what each player could not follow (``view.tracker``: a player who drew
    instead of playing lacked the suit, the wilds, or in the count aces and twos;
    only the cards drawn since can have changed that) it estimates, for the
    player who acts after our card, the chance that they cannot play on it:

    * Play: a card is worth more when the next player probably cannot follow it
      (they then draw), weighted by that player's threat; a suit the next player
      probably holds is avoided.
    * Suit calls: the suit it holds (weighted by points) plus the chance that the
      next player lacks it: a suit they showed they are void in is called.
    * The count: starting it with a 2 uses the real number of unseen aces and
      twos and whether the next player already had to take a count.
    """

    name = "expert"

    BLOCK_OUT = 0.0
    PENALTY_AWARE = 0
    STOCK_LOW = 0  # a stock this small may run out before our next draw (0: off)
    CHAIN = 0
    CHAIN_BASE = 2.0
    CHAIN_SELF = 20.0
    BLOCK = 0.7  # the next player cannot play: times (threat + BLOCK_BASE)
    BLOCK_BASE = 6.0
    CALL_BLOCK = 1.0

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self._suit_unseen = [0, 0, 0, 0]
        self._rank_unseen = [0] * 13
        self._unseen = 1
        self._wild_unseen = 0
        self._counter_unseen = 0

    def _count_unseen(self, view: SeatView, hand: list[int]) -> None:
        rules = view.rules
        per_suit, per_rank = _deck_counts(rules.decks_for(view.num_players), rules.remove_kings_queens)
        su, ru = per_suit[:], per_rank[:]
        total = sum(su)
        for pile in (hand, view.discard):
            for c in pile:
                su[SUIT_OF[c]] -= 1
                ru[RANK_OF[c]] -= 1
            total -= len(pile)
        self._suit_unseen, self._rank_unseen = su, ru
        self._unseen = max(total, 1)
        self._wild_unseen = ru[_EIGHT] + ru[_NINE]
        self._counter_unseen = ru[_A] + ru[_TWO]

    def _prepare(self, t: _Table) -> None:
        view = t.view
        self._count_unseen(view, t.hand)
        if self.STOCK_LOW:
            stock = view.stock_size
            if stock < self.STOCK_LOW:
                cost = 5 << view.shuffle_pressures[t.me]
                t.press = cost * (1.0 - stock / self.STOCK_LOW)
                t.draw_self += t.press
        if self.PENALTY_AWARE:
            pending = t.view.penalty_pending
            if any(pending):
                last = len(self.THREAT) - 1
                for s, due in enumerate(pending):
                    if due and s != t.me:
                        t.threat[s] = t.threat[s] * 0 + self.THREAT[min(t.sizes[s] + 2, last)]

    def _p_none(self, k: int, h: int) -> float:
        """Chance that ``h`` unknown cards hold none of ``k`` given unseen cards."""
        if k <= 0 or h <= 0:
            return 1.0
        q = 1.0 - k / self._unseen
        return q**h if q > 0.0 else 0.0

    def _p_block(self, view: SeatView, seat: int, h: int, suit: int, rank: int) -> float:
        """Chance that ``seat`` (holding ``h`` cards) cannot play on ``rank`` in ``suit``."""
        tracker = view.tracker
        void = tracker.void_draws(seat, suit)
        nowild = tracker.no_wild_draws(seat)
        hs = h if void is None else min(h, void)
        hw = h if nowild is None else min(h, nowild)
        p = self._p_none(self._suit_unseen[suit], hs) * self._p_none(self._wild_unseen, hw)
        if rank != _EIGHT and rank != _NINE:
            p *= self._p_none(self._rank_unseen[rank] - 0, h)  # the same rank, other suits
        return p

    def _effect(self, t: _Table, c: int, rank: int, rest: list[int]) -> float:
        v = super()._effect(t, c, rank, rest)
        if rank == _TWO or rank == _SIX or (t.face and rank == _KING):
            return v
        n = t.n
        victim = t.nxt
        extra = 0
        if rank == _FOUR or (t.face and (rank == _JACK or c == QUEEN_OF_SPADES)):
            victim = (victim + t.direction) % n
        elif rank == _TEN and n > 2:
            victim = t.prv
        elif rank == _FIVE or (rank == _SEVEN and t.seven_next):
            extra = 1
        if victim == t.me:
            return v
        h = t.sizes[victim] + extra
        if _WILD[c]:
            return v  # valued with the suit call
        p = self._p_block(t.view, victim, h, SUIT_OF[c], rank)
        v += self.BLOCK * p * (t.threat[victim] + self.BLOCK_BASE)
        if self.BLOCK_OUT and h == 1:
            v += self.BLOCK_OUT * p * sum(_PTS[x] for x in rest)
        return v

    def _count_value(self, t: _Table, rest: list[int]) -> float:
        """Starting the count: follow it round the table (R5.2, R5.3) with the unseen aces and
        twos; each player holds one with the chance its unknown cards hold one."""
        if not self.CHAIN:
            return super()._count_value(t, rest)
        tracker = t.view.tracker
        k = self._counter_unseen
        count = 2.0
        alive = 1.0
        value = 0.0
        q = t.nxt
        sizes = t.sizes
        for _ in range(t.n - 1):
            seen = tracker.no_count_draws(q)
            h = sizes[q] if seen is None else min(sizes[q], seen)
            pn = self._p_none(k, h)
            value += alive * pn * count * self.DRAW * (t.threat[q] + self.CHAIN_BASE)
            alive *= 1.0 - pn
            count += 1.5
            k -= 1
            q = (q + t.direction) % t.n
        if not any(_COUNTER[x] for x in rest):
            value -= alive * count * self.CHAIN_SELF
        return value

    def _p_no_counter(self, t: _Table, seat: int) -> float:
        seen = t.view.tracker.no_count_draws(seat)
        h = t.sizes[seat] if seen is None else min(t.sizes[seat], seen)
        return self._p_none(self._counter_unseen, h)

    def _call_weights(self, view: SeatView, weight: list[float]) -> None:
        if view.king_cards_left:
            return  # our own sequence goes on: call for ourselves
        hand = view.hand
        self._count_unseen(view, hand)
        n = view.num_players
        me = view.seat
        nxt = (me + view.direction) % n
        sizes = view.hand_sizes
        h = sizes[nxt]
        threat = self.THREAT[min(h, len(self.THREAT) - 1)]
        top_rank = RANK_OF[view.top]
        for s in range(4):
            p = self._p_block(view, nxt, h, s, top_rank)
            weight[s] += self.CALL_BLOCK * p * (threat + self.BLOCK_BASE)
