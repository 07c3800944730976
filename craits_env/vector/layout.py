"""The flat state of B games: two arrays, named offsets, the rule parameters.

Game ``b`` of a :class:`~craits_env.vector.game.VectorGame` is row ``b`` of two arrays:

- ``st`` (int64): the scalars (``I_*``), per-seat fields (``S_*`` + seat), the cards held
  as two 52-bit masks per seat (:data:`HELD1`: at least one copy, :data:`HELD2`: two
  copies; cards are indices 0–51, R1.3), the discard pile's copies the same way
  (:data:`SEEN1`, :data:`SEEN2`), the R7.3 declarers, the generator (:data:`RNG`), scratch
  space, and the finished hands' points (:data:`POINTS`, ``(hand * n + seat) * 3``);
- ``cd`` (uint8): the stock (next card last, as engine.py's ``_stock``), the discard pile
  (bottom first), this hand's deal, and this hand's reshuffles (each ``[length, cards…]``).

Two plain arrays, not one per field, because every call between compiled functions pays
for each array it passes (reference counts and copies of array structs): this keeps the
hot path cheap.

Scores are exact without big integers: a seat's score is ``points + 5 * (2**k - 1)`` where
``points`` (:data:`S_POINTS`) is the sum of its card points and ``k`` (:data:`S_PRESSURES`)
its shuffle pressures, because its k-th pressure costs ``5 * 2**(k-1)`` (R10.1). A
finished hand's points are stored the same way: ``card points + 5 * (2**k1 - 2**k0)``.

The rules become one int64 vector (:func:`rule_params`, indices ``P_*``) and the hand
schedule an int64 array, so one compiled kernel serves every configuration.
"""

from __future__ import annotations

import numpy as np

from ..cards import NUM_CARDS
from ..deck import deck_cards
from ..rewards import REWARD_MODES
from ..rules import MAX_PLAYERS, ONE_CARD, Rules

MAX_DECK = 2 * NUM_CARDS  # two decks (R1.5)

# st[b, I_*]: the scalars of game b.
(
    I_HAND_INDEX,  # hands finished so far (R2.2); len(hand_sizes) once the game is over
    I_DEALER,
    I_FIRST_DEALER,
    I_DIRECTION,  # +1 left, -1 right (R1.4)
    I_CURRENT,  # the seat to decide; -1 once the game is over
    I_PHASE,  # a Phase value
    I_ACTIVE_SUIT,  # R3.2
    I_COUNT,  # R5; 0 when off
    I_JACK_RUN,  # R9.1
    I_KING_LEFT,  # R9.3
    I_EXTRA_PLAY,  # 1 when the play continues a turn (a 6, a king's sequence, a starter)
    I_HAND_DECISIONS,  # R12
    I_PEND_CARD,  # the card waiting for its suit call / declaration
    I_PEND_CTX,  # how it acts: the Python engine's CTX_* (craits_env.game_state)
    I_TOP,  # the top card of the discard pile
    I_NUM_OUT,  # length of the went_out list (S_OUT_ORDER)
    I_STOCK_LEN,
    I_DISCARD_LEN,
    I_NUM_DECLARERS,  # R7.3 declarations right after the deal still to come (a stack)
    I_NUM_RESHUFFLES,  # reshuffles of this hand
    I_RLOG_LEN,  # bytes used of the reshuffle log
    I_DIRTY,  # bit s: row s of the scaled-score cache is stale
    I_STEP_HAND,  # hand index when the current step began (its rewards: the hands it ended)
    I_FIX,  # 1: this step's rewards need exact integers beyond int64 (Python); 2, 3: errors
    I_EPISODE,  # games started in this row
) = range(25)
NUM_INTS = 25

# st[b, I_DIRTY]: every row of the scaled-score cache is stale.
DIRTY_ALL = -1
# st[b, I_FIX]: 1 = the step's rewards are left to Python; 2, 3: errors, never seen in play.
FIX_REWARDS = 1
ERROR_RLOG_FULL = 2  # the reshuffle log outgrew its bound (a loaded state beyond it)
ERROR_NO_DECISION = 3  # MAX_EMPTY_GAMES new games in a row ended before any decision
MAX_EMPTY_GAMES = 1000

# st[b, S_* + seat]: per seat (MAX_PLAYERS slots each).
_SEAT_FIELDS = (
    "S_POINTS",  # card points of the finished hands (the score less its pressure costs)
    "S_PRESSURES",  # shuffle pressures of the game (R10.1)
    "S_PRESSURES_AT_DEAL",  # shuffle pressures when this hand was dealt
    "S_DRAWN",  # cards drawn in this hand (public)
    "S_PENDING",  # owes the one-card penalty (R7.1)
    "S_HAND_LEN",  # cards held
    "S_OUT",  # 1 if in went_out
    "S_OUT_ORDER",  # went_out[k] for k < I_NUM_OUT, in the order they went out
)
(
    S_POINTS,
    S_PRESSURES,
    S_PRESSURES_AT_DEAL,
    S_DRAWN,
    S_PENDING,
    S_HAND_LEN,
    S_OUT,
    S_OUT_ORDER,
) = (NUM_INTS + k * MAX_PLAYERS for k in range(len(_SEAT_FIELDS)))
HELD1 = NUM_INTS + len(_SEAT_FIELDS) * MAX_PLAYERS  # + seat: bit c = holds card c
HELD2 = HELD1 + MAX_PLAYERS  # + seat: bit c = holds two copies of card c
SEEN1 = HELD2 + MAX_PLAYERS  # bit c = card c in the discard pile
SEEN2 = SEEN1 + 1  # bit c = both copies of card c in the discard pile
DECLARERS = SEEN2 + 1  # + j: engine.py's _deal_declarers (a stack, top last)
RNG = DECLARERS + MAX_PLAYERS  # + RNG_*: numpy's PCG64 state (bit patterns)
RNG_WORDS = 6
SCRATCH = RNG + RNG_WORDS  # MAX_DECK + MAX_PLAYERS + 52 words: the first dealer's draw, card counts
POINTS = SCRATCH + MAX_DECK + MAX_PLAYERS + NUM_CARDS  # + (hand * n + seat) * 3 + HP_*

# st[b, RNG + X]: numpy's PCG64 state (craits_env.vector.rng).
RNG_STATE_HI, RNG_STATE_LO, RNG_INC_HI, RNG_INC_LO, RNG_HAS_UINT32, RNG_UINTEGER = range(6)
# A finished hand's points = HP_CARDS + 5 * (2**HP_K1 - 2**HP_K0).
HP_CARDS, HP_K0, HP_K1 = range(3)

# cd[b, X + i]: card sequences.
STOCK = 0  # the stock, next card last
DISCARD = MAX_DECK  # the discard pile, bottom first
DEAL = 2 * MAX_DECK  # this hand's deck order (snapshot "deal")
RLOG = 3 * MAX_DECK  # this hand's reshuffles, each [length, cards...]

# The rule parameters: p[P_*] (int64), each set by rule_params. A new one goes at the end, with
# NUM_PARAMS one more (Python refuses the unpacking otherwise; tests/repository/
# test_extension_points.py checks that each is set and that every Rules option reaches one).
NUM_PARAMS = 19
(
    P_PLAYERS,
    P_DECK_SIZE,
    P_HANDS,  # len(hand_sizes)
    P_VOLUNTARY_DRAW,
    P_SEVEN_FAR,  # seven_hits == "next_but_one"
    P_COUNT_OUT_CAN_RETURN,
    P_ONE_CARD,  # index in rules.ONE_CARD: declare, auto, off
    P_FORFEIT,  # idiot_penalty == "forfeit"
    P_ONE_CARD_ON_DEAL,
    P_GOING_OUT_BONUS,
    P_THREES_CANCEL_EIGHTS,
    P_THREE_POINTS,
    P_PUNITIVE_THREES,
    P_FACE_CARDS,
    P_DECISION_LIMIT,
    P_DEALER_FOLLOWS_DIRECTION,
    P_REWARD_MODE,  # index in rewards.REWARD_MODES
    P_AUTO_RESET,
    P_RLOG_CAPACITY,
) = range(NUM_PARAMS)
ONE_CARD_DECLARE = ONE_CARD.index("declare")
REWARD_RELATIVE, REWARD_BOUNDED, REWARD_SCORE, REWARD_WIN = (
    REWARD_MODES.index(m) for m in ("relative", "bounded", "score", "win")
)

# Limits of the exact int64 representation (checked by unsupported_options, tested).
MAX_THREE_POINTS = 1_000_000  # |three_points|: card points stay far below 2**53
MAX_HANDS = 10_000  # len(hand_sizes)
MAX_STATE_BYTES = 8 << 30  # all arrays of one VectorGame


def rlog_capacity(rules: Rules) -> int:
    """Bytes that one hand's reshuffles can take: every reshuffled card was played (a decision)
    or was the starter, each reshuffle holds at least one card and costs one length byte."""
    return 2 * rules.hand_decision_limit + 4


def row_widths(num_players: int, rules: Rules) -> tuple[int, int]:
    """The widths of a game's ``st`` and ``cd`` rows."""
    return POINTS + 3 * len(rules.hand_sizes) * num_players, RLOG + rlog_capacity(rules)


def state_bytes(num_envs: int, num_players: int, rules: Rules) -> int:
    """The bytes of :func:`allocate`'s arrays (the scaled-score cache included)."""
    st, cd = row_widths(num_players, rules)
    return num_envs * (8 * st + cd + 8 * num_players * num_players)


def deck_size(num_players: int, rules: Rules) -> int:
    return len(deck_cards(rules.decks_for(num_players), rules.remove_kings_queens))


def allocate(num_envs: int, num_players: int, rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """Zeroed ``st`` and ``cd`` (untouched pages of the reshuffle log cost no memory)."""
    st, cd = row_widths(num_players, rules)
    return np.zeros((num_envs, st), np.int64), np.zeros((num_envs, cd), np.uint8)


def unsupported_options(rules: Rules) -> list[str]:
    """The options (with their values) that VectorGame cannot represent exactly; [] if none."""
    bad = []
    if abs(rules.three_points) > MAX_THREE_POINTS:
        bad.append(
            f"three_points={rules.three_points} (VectorGame allows |three_points| <= "
            f"{MAX_THREE_POINTS:,}: scores are exact int64 card points plus pressure counts)"
        )
    if len(rules.hand_sizes) > MAX_HANDS:
        bad.append(
            f"hand_sizes of {len(rules.hand_sizes)} hands (VectorGame allows at most {MAX_HANDS:,})"
        )
    return bad


def rule_params(num_players: int, rules: Rules, reward: str, auto_reset: bool) -> np.ndarray:
    """The rules (and the reward mode) as the int64 vector the kernels read (``P_*``)."""
    p = np.zeros(NUM_PARAMS, np.int64)
    p[P_PLAYERS] = num_players
    p[P_DECK_SIZE] = deck_size(num_players, rules)
    p[P_HANDS] = len(rules.hand_sizes)
    p[P_VOLUNTARY_DRAW] = rules.voluntary_draw
    p[P_SEVEN_FAR] = rules.seven_hits == "next_but_one"
    p[P_COUNT_OUT_CAN_RETURN] = rules.count_out_can_return
    p[P_ONE_CARD] = ONE_CARD.index(rules.one_card)
    p[P_FORFEIT] = rules.idiot_penalty == "forfeit"
    p[P_ONE_CARD_ON_DEAL] = rules.one_card_on_deal
    p[P_GOING_OUT_BONUS] = rules.going_out_bonus
    p[P_THREES_CANCEL_EIGHTS] = rules.threes_cancel_eights
    p[P_THREE_POINTS] = rules.three_points
    p[P_PUNITIVE_THREES] = rules.punitive_threes
    p[P_FACE_CARDS] = rules.face_cards
    p[P_DECISION_LIMIT] = rules.hand_decision_limit
    p[P_DEALER_FOLLOWS_DIRECTION] = rules.dealer_follows_direction
    p[P_REWARD_MODE] = REWARD_MODES.index(reward)
    p[P_AUTO_RESET] = auto_reset
    p[P_RLOG_CAPACITY] = rlog_capacity(rules)
    return p
