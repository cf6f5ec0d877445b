"""rank: final score = relevance + importance + recency decay + access frequency (memoryx.search.scoring,
weights from the settings), then the threshold. Keeps `limit` hits, or the reranker's `rerank_top` when a
reranker is configured.

A confident period the query names filters (issue 13, MEMORYX_QUERY_TIME_FILTER): the hits whose event time
(valid_at, else created_at) lies in it come first, marked `in_period`; "auto" tops them up below with the other
hits, each score capped just under the last in-period score (a caller sorting by score keeps the order);
"strict" returns only the in-period hits, or the others when none is in the period. Every recall path feeds the
in-period candidates, and the dense path always adds its period-restricted list (dense_recall), so the hits in
the period are those a search restricted to it would rank.
"""

from __future__ import annotations

import time

from langgraph.runtime import Runtime

from memoryx.context import Context, services_of
from memoryx.nodes.add_common import elapsed_ms
from memoryx.search.plan import SearchPlan
from memoryx.search.scoring import event_time, final_scores, ordered
from memoryx.search.state import SearchState


def rank(state: SearchState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    plan = state["plan"]
    cands = list(state.get("candidates") or [])
    final_scores(cands, services_of(runtime).settings)
    keep = max(plan.limit, plan.tuning.rerank_top if plan.reranker else 0)
    return {"ranked": by_period(plan, ordered(cands, plan.threshold))[:keep], "timings": {"rank": elapsed_ms(start)}}


TOP_UP_GAP = 1e-6


def by_period(plan: SearchPlan, ranked: list[dict]) -> list[dict]:
    """`ranked` (best first) with the query's period applied as a filter (see the module docstring); unchanged
    when the query names no confident period."""
    if plan.period_filter is None:
        return ranked
    lo, hi = plan.time_window
    inside: list[dict] = []
    outside: list[dict] = []
    for c in ranked:
        ts = event_time(c["memory"])
        if ts is not None and lo <= ts < hi:
            sources = c["sources"] if "time" in c["sources"] else [*c["sources"], "time"]
            inside.append(dict(c, in_period=True, sources=sources))
        else:
            outside.append(dict(c, in_period=False))
    if plan.period_filter == "strict":
        return inside or outside
    floor = inside[-1]["score"] if inside else None
    for i, c in enumerate(outside, 1):
        if floor is not None and c["score"] >= floor:
            c["score"] = max(0.0, floor - TOP_UP_GAP * i)
    return inside + outside
