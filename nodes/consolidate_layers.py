"""consolidate_layers: memory layers (memoryx.lifecycle.layers). Short-term memories recalled
often enough or important enough become long-term; the working memories of a run idle for longer than
settings.working_memory_ttl_hours are closed as `Memory.end_run` closes them (kept as short-term or
archived). Writes nothing: consolidate_apply does, with the pass's other decisions."""

from __future__ import annotations

import time

from langgraph.runtime import Runtime

from memoryx.core.runs import elapsed_ms
from memoryx.lifecycle.layers import close_run, idle_runs, promotions
from memoryx.lifecycle.state import ConsolidateState
from memoryx.runtime.context import Context, services_of


def consolidate_layers(state: ConsolidateState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    s = services_of(runtime).settings
    mems = state.get("memories") or []
    archives = list(state.get("archives") or [])
    skip = {m["merged"] for m in state.get("merges") or []} | {a["id"] for a in archives}
    promoted = promotions(mems, min_access=s.promote_access, min_importance=s.promote_importance, skip=skip)
    idle = idle_runs(mems, state["now_ts"], s.working_memory_ttl_hours)
    for run in sorted(idle):
        kept, gone = close_run([m for m in mems if m.get("run_id") == run], keep_importance=s.working_keep_importance,
                               why=f"run {run} idle > {s.working_memory_ttl_hours} h", skip=skip)
        promoted += kept
        archives += gone
    return {"promotions": promoted, "archives": archives, "timings": {"layers": elapsed_ms(start)}}
