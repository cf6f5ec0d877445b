"""The periodic loops of `memoryx serve`, each a task its lifespan starts and cancels (`stop_background_task`).

- `replay_loop`: replays the projection outbox every MEMORYX_OUTBOX_REPLAY_INTERVAL_S seconds, so a
  projection that failed (a store briefly down) converges without a restart; with MEMORYX_EPISODES on, the
  same tick closes episodes whose conversation has been quiet longer than MEMORYX_EPISODE_GAP_S.
- `consolidate_loop`: consolidation (settings.consolidate_interval_s, default every 6 h; 0: off). Every
  interval, one pass per owner of memories (SQLStore.memory_owner_scopes: each user, in and outside each
  group chat, agents' and runs' own memories, groups' own) in batches of settings.consolidate_batch_size,
  in a worker thread, each retried settings.consolidate_retries times; the pass takes the owner's scope
  lock itself, so it queues behind (never runs beside) an add of the same owner.
- `daily_loop`: the daily job (lifecycle/daily.py: audit scan, daily report, consolidation where enabled, the
  schedule.daily event) every settings.daily_job_interval_s.

Several workers on one PostgreSQL run each job once per interval: a tick runs only when this worker claims
it (`SQLStore.scheduled_job`: an advisory lock while it runs and a row saying when it last started). There
the replay tick also resumes add runs whose worker died (`resume_runs`: a run another worker is executing
holds its run lock and is left alone)."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from typing import TYPE_CHECKING, Any, Callable, Coroutine

from memoryx.knowledge.episode_memories import close_idle_episodes
from memoryx.lifecycle.daily import run_daily_job
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


def consolidate_scope(memory: Any, scope: Any, *, retries: int, backoff_s: float) -> dict | None:
    """One scheduled pass over `scope`, retried `retries` times with doubling waits; None when every try failed.
    Blocking: runs in the loop's worker thread."""
    wait = backoff_s
    for attempt in range(retries + 1):
        try:
            return memory.consolidate(**scope.as_dict())
        except Exception as exc:  # noqa: BLE001 - one scope's failure must not stop the others
            if attempt == retries:
                log.warning("scheduled consolidation of %s failed %d times, left for the next cycle: %s",
                            scope.key(), attempt + 1, exc)
                return None
            log.info("scheduled consolidation of %s failed (retry %d in %g s): %s", scope.key(), attempt + 1, wait, exc)
            time.sleep(wait)
            wait *= 2
    return None


def consolidate_cycle(memory: Any) -> dict:
    """One cycle: every owner's scope, in batches of settings.consolidate_batch_size. Returns the totals.
    Blocking: call it in a worker thread."""
    s = memory.settings
    scopes = memory.services.sql.memory_owner_scopes()
    totals = {"scopes": len(scopes), "failed": 0, "merged": 0, "compressed": 0, "archived": 0}
    for start in range(0, len(scopes), s.consolidate_batch_size):
        for scope in scopes[start:start + s.consolidate_batch_size]:
            report = consolidate_scope(memory, scope, retries=s.consolidate_retries,
                                       backoff_s=s.consolidate_retry_backoff_s)
            if report is None:
                totals["failed"] += 1
                continue
            for key in ("merged", "compressed", "archived"):
                totals[key] += len(report[key]) if isinstance(report.get(key), list) else int(report.get(key) or 0)
        log.info("consolidated scopes %d-%d of %d", start + 1, min(start + s.consolidate_batch_size, len(scopes)),
                 len(scopes))
    return totals


async def claimed_loop(sql: Any, name: str, interval_s: float, job: Callable[[], Any],
                       report: Callable[[Any], None]) -> None:
    """Every `interval_s` seconds, `job()` in a worker thread when this worker claims the interval's run of
    `name` (one worker per interval on a shared PostgreSQL), then `report(result)`; until cancelled."""
    while True:
        await asyncio.sleep(interval_s)
        try:
            mine, result = await asyncio.to_thread(run_claimed, sql, name, interval_s, job)
            if mine:
                report(result)
        except Exception as exc:  # noqa: BLE001 - the loop outlives a store that is briefly down
            log.warning("scheduled %s failed (retried in %g s): %s", name, interval_s, exc)


def consolidate_loop(memory: Any, interval_s: float) -> Coroutine:
    return claimed_loop(memory.services.sql, "consolidate", interval_s, functools.partial(consolidate_cycle, memory),
                        lambda totals: log.info("consolidation cycle: %s", totals))


def start_consolidate_loop(memory: Any) -> "asyncio.Task | None":
    interval = memory.settings.consolidate_interval_s
    if interval <= 0:
        return None
    return asyncio.get_running_loop().create_task(consolidate_loop(memory, interval), name="memoryx-consolidate")


def daily_loop(memory: Any, interval_s: float) -> Coroutine:
    return claimed_loop(memory.services.sql, "daily_job", interval_s, functools.partial(run_daily_job, memory),
                        lambda done: log.info("daily job: %d findings (%d new) over %d records", done["findings"],
                                              done["new_findings"], done["scanned"]))


def start_daily_loop(memory: Any) -> "asyncio.Task | None":
    interval = memory.settings.daily_job_interval_s
    if interval <= 0:
        return None
    return asyncio.get_running_loop().create_task(daily_loop(memory, interval), name="memoryx-daily")


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
        if mine and (services.settings.episodes or services.settings.participant_episodes):
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
