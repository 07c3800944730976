"""Masked PPO with self-play on every seat, in one file, CleanRL style, on the batched engine.

Every seat of every game is the same network: each engine step, each of ``num_envs`` games
asks its acting seat for one decision (``VectorGame.current_player`` / ``observe`` /
``legal_mask``), and ``step`` pays every seat (``rewards`` is ``(num_envs, players)``). A
seat's transition runs from its decision to its next one: the rewards paid to it in between
are its reward, the game's end is its terminal, and a decision still open when a rollout ends
is bootstrapped from the value of that seat's view then (``observe(seats=...)``). At the end,
a duplicate evaluation: every held-out deal played with the agent in each seat against three
``expert`` (the compiled twins on the Gymnasium vector env: the Python bot's moves).

    python experiments/cleanrl_ppo.py --total-decisions 3000000 --out runs/cleanrl_ppo

Results: ``OUT/results.json`` (the config, the curve, the evaluation) and ``OUT/agent.pt``.
See docs/vector.md, "Self-play on every seat", for the API and the numbers this reaches.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import gymnasium
import numpy as np
import torch
from torch import nn

import craits_env  # noqa: F401  (registers craits/Craits-v0 and its vector entry point)
from craits_env.vector import VectorGame


@dataclass
class Config:
    seed: int = 0
    num_players: int = 4
    num_envs: int = 256  # games stepped together, one decision each per engine step
    num_steps: int = 64  # engine steps per rollout
    total_decisions: int = 3_000_000
    learning_rate: float = 5e-4
    anneal_lr: bool = True
    gamma: float = 0.99  # per decision of the seat
    gae_lambda: float = 0.95
    num_minibatches: int = 8
    update_epochs: int = 4
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 256
    reward: str = "bounded"  # craits_v0's reward modes: relative, bounded, score, win
    eval_deals: int = 200  # held-out deals, each played with the agent in every seat
    eval_seed: int = 1_000_000  # the deals' seeds: eval_seed, eval_seed + 1, ...
    torch_threads: int = 1
    out: str = ""


def layer(i: int, o: int, std: float = math.sqrt(2)) -> nn.Linear:
    lin = nn.Linear(i, o)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


class Agent(nn.Module):
    def __init__(self, obs_size: int, actions: int, hidden: int) -> None:
        super().__init__()
        self.critic = nn.Sequential(
            layer(obs_size, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(),
            layer(hidden, 1, 1.0),
        )  # fmt: skip
        self.actor = nn.Sequential(
            layer(obs_size, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(),
            layer(hidden, actions, 0.01),
        )  # fmt: skip

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(obs).squeeze(-1)

    def logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.actor(obs).masked_fill(~mask, -1e9)  # illegal actions: probability 0

    def act(self, obs: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        dist = torch.distributions.Categorical(logits=self.logits(obs, mask))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(obs)


def gae(c: Config, rew, val, nxt, term, boot):
    """Advantages over each seat's own chain of decisions: ``nxt[t, b]`` the step of the same
    seat's next decision in this rollout (-1: none), ``term`` its game ended before it,
    ``boot`` the value that ends a chain still open."""
    steps, games = rew.shape
    adv = np.zeros_like(rew)
    cols = np.arange(games)
    for t in reversed(range(steps)):
        inside = nxt[t] >= 0
        at = np.where(inside, nxt[t], 0)
        next_value = np.where(inside, val[at, cols], boot[t])
        next_adv = np.where(inside, adv[at, cols], 0.0)
        live = 1.0 - term[t]
        delta = rew[t] + c.gamma * next_value * live - val[t]
        adv[t] = delta + c.gamma * c.gae_lambda * live * next_adv
    return adv, adv + val


def train(c: Config) -> dict:
    torch.manual_seed(c.seed)
    torch.set_num_threads(c.torch_threads)
    n, B, T = c.num_players, c.num_envs, c.num_steps
    vg = VectorGame(B, n, seed=c.seed, reward=c.reward)  # auto-reset: a finished game is redealt
    agent = Agent(vg.obs_size, 59, c.hidden)
    optim = torch.optim.Adam(agent.parameters(), lr=c.learning_rate, eps=1e-5)
    obs, mask = vg.observe(), vg.legal_mask()
    cols = np.arange(B)
    # The open transition of each (game, seat): its step in this rollout, or -1.
    open_at = np.full((B, n), -1, np.int64)
    updates = max(1, c.total_decisions // (B * T))
    curve, start, games_done = [], time.perf_counter(), 0
    for update in range(updates):
        if c.anneal_lr:
            optim.param_groups[0]["lr"] = c.learning_rate * (1.0 - update / updates)
        b_obs = np.zeros((T, B, vg.obs_size), np.float32)
        b_mask = np.zeros((T, B, 59), np.bool_)
        b_act, b_logp, b_val = (np.zeros((T, B), np.float32) for _ in range(3))
        b_rew, b_term, b_boot = (np.zeros((T, B), np.float32) for _ in range(3))
        b_next = np.full((T, B), -1, np.int64)
        open_at[:] = -1  # chains of the last rollout were closed by their bootstrap
        for t in range(T):
            seat = vg.current_player()
            prev = open_at[cols, seat]  # this seat's previous decision in this rollout
            b_next[prev[prev >= 0], cols[prev >= 0]] = t
            open_at[cols, seat] = t
            b_obs[t], b_mask[t] = obs, mask.astype(bool)
            with torch.no_grad():
                a, logp, _, v = agent.act(torch.from_numpy(obs), torch.from_numpy(b_mask[t]))
            b_act[t], b_logp[t], b_val[t] = a.numpy(), logp.numpy(), v.numpy()
            rewards, done = vg.step(a.numpy(), observe_into=obs, mask_into=mask)
            rows, seats = np.nonzero(open_at >= 0)  # every open decision earns its seat's pay
            b_rew[open_at[rows, seats], rows] += rewards[rows, seats]
            ended = np.flatnonzero(done)
            for b in ended:  # the game ended: every seat's open decision is terminal
                for s in np.flatnonzero(open_at[b] >= 0):
                    b_term[open_at[b, s], b] = 1.0
                open_at[b] = -1
            games_done += ended.size
        with torch.no_grad():  # still open: bootstrap from the seat's view now
            for s in range(n):
                rows = np.flatnonzero(open_at[:, s] >= 0)
                view = vg.observe(seats=np.full(B, s))[rows]
                b_boot[open_at[rows, s], rows] = agent.value(torch.from_numpy(view)).numpy()
        adv, ret = gae(c, b_rew, b_val, b_next, b_term, b_boot)
        flat = {
            "obs": torch.from_numpy(b_obs.reshape(T * B, -1)),
            "mask": torch.from_numpy(b_mask.reshape(T * B, -1)),
            "act": torch.from_numpy(b_act.reshape(-1)).long(),
            "logp": torch.from_numpy(b_logp.reshape(-1)),
            "adv": torch.from_numpy(adv.reshape(-1)),
            "ret": torch.from_numpy(ret.reshape(-1)),
        }
        size = T * B // c.num_minibatches
        for _ in range(c.update_epochs):
            order = torch.randperm(T * B)
            for i in range(0, T * B, size):
                mb = order[i : i + size]
                _, logp, ent, v = agent.act(flat["obs"][mb], flat["mask"][mb], flat["act"][mb])
                ratio = (logp - flat["logp"][mb]).exp()
                a = flat["adv"][mb]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - c.clip_coef, 1 + c.clip_coef))
                loss = (
                    pg.mean()
                    - c.ent_coef * ent.mean()
                    + c.vf_coef * 0.5 * ((v - flat["ret"][mb]) ** 2).mean()
                )
                optim.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), c.max_grad_norm)
                optim.step()
        decisions = (update + 1) * B * T
        seconds = time.perf_counter() - start
        curve.append({"decisions": decisions, "seconds": round(seconds, 1), "games": games_done})
        if update % 10 == 0 or update == updates - 1:
            print(f"update {update + 1}/{updates}: {decisions:,} decisions, "
                  f"{decisions / seconds:,.0f}/s, {games_done:,} games", flush=True)  # fmt: skip
    return {"agent": agent, "curve": curve, "seconds": time.perf_counter() - start}


def evaluate(c: Config, agent: Agent) -> dict:
    """Each deal with the agent in each seat, three ``expert`` in the others: the mean score
    and the win share (ties split) per deal, with 95% intervals over the deals."""
    share, score = np.zeros((c.eval_deals, c.num_players)), np.zeros((c.eval_deals, c.num_players))
    seeds = [c.eval_seed + d for d in range(c.eval_deals)]
    for seat in range(c.num_players):
        env = gymnasium.make_vec(
            "craits/Craits-v0", num_envs=c.eval_deals, vectorization_mode="vector_entry_point",
            num_players=c.num_players, opponents="expert", seat=seat, flat_obs=True,
        )  # fmt: skip
        obs, info = env.reset(seed=seeds)
        playing = np.ones(c.eval_deals, np.bool_)
        while playing.any():
            with torch.no_grad():
                logits = agent.logits(torch.from_numpy(obs), torch.from_numpy(env.action_masks()))
            actions = np.where(playing, logits.argmax(-1).numpy(), 0)
            obs, _, term, trunc, info = env.step(actions)
            for d in np.flatnonzero((term | trunc) & playing):
                winners = info["winners"][d]
                share[d, seat] = 1.0 / len(winners) if seat in winners else 0.0
                score[d, seat] = info["scores"][d][seat]
                playing[d] = False
        env.close()
    per_deal = {"win_share": share.mean(1), "mean_score": score.mean(1)}
    return {
        key: {"mean": float(v.mean()), "ci95": 1.96 * float(v.std(ddof=1)) / math.sqrt(v.size)}
        for key, v in per_deal.items()
    } | {"deals": c.eval_deals, "games": c.eval_deals * c.num_players}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    kinds = {"int": int, "float": float, "str": str, "bool": lambda s: s.lower() == "true"}
    for f in dataclasses.fields(Config):
        parser.add_argument("--" + f.name.replace("_", "-"), type=kinds[f.type], default=f.default)
    c = Config(**vars(parser.parse_args()))
    if c.num_envs * c.num_steps % c.num_minibatches:
        parser.error("--num-envs x --num-steps must be a multiple of --num-minibatches")
    run = train(c)
    config = {k: v for k, v in dataclasses.asdict(c).items() if k != "out"}
    result = {"config": config, "train_seconds": round(run["seconds"], 1)}
    result["decisions_per_second"] = round(run["curve"][-1]["decisions"] / run["seconds"])
    result["eval_vs_3_expert"] = evaluate(c, run["agent"])
    result["curve"] = run["curve"]
    print(json.dumps({k: v for k, v in result.items() if k != "curve"}, indent=2))
    if c.out:
        out = Path(c.out)
        out.mkdir(parents=True, exist_ok=True)
        torch.save(run["agent"].state_dict(), out / "agent.pt")
        (out / "results.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
