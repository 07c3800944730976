"""Random dealable configurations: the option space of the random-option tests and of the
batched engine's differential runs (one generator, so both explore the same games).

>>> import random
>>> n, rules = random_config(random.Random(0))
>>> 2 <= n <= 10 and n * max(rules.hand_sizes) + 1 <= rules.decks_for(n) * 52
True
"""

from __future__ import annotations

import random
from typing import Any, Literal, get_args, get_origin

from ..options import field_types
from ..rules import Rules

SCHEDULE_OPTIONS = ("num_decks", "hand_sizes", "hand_decision_limit")
"""The options random_config draws itself: the deck and the schedule must stay dealable."""
INT_CHOICES: dict[str, tuple[int, ...]] = {"three_points": (3, 0, -1)}
"""The values of an int option in random games: the default, zero and a negative one."""


def _choices(name: str, kind: Any) -> tuple[Any, ...]:
    if kind is bool:
        return (False, True)
    if get_origin(kind) is Literal:
        return get_args(kind)
    if name in INT_CHOICES:
        return INT_CHOICES[name]
    raise TypeError(
        f"random_rules: Rules.{name} ({kind}) has no random values; allowed: a bool or Literal "
        "option, or its values in INT_CHOICES, or its name in SCHEDULE_OPTIONS"
    )


OPTION_CHOICES: dict[str, tuple[Any, ...]] = {
    name: _choices(name, kind)
    for name, kind in field_types(Rules).items()
    if name not in SCHEDULE_OPTIONS
}
"""Every option of Rules but the schedule ones, each with every value it may take, in the
order of Rules' fields: derived from the annotations, so a new bool or Literal option is
played by every random test at once."""


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
