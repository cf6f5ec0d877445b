"""What a search does with time: a confident period the query names applied to the ranking
(`by_period`), and the `time_filter` block of a search result (`time_filter_report`).

`by_period` (MEMORYX_QUERY_TIME_FILTER): the hits whose event time (valid_at, else created_at) lies in the
period come first, marked `in_period`; "auto" tops them up below with the other hits, each score capped just
under the last in-period score (a caller sorting by score keeps the order); "strict" returns only the
in-period hits, or the others when none is in the period. Every recall path feeds the in-period candidates,
and the dense path always adds its period-restricted list (nodes/dense_recall.py), so the hits in the period
are those a search restricted to it would rank. Used by the final scoring and again after a reranker.

The block:

    {"applied": true, "from": "query", "text": "last summer", "start": ISO, "end": ISO, "mode": "auto",
     "in_period": 3, "topped_up": 7}

`from` is "query" (a period the query names) or "time_range" (the caller's range: always a filter; the
query's own period then only ranks). `applied` is false when the query names a period that only ranks
(not confident, or MEMORYX_QUERY_TIME_FILTER=off). Each result of a query-period filter carries
`in_period` (false for the hits that topped the list up). No period at all: no block.
"""

from __future__ import annotations

from datetime import datetime, timezone

from memoryx.search.plan import SearchPlan
from memoryx.search.scoring import event_time

_OPEN = 1e10  # beyond ~2286: an open end of a caller's range


def _iso(ts: float) -> str | None:
    if abs(ts) >= _OPEN:
        return None
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat()


TOP_UP_GAP = 1e-6


def in_period(plan: SearchPlan, memory: dict) -> bool:
    """Whether the memory's event time falls inside the query's period (plan.time_window)."""
    lo, hi = plan.time_window
    ts = event_time(memory)
    return ts is not None and lo <= ts < hi


def by_period(plan: SearchPlan, ranked: list[dict]) -> list[dict]:
    """`ranked` (best first) with the query's period applied as a filter (see the module docstring); unchanged
    when the query names no confident period."""
    if plan.period_filter is None:
        return ranked
    inside: list[dict] = []
    outside: list[dict] = []
    for c in ranked:
        if in_period(plan, c["memory"]):
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


def time_filter_report(plan: SearchPlan, results: list[dict]) -> dict | None:
    """The block for a search's final `results` (those already cut to the limit)."""
    if plan.time_range is not None:
        lo, hi = plan.time_range
        return {"applied": True, "from": "time_range", "text": None, "start": _iso(lo), "end": _iso(hi)}
    if plan.time_window is None:
        return None
    lo, hi = plan.time_window
    out = {"applied": plan.period_filter is not None, "from": "query", "text": plan.period_text,
           "start": _iso(lo), "end": _iso(hi)}
    if plan.period_filter is not None:
        inside = sum(1 for r in results if r.get("in_period"))
        out.update(mode=plan.period_filter, in_period=inside, topped_up=len(results) - inside)
    return out
