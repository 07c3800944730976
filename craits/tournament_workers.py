"""Tournament orchestration for the ``craits`` command: games in parallel processes or on Ray.

The tournament itself — plan, games, identities, the resumable store — is
:mod:`craits.agents.duplicate_tournament`; this module only decides *where* the chunks of games
are played (:data:`craits.agents.duplicate_tournament.Executor`): here, in ``workers`` spawned
processes, or as Ray tasks on a local or remote cluster. A game depends only on
the tournament and its task, so every executor gives the same table.
"""

from __future__ import annotations

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
    play_here,
    run_games,
)

_WORKER: GamePlayer | None = None


def _init_worker(config_dict: dict[str, Any], record: bool = False) -> None:
    global _WORKER
    _WORKER = GamePlayer(config_from_dict(config_dict), record)


def _play_chunk(tasks: Chunk) -> list[dict[str, Any]]:
    assert _WORKER is not None
    return [_WORKER.play(GameTask(*t)) for t in tasks]


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


def ray_tasks(address: str | None) -> Executor:
    """Chunks played as Ray tasks (a local Ray when ``address`` is None), as they finish."""

    def run(
        config: TournamentConfig, chunks: list[Chunk], record: bool
    ) -> Iterator[list[dict[str, Any]]]:
        try:
            import ray
        except ImportError:
            raise TournamentError("--ray needs Ray: pip install 'craits[ray]'") from None
        started_here = not ray.is_initialized()
        if started_here:
            localray.init(
                address, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True
            )
        try:
            config_dict = config.to_dict()

            @ray.remote
            def play_chunk(tasks: Chunk) -> list[dict[str, Any]]:
                if _WORKER is None:
                    _init_worker(config_dict, record)
                return _play_chunk(tasks)

            pending = [play_chunk.remote(c) for c in chunks]
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
        finally:
            if started_here:
                ray.shutdown()

    return run


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
    on Ray."""
    if use_ray:
        executor = ray_tasks(ray_address)
    elif workers > 1:
        executor = process_pool(workers)
    else:
        executor = play_here
    return run_games(config, out, progress=progress, chunk=chunk, record=record, executor=executor)
