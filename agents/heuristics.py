"""Heuristic bots on the public state: the ladder ``greedy`` < ``tactician`` < ``expert``.

Each bot acts on a :class:`craits_env.public.SeatView` (its own hand and the
public state, R11) and returns a legal action id. A decision costs a few
microseconds: no numpy, no observation encoding, tables built at import, and a
decision with a single legal action returns at once. The bots are
deterministic: every tie is broken by a fixed rule, so ``reset(seed)`` has
nothing to seed (it is accepted for the agent protocol).

* :class:`GreedyAgent` sheds the most points it can.
* :class:`TacticianAgent` values each playable card: the points it sheds, its
  function aimed at the player about to go out, wilds kept as escapes, the
  count, chains; its weights are rules of thumb.
* :class:`ExpertAgent` adds card counting from public memory (the unseen cards;
  the suits, wilds and count cards each player showed it lacked) and hand
  planning (threes, count defence, wilds for the end), with weights tuned by
  self-play and by rollout values of sampled positions.

The weights are class attributes: a subclass or an instance may override them.
``python experiments/heuristics_ladder.py ladder`` measures the ladder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from craits_env.actions import (
    CALL_BASE,
    DECLARE,
    DRAW,
    PHASE_CALL_SUIT,
    PHASE_COUNT,
    PHASE_PLAY,
    forced_action,
)
from craits_env.cards import NUM_CARDS, NUM_RANKS, QUEEN_OF_SPADES, RANK_OF, SUIT_OF, Rank
from craits_env.public import SeatView
from craits_env.scoring import CARD_POINTS, LONELY_THREE_POINTS, ONLY_THREES_POINTS

_A, _TWO, _THREE, _FOUR, _FIVE, _SIX, _SEVEN, _EIGHT, _NINE, _TEN, _JACK, _QUEEN, _KING = (
    int(r) for r in Rank
)

# Per-card lookup tables.
_PTS: tuple[int, ...] = tuple(CARD_POINTS[RANK_OF[c]] for c in range(NUM_CARDS))  # R8.2
_WILD: tuple[bool, ...] = tuple(RANK_OF[c] in (_EIGHT, _NINE) for c in range(NUM_CARDS))  # R3.1
_COUNTER: tuple[bool, ...] = tuple(RANK_OF[c] in (_A, _TWO) for c in range(NUM_CARDS))  # R5.2
_SUIT_OR_WILD: tuple[int, ...] = tuple(4 if _WILD[c] else SUIT_OF[c] for c in range(NUM_CARDS))
# bytes.translate tables: card index -> suit (4 for an 8 or 9) / rank
_SUIT_OR_WILD_BYTES = bytes(_SUIT_OR_WILD) + bytes(256 - NUM_CARDS)
_RANK_BYTES = bytes(RANK_OF) + bytes(256 - NUM_CARDS)
_ACTIVE = tuple(r in (_TWO, _FOUR, _FIVE, _SEVEN, _TEN) for r in range(NUM_RANKS))  # R4, R5
_COLOUR_PARTNER = (3, 2, 1, 0)  # c<->s, d<->h: what a 9 may call besides its own suit (R4)


def _points(threes: int, fixed: int, cancellable: list[int], rules: Any) -> int:
    """A hand's score (R8.2-R8.4) from its threes, the points no 3 may cancel, and the
    points a 3 may cancel (highest first). Mirrors ``craits_env.scoring.score_ranks``."""
    if not threes:
        return fixed + sum(cancellable)
    if not fixed and not cancellable:
        return ONLY_THREES_POINTS * threes
    cancelled = threes if threes < len(cancellable) else len(cancellable)
    total = fixed + sum(cancellable[cancelled:])
    if rules.punitive_threes:
        return total + cancelled * rules.three_points + (threes - cancelled) * LONELY_THREE_POINTS
    return total + threes * rules.three_points


def _shed_values(cards: list[int], candidates: list[int], rules: Any) -> list[float]:
    """For each candidate, how many points playing it takes off the hand's score now.

    Threes make this differ from the card's points (R8.3): a 3 that cancels a
    high card is worth keeping, a card a 3 cancels is worth little to shed.
    """
    eights = rules.threes_cancel_eights
    aces = not rules.punitive_threes
    threes = fixed = 0
    cancellable = []
    for c in cards:
        r = RANK_OF[c]
        if r == _THREE:
            threes += 1
        elif (r != _EIGHT or eights) and (r != _A or aces):
            cancellable.append(_PTS[c])
        else:
            fixed += _PTS[c]
    if not threes:
        return [float(_PTS[c]) for c in candidates]
    cancellable.sort(reverse=True)
    now = _points(threes, fixed, cancellable, rules)
    out = []
    for c in candidates:
        r = RANK_OF[c]
        if r == _THREE:
            after = _points(threes - 1, fixed, cancellable, rules)
        elif (r != _EIGHT or eights) and (r != _A or aces):
            rest = cancellable[:]
            rest.remove(_PTS[c])
            after = _points(threes, fixed, rest, rules)
        else:
            after = _points(threes, fixed - _PTS[c], cancellable, rules)
        out.append(float(now - after))
    return out


def _view(observation: Mapping[str, Any]) -> SeatView:
    if isinstance(observation, SeatView):
        return observation
    raise TypeError(
        "heuristic bots act on a craits_env.public.SeatView (own hand and public state); got "
        f"{type(observation).__name__}: drive the game with craits_env.public.PublicGame or "
        "craits_v0.raw_env(track_public=True).seat_view(agent)"
    )


class GreedyAgent:
    """Greedy: shed the highest-scoring playable card.

    * Play: the legal card with the most points (R8.2); ties go to the highest
      card index. It draws only when no card is playable (with
      ``voluntary_draw`` too).
    * Count: plays an ace or a two if it has one (a two first: more points).
    * Suit call (8 or 9): the legal suit it holds most cards of; ties by the
      points held in the suit, then the lowest suit.
    * Always declares "one card".
    """

    name = "greedy"
    version = 1  # bump when its play changes: stored results are keyed by it

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed

    def reset(self, seed: int | None = None) -> None:
        """Start a game. The bot has no randomness: ``seed`` is only recorded."""
        if seed is not None:
            self.seed = seed

    def act(self, observation: Mapping[str, Any]) -> int:
        view = _view(observation)
        legal = view.legal_actions
        forced = forced_action(legal)  # every decision is asked, even a single one (R3.6)
        if forced is not None:
            return forced
        if not legal:
            raise ValueError(f"{self.name}: seat {view.seat} has no decision to make")
        phase = view.phase
        if phase == PHASE_PLAY:
            return self.play(view, legal)
        if phase == PHASE_COUNT:
            return self.count(view, legal)
        if phase == PHASE_CALL_SUIT:
            return self.call(view, legal)
        return DECLARE  # R7.1: silence is always caught

    # -- the decisions (``legal`` holds two actions or more) -------------------

    def play(self, view: SeatView, legal: tuple[int, ...]) -> int:
        best, best_pts = DRAW, -1
        for a in legal:  # ascending: a tie goes to the later (higher) card
            if a < DRAW and _PTS[a] >= best_pts:
                best, best_pts = a, _PTS[a]
        return best

    def count(self, view: SeatView, legal: tuple[int, ...]) -> int:
        return self.play(view, legal)

    def call(self, view: SeatView, legal: tuple[int, ...]) -> int:
        held = [0, 0, 0, 0]
        pts = [0, 0, 0, 0]
        for c in view.hand:
            held[SUIT_OF[c]] += 1
            pts[SUIT_OF[c]] += _PTS[c]
        best, best_key = legal[0], (-1, -1)
        for a in legal:  # ascending: a tie keeps the lower suit
            s = a - CALL_BASE
            if (held[s], pts[s]) > best_key:
                best, best_key = a, (held[s], pts[s])
        return best


class _Hand:
    """A hand and the counts the value function reads (wilds apart from their suit)."""

    __slots__ = ("cards", "counters", "size", "suits", "threes")

    def __init__(self, cards: list[int]) -> None:
        self.cards = cards
        self.size = len(cards)
        suits = [0, 0, 0, 0]
        counters = threes = 0
        for c in cards:
            if not _WILD[c]:
                suits[SUIT_OF[c]] += 1
                r = RANK_OF[c]
                if r <= _THREE:
                    if r == _THREE:
                        threes += 1
                    else:
                        counters += 1
        self.suits = suits
        self.counters = counters
        self.threes = threes

    def without(self, card: int) -> list[int]:
        rest = self.cards[:]
        rest.remove(card)
        return rest


class _Table:
    """The public facts one play decision reads, gathered once."""

    __slots__ = (
        "danger",
        "direction",
        "draw_self",
        "face",
        "jack_run",
        "me",
        "n",
        "nxt",
        "prv",
        "seven_next",
        "sizes",
        "threat",
        "view",
    )

    def __init__(self, view: SeatView, threat_table: Sequence[float], draw_self: float) -> None:
        self.view = view
        rules = view.rules
        self.face = rules.face_cards
        self.seven_next = rules.seven_hits == "next"
        n = self.n = view.num_players
        me = self.me = view.seat
        d = self.direction = view.direction
        self.nxt = (me + d) % n
        self.prv = (me - d) % n
        sizes = self.sizes = view.hand_sizes
        last = len(threat_table) - 1
        threat = [threat_table[h] if h < last else threat_table[last] for h in sizes]
        threat[me] = 0.0
        self.threat = threat
        others = sizes[:]
        others[me] = 1 << 30
        self.danger = min(others)
        self.jack_run = view.jack_run
        self.draw_self = draw_self


class TacticianAgent(GreedyAgent):
    """Tactician: card functions aimed at the player about to go out; escapes kept for later.

    Every playable card gets a value, and the best one is played (ties: the
    lower card index). The weights are rules of thumb (class attributes):

    * Shedding: the points the card takes off the hand's score now (R8.2-R8.4).
      So a 3 that cancels a high card is kept (playing it would uncover that
      card; a 3 scores only 3 itself), and with ``punitive_threes`` a lonely 3,
      which would score 100, is shed.
    * Punishing cards, scaled by the threat of the player they hit (the fewer
      cards that player holds, the larger): 4 skips the next player, 5 makes
      every other player draw, 7 hits the next player (or the one after, with
      ``seven_hits="next_but_one"``), T reverses (a gain when the next player is
      more dangerous than the previous one, who becomes next), and with
      ``face_cards`` J and Q♠ (draws and a forfeit). With two players a 4, J or
      Q♠ gives a new turn and is valued like a 6.
    * The count: a 2 starts it (R5.1): worth the chance that the next player
      holds no ace or two (estimated from its hand size alone) times twice its
      threat, less a risk when the count may come back to us while we hold no
      other ace or two.
    * Escapes: an 8 or 9 is kept while another card is playable (a keep value
      against its points); less so with one card left after the play or while
      an opponent holds one card.
    * Chains: a 6 (and with ``face_cards`` a K's three-card sequence) is valued
      with the best continuation its hand allows, a draw if none; a 6 or K never
      goes out (R6.1).
    * Last card: with two cards, it keeps the one most likely to go out next
      turn (a wild best; an ace or two answers a count; never a 6 or a face K).
    * Suit: a small bonus per card it keeps in the suit it sets.

    In the count it plays a two before an ace (more points, a bigger count; the
    ace stays as cheap defence), from its longest suit (play resumes on that
    card when the count ends). It calls the suit it holds most of, weighted by
    the points of those cards (they are shed next), and always declares.
    """

    name = "tactician"
    version = 1  # bump when its play changes: stored results are keyed by it

    THREAT: tuple[float, ...] = (0.0, 55.0, 24.0, 12.0, 8.0, 6.0, 5.0, 4.0)
    """Threat of an opponent holding 0, 1, 2, … cards (the last entry for more)."""
    SKIP = 0.9  # a skipped or forfeited turn, times the threat of its player
    DRAW_OPPONENT = 0.8  # one card drawn by an opponent, times its threat
    DRAW_SELF = 24.0  # one card we draw: about its points, and one more card to shed
    REVERSE = 0.8  # times the threat of the next player minus that of the previous one
    COUNT_RISK = 12.0  # a count we start that may come back while we hold no ace or two
    COUNTER_SHARE = 0.16  # assumed share of aces and twos among the cards we cannot see
    KEEP_EIGHT = 40.0  # keeping an 8 as an escape
    KEEP_NINE = 24.0  # keeping a 9
    KEEP_SMALL = 0.5  # … times this when one card is left after the play
    KEEP_DANGER = 0.4  # … times this while an opponent holds one card
    OUT = 300.0  # going out
    LAST_WILD = 30.0  # the card left is an 8 or 9: it plays next turn whatever the suit
    LAST_BAD = 30.0  # the card left is a 6 (or a face K): no going out on it
    LAST_COUNTER = 6.0  # the card left is an ace or two: it also answers a count
    SUIT_KEEP = 2.0  # per card of the suit we set that stays in hand
    CALL_BASE_WEIGHT = 10.0  # suit call: per card held in the suit, plus its points

    # -- play -----------------------------------------------------------------

    def play(self, view: SeatView, legal: tuple[int, ...]) -> int:
        cards = [a for a in legal if a < DRAW]
        if not cards:
            return DRAW
        if len(cards) == 1:  # never a voluntary draw: playing sheds a card
            return cards[0]
        h = _Hand(view.hand)
        t = _Table(view, self.THREAT, self.DRAW_SELF)
        self._prepare(t, h)
        king_left = view.king_cards_left
        if h.threes:
            sheds = _shed_values(h.cards, cards, view.rules)
        else:
            sheds = [float(_PTS[c]) for c in cards]
        values = [
            self._value(t, h, c, shed, king_left, 3) for c, shed in zip(cards, sheds, strict=True)
        ]
        return self._choose(t, cards, values, king_left > 1)

    def _prepare(self, t: _Table, h: _Hand) -> None:
        """Hook: facts a subclass reads once per play decision."""

    def _choose(self, t: _Table, cards: list[int], values: list[float], free: bool) -> int:
        """The card of highest value (the first one on a tie)."""
        return cards[values.index(max(values))]

    def _value(self, t: _Table, h: _Hand, c: int, shed: float, king_left: int, depth: int) -> float:
        """The value of playing ``c`` from hand ``h`` (which holds it)."""
        rank = RANK_OF[c]
        left = h.size - 1
        free = king_left > 1  # first two cards of a king's sequence: no function (R9.3)
        again = free  # the same player plays again
        nk = king_left - 1 if free else 0
        if not free:
            if rank == _SIX:
                again = True
            elif rank == _KING and t.face:
                again, nk = True, 3
            elif t.n == 2 and (
                rank == _FOUR or (t.face and (rank == _JACK or c == QUEEN_OF_SPADES))
            ):
                again = True  # R4.2, R9.4: a new turn for the same player
        if not left:
            return shed - t.draw_self if again else shed + self.OUT
        v = shed
        if again:
            v += self._continuation(t, c, h.without(c), nk, depth)
        if _WILD[c]:
            v -= self._keep_wild(t, rank, left)
        elif not again:
            v += self.SUIT_KEEP * (h.suits[SUIT_OF[c]] - 1)
        if self._plans:
            v -= self._plan(h, c, rank, free, left)
        if not free and (_ACTIVE[rank] or (t.face and (rank == _JACK or c == QUEEN_OF_SPADES))):
            v += self._effect(t, h, c, rank)
        if left == 1 and not again:
            a, b = h.cards
            last = b if a == c else a
            if _WILD[last]:
                v += self.LAST_WILD
            elif RANK_OF[last] == _SIX or (RANK_OF[last] == _KING and t.face):
                v -= self.LAST_BAD
            elif _COUNTER[last]:
                v += self.LAST_COUNTER
        return v

    def _keep_wild(self, t: _Table, rank: int, left: int) -> float:
        """What keeping an 8 or 9 is worth, with ``left`` cards left after the play."""
        keep = self.KEEP_EIGHT if rank == _EIGHT else self.KEEP_NINE
        if left <= 1:
            keep *= self.KEEP_SMALL
        if t.danger <= 1:
            keep *= self.KEEP_DANGER
        return keep

    _plans = False  # whether ``_plan`` is used

    def _plan(self, h: _Hand, c: int, rank: int, free: bool, left: int) -> float:
        """Hook (with ``_plans``): what keeping a card is worth for later; none here."""
        return 0.0

    def _continuation(
        self, t: _Table, c: int, rest: list[int], king_left: int, depth: int
    ) -> float:
        """The best next play of the same turn after ``c`` from ``rest``, or a draw."""
        if depth <= 0:
            return 0.0
        rank = RANK_OF[c]
        suit = SUIT_OF[c]
        any_suit = rank == _EIGHT  # we call the suit we need (R4)
        partner = _COLOUR_PARTNER[suit] if rank == _NINE else suit
        h = _Hand(rest)
        best = -t.draw_self
        for x in rest:
            s = SUIT_OF[x]
            if any_suit or s in (suit, partner) or RANK_OF[x] == rank or _WILD[x]:
                v = self._value(t, h, x, _PTS[x], king_left, depth - 1)
                if v > best:
                    best = v
        return best

    def _effect(self, t: _Table, h: _Hand, c: int, rank: int) -> float:
        """What the card's function does to the others (R4, R5, R9)."""
        threat = t.threat
        if rank == _FOUR:
            return self.SKIP * threat[t.nxt] if t.n > 2 else 0.0
        if rank == _FIVE:
            return self.DRAW_OPPONENT * sum(threat)
        if rank == _SEVEN:
            if t.seven_next:
                return self.DRAW_OPPONENT * threat[t.nxt]
            # R4.3 next_but_one: the player after the next, at four or more players; with two
            # or three the next player draws (a 7 never hits its own player).
            victim = (t.nxt + t.direction) % t.n if t.n > 3 else t.nxt
            return self.DRAW_OPPONENT * threat[victim]
        if rank == _TEN:
            return self.REVERSE * (threat[t.nxt] - threat[t.prv]) if t.n > 2 else 0.0
        if rank == _TWO:
            return self._count_value(t, h.counters > 1)
        if t.face and t.n > 2:
            if rank == _JACK:  # R9.1: the run on the pile grows by this jack
                return threat[t.nxt] * (self.SKIP + self.DRAW_OPPONENT * 2 * (t.jack_run + 1))
            if c == QUEEN_OF_SPADES:  # R9.2
                return threat[t.nxt] * (self.SKIP + self.DRAW_OPPONENT * 5)
        return 0.0

    def _count_value(self, t: _Table, defended: bool) -> float:
        """Starting the count at the next player (R5.1); ``defended``: we keep an ace or two."""
        p_none = self._p_no_counter(t, t.nxt)
        risk = 0.0 if defended else (1.0 - p_none) * self.COUNT_RISK
        return p_none * self.DRAW_OPPONENT * 2.0 * t.threat[t.nxt] - risk

    def _p_no_counter(self, t: _Table, seat: int) -> float:
        """The chance that ``seat`` holds no ace or two: from its hand size only."""
        return float((1.0 - self.COUNTER_SHARE) ** t.sizes[seat])

    # -- the count and suit calls -----------------------------------------------

    def count(self, view: SeatView, legal: tuple[int, ...]) -> int:
        held = [0, 0, 0, 0]
        for c in view.hand:
            held[SUIT_OF[c]] += 1
        best, best_key = DRAW, (-1, -1)
        for a in legal:
            if a < DRAW:
                key = (RANK_OF[a], held[SUIT_OF[a]])  # a two first, then the longest suit
                if key > best_key:
                    best, best_key = a, key
        return best

    def call(self, view: SeatView, legal: tuple[int, ...]) -> int:
        weight = [0.0, 0.0, 0.0, 0.0]
        base = self.CALL_BASE_WEIGHT
        for c in view.hand:
            if not _WILD[c]:
                weight[SUIT_OF[c]] += base + _PTS[c]
        self._call_weights(view, weight)
        best, best_w = legal[0], -1e18
        for a in legal:
            w = weight[a - CALL_BASE]
            if w > best_w:
                best, best_w = a, w
        return best

    def _call_weights(self, view: SeatView, weight: list[float]) -> None:
        """Hook: a subclass adjusts the suit-call weights."""


_DECK_COUNTS: dict[tuple[int, bool], tuple[int, list[int], list[int]]] = {}


def _deck_counts(decks: int, remove_kq: bool) -> tuple[int, list[int], list[int]]:
    """Cards in the deck in play: in all, per suit (8s and 9s apart) and per rank (cached)."""
    key = (decks, remove_kq)
    counts = _DECK_COUNTS.get(key)
    if counts is None:
        per_suit, per_rank = [0] * 5, [0] * NUM_RANKS
        for c in range(NUM_CARDS):
            if not (remove_kq and RANK_OF[c] in (_QUEEN, _KING)):  # R2.6
                per_suit[_SUIT_OR_WILD[c]] += decks
                per_rank[RANK_OF[c]] += decks
        counts = _DECK_COUNTS[key] = (sum(per_suit), per_suit, per_rank)
    return counts


class ExpertAgent(TacticianAgent):
    """Expert: the tactician plus card counting from public memory and hand planning.

    Card counting. It counts the cards it cannot see (the deck minus its hand
    and the discard pile, as ``view.unseen_cards()``: in all, per suit, per
    rank, the unseen 8s and 9s, aces and twos) and reads the public record of
    what each player showed it lacked (``view.tracker``: a player who drew
    instead of playing held no card of the active suit and no 8 or 9; one who
    took the count held no ace or two; only the cards it drew since can have
    changed that). A player holding ``h`` unknown cards is taken to hold none of
    ``k`` unseen cards with chance ``(1 - k/unseen) ** h``, ``h`` cut to the
    draws since a known void. Used for:

    * Play: a card is worth more when the player who acts after it (the next
      one, the one after a skip, the previous one after a reverse) probably
      cannot follow it: a suit it is void in, a rank mostly seen, no wild left
      to it. It then draws; weighted by its threat. (Only for players holding
      few cards: a large hand almost surely follows.)
    * Suit calls: the suit it holds (weighted by points) plus the chance that
      the next player lacks it: a suit that player showed it is void in wins.
    * The count: starting it uses the real number of unseen aces and twos and
      whether the next player already had to take a count.

    Hand planning, on top of the tactician's values: the keep value of a wild
    grows as the hand shrinks (a wild is a sure last play) and goes while an
    opponent holds one card (then points matter); a 3 is kept toward a hand of
    only threes (-50 each, R8.3); the last ace or two is kept as defence against
    the count, and a 2 a little more (a weapon and a defence).

    Its weights were tuned by self-play against the other bots and by rollout
    values of sampled positions (measured with ``experiments/heuristics_ladder.py``).
    """

    name = "expert"
    version = 1  # bump when its play changes: stored results are keyed by it

    SKIP = 0.7
    COUNT_RISK = 30.0
    KEEP_EIGHT = 53.0
    KEEP_NINE = 45.0
    KEEP_DANGER = 0.0
    SUIT_KEEP = 1.0
    KEEP_WILD_SMALL = 20.0  # keeping a wild: plus this over the cards left after the play
    KEEP_THREE = 15.0  # a 3, over the number of other cards: toward a hand of threes
    KEEP_COUNTER = 15.0  # our last ace or two: the defence against the count
    KEEP_TWO = 5.0  # a 2 outside the count (a weapon and a defence)
    BLOCK = 0.7  # the player after our card cannot play on it: times (threat + BLOCK_BASE)
    BLOCK_BASE = 6.0
    CALL_BLOCK = 1.0  # the same for a suit call
    BLOCK_MAX_CARDS = 3  # no estimate for a player holding more cards (it follows anyway)

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self._unseen = 1
        self._seen = b""
        self._ranks_seen = b""
        self._per_rank: list[int] = []
        self._suit_unseen = [0, 0, 0, 0, 0]
        self._wild_unseen = 0
        self._counter_unseen = 0
        self._hand: list[int] = []
        self._counted = False
        self._deck_for: tuple[Any, int] | None = None
        self._deck: tuple[int, list[int], list[int]] = (0, [], [])

    def _count_unseen(self, view: SeatView, hand: list[int]) -> None:
        """Count the unseen cards (deck minus own hand minus discard pile)."""
        rules = view.rules
        n = view.num_players
        if self._deck_for != (rules, n):
            self._deck = _deck_counts(rules.decks_for(n), rules.remove_kings_queens)
            self._deck_for = (rules, n)
        total, per_suit, per_rank = self._deck
        seen = self._seen = bytes(view.discard) + bytes(hand)
        suits = seen.translate(_SUIT_OR_WILD_BYTES).count
        ranks = self._ranks_seen = seen.translate(_RANK_BYTES)
        self._per_rank = per_rank
        self._unseen = max(total - len(seen), 1)
        self._suit_unseen = [
            per_suit[0] - suits(0),
            per_suit[1] - suits(1),
            per_suit[2] - suits(2),
            per_suit[3] - suits(3),
        ]
        self._wild_unseen = per_rank[_EIGHT] + per_rank[_NINE] - suits(4)
        self._counter_unseen = per_rank[_A] + per_rank[_TWO] - ranks.count(_A) - ranks.count(_TWO)

    def _keep_wild(self, t: _Table, rank: int, left: int) -> float:
        keep = self.KEEP_EIGHT if rank == _EIGHT else self.KEEP_NINE
        keep += self.KEEP_WILD_SMALL / left
        if left <= 1:
            keep *= self.KEEP_SMALL
        if t.danger <= 1:
            keep *= self.KEEP_DANGER
        return keep

    _plans = True

    def _plan(self, h: _Hand, c: int, rank: int, free: bool, left: int) -> float:
        if rank == _THREE:
            return self.KEEP_THREE / max(h.size - h.threes, 1)
        if not _COUNTER[c]:
            return 0.0
        keep = self.KEEP_COUNTER if h.counters == 1 else 0.0
        return keep + self.KEEP_TWO if rank == _TWO and not free else keep

    def _p_none(self, k: int, h: int) -> float:
        """The chance that ``h`` unknown cards hold none of ``k`` given unseen cards."""
        if k <= 0 or h <= 0:
            return 1.0
        q = 1.0 - k / self._unseen
        return q**h if q > 0.0 else 0.0

    def _p_block(self, view: SeatView, seat: int, h: int, card: int) -> float:
        """The chance that ``seat``, holding ``h`` cards, cannot play on ``card`` (not a wild)."""
        tracker = view.tracker
        suit = SUIT_OF[card]
        void = tracker.void_draws(seat, suit)
        p = self._p_none(self._suit_unseen[suit], h if void is None or void > h else void)
        if p:
            no_wild = tracker.no_wild_draws(seat)
            p *= self._p_none(self._wild_unseen, h if no_wild is None or no_wild > h else no_wild)
            rank = RANK_OF[card]
            per_rank = self._per_rank[rank]
            # unseen cards of the rank in another suit (the card's own copies count with the suit)
            k = per_rank - self._ranks_seen.count(rank) - (per_rank >> 2) + self._seen.count(card)
            p *= self._p_none(k, h)
        return p

    def _prepare(self, t: _Table, h: _Hand) -> None:
        self._hand = h.cards
        self._counted = False  # counted when first needed

    def _counts(self, view: SeatView) -> None:
        if not self._counted:
            self._count_unseen(view, self._hand)
            self._counted = True

    def _choose(self, t: _Table, cards: list[int], values: list[float], free: bool) -> int:
        """Add the chance that the player after each card cannot follow it: only for the
        cards that chance can still make best (it is bounded by that player's threat)."""
        if free:  # a card of a king's sequence: the same player plays on
            return super()._choose(t, cards, values, free)
        best = max(values)
        out = values[:]
        for i, c in enumerate(cards):
            rank = RANK_OF[c]
            if _WILD[c] or rank in (_TWO, _SIX) or (t.face and rank == _KING):
                continue  # a wild is valued with its call; after a 2, 6 or K no one follows
            victim = t.nxt
            drawn = 0
            if rank == _FOUR or (t.face and (rank == _JACK or c == QUEEN_OF_SPADES)):
                victim = (victim + t.direction) % t.n  # the next one is skipped
            elif rank == _TEN and t.n > 2:
                victim = t.prv
            elif rank == _FIVE or (rank == _SEVEN and t.seven_next):
                drawn = 1  # the victim draws first
            h = t.sizes[victim] + drawn
            if victim == t.me or h > self.BLOCK_MAX_CARDS:
                continue  # a large hand almost surely follows
            weight = self.BLOCK * (t.threat[victim] + self.BLOCK_BASE)
            if values[i] + weight <= best:
                continue  # cannot become the best card
            self._counts(t.view)
            out[i] += weight * self._p_block(t.view, victim, h, c)
        return cards[out.index(max(out))]

    def _p_no_counter(self, t: _Table, seat: int) -> float:
        self._counts(t.view)
        seen = t.view.tracker.no_count_draws(seat)
        h = t.sizes[seat]
        return self._p_none(self._counter_unseen, h if seen is None else min(h, seen))

    def _call_weights(self, view: SeatView, weight: list[float]) -> None:
        if view.king_cards_left:
            return  # our own king's sequence goes on: call for ourselves
        nxt = (view.seat + view.direction) % view.num_players
        h = view.hand_sizes[nxt]
        if h > self.BLOCK_MAX_CARDS:
            return
        threat = self.THREAT[min(h, len(self.THREAT) - 1)] + self.BLOCK_BASE
        top = max(weight)
        if sorted(weight)[-2] + self.CALL_BLOCK * threat <= top:
            return  # the chance cannot change the call
        self._count_unseen(view, view.hand)
        tracker = view.tracker
        no_wild = tracker.no_wild_draws(nxt)
        p_wild = self._p_none(self._wild_unseen, h if no_wild is None else min(h, no_wild))
        for s in range(4):  # the top is the 8 or 9 just played: its rank is a wild
            void = tracker.void_draws(nxt, s)
            p = p_wild * self._p_none(self._suit_unseen[s], h if void is None else min(h, void))
            weight[s] += self.CALL_BLOCK * p * threat
