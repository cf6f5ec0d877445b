"""The search graph: query -> parallel recall paths -> fusion -> context -> ranking -> mem0-shaped result.

    analyze_query ─┬─ (empty query) ─────────────────────────────────────────────────────┐
                   └─ recall ─ fuse ─ expand_context ─ rank ─┬─ (reranker) rerank ─┬─ finalize
                      (dense, keyword, graph)                  └─────────────────────┘

Each node lives in the module of its name under memoryx/nodes/ (nodes/analyze_query.py, nodes/fuse.py, ...).

* analyze_query: scope and filter validation (ScopeError / InvalidInputError before any store is read), then
  the `SearchPlan` (memoryx.search.plan) every later node reads: tokens, the scope's entities the query names
  (one read transaction with the user's own names and the scope's latest event, memoryx.search.reads),
  dates/periods named (memoryx.search.dates), the recipe (fast / deep / auto / hybrid / vector / keyword,
  memoryx.search.recipes) and its expansion depth; no model unless query rewriting is on.
* recall (nodes/recall.py): the recall paths one after the other in the caller's thread - keyword (BM25,
  CJK-aware), graph (entities -> breadth-first neighbourhood -> memories; nothing when the query names no entity
  of the scope), dense last (the query embedded once, on a worker thread since analyze_query so that the
  encoder overlaps the rest - memoryx.search.query_vectors; plus the period the query names). A path the recipe leaves
  out returns nothing at once. They were parallel branches; on 2 cores the thread pool each run created cost
  more than the overlap saved (nodes/recall.py says why).
* fuse / expand_context / rank / rerank / finalize: weighted or RRF fusion with the paths that found each
  memory in "sources", neighbouring-memory context, final score with importance, recency and access
  frequency (memoryx.search.scoring), optional reranker (memoryx.search.rerankers), limit, the feedback
  penalty (VERY_NEGATIVE, memoryx.feedback; read with the ranked rows), and access recording after the reply
  (memoryx.search.access).

Input: {"query", "user_id"/"agent_id"/"run_id", "limit": 10, "filters", "threshold", "mode", "expand_depth",
"relation_types", "include_invalid", "rewrite"?, "record_access"?}. Output key `result`:
{"results": [{"id", "memory", "score", "sources", "metadata", "created_at", "updated_at", "user_id",
"agent_id", "run_id", "memory_type", "category", "hash"}], "relations": [{"source", "relationship",
"destination"}]}.

`builder` is exported; `graph` is compiled without persistence (a search has nothing to resume).
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, StateGraph

from memoryx.context import Context
from memoryx.nodes.analyze_query import analyze_query
from memoryx.nodes.expand_context import expand_context
from memoryx.nodes.finalize import finalize
from memoryx.nodes.fuse import fuse
from memoryx.nodes.rank import rank
from memoryx.nodes.recall import recall
from memoryx.nodes.rerank import rerank
from memoryx.search.state import SearchInput, SearchOutput, SearchState

def route_query(state: SearchState) -> Literal["recall", "finalize"]:
    """Empty query: straight to an empty result. Otherwise recall (each path returns nothing at once when it
    does not apply, e.g. the graph path when the query names no known entity)."""
    if state["plan"].empty:
        return "finalize"
    return "recall"


def route_rank(state: SearchState) -> Literal["rerank", "finalize"]:
    """Rerank only when a reranker is configured (the plan says so) and there is something to rerank."""
    if state["plan"].reranker and state.get("ranked"):
        return "rerank"
    return "finalize"


builder = StateGraph(SearchState, context_schema=Context, input_schema=SearchInput, output_schema=SearchOutput)
builder.add_node("analyze_query", analyze_query)
builder.add_node("recall", recall)
builder.add_node("fuse", fuse)
builder.add_node("expand_context", expand_context)
builder.add_node("rank", rank)
builder.add_node("rerank", rerank)
builder.add_node("finalize", finalize)

builder.add_edge(START, "analyze_query")
builder.add_conditional_edges("analyze_query", route_query, ["recall", "finalize"])
builder.add_edge("recall", "fuse")
builder.add_edge("fuse", "expand_context")
builder.add_edge("expand_context", "rank")
builder.add_conditional_edges("rank", route_rank, ["rerank", "finalize"])
builder.add_edge("rerank", "finalize")
builder.add_edge("finalize", END)

graph = builder.compile()
graph.name = "memoryx_search"
