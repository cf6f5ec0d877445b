"""Recovery and upkeep: what brings the stores back in step after a crash, without anyone asking.

- `recover_projections(services)` runs when services are built: a graph whose embedded server stopped
  uncleanly is rebuilt from SQL; the projection outbox (written in the same transaction as each SQL change)
  is replayed; then the graph's counts are compared with SQL's and the graph is rebuilt when they differ.
- `recover_add_runs(core)` runs when a Memory opens its stores (MEMORYX_RECOVER_RUNS most recent runs of
  the checkpointer): an add run cut short (no final state) is resumed from its last checkpoint to the same
  end state; a run paused at the review interrupt is left waiting for its human and only reported (resuming
  it would need the approval it waits for); a resume that fails is reported and left as it was.
- `replay_loop(services, ...)` is the background task of long-running processes (`memoryx serve`): it
  replays the outbox every MEMORYX_OUTBOX_REPLAY_INTERVAL_S seconds, so a projection that failed (a store
  briefly down) converges without a restart; with MEMORYX_EPISODES on, the same tick closes episodes whose
  conversation has been quiet longer than MEMORYX_EPISODE_GAP_S.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memoryx.api.memory_core import MemoryCore
    from memoryx.runtime.services import Services

log = logging.getLogger(__name__)

# The periodic replay leaves jobs younger than this to their writer, whose own projection is in flight.
REPLAY_MIN_AGE_S = 10.0
_BATCH = 500


def replay_outbox(services: "Services", *, min_age_s: float = 0.0) -> int:
    """Replay the outbox until it is empty or a batch makes no progress. Returns the jobs completed."""
    total = 0
    while True:
        done = services.projector.retry_pending(_BATCH, min_age_s=min_age_s)
        total += done
        if done < _BATCH:
            return total


def recover_projections(services: "Services") -> dict:
    """Start-up recovery of the projections (see the module docs). Never raises: a store still down leaves
    the jobs queued for the periodic replay, the next start or `memoryx reindex`."""
    report: dict[str, Any] = {"graph_rebuilt": None, "replayed": 0}
    try:
        falkordb = services.falkordb
        if falkordb is not None and falkordb.recovered_unclean:
            # a graph server that died without a clean shutdown may miss its last second of writes
            log.warning("embedded FalkorDB stopped uncleanly last time; rebuilding the graph from SQL")
            report["graph_rebuilt"] = services.projector.rebuild_graph()
        report["replayed"] = replay_outbox(services)
        if report["replayed"]:
            log.info("replayed %d pending projection writes", report["replayed"])
        if report["graph_rebuilt"] is None:
            report["graph_rebuilt"] = services.projector.reconcile_graph()
    except Exception as exc:  # noqa: BLE001 - recovery must not stop the stores from opening
        log.warning("pending projection writes could not be replayed yet: %s", exc)
        report["error"] = repr(exc)
    return report


def recover_add_runs(core: "MemoryCore", limit: int | None = None) -> dict:
    """Resume the unfinished add runs among the `limit` most recent threads of the checkpointer.

    Returns {"resumed": [trace ids], "waiting_review": [trace ids], "failed": {trace id: error}}."""
    from memoryx.runtime.checkpointing import recent_threads
    from memoryx.api.memory_core import RESUME_RUN_NAME

    report: dict[str, Any] = {"resumed": [], "waiting_review": [], "failed": {}}
    limit = core.settings.recover_runs if limit is None else limit
    if limit <= 0 or core.settings.checkpointer in ("none", "memory"):
        return report  # nothing survives the process in these savers
    graph = core.add_graph()
    for trace_id in recent_threads(graph.checkpointer, limit):
        config = {"configurable": {"thread_id": trace_id}}
        try:
            snapshot = graph.get_state(config)
        except Exception as exc:  # noqa: BLE001 - an unreadable checkpoint is reported, not fatal
            report["failed"][trace_id] = repr(exc)
            continue
        values = snapshot.values or {}
        if not snapshot.next or values.get("trace_id") != trace_id:
            continue  # finished, or not an add run
        if any(task.interrupts for task in snapshot.tasks):
            report["waiting_review"].append(trace_id)
            continue
        run_config = core.run_config(trace_id, RESUME_RUN_NAME, values.get("user_id"), values.get("agent_id"),
                                     values.get("run_id"))
        try:
            out = graph.invoke(None, run_config, context=core.context())
        except Exception as exc:  # noqa: BLE001 - one broken run must not keep the others (or the store) down
            log.warning("could not resume add run %s: %s", trace_id, exc)
            report["failed"][trace_id] = repr(exc)
            continue
        if isinstance(out, dict) and out.get("__interrupt__"):
            report["waiting_review"].append(trace_id)  # it reached review now: waits for its human
        else:
            report["resumed"].append(trace_id)
    if report["resumed"] or report["waiting_review"] or report["failed"]:
        log.warning("add runs left unfinished by an earlier process: resumed %s; waiting for review %s; "
                    "failed %s", report["resumed"], report["waiting_review"], sorted(report["failed"]))
    return report


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
                from memoryx.nodes.episodes import close_idle_episodes

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
