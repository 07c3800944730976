"""Deprecated since craits 0.3.0 (goes in 0.4): the old name of
:mod:`craits_env.opponent_hands` (``encode_oracle`` is ``encode_hands``, ``oracle_size`` is
``hands_size``; the perfect critic's ``encode_perfect`` and ``encode_stock`` were removed)."""

import warnings

from .opponent_hands import encode_hands as encode_oracle
from .opponent_hands import hands_size as oracle_size

warnings.warn(
    "the module 'craits_env.oracle' is deprecated since craits 0.3.0 and goes in 0.4: import "
    "craits_env.opponent_hands instead",
    FutureWarning,
    stacklevel=2,
)

__all__ = ["encode_oracle", "oracle_size"]
