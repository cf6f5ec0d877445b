"""Scheduled consolidation inside `memoryx serve` (settings.consolidate_interval_s; 0: off). Every interval,
one pass per user with memories, each in a worker thread; the pass takes the user's scope lock itself, so
it queues behind (never runs beside) an add of the same user."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger(__name__)


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
                report = await asyncio.to_thread(memory.consolidate, user_id=scope.user_id)
                log.info("consolidated %s: merged %s, compressed %s, archived %s", scope.user_id,
                         report["merged"], report["compressed"], report["archived"])
            except Exception as exc:  # noqa: BLE001 - one scope's failure must not stop the others
                log.warning("scheduled consolidation of user %s failed: %s", scope.user_id, exc)


def start_consolidate_loop(memory: Any) -> "asyncio.Task | None":
    interval = memory.settings.consolidate_interval_s
    if interval <= 0:
        return None
    return asyncio.get_running_loop().create_task(consolidate_loop(memory, interval), name="memoryx-consolidate")
