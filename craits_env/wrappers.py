"""PettingZoo's classic wrappers, with the per-step attribute look-ups made direct.

``env()`` wraps ``raw_env`` exactly as PettingZoo's classic games do —
``TerminateIllegalWrapper(illegal_reward=-1)``, ``AssertOutOfBoundsWrapper``,
``OrderEnforcingWrapper`` — using subclasses of those very classes. Their
behaviour is PettingZoo's own code; the only change is speed: PettingZoo's
``BaseWrapper`` finds ``agent_selection``, ``terminations`` … through one
``__getattr__`` call per wrapper layer (dozens of Python calls per step), and
these subclasses read them from the unwrapped environment through a property
instead. ``OrderEnforcingWrapper``'s "cannot be accessed before reset" errors
are kept.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

# Attributes read on every step of the AEC loop (AECEnv.last, agent_iter, the wrappers' step).
_FORWARDED = (
    "agent_selection", "agents", "terminations", "truncations", "rewards", "infos",
    "_cumulative_rewards", "num_agents",
)  # fmt: skip
# OrderEnforcingWrapper refuses these before reset.
_BEFORE_RESET = frozenset(
    {"rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents", "agents"}
)


def _forward(name: str, enforce_order: bool) -> property:
    if enforce_order and name in _BEFORE_RESET:

        def get(self: Any) -> Any:
            if not self._has_reset:
                raise AttributeError(f"{name} cannot be accessed before reset")
            return getattr(self._raw, name)

    else:

        def get(self: Any) -> Any:
            return getattr(self._raw, name)

    def set_(self: Any, value: Any) -> None:
        setattr(self._raw, name, value)

    return property(get, set_)


def _fast(cls: type) -> type:
    enforce = issubclass(cls, wrappers.OrderEnforcingWrapper)
    namespace: dict[str, Any] = {n: _forward(n, enforce) for n in _FORWARDED}

    def __init__(self: Any, env: AECEnv, *args: Any, **kwargs: Any) -> None:
        self._raw = env.unwrapped
        cls.__init__(self, env, *args, **kwargs)  # type: ignore[misc]

    def __str__(self: Any) -> str:
        return str(self.env)

    namespace["__init__"] = __init__
    namespace["__str__"] = __str__
    namespace["__doc__"] = cls.__doc__
    namespace["__module__"] = __name__
    return type(cls.__name__, (cls,), namespace)


TerminateIllegalWrapper = _fast(wrappers.TerminateIllegalWrapper)
AssertOutOfBoundsWrapper = _fast(wrappers.AssertOutOfBoundsWrapper)
OrderEnforcingWrapper = _fast(wrappers.OrderEnforcingWrapper)


def wrap_classic(env: AECEnv, illegal_reward: float = -1) -> AECEnv:
    """``env`` inside PettingZoo's three classic-game wrappers, in PettingZoo's order."""
    env = TerminateIllegalWrapper(env, illegal_reward=illegal_reward)
    env = AssertOutOfBoundsWrapper(env)
    return OrderEnforcingWrapper(env)
