"""A picture of the table (``render_mode="rgb_array"``): what one seat sees, in pure numpy.

:func:`table_picture` draws the same facts as the text renderer
(:func:`craits_env.render_text.render_table`) as a ``uint8`` RGB array, from the point of view
of one seat: only that seat's cards are face up; every other seat is a face-down card
back with its card count. Text is a built-in 5×7 bitmap font drawn at 2×, suits are 7×7
bitmaps; no imaging library is used.

The picture is :data:`WIDTH` = 640 pixels wide and :func:`picture_shape` high: 360 for 2
to 6 players (one row of opponents), 448 for 7 to 10 (two rows). From top to bottom:

- a header: the hand number (``HAND 3/15 (6 CARDS)``) and the dealer, or ``GAME OVER``;
- the opponents, one panel each, in the order of play from the seat (seat + 1 first, on
  the left): name, card back with the card count, score, ``OUT`` / ``PENALTY`` (owes the
  one-card penalty, R7.1); the player to act is framed in gold;
- the centre: the stock (its size on a card back), the top card of the discard pile, the
  active suit, the count (when on), the direction of play (``→ LEFT`` is seat + 1 next,
  i.e. left to right along the opponents' row), and whose turn it is; after the game's end
  ``GAME OVER`` and the winners;
- the seat's own line (name, score, card count) and its hand face up, sorted by suit
  then rank, red suits red: one row up to 15 cards, two rows beyond, overlapping as the
  hand grows (a ``+N`` tab counts any cards that no longer fit, beyond about 90).

The same game gives the same array; it depends on nothing hidden from the seat.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .actions import PHASE_NAMES
from .cards import RANK_CHARS, RANK_OF, SUIT_OF, Suit
from .engine import Game

WIDTH = 640
"""Width of every picture, in pixels."""
OPPONENTS_PER_ROW = 5
"""Opponent panels in one row; a sixth opponent (7 players) starts a second row."""

Color = tuple[int, int, int]
Sprite = tuple[np.ndarray, np.ndarray]  # (h×w×3 uint8 colours, h×w bool mask)

FELT: Color = (22, 98, 58)
FELT_DARK: Color = (14, 70, 40)
PANEL: Color = (30, 120, 72)
INK: Color = (242, 242, 232)  # text on the felt
DIM: Color = (170, 210, 180)  # labels on the felt
GOLD: Color = (255, 204, 40)  # whose turn, the count, game over
PAPER: Color = (250, 250, 244)
EDGE: Color = (70, 70, 70)
BLACK: Color = (25, 25, 25)
RED: Color = (210, 20, 30)
BACK: Color = (36, 64, 165)
BACK_LINE: Color = (80, 115, 215)
BACK_PLATE: Color = (16, 30, 90)

SCALE = 2  # text and corner-suit magnification
_ADVANCE = 6  # glyph width 5 + 1 column of spacing, in font pixels

# 5×7 glyphs: seven rows of five bits each, two hex digits a row, leftmost pixel 0x10.
# → ← are the direction of play.
_FONT_HEX = {
    "0": "0E11131519110E", "1": "040C040404040E", "2": "0E11010204081F",
    "3": "1F02040201110E", "4": "02060A121F0202", "5": "1F101E0101110E",
    "6": "0608101E11110E", "7": "1F010204080808", "8": "0E11110E11110E",
    "9": "0E11110F01020C", "A": "0E1111111F1111", "B": "1E11111E11111E",
    "C": "0E11101010110E", "D": "1C12111111121C", "E": "1F10101E10101F",
    "F": "1F10101E101010", "G": "0E11101711110F", "H": "1111111F111111",
    "I": "0E04040404040E", "J": "0702020202120C", "K": "11121418141211",
    "L": "1010101010101F", "M": "111B1515111111", "N": "11111915131111",
    "O": "0E11111111110E", "P": "1E11111E101010", "Q": "0E11111115120D",
    "R": "1E11111E141211", "S": "0F10100E01011E", "T": "1F040404040404",
    "U": "1111111111110E", "V": "11111111110A04", "W": "1111111515150A",
    "X": "11110A040A1111", "Y": "1111110A040404", "Z": "1F01020408101F",
    " ": "00000000000000", "/": "00010204081000", "-": "0000001F000000",
    "+": "0004041F040400", ":": "000C0C000C0C00", ".": "00000000000C0C",
    ",": "000000000C0408", "(": "02040808080402", ")": "08040202020408",
    "!": "04040404040004", "?": "0E110102040004", "_": "0000000000001F",
    "→": "0004021F020400", "←": "0004081F080400",
}  # fmt: skip

# 7×7 suit bitmaps in the order c d h s: seven rows of seven bits, leftmost pixel 0x40.
_SUIT_HEX = (
    "1C1C6B7F6B081C",  # club
    "081C3E7F3E1C08",  # diamond
    "367F7F7F3E1C08",  # heart
    "081C3E7F7F2A1C",  # spade
)
_RED_SUITS = (Suit.DIAMONDS, Suit.HEARTS)


def _bits(hexrows: str, width: int) -> np.ndarray:
    rows = [int(hexrows[i : i + 2], 16) for i in range(0, len(hexrows), 2)]
    return np.array([[(r >> (width - 1 - c)) & 1 for c in range(width)] for r in rows], bool)


_GLYPHS = {ch: _bits(h, 5) for ch, h in _FONT_HEX.items()}
_SUITS = tuple(_bits(h, 7) for h in _SUIT_HEX)
_TEN = _bits("26692929292976", 7)  # the rank ten as "10" in one 7×7 cell
_RANKS = tuple(_TEN if ch == "T" else _GLYPHS[ch] for ch in RANK_CHARS)


def picture_shape(num_players: int) -> tuple[int, int, int]:
    """``(height, width, 3)`` of :func:`table_picture` for ``num_players`` (2 to 10)."""
    return _layout(num_players)["height"], WIDTH, 3


# ------------------------------------------------------------------ bitmaps


def _frozen(a: np.ndarray) -> np.ndarray:
    """``a`` made read-only: the cached bitmaps are shared between pictures."""
    a.flags.writeable = False
    return a


def _zoom(mask: np.ndarray, scale: int) -> np.ndarray:
    return mask.repeat(scale, 0).repeat(scale, 1) if scale > 1 else mask


@lru_cache(maxsize=4096)
def text_mask(text: str, scale: int = SCALE) -> np.ndarray:
    """The pixels of ``text`` in the built-in font: a bool array ``7 * scale`` high.

    Upper-cased first; a character the font lacks is drawn as ``?``."""
    text = text.upper()
    out = np.zeros((7, max(len(text) * _ADVANCE - 1, 1)), bool)
    for i, ch in enumerate(text):
        out[:, i * _ADVANCE : i * _ADVANCE + 5] = _GLYPHS.get(ch, _GLYPHS["?"])
    return _frozen(_zoom(out, scale))


def text_width(text: str, scale: int = SCALE) -> int:
    """Width in pixels of ``text`` drawn at ``scale``."""
    return max(len(text) * _ADVANCE - 1, 1) * scale


@lru_cache(maxsize=64)
def _rounded(w: int, h: int, r: int) -> np.ndarray:
    yy, xx = np.mgrid[0:h, 0:w]
    cx = np.clip(xx, r, w - 1 - r)
    cy = np.clip(yy, r, h - 1 - r)
    return _frozen((xx - cx) ** 2 + (yy - cy) ** 2 <= r * r + r)


def _paint(canvas: np.ndarray, x: int, y: int, mask: np.ndarray, color: Color | np.ndarray) -> None:
    """Set the pixels of ``mask`` (placed at ``x, y``, clipped) to ``color`` or a colour image."""
    h, w = mask.shape
    y0, y1 = max(y, 0), min(y + h, canvas.shape[0])
    x0, x1 = max(x, 0), min(x + w, canvas.shape[1])
    if y0 >= y1 or x0 >= x1:
        return
    m = mask[y0 - y : y1 - y, x0 - x : x1 - x]
    region = canvas[y0:y1, x0:x1]
    if isinstance(color, np.ndarray):
        region[m] = color[y0 - y : y1 - y, x0 - x : x1 - x][m]
    else:
        region[m] = color


def _sprite(canvas: np.ndarray, x: int, y: int, sprite: Sprite) -> None:
    _paint(canvas, x, y, sprite[1], sprite[0])


def _text(canvas: np.ndarray, x: int, y: int, text: str, color: Color, scale: int = SCALE) -> int:
    """Draw ``text`` with its top-left corner at ``x, y``; the x just after it."""
    _paint(canvas, x, y, text_mask(text, scale), color)
    return x + text_width(text, scale) + _ADVANCE * scale


def _fit(text: str, width: int, scale: int = SCALE) -> str:
    """``text`` cut to fit ``width`` pixels (the last kept character a ``.`` if cut)."""
    most = (width // scale + 1) // _ADVANCE
    return text if len(text) <= most else text[: max(most - 1, 0)] + "."


def _frame(canvas: np.ndarray, x: int, y: int, w: int, h: int, color: Color, t: int) -> None:
    canvas[y : y + t, x : x + w] = color
    canvas[y + h - t : y + h, x : x + w] = color
    canvas[y : y + h, x : x + t] = color
    canvas[y : y + h, x + w - t : x + w] = color


# ------------------------------------------------------------------ cards


@lru_cache(maxsize=512)
def _card_face(card: int, w: int, h: int, rank_scale: int, big_scale: int) -> Sprite:
    """A face-up card: rank and suit in the top-left corner, a large suit bottom right."""
    mask = _rounded(w, h, 4)
    rgb = np.empty((h, w, 3), np.uint8)
    rgb[:] = EDGE
    _paint(rgb, 1, 1, _rounded(w - 2, h - 2, 3), PAPER)
    suit = SUIT_OF[card]
    ink = RED if suit in _RED_SUITS else BLACK
    m = 2 + rank_scale
    rank = _zoom(_RANKS[RANK_OF[card]], rank_scale)
    corner = _zoom(_SUITS[suit], SCALE)
    _paint(rgb, m, m, rank, ink)
    _paint(rgb, m + (rank.shape[1] - corner.shape[1]) // 2, m + rank.shape[0] + 3, corner, ink)
    big = _zoom(_SUITS[suit], big_scale)
    _paint(rgb, w - big.shape[1] - m, h - big.shape[0] - m, big, ink)
    return _frozen(rgb), mask


@lru_cache(maxsize=16)
def _card_back(w: int, h: int) -> Sprite:
    """A face-down card: white edge, blue lattice."""
    yy, xx = np.mgrid[0:h, 0:w]
    rgb = np.empty((h, w, 3), np.uint8)
    rgb[:] = PAPER
    inner = np.zeros((h, w), bool)
    inner[3 : h - 3, 3 : w - 3] = True
    rgb[inner] = BACK
    rgb[inner & (((xx + yy) % 6 == 0) | ((xx - yy) % 6 == 0))] = BACK_LINE
    return _frozen(rgb), _rounded(w, h, 4)


def _plate(canvas: np.ndarray, x: int, y: int, w: int, h: int, label: str) -> None:
    """``label`` (a card count) on a dark plate in the middle of the card back at ``x, y``."""
    tw = text_width(label)
    canvas[y + h // 2 - 10 : y + h // 2 + 10, x + (w - tw) // 2 - 3 : x + (w + tw) // 2 + 3] = (
        BACK_PLATE
    )
    _text(canvas, x + (w - tw) // 2, y + h // 2 - 7, label, INK)


def _suit_chip(canvas: np.ndarray, x: int, y: int, suit: int, scale: int = SCALE) -> None:
    """A suit symbol on a white rounded square (``7 * scale + 8`` pixels)."""
    side = 7 * scale + 8
    _paint(canvas, x, y, _rounded(side, side, 4), PAPER)
    _paint(canvas, x + 4, y + 4, _zoom(_SUITS[suit], scale), RED if suit in _RED_SUITS else BLACK)


# ------------------------------------------------------------------ layout

HEADER_H = 24
PANEL_W, PANEL_H, PANEL_GAP = 120, 84, 4
CENTER_H = 96
HAND_CARD = (42, 60)
HAND_ROW_PITCH = 62
TOP_CARD = (56, 80)
STOCK_CARD = (40, 56)
OPPONENT_CARD = (38, 53)
INFO_X = 176  # left edge of the suit / direction / turn lines
BIG_HAND = 10  # up to this many cards, the hand is drawn as large as the top card
MAX_CARDS_PER_ROW = 15  # before a second row
MIN_PITCH = 13  # narrowest visible slice of an overlapped card


@lru_cache(maxsize=16)
def _layout(num_players: int) -> dict[str, int]:
    """The top of the centre and of the seat's own area, and the picture's height."""
    if not 2 <= num_players <= 10:
        raise ValueError(f"num_players: got {num_players!r}, allowed an int from 2 to 10")
    rows = -(-(num_players - 1) // OPPONENTS_PER_ROW)
    center = HEADER_H + 4 + rows * (PANEL_H + PANEL_GAP)
    own = center + CENTER_H
    return {"center": center, "own": own, "height": own + 22 + HAND_ROW_PITCH + HAND_CARD[1] + 4}


def table_picture(game: Game, seat: int, names: list[str] | None = None) -> np.ndarray:
    """The table as seen by ``seat``: a ``uint8`` RGB array of :func:`picture_shape`.

    Shows the top card of the discard pile, the active suit, the count (when on), the
    direction of play, whose turn it is (a gold frame), the seat's hand face up and, per
    opponent, a card back with its card count and its score; the hand number and the
    dealer in the header. After the game's end: its last hand (``HAND 15/15``),
    ``GAME OVER`` and the winners. ``names`` (one per seat, default ``player_<seat>``)
    are drawn upper-case and cut to fit. Deterministic, and blind to every card the seat
    cannot see.
    """
    n = game.num_players
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n:
        raise ValueError(f"seat: got {seat!r}, allowed a seat from 0 to {n - 1}")
    seat = int(seat)
    if names is None:
        names = [f"player_{s}" for s in range(n)]
    elif len(names) != n:
        raise ValueError(f"names: got {len(names)} names, expected one per seat ({n})")
    lay = _layout(n)
    canvas = _background(n).copy()
    turn = -1 if game.is_over else game.current_player
    _header(canvas, game, names)
    for i, (x, y) in enumerate(_panels(n)):
        s = (seat + 1 + i) % n
        _opponent(canvas, x, y, game, s, names[s], s == turn)
    _center(canvas, lay["center"], game, names, seat)
    _own(canvas, lay["own"], game, seat, names[seat], seat == turn)
    return canvas


@lru_cache(maxsize=16)
def _panels(num_players: int) -> tuple[tuple[int, int], ...]:
    """The top-left corners of the opponents' panels, in the order of play from the seat."""
    out = []
    for i in range(num_players - 1):
        row, col = divmod(i, OPPONENTS_PER_ROW)
        in_row = min(num_players - 1 - row * OPPONENTS_PER_ROW, OPPONENTS_PER_ROW)
        left = (WIDTH - in_row * (PANEL_W + PANEL_GAP) + PANEL_GAP) // 2
        out.append((left + col * (PANEL_W + PANEL_GAP), HEADER_H + 4 + row * (PANEL_H + PANEL_GAP)))
    return tuple(out)


@lru_cache(maxsize=16)
def _background(num_players: int) -> np.ndarray:
    """Everything that does not depend on the game: felt, panels, card backs, labels."""
    lay = _layout(num_players)
    canvas = np.empty((lay["height"], WIDTH, 3), np.uint8)
    canvas[:] = FELT
    canvas[:HEADER_H] = FELT_DARK
    for x, y in _panels(num_players):
        _paint(canvas, x, y, _rounded(PANEL_W, PANEL_H, 6), PANEL)
        _sprite(canvas, x + 7, y + 25, _card_back(*OPPONENT_CARD))
        _text(canvas, x + 52, y + 27, "SCORE", DIM, 1)
    y0 = lay["center"]
    sw, sh = STOCK_CARD
    _sprite(canvas, 34, y0 + 12, _card_back(sw, sh))  # a pile: one card under the other
    _sprite(canvas, 30, y0 + 8, _card_back(sw, sh))
    _text(canvas, 30 + (sw - text_width("STOCK", 1)) // 2, y0 + 8 + sh + 10, "STOCK", DIM, 1)
    _text(canvas, INFO_X, y0 + 12, "SUIT", DIM)
    _text(canvas, INFO_X, y0 + 40, "DIRECTION", DIM)
    own = lay["own"]
    _paint(canvas, 4, own, _rounded(WIDTH - 8, lay["height"] - own - 2, 6), PANEL)
    return _frozen(canvas)


def _header(canvas: np.ndarray, game: Game, names: list[str]) -> None:
    hands = len(game.rules.hand_sizes)
    shown = min(game.hand_index + 1, hands)  # the index is one past the last hand at the end
    size = game.hand_size
    _text(canvas, 8, 5, f"HAND {shown}/{hands} ({size} CARD{'S' if size != 1 else ''})", INK)
    if game.is_over:
        right, color = "GAME OVER", GOLD
    else:
        right, color = "DEALER " + _fit(names[game.dealer], 12 * 12), INK
    _text(canvas, WIDTH - 8 - text_width(right), 5, right, color)


def _opponent(
    canvas: np.ndarray, x: int, y: int, game: Game, s: int, name: str, to_act: bool
) -> None:
    if to_act:
        _frame(canvas, x, y, PANEL_W, PANEL_H, GOLD, 3)
    _text(canvas, x + 7, y + 6, _fit(name, PANEL_W - 14), GOLD if to_act else INK)
    _plate(canvas, x + 7, y + 25, *OPPONENT_CARD, str(len(game.hands[s])))
    col = x + 52
    score, room = str(game.scores[s]), PANEL_W - 56
    if text_width(score) <= room:
        _text(canvas, col, y + 37, score, INK)
    else:  # small, and cut if it still does not fit
        _text(canvas, col, y + 40, _fit(score, room, 1), INK, 1)
    status = []
    if s in game.went_out:
        status.append("OUT")
    if game.one_card_penalty_pending[s]:
        status.append("PENALTY")
    for i, word in enumerate(status):
        _text(canvas, col, y + 58 + 9 * i, word, GOLD, 1)


def _center(canvas: np.ndarray, y0: int, game: Game, names: list[str], seat: int) -> None:
    _plate(canvas, 30, y0 + 8, *STOCK_CARD, str(game.stock_size))
    _sprite(canvas, 96, y0 + 8, _card_face(game.top, *TOP_CARD, 3, 4))
    x = INFO_X
    chip = x + text_width("SUIT") + 8
    _suit_chip(canvas, chip, y0 + 4, game.active_suit, 3)
    if game.count:
        _text(canvas, chip + 7 * 3 + 8 + 20, y0 + 12, f"COUNT {game.count}", GOLD)
    arrow = "→ LEFT" if game.direction == 1 else "← RIGHT"
    _text(canvas, x + text_width("DIRECTION") + 12, y0 + 40, arrow, INK)
    if game.is_over:
        winners = [names[s] for s in game.winners()]
        label = "GAME OVER - WINNER " if len(winners) == 1 else "GAME OVER - WINNERS "
        _text(canvas, x, y0 + 66, _fit(label + ", ".join(winners), WIDTH - 8 - x), GOLD)
        return
    p = game.current_player
    who = "YOU" if p == seat else names[p]
    phase = PHASE_NAMES[game.phase].replace("_", " ")
    _text(canvas, x, y0 + 66, _fit(f"{who} TO {phase}", WIDTH - 8 - x), GOLD)


def _own(canvas: np.ndarray, y0: int, game: Game, seat: int, name: str, to_act: bool) -> None:
    if to_act:
        _frame(canvas, 4, y0, WIDTH - 8, canvas.shape[0] - y0 - 2, GOLD, 3)
    hand = sorted(game.hands[seat])
    k = len(hand)
    parts = [_fit(name, 12 * 12), f"SCORE {game.scores[seat]}", f"{k} CARD{'S' if k != 1 else ''}"]
    if seat in game.went_out:
        parts.append("OUT")
    if game.one_card_penalty_pending[seat]:
        parts.append("OWES PENALTY")
    x = _text(canvas, 12, y0 + 5, "YOU", GOLD if to_act else DIM)
    _text(canvas, x, y0 + 5, "  ".join(parts), INK)
    if not k:
        return
    big = k <= BIG_HAND
    cw, ch = TOP_CARD if big else HAND_CARD
    room = WIDTH - 24 - cw  # from the first card's left edge to the last one's
    rows = 1 if k <= MAX_CARDS_PER_ROW else 2
    capacity = rows * (room // MIN_PITCH + 1)
    slots = min(k, capacity)  # when the hand overflows, the last slot is a "+N" card back
    per_row = -(-slots // rows)
    area = canvas.shape[0] - 4 - (y0 + 22)
    top = y0 + 22 + (area - ch - (rows - 1) * HAND_ROW_PITCH) // 2
    for i in range(slots):
        row, col = divmod(i, per_row)
        in_row = min(per_row, slots - row * per_row)
        pitch = min(cw + 4, room // max(in_row - 1, 1))
        x = (WIDTH - (in_row - 1) * pitch - cw) // 2 + col * pitch
        y = top + row * HAND_ROW_PITCH
        if k > capacity and i == slots - 1:
            _sprite(canvas, x, y, _card_back(cw, ch))
            _plate(canvas, x, y, cw, ch, f"+{k - slots + 1}")
        elif big:
            _sprite(canvas, x, y, _card_face(hand[i], cw, ch, 3, 4))
        else:
            _sprite(canvas, x, y, _card_face(hand[i], cw, ch, SCALE, 3))
