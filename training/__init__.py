"""Training Craits agents: masked PPO self-play (``craits train``).

- :mod:`training.ppo` — the mathematics: masked distribution, GAE, the PPO loss;
- :mod:`training.network` — the policy-value MLP;
- :mod:`training.selfplay` — vectorised self-play rollouts on the engine;
- :mod:`training.pool` — the opponent pool (self, frozen snapshots, bots);
- :mod:`training.config` — configurations (``experiments/configs/*.toml``) and overrides;
- :mod:`training.checkpoint` — atomic checkpoints and their loading;
- :mod:`training.trainer` — a run's state: collect, learn, save, resume;
- :mod:`training.evaluate` — duplicate evaluation with the tournament code;
- :mod:`training.train` — the loop: logging, evaluation, checkpoints.

A checkpoint plays as the agent ``"ppo:PATH"`` (:mod:`agents.ppo`).
"""
