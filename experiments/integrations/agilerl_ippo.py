"""AgileRL's IPPO on ``craits_v0`` through the project's parallel view (masks in ``infos``).

    python experiments/integrations/agilerl_ippo.py --steps 100000 --out DIR

``craits_env.integrations.agilerl.parallel_env`` is the environment: every seat observes
at every step (its ``craits_v0`` vector plus ``to_act``), the seat to act finds its legal
actions in ``infos[seat]["action_mask"]``, the others an ``"env_defined_actions"`` entry
(AgileRL's agent masking). AgileRL's ``IPPO`` groups ``player_0 … player_3`` into one
``player`` policy, so every seat learns with one shared network (self-play). The loop is
AgileRL's own on-policy multi-agent loop (``train_multi_agent_on_policy``: ``get_action``
with the infos, ``learn`` on the 8-tuple of per-agent rollouts) on the view itself,
without their vectorised wrapper: that wrapper auto-resets a finished game but hands the
first decision of the next game the finished game's infos (every seat waiting), which
would force ``env_defined_actions`` on the seat to act. Then seat 0 (the shared policy,
sampling as AgileRL's ``get_action`` does, torch seeded per game) plays
``--eval-episodes`` held-out games (seeds not used in training) against three ``random``
agents, before and after training; its win rate comes with a 95% interval (Wilson;
shared wins split). The view counts every action outside the acting seat's mask, in
training and evaluation: an illegal one stops the script. Writes ``DIR/results.json``,
``DIR/results.md`` (atomically) and the policy ``DIR/ippo.pt``.

Measured (experiments/results/integrations/agilerl/ippo): it acts legally but does not learn
here — after 150k steps seat 0 wins 0.119 [0.091, 0.154] against random, below the untrained
policy; IPPO's update recomputes log-probabilities without the masks and learns from the
waiting seats' transitions too. ``agilerl_ppo.py`` (masked end to end) does learn.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pettingzoo
import torch
from agilerl.algorithms import IPPO

import craits_env
from craits.agents import make_agent
from craits.agents.arena import play_game
from craits.agents.report import learning_table
from craits.agents.stats import wilson_interval
from craits_env import Game, Rules, craits_v0
from craits_env.fileio import atomic_write_json, atomic_write_text
from craits_env.integrations.agilerl import CraitsParallelEnv, parallel_env

AGILERL_VERSION = importlib.metadata.version("agilerl")  # the package has no __version__
EVAL_SEED = 10_000_000  # held-out games: seeds far from the training seeds
EVAL_SEAT = 0
PROGRESS_EVERY = 10  # updates between progress lines (stderr)
HYPERPARAMETERS = (
    "learn_step",
    "batch_size",
    "epochs",
    "lr",
    "gamma",
    "gae_lambda",
    "clip",
    "entropy",
    "hidden",
)


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000, help="decisions, all seats (100k)")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument(
        "--hand-sizes",
        type=int,
        nargs="+",
        default=[3, 2, 1],
        help="the hand schedule (Rules.hand_sizes; default 3 2 1)",
    )
    parser.add_argument("--reward", default="relative", choices=craits_v0.REWARD_MODES)
    parser.add_argument("--learn-step", type=int, default=2_048, help="steps per IPPO update")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=4, help="IPPO epochs per update")
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--gae-lambda", type=float, default=0.95)
    parser.add_argument("--clip", type=float, default=0.2)
    parser.add_argument("--entropy", type=float, default=0.01)
    parser.add_argument("--hidden", type=int, default=256, help="units of each of 2 layers")
    parser.add_argument("--eval-episodes", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--out", type=Path, required=True, help="results directory")
    return parser


class IPPOAgent:
    """One seat of a trained IPPO as a Craits agent: the view's observation (``to_act`` = 1)
    and the seat's mask through ``IPPO.get_action``, as in training."""

    name = "agilerl-ippo"

    def __init__(self, ippo: IPPO, seat: int) -> None:
        self.ippo, self.agent_id = ippo, f"player_{seat}"

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            torch.manual_seed(seed)  # get_action samples from torch's generator

    def act(self, observation: Any) -> int:
        vector = np.append(observation["observation"], 1.0).astype(np.float32)[None]
        info = {
            "action_mask": np.asarray(observation["action_mask"]).tolist(),
            "env_defined_actions": None,
        }
        actions, *_ = self.ippo.get_action({self.agent_id: vector}, infos={self.agent_id: info})
        return int(np.asarray(actions[self.agent_id]).reshape(-1)[0])


def evaluate(ippo: IPPO, rules: Rules, players: int, episodes: int) -> dict[str, Any]:
    """Seat 0 against ``random`` agents on held-out games; the engine refuses an illegal
    action (``agents.IllegalAction``)."""
    learner = IPPOAgent(ippo, EVAL_SEAT)
    wins, scores, decisions = 0.0, [], 0
    start = time.perf_counter()
    for e in range(episodes):
        seed = EVAL_SEED + e
        seats = [learner, *(make_agent("random") for _ in range(players - 1))]
        game = Game(players, rules, seed=seed)
        decisions += play_game(game, seats, seeds=[seed + s for s in range(players)])
        winners = game.winners()
        if EVAL_SEAT in winners:
            wins += 1 / len(winners)
        scores.append(game.scores[EVAL_SEAT])
    seconds = time.perf_counter() - start
    return {
        "episodes": episodes,
        "win_rate": wins / episodes,
        "win_rate_ci": wilson_interval(wins, episodes),
        "mean_score": float(np.mean(scores)),
        "illegal_actions": 0,  # play_game raised otherwise
        "decisions_per_second": round(decisions / seconds, 1),
    }


def actor_parameters(ippo: IPPO) -> torch.Tensor:
    """Every parameter of IPPO's actors, flattened (a copy)."""
    return torch.cat([p.detach().reshape(-1).clone() for p in ippo.actors.parameters()])


def collect_and_learn(ippo: IPPO, env: CraitsParallelEnv, state: dict[str, Any]) -> dict[str, Any]:
    """One IPPO update, as AgileRL's ``train_multi_agent_on_policy`` makes it: ``learn_step``
    steps of every agent (leading dimension 1: one environment), then ``learn``."""
    agents = env.possible_agents
    fields = [{a: [] for a in agents} for _ in range(6)]
    states, actions, log_probs, rewards, dones, values = fields
    obs, infos, done = state["obs"], state["infos"], state["done"]
    for _ in range(ippo.learn_step):
        batched = {a: obs[a][None] for a in agents}
        action, log_prob, _, value = ippo.get_action(obs=batched, infos=infos)
        next_obs, reward, terminated, truncated, infos = env.step(action)
        for a in agents:
            states[a].append(batched[a])
            actions[a].append(action[a])
            log_probs[a].append(log_prob[a])
            rewards[a].append(np.array([reward[a]], dtype=np.float32))
            dones[a].append(done[a])
            values[a].append(value[a])
        done = {a: np.array([float(terminated[a] or truncated[a])]) for a in agents}
        state["steps"] += 1
        if not env.agents:  # the game ended: the next observation starts the next game
            next_obs, infos = env.reset()
            state["episodes"] += 1
        obs = next_obs
    next_batched = {a: obs[a][None] for a in agents}
    losses = ippo.learn((states, actions, log_probs, rewards, dones, values, next_batched, done))
    state.update(obs=obs, infos=infos, done=done)
    return {"loss": float(np.mean(list(losses.values())))}  # one entry per policy group


def main(argv: list[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    if min(args.steps, args.learn_step, args.batch_size, args.eval_episodes) < 1:
        parser.error("--steps, --learn-step, --batch-size and --eval-episodes must be >= 1")
    threads = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    try:
        return run(args)
    finally:
        torch.set_num_threads(threads)  # as it was (main() may run inside a larger process)


def run(args: argparse.Namespace) -> int:
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # IPPO.learn shuffles minibatches with numpy's global generator
    rules = Rules(hand_sizes=tuple(args.hand_sizes))
    env = parallel_env(num_players=args.players, rules=rules, reward=args.reward)
    agents = env.possible_agents
    ippo = IPPO(
        [env.observation_space(a) for a in agents],
        [env.action_space(a) for a in agents],
        agent_ids=agents,
        net_config={"encoder_config": {"hidden_size": [args.hidden, args.hidden]}},
        batch_size=args.batch_size,
        lr=args.lr,
        learn_step=min(args.learn_step, args.steps),
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        clip_coef=args.clip,
        ent_coef=args.entropy,
        update_epochs=args.epochs,
    )
    before = evaluate(ippo, rules, args.players, min(args.eval_episodes, 200))
    initial = actor_parameters(ippo)
    obs, infos = env.reset(seed=args.seed)
    state = {
        "obs": obs,
        "infos": infos,
        "done": {a: np.zeros(1) for a in agents},
        "steps": 0,
        "episodes": 0,
    }
    updates, losses = 0, []
    start = time.perf_counter()
    while state["steps"] < args.steps:
        losses.append(float(collect_and_learn(ippo, env, state)["loss"]))
        updates += 1
        if updates % PROGRESS_EVERY == 0:
            print(
                f"update {updates}: {state['steps']:,} steps, {state['episodes']:,} games, "
                f"{time.perf_counter() - start:,.0f} s, loss {losses[-1]:.4f}",
                file=sys.stderr,
                flush=True,
            )
    seconds = time.perf_counter() - start
    if env.illegal_actions:
        raise AssertionError(f"{env.illegal_actions} illegal actions: IPPO ignored the mask")
    change = float(torch.linalg.vector_norm(actor_parameters(ippo) - initial))
    after = evaluate(ippo, rules, args.players, args.eval_episodes)
    args.out.mkdir(parents=True, exist_ok=True)
    ippo.save_checkpoint(str(args.out / "ippo.pt"))
    command = (
        "python experiments/integrations/agilerl_ippo.py "
        f"--steps {args.steps} --players {args.players} "
        f"--hand-sizes {' '.join(map(str, args.hand_sizes))} --reward {args.reward} "
        f"--learn-step {args.learn_step} --batch-size {args.batch_size} --epochs {args.epochs} "
        f"--eval-episodes {args.eval_episodes} --seed {args.seed} --out {args.out}"
    )
    result = {
        "library": "AgileRL IPPO (craits_env.integrations.agilerl.parallel_env)",
        "versions": {
            "agilerl": AGILERL_VERSION,
            "torch": torch.__version__,
            "pettingzoo": pettingzoo.__version__,
            "craits": craits_env.__version__,
            "python": platform.python_version(),
        },
        "env": {"num_players": args.players, "rules": rules.to_dict(), "reward": args.reward},
        "eval_seat": EVAL_SEAT,
        "hyperparameters": {k: getattr(args, k) for k in HYPERPARAMETERS},
        "steps": state["steps"],
        "episodes": state["episodes"],
        "updates": updates,
        "train_seconds": round(seconds, 1),
        "steps_per_second": round(state["steps"] / seconds, 1),
        "actor_parameter_change": change,  # L2 norm of the update: > 0 once IPPO learned
        "illegal_actions_in_training": env.illegal_actions,
        "decisions_in_training": env.decisions,
        "before": before,
        "after": after,
        "command": command,
    }
    atomic_write_json(args.out / "results.json", result)
    atomic_write_text(
        args.out / "results.md",
        "\n".join(
            [
                "# AgileRL IPPO on craits_v0 (craits_env.integrations.agilerl, masks in infos)",
                "",
                f"One shared IPPO policy for all {args.players} seats (self-play), hands "
                f"{tuple(args.hand_sizes)}, reward `{args.reward}`; {state['steps']:,} steps "
                f"({state['episodes']:,} games, {updates} updates) in {seconds:,.0f} s "
                f"({result['steps_per_second']:,.0f} steps/s); agilerl {AGILERL_VERSION}, "
                f"torch {torch.__version__}. {env.decisions:,} training decisions checked "
                "against their masks: none illegal; none in evaluation either.",
                "",
                f"Evaluation: seat {EVAL_SEAT} (the shared policy, sampling) against "
                f"{args.players - 1} x `random` (`craits.agents.make_agent`), held-out seeds.",
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
