"""Training Craits agents (:mod:`craits.training`): masked PPO self-play (``craits train``).

- :mod:`.ppo` — the mathematics: masked distribution, GAE, the PPO loss;
- :mod:`craits.agents.network` — the policy-value MLP (in agents: playing a checkpoint needs no
  training code);
- :mod:`.selfplay` — vectorised self-play rollouts on the engine (``backend="python"``);
- :mod:`.vector_selfplay` — the same on the batched compiled engine (``backend="vector"``);
- :mod:`.pool` — the opponent pool (self, frozen snapshots, bots);
- :mod:`.config` — configurations (``training/configs/*.toml``, package data) and overrides;
- :mod:`.checkpoint` — writing checkpoints atomically (reading: :mod:`craits.agents.checkpoint`);
- :mod:`.learner` — a run's learning state (:class:`~.learner.Learner`): collect,
  learn, save, resume;
- :mod:`.evaluate` — duplicate evaluation through the arena and the tournament core;
- :mod:`.train` — the loop: logging, evaluation, checkpoints.

A checkpoint plays as the agent ``"ppo:PATH"`` (:mod:`craits.agents.ppo`).
"""
