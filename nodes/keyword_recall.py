"""keyword_recall: BM25 over the sparse keyword vectors (Qdrant IDF modifier; the CJK-aware tokenizer of
memoryx.core.text), scope and filters pushed down. Skipped when the query has no keyword tokens or the recipe
has no keyword path. A question asking for a recommendation also runs the preference path: the query's words
with the vocabulary of stated preferences (memoryx.search.preferences), its hits fused as "preference". A question
about two events ("how many days between X and Y", "which came first") also searches each event's phrase and
merges the lists (memoryx.search.events), so both events' memories are candidates.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from memoryx.core.runs import elapsed_ms
from memoryx.nodes.dense_recall import hits_of
from memoryx.runtime.context import Context, services_of
from memoryx.search.events import event_phrases, merged_hits, with_covers
from memoryx.search.preferences import FOOD_WORDS, PREFERENCE_WORDS
from memoryx.search.state import SearchState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime


def keyword_recall(state: SearchState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    plan = state["plan"]
    if not plan.tokens or not plan.uses("keyword"):
        return {"keyword_hits": [], "preference_hits": [], "timings": {"keyword_recall": elapsed_ms(start)}}
    vectors = services_of(runtime).vectors
    hits = hits_of(vectors.keyword_search(plan.keyword_query, plan.scope, limit=plan.candidate_k,
                                          filters=plan.filters, extra=plan.keyword_extra))
    events = event_phrases(plan.query)
    if events:  # a question about two events: each event's best match counts as much as the whole question's
        per_event = [hits_of(vectors.keyword_search(e, plan.scope, limit=plan.candidate_k, filters=plan.filters))
                     for e in events]
        hits = with_covers(merged_hits([hits, *per_event]), per_event, plan.role)
    liked = []
    if plan.preferences:
        words = f"{PREFERENCE_WORDS} {FOOD_WORDS}" if plan.food else PREFERENCE_WORDS
        liked = vectors.keyword_search(f"{plan.keyword_query} {words}", plan.scope,
                                       limit=plan.candidate_k, filters=plan.filters, extra=plan.keyword_extra)
    return {"keyword_hits": hits, "preference_hits": hits_of(liked),
            "timings": {"keyword_recall": elapsed_ms(start)}}
