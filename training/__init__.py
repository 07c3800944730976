"""Training Craits agents (:mod:`craits.training`): masked PPO self-play (``craits train``).

- :mod:`.train` — the run and one update, top to bottom: collect, GAE, PPO epochs, log,
  checkpoint, evaluation;
- :mod:`.ppo` — the mathematics: masked distribution, GAE, the PPO loss, the annealed step;
- :mod:`craits.agents.network` — the policy-value MLP, and :mod:`craits.agents.checkpoint`
  — the checkpoint format, read and written (in agents: playing a checkpoint needs no
  training code);
- :mod:`.rollouts` — where the games are played (this process; the protocol Ray's
  workers follow too, :mod:`.distributed`);
- :mod:`.selfplay` — self-play games on the Python engine (``backend="python"``);
- :mod:`.vector_selfplay` — the same on the batched compiled engine (``backend="vector"``);
- :mod:`.buffer` — the transition buffer both fill, the segments and batches it hands over;
- :mod:`.pool` — the opponent pool (self, frozen snapshots, bots);
- :mod:`.state` — a run's learning state (:class:`~.state.TrainingState`), saved and resumed;
- :mod:`.run_log` — TensorBoard scalars, the progress bar, Ctrl-C;
- :mod:`.config` — configurations (``training/configs/*.toml``, package data) and overrides;
- :mod:`.evaluate` — duplicate evaluation through the arena and the tournament core;
- :mod:`.distill` — distilling a search into the policy.

A checkpoint plays as the agent ``"ppo:PATH"`` (:mod:`craits.agents.checkpoint_agent`).
"""

# The folder is the package craits.training (setup.py): imported as `training` from the repository
# root it would be a second copy of every module.
if __name__ != "craits.training":
    raise ImportError(
        f"the folder training/ is the package craits.training: import craits.training "
        f"(`pip install -e .` in the repository installs it), not {__name__}"
    )
