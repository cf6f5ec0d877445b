"""The periodic loops of `memoryx serve`, each a task its lifespan starts and cancels (`stop_background_task`).

- `replay_loop`: replays the projection outbox every MEMORYX_OUTBOX_REPLAY_INTERVAL_S seconds, so a
  projection that failed (a store briefly down) converges without a restart; with MEMORYX_EPISODES on, the
  same tick closes episodes whose conversation has been quiet longer than MEMORYX_EPISODE_GAP_S.
- `consolidate_loop`: consolidation (settings.consolidate_interval_s; 0: off). Every interval, one pass per
  owner of memories (SQLStore.memory_owner_scopes: each user, in and outside each group chat,
agents' and runs' own memories, groups' own), each in a worker thread; the pass takes the owner's scope lock
itself, so it queues behind (never runs beside) an add of the same owner.

Several workers on one PostgreSQL run each job once per interval: a tick runs only when this worker claims
it (`SQLStore.scheduled_job`: an advisory lock while it runs and a row saying when it last started). There
the replay tick also resumes add runs whose worker died (`resume_runs`: a run another worker is executing
holds its run lock and is left alone)."""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import TYPE_CHECKING, Any, Callable

from memoryx.knowledge.episode_memories import close_idle_episodes
from memoryx.runtime.recovery import replay_outbox

if TYPE_CHECKING:
    from memoryx.runtime.services import Services

log = logging.getLogger(__name__)

# The periodic replay leaves jobs younger than this to their writer, whose own projection is in flight.
REPLAY_MIN_AGE_S = 10.0


def run_claimed(sql: Any, name: str, every_s: float, job: Callable[[], Any]) -> tuple[bool, Any]:
    """(True, job()) when this worker claims this interval's run of `name`, else (False, None). Blocking:
    call it in a worker thread."""
    with sql.scheduled_job(name, every_s) as mine:
        return (True, job()) if mine else (False, None)


def _consolidate_all(memory: Any, interval_s: float) -> None:
    try:
        scopes = memory.services.sql.memory_owner_scopes()
    except Exception as exc:  # noqa: BLE001 - the loop outlives a store that is briefly down
        log.warning("scheduled consolidation could not list scopes (retried in %g s): %s", interval_s, exc)
        return
    for scope in scopes:
        try:
            report = memory.consolidate(**scope.as_dict())
            log.info("consolidated %s: merged %s, compressed %s, archived %s", scope.key(),
                     report["merged"], report["compressed"], report["archived"])
        except Exception as exc:  # noqa: BLE001 - one scope's failure must not stop the others
            log.warning("scheduled consolidation of %s failed: %s", scope.key(), exc)


async def consolidate_loop(memory: Any, interval_s: float) -> None:
    while True:
        await asyncio.sleep(interval_s)
        try:
            await asyncio.to_thread(run_claimed, memory.services.sql, "consolidate", interval_s,
                                    functools.partial(_consolidate_all, memory, interval_s))
        except Exception as exc:  # noqa: BLE001 - a claim that fails (database briefly down) waits a tick
            log.warning("scheduled consolidation could not start (retried in %g s): %s", interval_s, exc)


def start_consolidate_loop(memory: Any) -> "asyncio.Task | None":
    interval = memory.settings.consolidate_interval_s
    if interval <= 0:
        return None
    return asyncio.get_running_loop().create_task(consolidate_loop(memory, interval), name="memoryx-consolidate")


async def replay_loop(services: "Services", interval_s: float, *, min_age_s: float = REPLAY_MIN_AGE_S,
                      resume_runs: Callable[[], Any] | None = None) -> None:
    """Replay the outbox every `interval_s` seconds until cancelled (the server's lifespan cancels it); on
    PostgreSQL also resume the add runs of dead workers (`resume_runs`)."""

    def tick() -> int:
        done = replay_outbox(services, min_age_s=min_age_s)
        if resume_runs is not None and services.sql.is_postgres:  # SQLite: no other worker whose run could die
            resume_runs()
        return done

    while True:
        await asyncio.sleep(interval_s)
        try:
            mine, done = await asyncio.to_thread(run_claimed, services.sql, "outbox_replay", interval_s, tick)
            if done:
                log.info("periodic replay projected %d queued writes", done)
        except Exception as exc:  # noqa: BLE001 - the loop outlives a store that is briefly down
            log.warning("periodic outbox replay failed (retried in %g s): %s", interval_s, exc)
            mine = False
        if mine and services.settings.episodes:
            # A conversation that went quiet gets its episode closed (and its final narrative) without
            # waiting for the next add of that scope.
            try:
                closed = await asyncio.to_thread(close_idle_episodes, services)
                if closed:
                    log.info("closed %d idle episodes", len(closed))
            except Exception as exc:  # noqa: BLE001 - same: retried on the next tick
                log.warning("closing idle episodes failed (retried in %g s): %s", interval_s, exc)


def start_replay_loop(services: "Services", resume_runs: Callable[[], Any] | None = None) -> "asyncio.Task | None":
    """Start `replay_loop` on the running event loop (None when MEMORYX_OUTBOX_REPLAY_INTERVAL_S is 0)."""
    interval = services.settings.outbox_replay_interval_s
    if interval <= 0:
        return None
    return asyncio.get_running_loop().create_task(replay_loop(services, interval, resume_runs=resume_runs),
                                                  name="memoryx-outbox-replay")


async def stop_background_task(task: "asyncio.Task | None") -> None:
    """Cancel one of the server's periodic loops (outbox replay, retention, consolidation) and wait for it."""
    if task is None:
        return
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
