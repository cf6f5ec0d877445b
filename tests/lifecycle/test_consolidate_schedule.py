"""Consolidation by default: `memoryx serve` schedules a cycle every 6 h unless told otherwise; a cycle walks
every owner in batches and retries a failed pass, and one scope that keeps failing does not stop the others.
SQLite + embedded Qdrant edge + MiniLM; the offline model."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from memoryx.core.scope import Scope
from memoryx.lifecycle.schedule import consolidate_cycle, start_consolidate_loop, stop_background_task
from memoryx.settings import Settings
from tests.lifecycle.test_consolidate_owners import T0, TEA, TEA2, make_memory, put


def test_the_default_settings_consolidate_every_six_hours(tmp_path):
    assert Settings().consolidate_interval_s == 6 * 3600 and Settings().consolidate_batch_size == 100

    async def started(m):
        task = start_consolidate_loop(m)
        try:
            return task is not None and task.get_name() == "memoryx-consolidate"
        finally:
            await stop_background_task(task)

    with make_memory(tmp_path) as m:
        assert asyncio.run(started(m))
    with make_memory(tmp_path / "off", consolidate_interval_s=0) as m:
        assert start_consolidate_loop(m) is None  # off: no task (the function needs no running loop then)


def test_a_cycle_retries_a_failed_pass_and_goes_on_past_a_scope_that_keeps_failing(tmp_path):
    scopes = [Scope(user_id=u) for u in ("ann", "ben", "cat")]
    with make_memory(tmp_path, consolidate_batch_size=2, consolidate_retries=1, consolidate_retry_backoff_s=0.01) as m:
        ids = {s.user_id: (put(m, TEA, s), put(m, TEA2, s, days=1)) for s in scopes}
        real = m.consolidate
        failures = {"ann": 1, "cat": 99}  # ann fails once (the retry succeeds), cat always

        def flaky(**scope):
            user = scope.get("user_id")
            if failures.get(user, 0) > 0:
                failures[user] -= 1
                raise RuntimeError(f"store briefly down for {user}")
            return real(**scope, now=T0 + timedelta(days=2))

        m.consolidate = flaky
        totals = consolidate_cycle(m)
        assert totals["scopes"] == 3 and totals["failed"] == 1 and totals["merged"] == 2
        for user in ("ann", "ben"):
            assert m.services.sql.get_memory(ids[user][1])["merged_into"] == ids[user][0]
        assert m.services.sql.get_memory(ids["cat"][1])["status"] == "staged"  # left for the next cycle
