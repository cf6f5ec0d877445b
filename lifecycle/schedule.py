"""Scheduled consolidation inside `memoryx serve` (settings.consolidate_interval_s; 0: off). Every interval,
one pass per owner of memories (SQLStore.memory_owner_scopes: each user, in and outside each group chat,
agents' and runs' own memories, groups' own), each in a worker thread; the pass takes the owner's scope lock
itself, so it queues behind (never runs beside) an add of the same owner."""

from __future__ import annotations

import asyncio
import functools
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
