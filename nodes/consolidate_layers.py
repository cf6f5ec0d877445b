"""consolidate_layers: memory layers (memoryx.lifecycle.layers). Short-term memories recalled
often enough or important enough (as of the pass's clock: knowledge.importance.importance_at) become
long-term; the working memories of a run idle for longer than
settings.working_memory_ttl_hours are closed as `Memory.end_run` closes them (kept as short-term or
archived). The layers' windows and caps (lifecycle.layers.layer_caps) move the least important long-term
memories back to short-term and send short-term memories past the window or the cap out, folded with the
pass's other fading short-term memories into a long-term note (lifecycle.folding) before they are archived.
Writes nothing: consolidate_apply does, with the pass's other decisions."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from memoryx.core.runs import elapsed_ms
from memoryx.knowledge.importance import importance_at
from memoryx.lifecycle.contradictions import superseded_ids
from memoryx.lifecycle.folding import fold_fading
from memoryx.lifecycle.layers import close_run, idle_runs, layer_caps, layer_of, promotions
from memoryx.lifecycle.state import ConsolidateState
from memoryx.runtime.context import Context, services_of

if TYPE_CHECKING:
    from langgraph.runtime import Runtime


def consolidate_layers(state: ConsolidateState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    s = services.settings
    # importance as of the pass's clock: recency read again from each memory's event time (knowledge.importance)
    mems = [{**m, "importance": importance_at(m, state["now_ts"])} for m in state.get("memories") or []]
    archives = list(state.get("archives") or [])
    skip = {m["merged"] for m in state.get("merges") or []} | {a["id"] for a in archives} | superseded_ids(state)
    promoted = promotions(mems, min_access=s.promote_access, min_importance=s.promote_importance, skip=skip)
    idle = idle_runs(mems, state["now_ts"], s.working_memory_ttl_hours)
    ended = []
    for run in sorted(idle):
        kept, gone = close_run([m for m in mems if m.get("run_id") == run], keep_importance=s.working_keep_importance,
                               why=f"run {run} idle > {s.working_memory_ttl_hours} h", skip=skip)
        promoted += kept
        archives += gone
        # consolidate_apply ends the run (its end mark, one session.end) once these are written
        ended.append({"run_id": run, "kept": [k["id"] for k in kept], "archived": [g["id"] for g in gone]})
    demoted, expired = layer_caps(mems, state["now_ts"], promoted={p["id"] for p in promoted if p["layer"] == "long_term"}, skip=skip,
                                  window_days=s.short_term_window_days, short_cap=s.short_term_cap,
                                  long_cap=s.long_term_cap)
    # a demotion cancels this pass's promotion of the memory, or moves an older long-term one back
    was_long = {m["id"] for m in mems if layer_of(m) == "long_term"}
    demoted_ids = {d["id"] for d in demoted}
    promoted = [p for p in promoted if p["id"] not in demoted_ids] + [d for d in demoted if d["id"] in was_long]
    out: dict = {"promotions": promoted, "ended_runs": ended}
    if archives + expired and s.forget_fold:  # what fades or leaves short-term is folded into a long-term note first
        out.update(fold_fading(services, state, archives + expired))
    # a memory leaves short-term only into a note: one the fold did not take waits for a later pass
    noted = {i for x in out.get("summaries") or [] for i in x["sources"]}
    out["archives"] = archives + [e for e in expired if e["id"] in noted]
    out["timings"] = {"layers": elapsed_ms(start)}
    return out
