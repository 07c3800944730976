"""TorchRL's masked PPO on the AEC ``craits_v0`` — no glue: ``PettingZooWrapper(use_mask=True)``.

    python experiments/integrations/torchrl_ppo.py --steps 30000 --out DIR

Follows TorchRL's own multi-agent pattern (the ``multiagent_ppo`` and
``multiagent_competitive_ddpg`` tutorials): ``torchrl.envs.PettingZooWrapper`` wraps
``craits_v0.env(...)`` unchanged with ``use_mask=True`` (one group per seat,
``("player_0", "action_mask")`` from the observation's ``"action_mask"``,
``("player_0", "mask")`` true when that seat acts), one seat learns with a
``MultiAgentMLP`` actor (``ProbabilisticActor`` + ``MaskedCategorical``) and critic, the
other seats sample uniformly among their legal actions, ``Collector`` collects,
``ClipPPOLoss`` with GAE trains. The wrapper observes every seat at every step, so GAE
runs over the learner's own view of every env step (its reward included, whoever moved);
the PPO minibatches hold only the steps where the learner acted. Then the learner (its
mode) plays ``--eval-episodes`` held-out games (seeds not used in training) and its win
rate is reported with a 95% interval (Wilson; shared wins split), before and after
training. Every action of every acting seat, in training and evaluation, is checked against
its mask: an illegal one stops the script. Writes ``DIR/results.json``, ``DIR/results.md``
(atomically) and the learner's weights ``DIR/learner.pt``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np
import pettingzoo
import tensordict
import torch
import torchrl
from tensordict import TensorDictBase
from tensordict.nn import TensorDictModule, TensorDictSequential
from torchrl.collectors import Collector
from torchrl.data import LazyTensorStorage, ReplayBuffer
from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
from torchrl.envs import PettingZooWrapper
from torchrl.envs.utils import ExplorationType, set_exploration_type
from torchrl.modules import MaskedCategorical, MultiAgentMLP, ProbabilisticActor
from torchrl.objectives import ClipPPOLoss, ValueEstimators

import craits_env
from craits.agents.report import learning_table
from craits.agents.stats import wilson_interval
from craits_env import craits_v0
from craits_env.fileio import atomic_write_json, atomic_write_text

EVAL_SEED = 10_000_000  # held-out episodes: seeds far from the training seeds
HYPERPARAMETERS = (
    "frames_per_batch",
    "epochs",
    "minibatch",
    "lr",
    "gamma",
    "lmbda",
    "clip",
    "entropy",
    "hidden",
)


def env_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "num_players": args.players,
        "rules": craits_env.Rules(hand_sizes=tuple(args.hand_sizes)),
        "reward": args.reward,
    }


def make_env(kwargs: dict[str, Any], seed: int | None = None) -> PettingZooWrapper:
    """TorchRL's documented wrapper around the AEC environment, nothing else."""
    return PettingZooWrapper(craits_v0.env(**kwargs), use_mask=True, seed=seed)


def random_masked(group: str) -> TensorDictModule:
    """A seat that plays uniformly among its legal actions (``(group, "action_mask")``)."""

    def sample(mask: torch.Tensor) -> torch.Tensor:
        flat = mask.reshape(-1, mask.shape[-1]).float()
        return torch.multinomial(flat, 1).reshape(mask.shape[:-1])

    return TensorDictModule(sample, in_keys=[(group, "action_mask")], out_keys=[(group, "action")])


def build(
    env: PettingZooWrapper, learner: str, hidden: int
) -> tuple[ProbabilisticActor, TensorDictModule, TensorDictSequential]:
    """The learner's actor and critic (one-agent groups, as TorchRL's tutorials build them)
    and the joint policy (learner + random masked opponents) the collector runs."""
    obs_key = (learner, "observation", "observation")
    n_obs = env.observation_spec[obs_key].shape[-1]
    n_actions = env.full_action_spec[learner, "action"].space.n
    common = {"n_agents": 1, "centralised": False, "share_params": True, "depth": 2}
    actor_net = MultiAgentMLP(
        n_agent_inputs=n_obs,
        n_agent_outputs=n_actions,
        num_cells=hidden,
        activation_class=torch.nn.Tanh,
        **common,
    )
    actor = ProbabilisticActor(
        module=TensorDictModule(actor_net, in_keys=[obs_key], out_keys=[(learner, "logits")]),
        in_keys={"logits": (learner, "logits"), "mask": (learner, "action_mask")},
        out_keys=[(learner, "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        log_prob_key=(learner, "sample_log_prob"),
    )
    critic_net = MultiAgentMLP(
        n_agent_inputs=n_obs,
        n_agent_outputs=1,
        num_cells=hidden,
        activation_class=torch.nn.Tanh,
        **common,
    )
    critic = TensorDictModule(critic_net, in_keys=[obs_key], out_keys=[(learner, "state_value")])
    policy = TensorDictSequential(actor, *(random_masked(g) for g in env.group_map if g != learner))
    return actor, critic, policy


def illegal_actions(data: TensorDictBase, groups: list[str]) -> int:
    """Steps of ``data`` where the acting seat's action was not in its mask (must be 0)."""
    bad = 0
    for g in groups:
        acting = data[g, "mask"].reshape(-1)
        action = data[g, "action"].reshape(-1, 1)
        legal = data[g, "action_mask"].reshape(-1, data[g, "action_mask"].shape[-1])
        bad += int((acting & ~legal.gather(-1, action).squeeze(-1)).sum())
    return bad


def evaluate(
    policy: TensorDictSequential, kwargs: dict[str, Any], learner: str, episodes: int
) -> dict[str, Any]:
    """The learner (its mode) against the random seats on held-out games."""
    wins, scores, steps, illegal = 0.0, [], 0, 0
    seat = int(learner.rsplit("_", 1)[1])
    start = time.perf_counter()
    for e in range(episodes):
        torch.manual_seed(EVAL_SEED + e)  # the random seats draw from torch's generator
        aec = craits_v0.env(**kwargs)  # kept: its game gives the scores at the end
        env = PettingZooWrapper(aec, use_mask=True)  # make_env's wrapper
        td = env.reset(seed=EVAL_SEED + e)
        with set_exploration_type(ExplorationType.DETERMINISTIC), torch.no_grad():
            data = env.rollout(100_000, policy, auto_reset=False, tensordict=td)
        if not bool(data["next", "done"][-1]):
            raise RuntimeError("evaluation game did not end within 100,000 steps")
        illegal += illegal_actions(data, list(env.group_map))
        steps += data.shape[0]
        game = aec.unwrapped.game
        winners = game.winners()
        if seat in winners:
            wins += 1 / len(winners)
        scores.append(game.scores[seat])
        env.close()
    seconds = time.perf_counter() - start
    return {
        "episodes": episodes,
        "win_rate": wins / episodes,
        "win_rate_ci": wilson_interval(wins, episodes),
        "mean_score": float(np.mean(scores)),
        "illegal_actions": illegal,
        "steps_per_second": round(steps / seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30_000, help="env steps, all seats (30k)")
    parser.add_argument("--frames-per-batch", type=int, default=2_000)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument(
        "--hand-sizes",
        type=int,
        nargs="+",
        default=[3, 2, 1],
        help="the hand schedule (Rules.hand_sizes; default 3 2 1)",
    )
    parser.add_argument("--reward", default="relative", choices=craits_v0.REWARD_MODES)
    parser.add_argument("--learner-seat", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=4, help="PPO epochs per batch")
    parser.add_argument("--minibatch", type=int, default=256)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--lmbda", type=float, default=0.95)
    parser.add_argument("--clip", type=float, default=0.2)
    parser.add_argument("--entropy", type=float, default=0.01)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--eval-episodes", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--out", type=Path, required=True, help="results directory")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.frames_per_batch < 1 or args.eval_episodes < 1:
        parser.error("--steps, --frames-per-batch and --eval-episodes must be >= 1")
    if not 0 <= args.learner_seat < args.players:
        parser.error(f"--learner-seat must be in 0..{args.players - 1}")
    threads = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    try:
        return run(args)
    finally:
        torch.set_num_threads(threads)  # as it was (main() may run inside a larger process)


def run(args: argparse.Namespace) -> int:
    torch.manual_seed(args.seed)
    kwargs = env_kwargs(args)
    env = make_env(kwargs, seed=args.seed)
    groups = list(env.group_map)
    learner = groups[args.learner_seat]
    actor, critic, policy = build(env, learner, args.hidden)
    before = evaluate(policy, kwargs, learner, min(args.eval_episodes, 200))

    frames = min(args.frames_per_batch, args.steps)
    collector = Collector(
        env,
        policy,
        frames_per_batch=frames,
        total_frames=max(frames, args.steps),
        auto_register_policy_transforms=False,  # a feed-forward policy: no InitTracker needed
    )
    buffer = ReplayBuffer(
        storage=LazyTensorStorage(frames),
        sampler=SamplerWithoutReplacement(),
        batch_size=args.minibatch,
    )
    loss = ClipPPOLoss(
        actor=actor,
        critic=critic,
        clip_epsilon=args.clip,
        entropy_coeff=args.entropy,
        normalize_advantage=False,
    )
    loss.set_keys(
        reward=(learner, "reward"),
        action=(learner, "action"),
        sample_log_prob=(learner, "sample_log_prob"),
        value=(learner, "state_value"),
        done=(learner, "done"),
        terminated=(learner, "terminated"),
        advantage=(learner, "advantage"),
        value_target=(learner, "value_target"),
    )
    loss.make_value_estimator(ValueEstimators.GAE, gamma=args.gamma, lmbda=args.lmbda)
    optim = torch.optim.Adam(loss.parameters(), args.lr)

    steps, episodes, own_steps, illegal_train, updates = 0, 0, 0, 0, 0
    collect_seconds = 0.0
    start = time.perf_counter()
    tick = time.perf_counter()
    for data in collector:
        collect_seconds += time.perf_counter() - tick
        steps += data.numel()
        episodes += int(data["next", "done"].sum())
        illegal_train += illegal_actions(data, groups)
        with torch.no_grad():  # GAE over every env step, from the learner's own view
            loss.value_estimator(
                data,
                params=loss.critic_network_params,
                target_params=loss.target_critic_network_params,
            )
        mine = data[data[learner, "mask"].reshape(-1)]  # the steps where the learner acted
        own_steps += mine.numel()
        buffer.empty()
        buffer.extend(mine)
        for _ in range(args.epochs):
            for _ in range(max(1, mine.numel() // args.minibatch)):
                out = loss(buffer.sample())
                total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
                total.backward()
                torch.nn.utils.clip_grad_norm_(loss.parameters(), 1.0)
                optim.step()
                optim.zero_grad()
                updates += 1
        collector.update_policy_weights_()
        tick = time.perf_counter()
    seconds = time.perf_counter() - start
    collector.shutdown()
    after = evaluate(policy, kwargs, learner, args.eval_episodes)
    if illegal_train or before["illegal_actions"] or after["illegal_actions"]:
        raise AssertionError("an illegal action was taken: TorchRL ignored the mask")
    args.out.mkdir(parents=True, exist_ok=True)
    torch.save(
        {"actor": actor.state_dict(), "critic": critic.state_dict()}, args.out / "learner.pt"
    )
    command = (
        "python experiments/integrations/torchrl_ppo.py "
        f"--steps {args.steps} --frames-per-batch {args.frames_per_batch} "
        f"--players {args.players} --hand-sizes {' '.join(map(str, args.hand_sizes))} "
        f"--reward {args.reward} --eval-episodes {args.eval_episodes} --seed {args.seed} "
        f"--out {args.out}"
    )
    result = {
        "library": "TorchRL ClipPPOLoss (PettingZooWrapper, use_mask=True)",
        "versions": {
            "torchrl": torchrl.__version__,
            "tensordict": tensordict.__version__,
            "torch": torch.__version__,
            "pettingzoo": pettingzoo.__version__,
            "craits": craits_env.__version__,
            "python": platform.python_version(),
        },
        "env": {k: (v.to_dict() if k == "rules" else v) for k, v in kwargs.items()},
        "learner": learner,
        "hyperparameters": {k: getattr(args, k) for k in HYPERPARAMETERS},
        "steps": steps,
        "learner_steps": own_steps,
        "episodes": episodes,
        "gradient_steps": updates,
        "train_seconds": round(seconds, 1),
        "collect_steps_per_second": round(steps / collect_seconds, 1),
        "illegal_actions_in_training": illegal_train,
        "before": before,
        "after": after,
        "command": command,
    }
    atomic_write_json(args.out / "results.json", result)
    atomic_write_text(
        args.out / "results.md",
        "\n".join(
            [
                "# TorchRL masked PPO on craits_v0 through PettingZooWrapper(use_mask=True)",
                "",
                f"Seat {args.learner_seat} learns (ClipPPOLoss + GAE, MaskedCategorical) against "
                f"{args.players - 1} x uniform random legal play, {args.players} players, hands "
                f"{tuple(args.hand_sizes)}, reward `{args.reward}`; {steps:,} env steps "
                f"({own_steps:,} the learner's) in {seconds:,.0f} s (collection "
                f"{result['collect_steps_per_second']:,.0f} steps/s); torchrl "
                f"{torchrl.__version__}, tensordict {tensordict.__version__}, torch "
                f"{torch.__version__}. No illegal action in training or evaluation.",
                "",
                *learning_table(before, after),
                "",
                f"A coin toss wins {1 / args.players:.3f}. Reproduce: `" + command + "`",
                "",
            ]
        ),
    )
    print(json.dumps(after))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
