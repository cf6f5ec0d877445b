"""finalize: limit, the feedback penalty (a memory whose latest feedback is VERY_NEGATIVE scores
x (1 - MEMORYX_FEEDBACK_VERY_NEGATIVE_PENALTY), then re-sorted; memoryx.lifecycle.feedback), the mem0-shaped output, and
access recording in a background thread (memoryx.search.access; it never delays the reply). The last stage of
the rank node (nodes/rank.py): a LangGraph step of its own cost ~0.3-0.5 ms of CPU per search.

Output: {"results": [{"id", "memory", "score", "sources", "metadata", "created_at", "updated_at", "hash",
"importance", "user_id", "agent_id", "run_id", "memory_type", "category", "graph_context"}], "relations":
[{"source", "relationship", "destination", "valid"?}], "total_count"}.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from memoryx.core.runs import elapsed_ms
from memoryx.runtime.context import Context, services_of
from memoryx.search.access import new_accesses, record_access_later, today
from memoryx.search.periods import time_filter_report
from memoryx.search.state import RankState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

SOURCE_ORDER = ("dense", "multilingual", "crosslingual", "keyword", "graph", "time", "preference", "context")
_FIELDS = ("user_id", "agent_id", "run_id", "group_id", "memory_type", "category", "valid_at")


def format_result(c: dict) -> dict:
    mem = c["memory"]
    out = {
        "id": mem["id"],
        "memory": mem["memory"],
        "score": round(float(c["score"]), 6),
        "sources": [s for s in SOURCE_ORDER if s in c["sources"]] + [s for s in c["sources"] if s not in SOURCE_ORDER],
        "metadata": mem.get("metadata") or {},
        "created_at": mem.get("created_at"),
        "updated_at": mem.get("updated_at"),
        "hash": mem.get("hash"),
        "importance": mem.get("importance"),  # as stored (the four factors: memoryx.knowledge.importance)
    }
    for k in _FIELDS:
        out[k] = mem.get(k)
    if "in_period" in c:  # the query's period filtered: False for a hit that topped the list up
        out["in_period"] = c["in_period"]
    return out


def demoted(results: list[dict], feedback: list[str | None], penalty: float) -> list[dict]:
    """`results` with the scores of those whose latest feedback (`feedback`, one per result, read by
    expand_context) is VERY_NEGATIVE multiplied by (1 - penalty), marked "feedback", and re-sorted (a stable
    sort: ties keep the ranking's order) - memoryx.lifecycle.feedback; unchanged when none is."""
    if penalty <= 0 or "VERY_NEGATIVE" not in feedback:
        return results
    for r, value in zip(results, feedback):
        if value == "VERY_NEGATIVE":
            r["score"] = r["score"] * (1.0 - penalty)
            r["feedback"] = "VERY_NEGATIVE"
    results.sort(key=lambda r: r["score"], reverse=True)
    return results


def format_relations(relations: list[dict], limit: int, include_invalid: bool) -> list[dict]:
    out: list[dict] = []
    seen: set[tuple] = set()
    for r in relations:
        key = (r.get("source"), r.get("relation"), r.get("target"))
        if key in seen or not r.get("source") or not r.get("target"):
            continue
        seen.add(key)
        item = {"source": r["source"], "relationship": r["relation"], "destination": r["target"]}
        if include_invalid:
            item["valid"] = r.get("valid", True) is not False
        out.append(item)
        if len(out) >= limit:
            break
    return out


def graph_context(results: list[dict], relations: list[dict]) -> None:
    """Each result's `graph_context`: the relations of the graph walk that the memory states (the reason the
    graph path found it), deduplicated, nearest first; [] when the walk reached none of them."""
    by_memory: dict[str, list[dict]] = {}
    for r in relations:
        mid = r.get("memory_id")
        if not mid or not r.get("source") or not r.get("target"):
            continue
        item = {"source": r["source"], "relationship": r["relation"], "destination": r["target"]}
        found = by_memory.setdefault(mid, [])
        if item not in found:
            found.append(item)
    for res in results:
        res["graph_context"] = by_memory.get(res["id"], [])


def total_count(state: RankState) -> int:
    """How many candidates passed the filters (and the threshold) before the limit cut them. The recall paths
    read a bounded number of candidates each (search.tuning candidate_k), so this counts what the search saw,
    not every memory of the scope that would match."""
    threshold = state["plan"].threshold
    ranked = state.get("candidates") or state.get("ranked") or []
    return sum(1 for c in ranked if threshold is None or float(c.get("score") or 0.0) >= threshold)


def finalize(state: RankState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    plan = state["plan"]
    if plan.empty:
        return {"result": {"results": [], "relations": [], "total_count": 0}, "timings": {"finalize": elapsed_ms(start)}}
    ranked = (state.get("ranked") or [])[: plan.limit]
    results = demoted([format_result(c) for c in ranked], [c.get("feedback") for c in ranked],
                      services_of(runtime).settings.feedback_very_negative_penalty)
    relations = format_relations(state.get("graph_relations") or [], plan.limit, plan.include_invalid)
    graph_context(results, state.get("graph_relations") or [])
    if results and plan.record_access:  # once a day per memory: a repeated search keeps its scores
        record_access_later(services_of(runtime).sql, new_accesses([c["memory"] for c in ranked], today()))
    result = {"results": results, "relations": relations, "total_count": total_count(state)}
    period = time_filter_report(plan, results)
    if period is not None:  # what the search did with time (memoryx.search.periods)
        result["time_filter"] = period
    return {"result": result, "timings": {"finalize": elapsed_ms(start)}}
