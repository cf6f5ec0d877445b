"""What a search did with time (issue 13): the `time_filter` block of a search result.

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

_OPEN = 1e10  # beyond ~2286: an open end of a caller's range


def _iso(ts: float) -> str | None:
    if abs(ts) >= _OPEN:
        return None
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat()


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
