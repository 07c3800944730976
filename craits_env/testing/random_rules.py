"""Random dealable configurations: the option space of the random-option tests and of the
batched engine's differential runs (one generator, so both explore the same games).

>>> import random
>>> n, rules = random_config(random.Random(0))
>>> 2 <= n <= 10 and n * max(rules.hand_sizes) + 1 <= rules.decks_for(n) * 52
True
"""

from __future__ import annotations

import random
from typing import Any

from ..rules import Rules

# Every option of Rules but the schedule ones (num_decks, hand_sizes, hand_decision_limit),
# each with every value it may take (three_points: the default, zero and a negative one).
OPTION_CHOICES: dict[str, tuple[Any, ...]] = {
    "dealer_follows_direction": (False, True),
    "remove_kings_queens": (False, True),
    "voluntary_draw": (False, True),
    "seven_hits": ("next", "next_but_one"),
    "count_out_can_return": (False, True),
    "one_card": ("declare", "auto", "off"),
    "idiot_penalty": ("forfeit", "draw_one"),
    "one_card_on_deal": (False, True),
    "going_out_bonus": (False, True),
    "threes_cancel_eights": (False, True),
    "three_points": (3, 0, -1),
    "punitive_threes": (False, True),
    "face_cards": (False, True),
}
SCHEDULE_OPTIONS = ("num_decks", "hand_sizes", "hand_decision_limit")


def random_config(r: random.Random) -> tuple[int, Rules]:
    """A random dealable configuration: players, decks, a short random schedule, options."""
    while True:
        n = r.randint(2, 10)
        options = {k: r.choice(v) for k, v in OPTION_CHOICES.items()}
        options["num_decks"] = r.choice((None, 1, 2))
        sizes = tuple(r.choice((1, 1, 2, 3, 5, 8)) for _ in range(r.randint(1, 3)))
        options["hand_sizes"] = sizes
        if r.random() < 0.1:
            options["hand_decision_limit"] = r.randint(1, 60)
        rules = Rules(**options)
        decks = rules.decks_for(n)
        deck = (44 if rules.remove_kings_queens else 52) * decks
        if n * max(sizes) + 1 <= deck:
            return n, rules
