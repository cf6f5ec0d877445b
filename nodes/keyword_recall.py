"""keyword_recall: BM25 over the sparse keyword vectors (Qdrant IDF modifier; the CJK-aware tokenizer of
memoryx.core.text), scope and filters pushed down. Skipped when the query has no keyword tokens or the recipe
has no keyword path.
"""

from __future__ import annotations

import time

from langgraph.runtime import Runtime

from memoryx.core.runs import elapsed_ms
from memoryx.nodes.dense_recall import hits_of
from memoryx.runtime.context import Context, services_of
from memoryx.search.state import SearchState


def keyword_recall(state: SearchState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    plan = state["plan"]
    if not plan.tokens or not plan.uses("keyword"):
        return {"keyword_hits": [], "timings": {"keyword_recall": elapsed_ms(start)}}
    hits = services_of(runtime).vectors.keyword_search(plan.keyword_query, plan.scope, limit=plan.candidate_k,
                                                       filters=plan.filters)
    return {"keyword_hits": hits_of(hits), "timings": {"keyword_recall": elapsed_ms(start)}}
