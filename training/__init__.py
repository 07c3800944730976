"""Training Craits agents: masked PPO self-play (``craits train``).

- :mod:`training.ppo` — the mathematics: masked distribution, GAE, the PPO loss;
- :mod:`agents.network` — the policy-value MLP (in agents: playing a checkpoint needs no
  training code);
- :mod:`training.selfplay` — vectorised self-play rollouts on the engine (``backend="python"``);
- :mod:`training.vector_selfplay` — the same on the batched compiled engine (``backend="vector"``);
- :mod:`training.pool` — the opponent pool (self, frozen snapshots, bots);
- :mod:`training.config` — configurations (``training/configs/*.toml``, package data) and overrides;
- :mod:`training.checkpoint` — writing checkpoints atomically (reading: :mod:`agents.checkpoint`);
- :mod:`training.learner` — a run's learning state (:class:`~training.learner.Learner`): collect,
  learn, save, resume;
- :mod:`training.evaluate` — duplicate evaluation through the arena and the tournament core;
- :mod:`training.train` — the loop: logging, evaluation, checkpoints.

A checkpoint plays as the agent ``"ppo:PATH"`` (:mod:`agents.ppo`).
"""
