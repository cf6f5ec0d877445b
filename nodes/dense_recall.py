"""dense_recall: the query embedded once; cosine top-k in the vector store (scope and filters pushed down),
plus, when the query names a period, a second top-k restricted to that period (source "time").

Runs in parallel with keyword_recall and graph_recall (one LangGraph superstep). Each hit is
{"id", "score", "payload"}.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from langgraph.runtime import Runtime

from memoryx.context import Context, services_of
from memoryx.filters import And, event_time_range
from memoryx.nodes.add_common import elapsed_ms
from memoryx.search.state import SearchState


def hits_of(raw) -> list[dict]:
    """Vector-store hits as state dicts."""
    return [{"id": h.id, "score": float(h.score), "payload": h.payload or {}} for h in raw]


_QCACHE: "OrderedDict[tuple[int, str], list[float]]" = OrderedDict()
_QCACHE_SIZE = 2048
_QCACHE_LOCK = threading.Lock()


def embed_query(embeddings, text: str) -> list[float]:
    """The query vector, from a small LRU (a chatbot often searches the same text twice in a turn: search
    then get_context, retries, several users asking the same thing)."""
    key = (id(embeddings), text)
    with _QCACHE_LOCK:
        hit = _QCACHE.get(key)
        if hit is not None:
            _QCACHE.move_to_end(key)
            return hit
    vector = list(embeddings.embed_query(text))
    with _QCACHE_LOCK:
        _QCACHE[key] = vector
        while len(_QCACHE) > _QCACHE_SIZE:
            _QCACHE.popitem(last=False)
    return vector


def dense_recall(state: SearchState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    plan = state["plan"]
    # the period-restricted list: a recall path of its own, and what a period filter ranks first (issue 13)
    period_wanted = plan.time_window is not None and (plan.uses("time") or plan.period_filter is not None)
    if not plan.uses("dense") and not period_wanted:
        return {"dense_hits": [], "time_hits": [], "timings": {"dense_recall": elapsed_ms(start)}}
    services = services_of(runtime)
    k = plan.candidate_k
    vector = embed_query(services.embeddings, plan.semantic_query)
    embedded = elapsed_ms(start)
    hits: list[dict] = []
    if plan.uses("dense"):
        hits = hits_of(services.vectors.search_memories(vector, plan.scope, limit=k, filters=plan.filters))
    time_hits: list[dict] = []
    if period_wanted:
        lo, hi = plan.time_window
        period = event_time_range(lo, hi)  # valid_at when set (issue 13), else created_at
        tnode = period if plan.filters is None else And((plan.filters, period))
        time_hits = hits_of(services.vectors.search_memories(vector, plan.scope, limit=max(10, k // 2),
                                                             filters=tnode))
    return {"dense_hits": hits, "time_hits": time_hits,
            "timings": {"embed_query": embedded, "dense_recall": elapsed_ms(start)}}
