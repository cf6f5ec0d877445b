"""Retention: how long the records that hold a conversation's text are kept.

* Raw inputs (MEMORYX_RETENTION_RAW_INPUTS_DAYS), judgments (MEMORYX_RETENTION_JUDGMENTS_DAYS) and add-run
  checkpoints (MEMORYX_RETENTION_CHECKPOINTS_DAYS) older than N days are deleted by `prune`, run when a
  Memory opens its stores and periodically by long-running processes (`memoryx serve`, every
  MEMORYX_RETENTION_INTERVAL_S). Unset / 0 keeps them forever. A run waiting for review keeps its judgment
  and its checkpoints whatever their age: they are the work a human has not done yet.
* A finished add run's checkpoints (~45 KB for a one-line add) are deleted as soon as the run returns
  (`forget_finished_run`), unless MEMORYX_KEEP_FINISHED_CHECKPOINTS is set. Kept: runs paused for review
  and runs whose judgment failed without raising (they are what `resume_add` needs); a run cut short by a
  crash keeps them for recovery. A run that raised is undone and its checkpoints go (`abandon_run`). A run
  that returned written results is finished without a look at its judgment status (no read per add).

Memories themselves are never pruned: they live until deleted or purged.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Iterable

from memoryx.lifecycle.compensate import undo_failed_run
from memoryx.runtime.checkpointing import delete_threads, thread_times
from memoryx.stores.sql.purge import KEEP_STATUSES

if TYPE_CHECKING:
    from memoryx.runtime.services import Services

log = logging.getLogger(__name__)

# judgment statuses whose run must keep its checkpoints after it returned
_KEEP_RUN_STATUSES = ("failed", "awaiting_review")


def prune(services: "Services", checkpointers: Iterable[Any] = (), *, now: datetime | None = None) -> dict:
    """Delete what is past its retention time. Returns {"raw_inputs", "judgments", "checkpoint_threads"}:
    rows / threads deleted (None for a kind whose retention is off)."""
    settings, sql = services.settings, services.sql
    now = now or datetime.now(timezone.utc)
    report: dict[str, int | None] = {"raw_inputs": None, "judgments": None, "checkpoint_threads": None}
    if settings.retention_raw_inputs_days:
        report["raw_inputs"] = sql.prune_raw_inputs(now - timedelta(days=settings.retention_raw_inputs_days))
    if settings.retention_judgments_days:
        report["judgments"] = sql.prune_judgments(now - timedelta(days=settings.retention_judgments_days))
    if settings.retention_checkpoints_days:
        cutoff = (now - timedelta(days=settings.retention_checkpoints_days)).timestamp()
        report["checkpoint_threads"] = 0
        for saver in checkpointers:
            old = [tid for tid, at in thread_times(saver).items() if at < cutoff]
            statuses = sql.trace_statuses(old)
            report["checkpoint_threads"] += delete_threads(
                saver, [tid for tid in old if statuses.get(tid) not in KEEP_STATUSES])
    if any(report.values()):
        sql.compact(vacuum=False)  # empty the WAL, whose old frames still hold the deleted rows
        log.info("retention pruned %s", report)
    return report


def is_finished(services: "Services", trace_id: str, result: dict) -> bool:
    """Whether an add run that returned `result` is over for good (its checkpoints are no longer needed)."""
    if services.settings.keep_finished_checkpoints or result.get("status") == "awaiting_review":
        return False
    if result.get("results"):
        # the run wrote (no status read per add): an inferred run's writes commit in one transaction
        # with its judgment record marked "done" (execute_ops), and a run storing raw turns has no judgment to
        # fail; a failed step raised instead of returning
        return True
    return services.sql.trace_statuses([trace_id]).get(trace_id) not in _KEEP_RUN_STATUSES


def forget_finished_run(services: "Services", saver: Any, trace_id: str, result: dict) -> bool:
    """Delete the checkpoints of a finished add run (see the module docstring). True when deleted."""
    if saver is None or not is_finished(services, trace_id, result):
        return False
    saver.delete_thread(trace_id)
    return True


def abandon_run(services: "Services", saver: Any, trace_id: str, reason: str = "the add failed", *,
                values: dict | None = None, undo: bool = True) -> dict | None:
    """An add run whose caller was told it failed: what it wrote is undone (memoryx.lifecycle.compensate),
    its checkpoints go, so no later start resumes (applies) it, and its judgment record is marked failed with
    the reason (listed in judgments and on /ui). `values`: its last checkpointed state, read before the
    checkpoints go. Returns what was undone ({"error"} when the undo failed; None when not asked)."""
    report = _undo(services, trace_id, values) if undo else None
    if saver is not None:
        try:
            saver.delete_thread(trace_id)
        except Exception as exc:  # noqa: BLE001 - the caller's own error is the one to raise
            log.warning("could not drop the checkpoints of failed add run %s: %s", trace_id, exc)
    _mark_failed(services, trace_id, reason, report)
    return report


async def aabandon_run(services: "Services", saver: Any, trace_id: str, reason: str = "the add failed", *,
                       values: dict | None = None, undo: bool = True) -> dict | None:
    """`abandon_run` for an async saver (AsyncMemory)."""
    report = await asyncio.to_thread(_undo, services, trace_id, values) if undo else None
    if saver is not None:
        try:
            await saver.adelete_thread(trace_id)
        except Exception as exc:  # noqa: BLE001 - the caller's own error is the one to raise
            log.warning("could not drop the checkpoints of failed add run %s: %s", trace_id, exc)
    await asyncio.to_thread(_mark_failed, services, trace_id, reason, report)
    return report


def _undo(services: "Services", trace_id: str, values: dict | None) -> dict:
    try:
        return undo_failed_run(services, trace_id, values)
    except Exception as exc:  # noqa: BLE001 - reported to the caller with its own error
        log.warning("could not undo the writes of failed add run %s: %s", trace_id, exc)
        return {"error": repr(exc)}


def _mark_failed(services: "Services", trace_id: str, reason: str, report: dict | None = None) -> None:
    """A record the run left running, marked done before a later step failed, or paused for a review whose
    resumed run failed, becomes failed."""
    if report:
        reason = f"{reason} [undone: {report}]"
    try:
        if services.sql.trace_statuses([trace_id]).get(trace_id) in ("running", "done", "awaiting_review"):
            services.sql.save_judgment(trace_id, status="failed", execution_success=False, error_message=reason[:2000])
    except Exception as exc:  # noqa: BLE001
        log.warning("could not mark add run %s failed: %s", trace_id, exc)


async def aforget_finished_run(services: "Services", saver: Any, trace_id: str, result: dict) -> bool:
    """`forget_finished_run` for an async saver (AsyncMemory). The status lookup is one indexed read."""
    if saver is None or not is_finished(services, trace_id, result):
        return False
    await saver.adelete_thread(trace_id)
    return True


def _prune_claimed(scheduled_job: Any, interval_s: float, prune_now: Any) -> None:
    with scheduled_job("retention", interval_s) as mine:
        if mine:
            prune_now()


async def retention_loop(memory: Any, interval_s: float) -> None:
    """Run `memory.prune()` (a sync `Memory`) every `interval_s` seconds until cancelled."""

    while True:
        await asyncio.sleep(interval_s)
        try:  # one worker per interval when several share the database
            with_lease = memory.services.sql.scheduled_job
            await asyncio.to_thread(_prune_claimed, with_lease, interval_s, memory.prune)
        except Exception as exc:  # noqa: BLE001 - the loop outlives a store that is briefly down
            log.warning("retention pass failed (retried in %g s): %s", interval_s, exc)


def start_retention_loop(memory: Any) -> Any:
    """Start `retention_loop` on the running event loop (None when MEMORYX_RETENTION_INTERVAL_S is 0); stop it
    with `memoryx.lifecycle.schedule.stop_background_task`, which cancels any such task."""

    interval = memory.settings.retention_interval_s
    if interval <= 0:
        return None
    return asyncio.get_running_loop().create_task(retention_loop(memory, interval), name="memoryx-retention")
