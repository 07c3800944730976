"""Adapters for RL libraries whose documented pattern needs more than ``craits_v0`` gives.

stable-baselines3 / sb3-contrib, Tianshou and TorchRL need no adapter on a single view
(README, "Use with your RL library"). This package holds the little the others need, a
missing library being a one-line error naming the extra (:func:`craits_env.extras.require`):

- :mod:`craits_env.integrations.rllib` — RLlib (extra ``rllib``): RLlib's
  ``PettingZooEnv`` over ``craits_v0`` with the observation keys of its action-masking
  module, a never-trained masked-random opponent module, a policy mapping,
  :func:`~craits_env.integrations.rllib.ppo_config` (a ready multi-agent PPO), an agent
  playing a trained module.
- :mod:`craits_env.integrations.agilerl` — AgileRL (extra ``agilerl``): a PettingZoo
  ``ParallelEnv`` view of ``craits_v0`` with the masks in ``infos`` (``"action_mask"``,
  ``"env_defined_actions"``), as AgileRL's multi-agent algorithms read them.

- :mod:`craits_env.integrations.sb3` — stable-baselines3 (extra ``integrations``): one
  ``VecEnv`` on the batched engine (the Gymnasium vector view of ``craits/Craits-v0``, reached
  through gymnasium's registry), on which sb3-contrib's ``MaskablePPO`` trains with no wrapper.
  It subclasses ``VecEnv``, so importing it needs the library.

The RLlib and AgileRL modules import without their library (this package is part of the
core); only calling into them needs it.
"""
