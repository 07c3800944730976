"""The Craits application: the ``craits`` command and what only it needs.

- :mod:`craits.cli` — the command: one small function per subcommand beside its parser;
- :mod:`craits.play`, :mod:`craits.narrate`, :mod:`craits.replay_view`,
  :mod:`craits.terminal` — playing and replaying in the terminal;
- :mod:`craits.demo` — the one-game demo;
- :mod:`craits.tournament_workers` — where tournament games run: processes, Ray.

The library underneath imports nothing of it: :mod:`craits_env` (the game and its
environments) < :mod:`craits.agents` (agents, the arena, tournaments) < :mod:`craits.training`
(PPO self-play) < :mod:`craits` (checked by import-linter's layers contract).
"""

from craits_env import __version__

__all__ = ["__version__"]
