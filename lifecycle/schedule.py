"""The periodic loops of `memoryx serve`, each a task its lifespan starts and cancels (`stop_background_task`).

- `replay_loop`: replays the projection outbox every MEMORYX_OUTBOX_REPLAY_INTERVAL_S seconds, so a
  projection that failed (a store briefly down) converges without a restart; with MEMORYX_EPISODES on, the
  same tick closes episodes whose conversation has been quiet longer than MEMORYX_EPISODE_GAP_S.
- `consolidate_loop`: consolidation (settings.consolidate_interval_s, default every 6 h; 0: off). Every
  interval, one pass per owner of memories (SQLStore.memory_owner_scopes: each user, in and outside each
  group chat, agents' and runs' own memories, groups' own) in batches of settings.consolidate_batch_size,
  each in a worker thread and retried settings.consolidate_retries times; the pass takes the owner's scope
  lock itself, so it queues behind (never runs beside) an add of the same owner.
- `daily_loop`: the daily job (lifecycle/daily.py: audit scan, daily report, consolidation where enabled, the
  schedule.daily event) every settings.daily_job_interval_s."""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import TYPE_CHECKING, Any

from memoryx.knowledge.episode_memories import close_idle_episodes
from memoryx.lifecycle.daily import run_daily_job
from memoryx.runtime.recovery import replay_outbox

if TYPE_CHECKING:
    from memoryx.runtime.services import Services

log = logging.getLogger(__name__)

# The periodic replay leaves jobs younger than this to their writer, whose own projection is in flight.
REPLAY_MIN_AGE_S = 10.0


async def consolidate_scope(memory: Any, scope: Any, *, retries: int, backoff_s: float) -> dict | None:
    """One scheduled pass over `scope`, retried `retries` times with doubling waits; None when every try failed."""
    wait = backoff_s
    for attempt in range(retries + 1):
        try:
            return await asyncio.to_thread(functools.partial(memory.consolidate, **scope.as_dict()))
        except Exception as exc:  # noqa: BLE001 - one scope's failure must not stop the others
            if attempt == retries:
                log.warning("scheduled consolidation of %s failed %d times, left for the next cycle: %s",
                            scope.key(), attempt + 1, exc)
                return None
            log.info("scheduled consolidation of %s failed (retry %d in %g s): %s", scope.key(), attempt + 1, wait, exc)
            await asyncio.sleep(wait)
            wait *= 2
    return None


async def consolidate_cycle(memory: Any) -> dict:
    """One cycle: every owner's scope, in batches of settings.consolidate_batch_size. Returns the totals."""
    s = memory.settings
    scopes = await asyncio.to_thread(memory.services.sql.memory_owner_scopes)
    totals = {"scopes": len(scopes), "failed": 0, "merged": 0, "compressed": 0, "archived": 0}
    for start in range(0, len(scopes), s.consolidate_batch_size):
        for scope in scopes[start:start + s.consolidate_batch_size]:
            report = await consolidate_scope(memory, scope, retries=s.consolidate_retries,
                                             backoff_s=s.consolidate_retry_backoff_s)
            if report is None:
                totals["failed"] += 1
                continue
            for key in ("merged", "compressed", "archived"):
                totals[key] += len(report[key]) if isinstance(report.get(key), list) else int(report.get(key) or 0)
        log.info("consolidated scopes %d-%d of %d", start + 1, min(start + s.consolidate_batch_size, len(scopes)),
                 len(scopes))
        await asyncio.sleep(0)  # the server's requests run between batches
    return totals


async def consolidate_loop(memory: Any, interval_s: float) -> None:
    while True:
        await asyncio.sleep(interval_s)
        try:
            totals = await consolidate_cycle(memory)
            log.info("consolidation cycle: %s", totals)
        except Exception as exc:  # noqa: BLE001 - the loop outlives a store that is briefly down
            log.warning("scheduled consolidation could not list scopes (retried in %g s): %s", interval_s, exc)


def start_consolidate_loop(memory: Any) -> "asyncio.Task | None":
    interval = memory.settings.consolidate_interval_s
    if interval <= 0:
        return None
    return asyncio.get_running_loop().create_task(consolidate_loop(memory, interval), name="memoryx-consolidate")


async def daily_loop(memory: Any, interval_s: float) -> None:
    while True:
        await asyncio.sleep(interval_s)
        try:
            done = await asyncio.to_thread(functools.partial(run_daily_job, memory))
            log.info("daily job: %d findings (%d new) over %d records", done["findings"], done["new_findings"],
                     done["scanned"])
        except Exception as exc:  # noqa: BLE001 - the loop outlives a store that is briefly down
            log.warning("daily job failed (retried in %g s): %s", interval_s, exc)


def start_daily_loop(memory: Any) -> "asyncio.Task | None":
    interval = memory.settings.daily_job_interval_s
    if interval <= 0:
        return None
    return asyncio.get_running_loop().create_task(daily_loop(memory, interval), name="memoryx-daily")


async def replay_loop(services: "Services", interval_s: float, *, min_age_s: float = REPLAY_MIN_AGE_S) -> None:
    """Replay the outbox every `interval_s` seconds until cancelled (the server's lifespan cancels it)."""
    while True:
        await asyncio.sleep(interval_s)
        try:
            done = await asyncio.to_thread(replay_outbox, services, min_age_s=min_age_s)
            if done:
                log.info("periodic replay projected %d queued writes", done)
        except Exception as exc:  # noqa: BLE001 - the loop outlives a store that is briefly down
            log.warning("periodic outbox replay failed (retried in %g s): %s", interval_s, exc)
        if services.settings.episodes:
            # A conversation that went quiet gets its episode closed (and its final narrative) without
            # waiting for the next add of that scope.
            try:
                closed = await asyncio.to_thread(close_idle_episodes, services)
                if closed:
                    log.info("closed %d idle episodes", len(closed))
            except Exception as exc:  # noqa: BLE001 - same: retried on the next tick
                log.warning("closing idle episodes failed (retried in %g s): %s", interval_s, exc)


def start_replay_loop(services: "Services") -> "asyncio.Task | None":
    """Start `replay_loop` on the running event loop (None when MEMORYX_OUTBOX_REPLAY_INTERVAL_S is 0)."""
    interval = services.settings.outbox_replay_interval_s
    if interval <= 0:
        return None
    return asyncio.get_running_loop().create_task(replay_loop(services, interval), name="memoryx-outbox-replay")


async def stop_background_task(task: "asyncio.Task | None") -> None:
    """Cancel one of the server's periodic loops (outbox replay, retention, consolidation) and wait for it."""
    if task is None:
        return
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
