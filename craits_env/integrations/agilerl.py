"""The PettingZoo ``ParallelEnv`` view of ``craits_v0`` for AgileRL's multi-agent algorithms.

```python
from agilerl.algorithms import IPPO
from craits_env.integrations.agilerl import parallel_env

env = parallel_env(num_players=4)
obs, infos = env.reset(seed=0)
ippo = IPPO([env.observation_space(a) for a in env.possible_agents],
            [env.action_space(a) for a in env.possible_agents], agent_ids=env.possible_agents)
actions, *_ = ippo.get_action(obs, infos=infos)   # masks and env-defined actions from infos
obs, rewards, terminations, truncations, infos = env.step(actions)
```

AgileRL's multi-agent algorithms (IPPO, MADDPG, MATD3) take a PettingZoo *parallel*
environment and read two keys of each agent's ``info`` (its documented "action masking"
and "agent masking"): ``"action_mask"`` (1 = legal) and ``"env_defined_actions"`` (an
action the environment fixes for an agent that does not decide now; ``None`` for one that
does). ``craits_v0.parallel_env`` (:mod:`craits_env.parallel_view`, where the view is
described) gives both; ``parallel_env``, ``CraitsParallelEnv``, ``WAIT_ACTION`` and
``TO_ACT`` are importable from here too.

Known limit: AgileRL's multi-agent learners store a transition for every agent at every
step, the waiting seats' too (their ``WAIT_ACTION``), and IPPO's update recomputes
log-probabilities without the masks; the ``to_act`` element lets a policy tell a waiting
state from a decision, but measured, IPPO self-play through this view acts legally and
does not learn (experiments/results/integrations/agilerl/ippo). AgileRL's single-agent PPO
needs no adapter: on the Gymnasium view ``craits/Craits-v0`` its ``collect_rollouts`` reads
``info["action_mask"]`` and its ``learn`` applies the stored masks
(experiments/integrations/agilerl_ppo.py). AgileRL's vectorised wrapper of a parallel
environment (``PzDummyVecEnv``) hands the first decision after an auto-reset the finished
game's infos, so step this view yourself (as agilerl_ippo.py does).
"""

from __future__ import annotations

from ..craits_v0 import parallel_env
from ..parallel_view import TO_ACT, WAIT_ACTION, CraitsParallelEnv

__all__ = ["TO_ACT", "WAIT_ACTION", "CraitsParallelEnv", "parallel_env"]
