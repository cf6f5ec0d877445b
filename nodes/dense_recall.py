"""dense_recall: the query's vectors, started once by analyze_query and handed on in the state's `query_vectors`
(memoryx.search.query_vectors; usually ready or under way by now); cosine top-k in the vector store (scope and
filters pushed down), plus, when the query names a period, a second top-k restricted to that period (source
"time"); and, when the scope holds memories of an owner who writes Chinese or Japanese, the multilingual index's
lists (memoryx.stores.vectors.multilingual): the memories said in another script than the question's (source
"crosslingual"), and, for a question the main encoder cannot read, those in its own script (source
"multilingual").

The last of the recall paths (nodes/recall.py), so that the embedding under way overlaps the others. Each hit
is {"id", "score", "payload"}.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from memoryx.core.filters import And, event_time_range
from memoryx.core.runs import elapsed_ms
from memoryx.errors import StoreUnavailableError
from memoryx.runtime.context import Context, services_of
from memoryx.search.crosslingual import bridge_scores
from memoryx.search.query import written_in_cjk
from memoryx.search.query_vectors import QueryVectors
from memoryx.search.state import SearchState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

log = logging.getLogger(__name__)
_WARNED = False  # the multilingual encoder's failure is logged once a process


def hits_of(raw) -> list[dict]:
    """Vector-store hits as state dicts."""
    return [{"id": h.id, "score": float(h.score), "payload": h.payload or {}} for h in raw]


def wants_period(plan) -> bool:
    """The period-restricted list is searched: the query names a period, and the recipe has a time path or the
    period filters."""
    return plan.time_window is not None and (plan.uses("time") or plan.period_filter is not None)


def wants_vector(plan) -> bool:
    """dense_recall reads the query's vectors (analyze_query starts them when so)."""
    return not plan.empty and (plan.uses("dense") or wants_period(plan))


def dense_recall(state: SearchState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    plan = state["plan"]
    # the period-restricted list: a recall path of its own, and what a period filter ranks first
    period_wanted = wants_period(plan)
    if not plan.uses("dense") and not period_wanted:
        return {"dense_hits": [], "time_hits": [], "multilingual_hits": [], "crosslingual_hits": [],
                "timings": {"dense_recall": elapsed_ms(start)}}
    services = services_of(runtime)
    k = plan.candidate_k
    vectors = state.get("query_vectors") or QueryVectors(plan.semantic_query)
    vector = vectors.main(services)
    embedded = elapsed_ms(start)
    hits: list[dict] = []
    if plan.uses("dense"):
        hits = hits_of(services.vectors.search_memories(vector, plan.scope, limit=k, filters=plan.filters))
    crosslingual_hits, multilingual_hits = (multilingual_recall(services.vectors.multilingual, plan, vectors)
                                            if plan.uses("dense") else ([], []))
    time_hits: list[dict] = []
    if period_wanted:
        lo, hi = plan.time_window
        period = event_time_range(lo, hi)  # valid_at when set, else created_at
        tnode = period if plan.filters is None else And((plan.filters, period))
        time_hits = hits_of(services.vectors.search_memories(vector, plan.scope, limit=max(10, k // 2),
                                                             filters=tnode))
    return {"dense_hits": hits, "time_hits": time_hits, "multilingual_hits": multilingual_hits,
            "crosslingual_hits": crosslingual_hits,
            "timings": {"embed_query": embedded, "dense_recall": elapsed_ms(start)}}


def multilingual_recall(index, plan, vectors: QueryVectors) -> tuple[list[dict], list[dict]]:
    """The multilingual index's lists, or none when it is off or the scope holds none of it (plan.multilingual:
    an owner who only writes English pays no encoder): the memories written in another script than the query's
    (the bridge, scored above the question's floor: memoryx.search.crosslingual), and, for a query the main
    encoder cannot read, the memories in the query's own script."""
    if index is None or not plan.multilingual:
        return [], []
    try:
        vector = vectors.of(index.embeddings)
    except StoreUnavailableError as exc:  # the encoder would not load: the other paths still answer
        global _WARNED
        if not _WARNED:
            _WARNED = True
            log.warning("the multilingual encoder is unavailable, searches skip the multilingual index: %s", exc)
        return [], []
    query_script = "cjk" if written_in_cjk(plan.semantic_query) else "latin"
    other = "latin" if query_script == "cjk" else "cjk"
    k = plan.candidate_k
    bridge = bridge_scores(hits_of(index.search(vector, plan.scope, limit=k, filters=plan.filters, script=other)),
                           vector, index.embeddings, other, plan.tuning.crosslingual_margin)
    same = [] if plan.encoder_reads_query else hits_of(
        index.search(vector, plan.scope, limit=k, filters=plan.filters, script=query_script))
    return bridge, same
