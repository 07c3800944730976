"""The rule options of docs/rules.md as one frozen, validated dataclass.

Field names are the option names of docs/rules.md; defaults are its defaults. Each
field's annotation says what it takes; every value — in Python, from a TOML or JSON
table, from the command line — is checked by the one typed parser of
:mod:`craits_env.options`. An invalid value raises ``ValueError`` naming the field and
what is allowed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal, get_args

from . import options

STANDARD_HAND_SIZES: tuple[int, ...] = (8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8)  # R2.2
SHORT_HAND_SIZES: tuple[int, ...] = STANDARD_HAND_SIZES[:8]  # R2.2 short game: 8 … 1

SevenHits = Literal["next", "next_but_one"]  # R4.3
OneCard = Literal["declare", "auto", "off"]  # R7.1
IdiotPenalty = Literal["forfeit", "draw_one"]  # R7.2
SEVEN_HITS: tuple[str, ...] = get_args(SevenHits)
ONE_CARD: tuple[str, ...] = get_args(OneCard)
IDIOT_PENALTY: tuple[str, ...] = get_args(IdiotPenalty)
NUM_DECKS = (None, 1, 2)  # R1.5
MIN_PLAYERS, MAX_PLAYERS = 2, 10  # R1.5

# The engine's reading of the rules: bumped whenever a rule's implementation changes, so that
# games stored under an older reading are never mixed with new ones (tournament stores keep it).
# 2: R4.3 next_but_one at 2-3 players, R6.2 count_out_can_return corners, R9.1 jack runs.
RULES_REVISION = 2


@dataclass(frozen=True, kw_only=True)
class Rules:
    """Every option of docs/rules.md (rule ids in brackets). Immutable and hashable."""

    num_decks: Literal[1, 2] | None = None
    """[R1.5] decks in play: None = one deck up to 5 players, two above; or 1 or 2."""
    hand_sizes: tuple[int, ...] = STANDARD_HAND_SIZES
    """[R2.2] cards dealt to each player in each hand of the game, in order."""
    dealer_follows_direction: bool = False
    """[R2.4] if play ended to the right (-1), the deal passes right and the next hand runs right.
    """
    remove_kings_queens: bool = False
    """[R2.6] take every king and queen out of the deck."""
    voluntary_draw: bool = False
    """[R3.3] a player may draw (or take the count) instead of playing, at every play decision."""
    seven_hits: SevenHits = "next"
    """[R4.3] who draws for a 7: "next" or "next_but_one"."""
    count_out_can_return: bool = False
    """[R6.2] players who went out stay in the count's rotation and may have to take it."""
    one_card: OneCard = "declare"
    """[R7.1] the one-card declaration: "declare" (a decision), "auto" or "off"."""
    idiot_penalty: IdiotPenalty = "forfeit"
    """[R7.2] silence costs: "forfeit" (two cards instead of the next turn) or "draw_one" (now)."""
    one_card_on_deal: bool = False
    """[R7.3] in a hand dealt one card each, every player declares right after the deal."""
    going_out_bonus: bool = False
    """[R8.1] the player who goes out scores -10 instead of 0."""
    threes_cancel_eights: bool = False
    """[R8.4] a 3 may cancel an 8."""
    three_points: int = 3
    """[R8.4] what each 3 scores in a hand that holds other cards."""
    punitive_threes: bool = False
    """[R8.4] threes cancel neither aces nor threes; a 3 with nothing to cancel scores 100."""
    face_cards: bool = False
    """[R9] jacks, the queen of spades and kings carry functions."""
    hand_decision_limit: int = 5000
    """[R12] a hand ends, scored like R10.2 without a penalty, after this many decisions."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            try:
                value = options.coerce(Rules, f.name, getattr(self, f.name))
            except ValueError as e:
                raise ValueError(f"Rules.{f.name}: {e}") from None
            object.__setattr__(self, f.name, value)  # e.g. a list of hand sizes: a tuple
        if not self.hand_sizes or min(self.hand_sizes) < 1:
            raise ValueError(
                f"Rules.hand_sizes: got {self.hand_sizes!r}, allowed a non-empty tuple of ints >= 1"
            )
        if self.hand_decision_limit < 1:
            raise ValueError(
                f"Rules.hand_decision_limit: got {self.hand_decision_limit!r}, allowed an int >= 1"
            )

    @classmethod
    def short_game(cls, **overrides: Any) -> Rules:
        """The rules with the eight-hand schedule ``8 … 1`` (R2.2)."""
        return cls(hand_sizes=SHORT_HAND_SIZES, **overrides)

    def decks_for(self, num_players: int) -> int:
        """How many decks a game of ``num_players`` uses (R1.5)."""
        if self.num_decks is not None:
            return self.num_decks
        return 1 if num_players <= 5 else 2

    def replace(self, **changes: Any) -> Rules:
        """A copy with ``changes`` applied (and validated)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The options as a JSON-serialisable dict (``hand_sizes`` as a list)."""
        d = dataclasses.asdict(self)
        d["hand_sizes"] = list(self.hand_sizes)
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        """Rules from :meth:`to_dict`'s output; unknown keys raise ``ValueError``."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown rule option(s) {unknown}; allowed {sorted(names)}")
        return cls(**data)  # every value checked and converted (lists to tuples) by options


def check_num_players(num_players: object) -> int:
    """``num_players`` if it is an int from 2 to 10 (R1.5); else ``ValueError``."""
    if not options.is_int(num_players) or not MIN_PLAYERS <= num_players <= MAX_PLAYERS:  # type: ignore[operator]
        raise ValueError(
            f"num_players: got {num_players!r}, allowed an int from {MIN_PLAYERS} to {MAX_PLAYERS}"
        )
    return num_players  # type: ignore[return-value]
