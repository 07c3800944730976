"""Self-play on a Ray cluster: rollout workers as Ray actors, one synchronous PPO learner.

``craits train --ray [ADDRESS] --workers K`` runs the same loop as ``craits train``
(:mod:`craits.training.train`: collect -> GAE -> PPO epochs -> log -> checkpoint), with the
games played by ``K`` :class:`RolloutWorker` actors instead of this process
(:class:`RayRollouts`, a :class:`craits.training.rollouts.Rollouts`):

* **Each worker** (one CPU, one torch thread) steps its own ``num_games`` games
  (a :class:`~craits.training.selfplay.SelfPlayRollout`, or on ``backend="vector"`` a
  :class:`~craits.training.vector_selfplay.VectorSelfPlayRollout`) with a CPU copy of the policy and
  its own copy of the opponent pool. Worker ``w``'s games in its ``i``-th
  incarnation are seeded by :func:`craits.training.rollouts.rollout_generators` ``(seed, w, i)``;
  worker 0's first incarnation is the single-process rollout, so ``--workers 1``
  trains exactly what ``craits train`` trains.
* **An update** splits ``batch_size`` over the workers (:func:`split_batch`: the first
  ``batch_size % K`` collect one more), sends them the current weights (``ray.put``
  once, every worker reads the same object) with the update they come from, gathers
  the segments **in worker order**, concatenates them
  (:meth:`~craits.training.buffer.Segment.concatenate`: the streams stay apart, so GAE
  gives each transition what one process gives it) and learns (on CUDA when present).
  Synchronous: every worker acts with the newest weights, so the policy lag is 0 by
  construction (logged anyway, as ``charts/policy_lag``), and the same seed and
  worker count give the same parameters.
* **The opponent pool**: the learner freezes the snapshots; each new one is sent to
  every worker (which retires and prunes its copy exactly as the learner does its
  own); bots are built from their specs in each worker (a ``ppo:PATH`` opponent's file is
  read here and carried to the nodes by content through the object store:
  :mod:`craits.agents.shipped`).
* **The cluster**: :func:`craits.localray.init` (an existing cluster's address as given, its
  token, craits shipped to the nodes); every node is first asked whether it can run a worker
  of this run (:func:`can_collect`): an unusable cluster or node is a one-line
  :class:`craits.localray.ClusterError` before the first update.
* **A worker that dies** (its process killed, its machine lost: Ray's
  ``RayActorError``) is replaced by a new actor (incarnation + 1: new games, new
  seeds), given the current weights and pool, and its share of the batch is collected
  again; the run goes on (nothing learned or checkpointed is lost), a line is printed
  and ``charts/worker_restarts`` counts it. More than :data:`MAX_FAILURES` deaths of one
  worker in a row (no batch from it in between) stop the run: :class:`WorkersFailed`.
* **Checkpoints** hold every worker's games in flight, carried transitions, pool and
  generators: ``--resume`` with the same number of workers continues bit-identically;
  with another number new games are dealt and the run goes on. One worker's games and one
  process's are the same thing: they move between ``--workers 1`` and no ``--ray`` exactly.

TensorBoard, besides ``craits train``'s scalars: ``charts/worker_<k>_sps`` (worker
``k``'s environment steps per second of its own collecting), ``charts/policy_lag``
(updates between the weights a batch was played with and the learner's),
``charts/worker_restarts``, ``charts/broadcast_ms`` (putting the weights in the
object store plus the slowest worker's loading them) and ``charts/gather_ms`` (the
rest of an update's collection beyond the slowest worker: scheduling, transfers,
concatenation). ``time/{env,encode,forward}`` are the mean worker's.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from craits import localray
from craits.agents.checkpoint import bytes_to_tensor, tensor_to_bytes
from craits.agents.network import PolicyNet, frozen_network
from craits.agents.shipped import pack, unpack

from .buffer import RolloutStats, Segment
from .config import TrainConfig
from .pool import OpponentPool
from .rollouts import new_rollout, rollout_generators

WORKER_THREADS = 1  # torch threads of a rollout worker (it holds one CPU)
WORKER_CPUS = 1  # Ray CPUs a rollout worker asks for
MAX_FAILURES = 3  # deaths of one worker in a row (no batch in between) replaced; one more stops
DEFAULT_WORKERS = 2


class WorkersFailed(RuntimeError):
    """A rollout worker died :data:`MAX_FAILURES` + 1 times in a row (one line)."""


def split_batch(batch_size: int, workers: int) -> list[int]:
    """Each worker's share of an update's transitions: as equal as can be, the first ones
    one more (``split_batch(10, 3) == [4, 3, 3]``)."""
    if not 1 <= workers <= batch_size:
        raise ValueError(f"workers: got {workers}, allowed 1 to batch_size ({batch_size})")
    base, extra = divmod(batch_size, workers)
    return [base + (k < extra) for k in range(workers)]


@dataclass
class WorkerResult:
    """One worker's part of an update."""

    segment: Segment
    stats: RolloutStats
    seated: dict[str, int]  # opponent seats drawn (the pool's counts, for pool/<kind>_share)
    version: int  # the update the weights it acted with come from
    seconds: float  # its collecting, wall clock
    weights_seconds: float  # its loading of the weights


class RolloutWorker:
    """A Ray actor's state: ``num_games`` games, a CPU policy, a copy of the opponent pool.

    A plain class (:class:`RayRollouts` makes it an actor), so that it runs and is tested
    without Ray too. ``snapshots`` are the learner's pool's (``OpponentPool.state_dict()``'s
    ``"snapshots"``): a worker started in the middle of a run seats them from its first game.
    ``shipped``: :func:`craits.agents.shipped.pack`'s entries for the config's opponents (the
    files they read, written on this node by content before any is seated).
    """

    def __init__(
        self,
        config: dict[str, Any],
        net_spec: dict[str, Any],
        worker: int,
        incarnation: int,
        snapshots: list[dict[str, Any]],
        shipped: list[dict[str, Any]] | None = None,
    ) -> None:
        torch.set_num_threads(WORKER_THREADS)
        if shipped:  # the files of the ppo:PATH opponents, carried by content
            unpack(shipped)
        self.config = TrainConfig.from_dict(config)
        self.worker, self.incarnation = worker, incarnation
        self.net_spec = net_spec
        self.pool = OpponentPool(self.config.opponents, net_spec, self.config.pool_size)
        self.pool.load_state_dict({"snapshots": snapshots})
        rng, self.sample_gen = rollout_generators(self.config.seed, worker, incarnation)
        self.rollout = new_rollout(self.config, self.pool, rng)
        self.actor = frozen_network(net_spec)
        self.version = -1  # no weights yet

    def where(self) -> tuple[int, str]:
        """This process's id and host (to kill it, or find its logs)."""
        return os.getpid(), socket.gethostname()

    def collect(
        self, batch_size: int, weights: dict[str, torch.Tensor], version: int
    ) -> WorkerResult:
        """Act with ``weights`` (the network after update ``version``) until ``batch_size``
        transitions are complete."""
        t0 = time.perf_counter()
        if version != self.version:
            self.actor.load_state_dict(weights)
            self.version = version
        t1 = time.perf_counter()
        segment, stats = self.rollout.collect(self.actor, batch_size, self.sample_gen)
        seated = dict(self.pool.seated)
        self.pool.seated.clear()
        return WorkerResult(segment, stats, seated, self.version, time.perf_counter() - t1, t1 - t0)

    def add_snapshot(self, snapshot: dict[str, Any]) -> None:
        """Seat the learner's newest snapshot in new games (once, however often it is sent)."""
        update = int(snapshot["update"])
        if any(s.update == update for s in (*self.pool.snapshots, *self.pool.retired)):
            return
        self.pool.add_snapshot(frozen_network(self.net_spec, snapshot["state_dict"]), update)
        self.pool.prune(self.rollout.in_use())

    def state(self) -> dict[str, Any]:
        """The games in flight, the carried transitions, the generators, the retired
        snapshots still seated (the pool's others are the learner's)."""
        return {
            "rollout": self.rollout.state_bytes(),
            "sample": self.sample_gen.get_state(),
            "retired": self.pool.state_dict()["retired"],
        }

    def load_state(self, state: dict[str, Any], snapshots: list[dict[str, Any]]) -> None:
        """Continue :meth:`state`'s games, with the learner's ``snapshots``."""
        self.pool.load_state_dict({"snapshots": snapshots, "retired": state["retired"]})
        self.sample_gen.set_state(state["sample"])
        self.rollout.load_state_bytes(state["rollout"])


def merge(results: list[WorkerResult]) -> tuple[Segment, RolloutStats]:
    """The workers' segments concatenated in worker order, their stats summed (the times:
    the mean worker's)."""
    segment = Segment.concatenate([r.segment for r in results])
    stats = RolloutStats()
    for r in results:
        s = r.stats
        stats.steps += s.steps
        stats.network_decisions += s.network_decisions
        stats.transitions += s.transitions
        stats.learner_hand_points += s.learner_hand_points
        stats.learner_wins += s.learner_wins
        stats.learner_scores += s.learner_scores
        for key, value in s.seconds.items():
            stats.seconds[key] = stats.seconds.get(key, 0.0) + value / len(results)
    return segment, stats


def can_collect(shipped: list[dict[str, Any]]) -> str:
    """On a node: what a rollout worker there needs (torch, craits's training, the opponents'
    files) is importable and written; the node's torch version."""
    if shipped:
        unpack(shipped)
    return str(torch.__version__)


@dataclass(frozen=True)
class RayOptions:
    """``craits train --ray [ADDRESS] --workers K``: a
    :data:`craits.training.rollouts.RolloutsFactory`.

        ``address`` None: a local Ray instance (unless ``RAY_ADDRESS`` names a cluster), started
        here and stopped at the end; otherwise that cluster's (``"auto"``, ``"HOST:PORT"``,
        ``"ray://HOST:PORT"``), left running. A process already connected to Ray (``ray.init``
        called before, as in a notebook or a test) keeps its connection.
    """

    workers: int = DEFAULT_WORKERS
    address: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
            raise ValueError(f"workers: got {self.workers!r}, allowed an int >= 1")

    def __call__(self, config: TrainConfig, pool: OpponentPool) -> RayRollouts:
        return RayRollouts(config, pool, self.workers, self.address)


class RayRollouts:
    """:class:`RolloutWorker` actors on a Ray cluster (see the module docstring)."""

    def __init__(
        self, config: TrainConfig, pool: OpponentPool, workers: int, address: str | None
    ) -> None:
        from craits_env.extras import require

        require("ray", "craits train --ray")
        import ray

        split_batch(config.batch_size, workers)  # workers <= batch_size, or one line
        self.ray = ray
        self.config, self.pool, self.count, self.address = config, pool, workers, address
        self.initialised_here = False
        self.handles: list[Any] = []
        self.incarnations = [0] * workers
        self.where: list[tuple[int, str]] = [(-1, "?")] * workers  # each worker's pid and host
        self.restarts = 0
        self._messages: list[str] = []
        self._weights: Any = None  # the ObjectRef of the weights last sent
        self._version = -1
        self.shipped_entries = pack(list(config.opponents))  # ppo:PATH opponents, by content
        try:
            self._init_ray()
            self.shipped = ray.put(self.shipped_entries)
            self.actor_class = ray.remote(num_cpus=WORKER_CPUS, max_restarts=0)(RolloutWorker)
            self.config_dict = config.to_dict()
            self.handles = [self._start(k) for k in range(workers)]
            self.where = self._call_all(lambda h: h.where.remote())
        except BaseException:
            self.close()
            raise

    # -- the cluster ------------------------------------------------------------------

    def _init_ray(self) -> None:
        """Connect (or start a local instance), then ask every node whether it can run a
        rollout worker of this run; ``ClusterError`` (one line) if not."""
        ray = self.ray
        if ray.is_initialized() and not localray.is_local(self.address):
            localray.check_address(self.address)  # used as it is, but a bad one is said
        if not ray.is_initialized():  # else this process's connection (a notebook's, a test's)
            local = localray.is_local(self.address)
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if local:  # a new instance; every worker gets its CPU (a small machine oversubscribed)
                options["num_cpus"] = max(os.cpu_count() or 1, self.count * WORKER_CPUS)
                options["logging_level"] = logging.ERROR  # not Ray's banner and notices
            try:
                localray.init(
                    "local" if local else self.address, cpus=self.count * WORKER_CPUS, **options
                )
            except localray.ClusterError:
                raise
            except (ConnectionError, RuntimeError, ValueError) as e:
                where = self.address or os.environ.get("RAY_ADDRESS") or "a local instance"
                error = _first_line(e)
                raise ValueError(f"Ray at {where}: cannot start or connect ({error})") from None
            self.initialised_here = True
        cpus = ray.cluster_resources().get("CPU", 0)
        if cpus < self.count * WORKER_CPUS:
            raise localray.ClusterError(
                f"workers: {self.count} rollout workers need {self.count * WORKER_CPUS} CPUs; "
                f"the Ray cluster at {self.where_name} has {cpus:g}"
            )
        localray.check_nodes(
            functools.partial(can_collect, self.shipped_entries), "run a rollout worker of this run"
        )

    def _start(self, k: int) -> Any:
        snapshots = self.pool.state_dict()["snapshots"]
        return self.actor_class.options(scheduling_strategy="SPREAD").remote(
            self.config_dict, self.pool.net_spec, k, self.incarnations[k], snapshots, self.shipped
        )

    def _replace(self, k: int, error: BaseException) -> None:
        """Worker ``k`` died: a new actor (next incarnation, new games) in its place."""
        ray = self.ray
        with contextlib.suppress(Exception):  # already gone
            ray.kill(self.handles[k], no_restart=True)
        pid, host = self.where[k]
        self.incarnations[k] += 1
        self.handles[k] = self._start(k)
        try:
            self.where[k] = ray.get(self.handles[k].where.remote())
        except ray.exceptions.RayActorError:
            self.where[k] = (-1, "?")
        self.restarts += 1
        self._messages.append(
            f"rollout worker {k} died (pid {pid} on {host}: {_first_line(error)}); replaced by "
            f"pid {self.where[k][0]} (incarnation {self.incarnations[k]}, new games); its "
            "share of the batch is collected again"
        )

    def _get(self, k: int, ref: Any, call: Callable[[Any], Any]) -> Any:
        """``ray.get(ref)``, ``ref`` being ``call(worker k)``; a dead worker is replaced
        and ``call`` made again on the new one (unless it returns None: nothing to redo)."""
        failures = 0
        while True:
            try:
                return self.ray.get(ref)
            except self.ray.exceptions.RayActorError as e:
                failures += 1
                if failures > MAX_FAILURES:
                    raise WorkersFailed(
                        f"rollout worker {k} died {failures} times in a row "
                        f"({_first_line(e)}); giving up"
                    ) from None
                self._replace(k, e)
                ref = call(self.handles[k])
                if ref is None:
                    return None

    def _call_all(self, call: Callable[[Any], Any]) -> list[Any]:
        refs = [call(h) for h in self.handles]
        return [self._get(k, ref, call) for k, ref in enumerate(refs)]

    # -- Rollouts ------------------------------------------------------------------------

    def collect(
        self, actor: PolicyNet, version: int, batch_size: int
    ) -> tuple[Segment, RolloutStats]:
        t0 = time.perf_counter()
        if version != self._version:  # one copy of the weights in the object store
            weights = {k: v.detach().cpu() for k, v in actor.state_dict().items()}
            self._weights = self.ray.put(weights)
            self._version = version
        put = time.perf_counter() - t0
        shares = split_batch(batch_size, self.count)
        refs = [
            h.collect.remote(n, self._weights, version)
            for h, n in zip(self.handles, shares, strict=True)
        ]
        results: list[WorkerResult] = []
        for k, ref in enumerate(refs):

            def again(h: Any, n: int = shares[k]) -> Any:
                return h.collect.remote(n, self._weights, version)

            results.append(self._get(k, ref, again))
        segment, stats = merge(results)
        wall = time.perf_counter() - t0
        slowest = max(r.seconds + r.weights_seconds for r in results)
        scalars = {
            f"charts/worker_{k}_sps": r.stats.steps / r.seconds if r.seconds else 0.0
            for k, r in enumerate(results)
        }
        scalars["charts/policy_lag"] = float(max(version - r.version for r in results))
        scalars["charts/worker_restarts"] = float(self.restarts)
        scalars["charts/broadcast_ms"] = 1e3 * (put + max(r.weights_seconds for r in results))
        scalars["charts/gather_ms"] = 1e3 * max(0.0, wall - put - slowest)
        stats.scalars = scalars
        stats.messages, self._messages = self._messages, []
        return segment, stats

    def snapshot_added(self, pool: OpponentPool) -> None:
        newest = pool.state_dict()["snapshots"][-1]
        ref = self.ray.put(newest)
        self._call_all(lambda h: h.add_snapshot.remote(ref))  # a replaced worker has it already
        pool.prune(set())  # retired snapshots live on in the workers that still seat them

    def save_into(self, checkpoint: dict[str, Any]) -> None:
        if not self.handles:
            raise RuntimeError("the rollout workers are closed: no games to checkpoint")
        states = self._call_all(lambda h: h.state.remote())
        for state, incarnation in zip(states, self.incarnations, strict=True):
            state["rollout"] = bytes_to_tensor(state["rollout"])
            state["incarnation"] = incarnation
        checkpoint["workers"] = {"count": self.count, "states": states}

    def load_from(self, checkpoint: dict[str, Any], pool: OpponentPool) -> str | None:
        stored = checkpoint.get("workers", {}).get("states")
        if stored is None and self.count == 1:  # one process's games go on in one worker
            retired = checkpoint["pool"].get("retired", [])
            stored = [
                {
                    "rollout": checkpoint["rollout"],
                    "sample": checkpoint["rng"]["sample"],
                    "retired": retired,
                    "incarnation": 0,
                }
            ]
        pool.prune(set())  # the retired snapshots seated in the games are the workers'
        snapshots = pool.state_dict()["snapshots"]
        if stored is None or len(stored) != self.count:
            before = f"{len(stored)} rollout workers" if stored is not None else "one process"
            earlier = [int(s["incarnation"]) for s in stored or []]
            self._restart_all(
                [(earlier[k] if k < len(earlier) else 0) + 1 for k in range(self.count)]
            )
            workers = f"{self.count} worker{'s' if self.count > 1 else ''}"
            return (
                f"the games in flight were played by {before}: new games are dealt on "
                f"{workers} (the run continues, not bit-identically)"
            )
        self.incarnations = [int(s["incarnation"]) for s in stored]
        payloads = [{**s, "rollout": tensor_to_bytes(s["rollout"])} for s in stored]
        refs = [
            h.load_state.remote(p, snapshots) for h, p in zip(self.handles, payloads, strict=True)
        ]
        for k, ref in enumerate(refs):
            self._get(k, ref, lambda h: None)  # a worker lost here: new games, as after a death
        return None

    def _restart_all(self, incarnations: list[int]) -> None:
        for h in self.handles:
            with contextlib.suppress(Exception):  # already gone
                self.ray.kill(h, no_restart=True)
        self.incarnations = incarnations
        self.handles = [self._start(k) for k in range(self.count)]
        self.where = self._call_all(lambda h: h.where.remote())

    @property
    def where_name(self) -> str:
        return self.address or os.environ.get("RAY_ADDRESS") or "a local Ray instance"

    @property
    def description(self) -> str:
        where = self.where_name
        workers = ", ".join(
            f"worker {k} pid {pid} on {host}" for k, (pid, host) in enumerate(self.where)
        )
        plural = "s" if self.count > 1 else ""
        return f"{self.count} rollout worker{plural} on {where}: {workers}"

    def close(self) -> list[str]:
        ray = self.ray
        for h in self.handles:
            with contextlib.suppress(Exception):  # already gone
                ray.kill(h, no_restart=True)
        self.handles = []
        if self.initialised_here and ray.is_initialized():
            ray.shutdown()
        self.initialised_here = False
        lines, self._messages = self._messages, []
        return lines


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0][:200] if lines else type(error).__name__
