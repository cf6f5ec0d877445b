"""consolidate_forget: the forgetting curve (memoryx.lifecycle.forgetting). A memory whose retention at
`now` is below settings.forget_threshold is archived: out of search unless include_archived, restorable,
never deleted. Immutable memories and summaries are never archived; neither is a memory merged this pass.

Before fading short-term memories are archived, consolidate_layers folds them into a long-term note
(settings.forget_fold; memoryx.lifecycle.folding): the note keeps their facts where search finds them and the
archived memories point to it, so forgetting shortens what is kept but never drops the only copy of a fact."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from memoryx.core.runs import elapsed_ms
from memoryx.lifecycle.forgetting import DAY_S, forgettable, last_used, retention, strength
from memoryx.lifecycle.state import ConsolidateState
from memoryx.runtime.context import Context, services_of

if TYPE_CHECKING:
    from langgraph.runtime import Runtime


def consolidate_forget(state: ConsolidateState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    threshold = services_of(runtime).settings.forget_threshold
    now = state["now_ts"]
    merged = {m["merged"] for m in state.get("merges") or []}
    archives = []
    for m in state.get("memories") or []:
        if m["status"] in ("merged", "archived") or m["id"] in merged or not forgettable(m):
            continue
        r = retention(m, now)
        if r < threshold:
            used = last_used(m)
            idle = (now - used) / DAY_S if used is not None else 0.0
            strength_days = strength(m)
            archives.append({"id": m["id"], "text": m["memory"], "retention": round(r, 4),
                             "strength_days": round(strength_days, 1), "idle_days": round(idle, 1),
                             "reason": f"R = exp(-{idle:.0f}/{strength_days:.0f}) = {r:.3f} < {threshold} "
                                       f"({m.get('memory_type')}, importance {m.get('importance')}, "
                                       f"{m.get('access_count') or 0} accesses)"})
    return {"archives": archives, "timings": {"forget": elapsed_ms(start)}}
