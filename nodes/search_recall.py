"""The recall paths of the search graph. They run in parallel (one LangGraph superstep, one thread each).

* dense_recall   - embeds the query once; cosine top-k in the vector store (scope + filters pushed down), plus,
                   when the query names a period, a second top-k restricted to that period (source "time").
* keyword_recall - BM25 over the sparse keyword vectors (Qdrant IDF modifier; the CJK-aware tokenizer of
                   memoryx.text), scope + filters pushed down.
* graph_recall   - the scope's entities named in the query (exact normalised match of the query's n-grams)
                   -> GraphStore.neighbourhood (expand_depth 1-2 hops, optional relation names, invalidated
                   edges hidden unless include_invalid) -> the memories attached to the reached relations,
                   scored by distance: 1 / hops. Filters are applied later, on the SQL rows
                   (rank step), since relations carry no memory payload.

Each hit is {"id", "score", "payload"?}; each path writes its own state key, so the branches never conflict.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict

from langgraph.runtime import Runtime

from memoryx.context import Context, services_of
from memoryx.filters import And, Cond, parse_filters
from memoryx.nodes.search_query import scope_of
from memoryx.nodes.search_tuning import tuning
from memoryx.state import SearchState

log = logging.getLogger(__name__)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)


def candidate_k(state: dict, settings) -> int:
    limit = (state.get("plan") or {}).get("limit") or state.get("limit") or 10
    return max(int(tuning(settings)["candidate_k"]), 2 * int(limit))


def _hits(raw) -> list[dict]:
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
    services = services_of(runtime)
    scope = scope_of(state)
    node = parse_filters(state.get("filters"))
    k = candidate_k(state, services.settings)
    vector = embed_query(services.embeddings, plan["semantic_query"])
    embedded = _ms(start)
    hits = _hits(services.vectors.search_memories(vector, scope, limit=k, filters=node))
    time_hits: list[dict] = []
    window = plan.get("time_window")
    if window:
        period = And((Cond("created_at", "gte", float(window[0])), Cond("created_at", "lt", float(window[1]))))
        tnode = period if node is None else And((node, period))
        time_hits = _hits(services.vectors.search_memories(vector, scope, limit=max(10, k // 2), filters=tnode))
    return {"dense_hits": hits, "time_hits": time_hits,
            "timings": {"embed_query": embedded, "dense_recall": _ms(start)}}


def keyword_recall(state: SearchState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    plan = state["plan"]
    services = services_of(runtime)
    if not plan.get("tokens"):
        return {"keyword_hits": [], "timings": {"keyword_recall": _ms(start)}}
    hits = services.vectors.keyword_search(plan["keyword_query"], scope_of(state),
                                           limit=candidate_k(state, services.settings),
                                           filters=parse_filters(state.get("filters")))
    return {"keyword_hits": _hits(hits), "timings": {"keyword_recall": _ms(start)}}


def graph_recall(state: SearchState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    plan = state["plan"]
    services = services_of(runtime)
    graph = services.graph
    scope = scope_of(state)
    empty = {"graph_hits": [], "graph_relations": [], "graph_entities": []}
    entities: list[dict] = []
    if plan.get("entity_candidates"):
        try:  # names of the scope's entities found in the query (also used by ranking)
            entities = services.sql.find_entities_by_names(scope, plan["entity_candidates"])
        except Exception as exc:
            log.warning("entity lookup failed, searching without the graph path: %s", exc)
    found = [{"id": e["id"], "name": e["name"]} for e in entities]
    if not plan.get("graph") or graph is None or not entities:
        return {**empty, "graph_entities": found, "timings": {"graph_recall": _ms(start)}}
    include_invalid = bool(state.get("include_invalid"))
    relation_names = state.get("relation_types") or None
    try:
        relations = graph.neighbourhood(scope, [e["id"] for e in entities], depth=int(plan["expand_depth"]),
                                        relation_names=relation_names, include_invalid=include_invalid, limit=200)
    except Exception as exc:  # the other paths still answer; the failure is logged
        log.warning("graph recall failed, searching without it: %s", exc)
        return {**empty, "graph_entities": found, "timings": {"graph_recall": _ms(start)}}
    best: dict[str, float] = {}
    kept: list[dict] = []
    for rel in relations:
        if not include_invalid and rel.get("valid") is False:
            continue  # defence in depth: the store already hides them
        kept.append(rel)
        mid = rel.get("memory_id")
        if not mid:
            continue
        hops = rel.get("hops")
        hops = 1 if hops is None else max(1, int(hops))
        score = 1.0 / hops  # seed 002 §5.2: 1 / graph distance
        if score > best.get(mid, -1.0):
            best[mid] = score
    hits = [{"id": mid, "score": s, "payload": {}} for mid, s in sorted(best.items(), key=lambda kv: -kv[1])]
    hits = hits[: candidate_k(state, services.settings) * 2]
    kept.sort(key=lambda r: (r.get("hops") or 0))
    return {"graph_hits": hits, "graph_relations": kept, "graph_entities": found,
            "timings": {"graph_recall": _ms(start)}}
