"""Optional dependencies: which extra of the ``craits`` package provides what.

The core package needs only numpy, numba, gymnasium, pettingzoo and threadpoolctl: the
engine, the batched engine, the environments, the bots, ``craits play``/``replay``/``demo``/
``bench``. The rest is in extras (``pip install 'craits[train]'``):

| extra | modules | for |
|---|---|---|
| ``tournament`` | openskill, tqdm, matplotlib | ``craits tournament`` (ratings, bar, chart) |
| ``train`` | torch, tensorboard + ``tournament`` | ``craits train``, the ``ppo:PATH`` agent |
| ``ray`` | ray | ``--ray`` (tournaments and training on a cluster) |
| ``web`` | fastapi, uvicorn | ``craits serve`` |
| ``all`` | all of the above | |
| ``rllib`` | ray[rllib], torch | :mod:`craits_env.integrations.rllib` (a venv of its own) |
| ``agilerl`` | agilerl, torch | the AgileRL example (a venv of its own) |
| ``openspiel`` | open_spiel | :mod:`craits_env.integrations.openspiel` (``python_craits``) |
| ``integrations`` | stable-baselines3, sb3-contrib, tianshou, torchrl | :mod:`.integrations.sb3` |

:func:`require` turns a missing module into one line naming the extra to install.
"""

from __future__ import annotations

import importlib

EXTRAS: dict[str, tuple[str, ...]] = {
    "tournament": ("openskill", "tqdm", "matplotlib"),
    "train": ("torch", "tensorboard", "openskill", "tqdm", "matplotlib"),
    "ray": ("ray",),
    "web": ("fastapi", "uvicorn"),
    "rllib": ("ray.rllib", "torch"),
    "agilerl": ("agilerl", "torch"),
    "openspiel": ("pyspiel",),
    "integrations": ("stable_baselines3", "sb3_contrib", "tianshou", "torchrl"),
}


class MissingExtra(ImportError):
    """A feature's optional dependencies are not installed (the message says how to)."""


def require(extra: str, what: str, modules: tuple[str, ...] | None = None) -> None:
    """Raise :class:`MissingExtra` if a module of ``extra`` (or ``modules``) cannot be imported."""
    missing = []
    for module in EXTRAS[extra] if modules is None else modules:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(module)
    if missing:
        raise MissingExtra(
            f"{what} needs {', '.join(missing)}, not installed: pip install 'craits[{extra}]'"
        )
