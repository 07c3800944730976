"""Every rule step of the Python engine has its namesake in the compiled rules.

The compiled engine (``craits_env.vector``) mirrors :class:`craits_env.engine.Game` method
for method: ``Game._draw`` is the kernel's ``draw``, ``Game.apply`` its ``apply`` — the
same name without the leading underscore (the kernel's functions are called across its
modules, so they are public there; ``_next`` is ``next_seat``, not a builtin's name). A
rule step here is a method whose source cites a rule id (``R10.1`` …), plus ``_advance``
and ``_next``; the table below lists them, and a check makes sure no such method of
``Game`` — wherever its methods are defined — is missing from it.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from typing import Any

from numba.core.dispatcher import Dispatcher

import craits_env.vector
from craits_env.engine import Game

RULE_ID = re.compile(r"\bR\d+(?:\.\d+)*\b")

RULE_STEPS = (
    "apply",
    "_play",
    "_play_in_count",
    "_after_call",
    "_declared",
    "_take_count",
    "_resolve",
    "_continue_count",
    "_same_turn",
    "_begin_turn",
    "_next",
    "_draw",
    "_reshuffle",
    "_advance",
    "_start_hand",
    "_apply_starter",
    "_end_hand",
)
"""Game's methods that change the state by a rule, or the turn order (R1.4): each has a
kernel namesake."""

BUILTIN_NAMES = {"_next": "next_seat"}
"""Namesakes that would shadow a Python builtin: the kernel's name instead."""

ANSWERED_OTHERWISE = {
    "legal_actions": "legal_bits",  # the legal actions as one bit set (is_legal, write_mask)
    "winners": "add_win_rewards",  # the lowest totals (R8.6), read where they pay rewards
    "forced_action": None,  # R3.6 reads the legal actions: actions.forced_action on a mask
}
"""Game's methods that cite a rule but read the state: the kernel function answering it."""


def kernel_functions() -> dict[str, Any]:
    """The compiled functions defined in the modules of ``craits_env.vector``, by name."""
    found: dict[str, Any] = {}
    for info in pkgutil.iter_modules(craits_env.vector.__path__):
        qualified = f"craits_env.vector.{info.name}"
        module = importlib.import_module(qualified)
        for name, obj in vars(module).items():
            if isinstance(obj, Dispatcher) and obj.py_func.__module__ == module.__name__:
                found[name] = obj
    return found


def citing_methods() -> list[str]:
    """Game's methods (its own and inherited) whose source cites a rule id."""
    out = []
    for name, member in inspect.getmembers(Game):
        fn = member.fget if isinstance(member, property) else member
        if inspect.isfunction(fn) and RULE_ID.search(inspect.getsource(fn)):
            out.append(name)
    return out


def test_no_rule_method_is_missing_from_the_table() -> None:
    citing = citing_methods()
    assert len(citing) >= 15, citing  # the engine's sources were read
    missing = sorted(set(citing) - set(RULE_STEPS) - set(ANSWERED_OTHERWISE))
    assert not missing, f"rule methods of Game missing from RULE_STEPS: {missing}"
    for name in (*RULE_STEPS, *ANSWERED_OTHERWISE):
        assert inspect.isfunction(getattr(Game, name, None)), f"Game.{name} is gone"


def test_every_rule_step_has_its_kernel_namesake() -> None:
    kernel = kernel_functions()
    missing = [
        name for name in RULE_STEPS if BUILTIN_NAMES.get(name, name.lstrip("_")) not in kernel
    ]
    assert not missing, f"no kernel namesake for Game.{missing}"
    for answer in ANSWERED_OTHERWISE.values():
        assert answer is None or answer in kernel, answer


def test_the_kernel_cites_only_methods_that_exist() -> None:
    """A kernel function that says it is ``Game.x`` names a method Game has."""
    cited = {
        name: re.findall(r"``Game\.(\w+)``", fn.py_func.__doc__ or "")
        for name, fn in kernel_functions().items()
    }
    for name, methods in cited.items():
        for method in methods:
            assert hasattr(Game, method), f"kernel {name} cites Game.{method}, which is gone"
    assert sum(len(m) for m in cited.values()) >= 8
