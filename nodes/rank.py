"""rank: final score = relevance + importance + recency decay + access frequency (memoryx.search.scoring,
weights from the settings), then the threshold. Keeps `limit` hits, or the reranker's `rerank_top` when a
reranker is configured.
"""

from __future__ import annotations

import time

from langgraph.runtime import Runtime

from memoryx.context import Context, services_of
from memoryx.nodes.add_common import elapsed_ms
from memoryx.search.scoring import final_scores, ordered
from memoryx.search.state import SearchState


def rank(state: SearchState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    plan = state["plan"]
    cands = list(state.get("candidates") or [])
    final_scores(cands, services_of(runtime).settings)
    keep = max(plan.limit, plan.tuning.rerank_top if plan.reranker else 0)
    return {"ranked": ordered(cands, plan.threshold)[:keep], "timings": {"rank": elapsed_ms(start)}}
