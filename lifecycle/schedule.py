"""The periodic loops of `memoryx serve`, each a task its lifespan starts and cancels (`stop_background_task`).

- `replay_loop`: replays the projection outbox every MEMORYX_OUTBOX_REPLAY_INTERVAL_S seconds, so a
  projection that failed (a store briefly down) converges without a restart; with MEMORYX_EPISODES on, the
  same tick closes episodes whose conversation has been quiet longer than MEMORYX_EPISODE_GAP_S.
- `consolidate_loop`: consolidation (settings.consolidate_interval_s; 0: off). Every interval, one pass per
  owner of memories (SQLStore.memory_owner_scopes: each user, in and outside each group chat,
agents' and runs' own memories, groups' own), each in a worker thread; the pass takes the owner's scope lock
itself, so it queues behind (never runs beside) an add of the same owner.
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


async def consolidate_loop(memory: Any, interval_s: float) -> None:
    while True:
        await asyncio.sleep(interval_s)
        try:
            scopes = await asyncio.to_thread(memory.services.sql.memory_owner_scopes)
        except Exception as exc:  # noqa: BLE001 - the loop outlives a store that is briefly down
            log.warning("scheduled consolidation could not list scopes (retried in %g s): %s", interval_s, exc)
            continue
        for scope in scopes:
            try:
                report = await asyncio.to_thread(functools.partial(memory.consolidate, **scope.as_dict()))
                log.info("consolidated %s: merged %s, compressed %s, archived %s", scope.key(),
                         report["merged"], report["compressed"], report["archived"])
            except Exception as exc:  # noqa: BLE001 - one scope's failure must not stop the others
                log.warning("scheduled consolidation of %s failed: %s", scope.key(), exc)


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
