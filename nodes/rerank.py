"""rerank: the configured reranker (memoryx.search.rerankers) scores the ranked candidates; its score is
blended half and half with the fused relevance and the final scores are computed again. A failing reranker
leaves the ranking as it was (logged). Runs only when the plan names a reranker, as the last stage of the
rank node (nodes/rank.py).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from memoryx.core.runs import elapsed_ms
from memoryx.runtime.context import Context, services_of
from memoryx.search.periods import by_period
from memoryx.search.rerankers import make_reranker
from memoryx.search.scoring import final_scores, ordered
from memoryx.search.state import RankState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

log = logging.getLogger(__name__)

RERANK_SHARE = 0.5  # of the new relevance; the rest is the fused relevance


def rerank(state: RankState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    plan = state["plan"]
    settings = services_of(runtime).settings
    ranked = [dict(c) for c in state.get("ranked") or []]
    if not ranked:
        return {"timings": {"rerank": elapsed_ms(start)}}
    reranker = make_reranker(plan.reranker, settings)
    try:
        scores = reranker.scores(plan.query, [c["memory"]["memory"] for c in ranked])
    except Exception as exc:  # keep the fused order
        log.warning("reranker %r failed, keeping the fused ranking: %s", reranker.spec, exc)
        return {"timings": {"rerank": elapsed_ms(start)}}
    if scores is None:
        return {"timings": {"rerank": elapsed_ms(start)}}
    for c, s in zip(ranked, scores):
        c["relevance"] = (1.0 - RERANK_SHARE) * c["relevance"] + RERANK_SHARE * s
        c["sources"] = [*c["sources"], "rerank"]
    final_scores(ranked, settings, now=plan.now)
    # a period filter holds after reranking too: in-period hits first
    return {"ranked": by_period(plan, ordered(ranked, plan.threshold)), "timings": {"rerank": elapsed_ms(start)}}
