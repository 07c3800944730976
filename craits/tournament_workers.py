"""Tournament orchestration for the ``craits`` command: games in parallel processes or on Ray.

The tournament itself — plan, games, identities, the resumable store — is
:mod:`craits.agents.duplicate_tournament`; this module only decides *where* the chunks of games
are played (:data:`craits.agents.duplicate_tournament.Executor`): here, in ``workers`` spawned
processes, or as Ray tasks on a local or remote cluster. A game depends only on
the tournament and its task, so every executor gives the same table.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from craits import localray
from craits.agents.duplicate_tournament import (
    Chunk,
    Executor,
    GamePlayer,
    GameTask,
    TournamentConfig,
    TournamentError,
    config_from_dict,
    identify,
    play_here,
    run_games,
)
from craits.agents.shipped import pack, unpack

_WORKER: GamePlayer | None = None
_WORKER_OF: str | None = None  # the tournament (and record flag) _WORKER plays, as JSON


def _init_worker(
    config_dict: dict[str, Any], record: bool = False, shipped: list[dict[str, Any]] | None = None
) -> None:
    global _WORKER, _WORKER_OF
    if shipped:  # the files the specs read, carried by content (craits.agents.shipped)
        unpack(shipped)
    _WORKER = GamePlayer(config_from_dict(config_dict), record)
    _WORKER_OF = json.dumps([config_dict, record], sort_keys=True)


def _play_chunk(tasks: Chunk) -> list[dict[str, Any]]:
    assert _WORKER is not None
    return [_WORKER.play(GameTask(*t)) for t in tasks]


def _play_ray_chunk(
    config_dict: dict[str, Any], record: bool, shipped: list[dict[str, Any]], tasks: Chunk
) -> list[dict[str, Any]]:
    """A Ray task: ``tasks`` played by this worker process's player of the tournament (made
    on its first chunk; a worker process serves every tournament of a run, one after another)."""
    if _WORKER is None or json.dumps([config_dict, record], sort_keys=True) != _WORKER_OF:
        _init_worker(config_dict, record, shipped)
    return _play_chunk(tasks)


def can_play(config_dict: dict[str, Any], shipped: list[dict[str, Any]]) -> list[str]:
    """On a node: make every agent of the tournament once, as a worker there will (the
    first failure raises: an import error, an unusable checkpoint); the agents' identities."""
    _init_worker(config_dict, False, shipped)
    assert _WORKER is not None
    agents = [_WORKER.agent(spec, 0) for spec in _WORKER.config.specs]
    return [str(getattr(a, "identity", "")) for a in agents]


def process_pool(workers: int) -> Executor:
    """Chunks played by ``workers`` spawned processes, yielded as they finish."""

    def run(
        config: TournamentConfig, chunks: list[Chunk], record: bool
    ) -> Iterator[list[dict[str, Any]]]:
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        initargs = (config.to_dict(), record)
        with ctx.Pool(workers, initializer=_init_worker, initargs=initargs) as pool:
            try:
                yield from pool.imap_unordered(_play_chunk, chunks)
            except BaseException:
                pool.terminate()
                raise

    return run


def ray_tasks(shipped: Any) -> Executor:
    """Chunks played as Ray tasks on the Ray this process is connected to, as they finish;
    ``shipped``: the object-store reference of :func:`craits.agents.shipped.pack`'s entries
    for the tournament's specs (see :func:`on_ray`)."""

    def run(
        config: TournamentConfig, chunks: list[Chunk], record: bool
    ) -> Iterator[list[dict[str, Any]]]:
        import ray

        config_dict = config.to_dict()
        play_chunk = ray.remote(_play_ray_chunk)
        pending = [play_chunk.remote(config_dict, record, shipped, c) for c in chunks]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            try:
                games = ray.get(ready[0])
            except ray.exceptions.RayTaskError as e:
                for ref in pending:
                    ray.cancel(ref, force=True)
                cause = e.cause if isinstance(e.cause, Exception) else e
                raise TournamentError(str(cause).strip().splitlines()[-1]) from None
            yield games

    return run


@contextlib.contextmanager
def on_ray(config: TournamentConfig, address: str | None) -> Iterator[Any]:
    """Ray for one tournament: the connection this process has, else a local instance
    (``address`` None) or the cluster at ``address`` for the time of the ``with``
    (:func:`craits.localray.session`); the files the specs read put in the object store by
    content (yielded: the reference); every node first asked to make every agent. Anything
    that stops it — an unreachable cluster, a refused token, no CPU, a node that cannot make
    an agent — is a one-line ``ClusterError`` before any game."""
    try:
        import ray
    except ImportError:
        raise TournamentError("--ray needs Ray: pip install 'craits[ray]'") from None
    with localray.session(address, include_dashboard=False, log_to_driver=False, cpus=1):
        entries = pack(config.specs)
        localray.check_nodes(
            functools.partial(can_play, config.to_dict(), entries),
            "play this tournament's agents",
        )
        yield ray.put(entries)


def run_tournament(
    config: TournamentConfig,
    out: Path,
    workers: int = 1,
    ray_address: str | None = None,
    use_ray: bool = False,
    progress: Callable[[int, int], None] | None = None,
    chunk: int | None = None,
    record: bool = False,
) -> dict[str, dict[str, Any]]:
    """:func:`craits.agents.duplicate_tournament.run_games` here, on ``workers`` processes or
    on Ray (:func:`on_ray`: a ``ClusterError`` comes before anything is written)."""
    if not config.agents:
        config = identify(config)
    if use_ray:
        with on_ray(config, ray_address) as shipped:
            return run_games(
                config,
                out,
                progress=progress,
                chunk=chunk,
                record=record,
                executor=ray_tasks(shipped),
            )
    executor = process_pool(workers) if workers > 1 else play_here
    return run_games(config, out, progress=progress, chunk=chunk, record=record, executor=executor)
