"""Add runs left unfinished by an earlier process, resumed when a Memory opens its stores
(MEMORYX_RECOVER_RUNS most recent runs of the checkpointer): an add run cut short (no final state) is resumed
from its last checkpoint to the same end state; a run paused at the review interrupt is left waiting for its
human and only reported (resuming it would need the approval it waits for); a resume that fails is reported,
its writes undone, its judgment marked failed and its checkpoints dropped (one try, never one at every
start). A run whose caller was told it failed never gets here: Memory.add undoes it and drops its
checkpoints when it raises (memoryx.lifecycle.compensate)."""

from __future__ import annotations

import logging
from typing import Any

from memoryx.lifecycle.retention import abandon_run
from memoryx.runtime.checkpointing import recent_threads

log = logging.getLogger(__name__)

# The run name of a resumed add in LangSmith and the checkpointer's metadata.
RESUME_RUN_NAME = "memoryx_add_resume"


def recover_add_runs(core: Any, limit: int | None = None) -> dict:
    """Resume the unfinished add runs among the `limit` most recent threads of the checkpointer.

    `core` is the MemoryCore opening the stores (its add graph, run config and context). Returns
    {"resumed": [trace ids], "waiting_review": [trace ids], "failed": {trace id: error}}."""
    report: dict[str, Any] = {"resumed": [], "waiting_review": [], "failed": {}}
    limit = core.settings.recover_runs if limit is None else limit
    if limit <= 0 or core.settings.checkpointer in ("none", "memory"):
        return report  # nothing survives the process in these savers
    graph = core.add_graph()
    for trace_id in recent_threads(graph.checkpointer, limit):
        # A run another worker is executing holds its run lock: only a run whose process died is resumed, by
        # one worker (the state is read under the lock, so a run finished meanwhile is left alone).
        with core.services.sql.run_lock(trace_id) as free:
            if free:
                _recover_one(core, graph, trace_id, report)
    if report["resumed"] or report["waiting_review"] or report["failed"]:
        log.warning("add runs left unfinished by an earlier process: resumed %s; waiting for review %s; "
                    "failed %s", report["resumed"], report["waiting_review"], sorted(report["failed"]))
    return report


def _recover_one(core: Any, graph: Any, trace_id: str, report: dict) -> None:
    config = {"configurable": {"thread_id": trace_id}}
    try:
        snapshot = graph.get_state(config)
    except Exception as exc:  # noqa: BLE001 - an unreadable checkpoint is reported, not fatal
        report["failed"][trace_id] = repr(exc)
        return
    values = snapshot.values or {}
    if not snapshot.next or values.get("trace_id") != trace_id:
        return  # finished, or not an add run
    if any(task.interrupts for task in snapshot.tasks):
        report["waiting_review"].append(trace_id)
        return
    run_config = core.run_config(trace_id, RESUME_RUN_NAME, values.get("user_id"), values.get("agent_id"),
                                 values.get("run_id"))
    try:
        out = graph.invoke(None, run_config, context=core.context())
    except Exception as exc:  # noqa: BLE001 - one broken run must not keep the others (or the store) down
        # tried once: marked failed (shown in judgments) and its checkpoints dropped, never retried at every start
        log.warning("could not resume add run %s (marked failed): %s", trace_id, exc)
        abandon_run(core.services, graph.checkpointer, trace_id, f"resuming after a restart failed: {exc!r}",
                    values=values)
        report["failed"][trace_id] = repr(exc)
        return
    if isinstance(out, dict) and out.get("__interrupt__"):
        report["waiting_review"].append(trace_id)  # it reached review now: waits for its human
    else:
        report["resumed"].append(trace_id)
