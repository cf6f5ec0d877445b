"""The search graph: query -> recall paths -> ranking and the mem0-shaped result, three steps in a line.

    analyze_query ─ recall ─ rank
                    (keyword, graph, dense)   (fuse, expand_context, score, rerank, finalize)

Each node lives in the module of its name under memoryx/nodes/ (nodes/analyze_query.py, nodes/rank.py, ...).
Every LangGraph step costs ~0.3-0.5 ms of CPU in the caller's thread, and a conditional edge more, about a
tenth of a search: stages that always run one after the other in the caller's thread are one node each
(recall, rank), each stage still its own function and module with its own entry in `timings`, and there is
no branch - an empty query passes recall untouched and rank answers it with the empty result, and a reranker
is a stage of rank when the plan names one.

* analyze_query: scope and filter validation (ScopeError / InvalidInputError before any store is read), then
  the `SearchPlan` (memoryx.search.plan) every later node reads: tokens, the scope's entities the query names
  (one read transaction with the user's own names and the scope's timeline - its latest event, and the rows
  rank's context window is taken from - memoryx.search.reads),
  dates/periods named (memoryx.search.dates), the recipe (fast / deep / auto / hybrid / vector / keyword,
  memoryx.search.recipes) and its expansion depth; no model unless query rewriting is on.
* recall (nodes/recall.py): the recall paths one after the other in the caller's thread - keyword (BM25,
  CJK-aware), graph (entities -> breadth-first neighbourhood -> memories; nothing when the query names no entity
  of the scope), dense last (the query embedded once, on a worker thread since analyze_query so that the
  encoder overlaps the rest - memoryx.search.query_vectors; plus the period the query names). A path the recipe leaves
  out returns nothing at once. They were parallel branches; on 2 cores the thread pool each run created cost
  more than the overlap saved (nodes/recall.py says why).
* rank (nodes/rank.py): weighted or RRF fusion with the paths that found each memory in "sources"
  (nodes/fuse.py), neighbouring-memory context over the scope's timeline, the SQL rows and their latest
  feedback (nodes/expand_context.py), the final score with importance, recency and access frequency
  (memoryx.search.scoring) and the query's period (memoryx.search.periods), then the optional reranker
  (nodes/rerank.py, memoryx.search.rerankers), and last finalize (nodes/finalize.py): limit, the feedback
  penalty (VERY_NEGATIVE, memoryx.lifecycle.feedback), the result shape, and access recording after the reply
  (memoryx.search.access).

Input: {"query", "user_id"/"agent_id"/"run_id", "limit": 10, "filters", "threshold", "mode", "expand_depth",
"relation_types", "include_invalid", "rewrite"?, "record_access"?}. Output key `result`:
{"results": [{"id", "memory", "score", "sources", "metadata", "created_at", "updated_at", "user_id",
"agent_id", "run_id", "memory_type", "category", "hash"}], "relations": [{"source", "relationship",
"destination"}]}.

`builder` is exported; `graph` is compiled without persistence (a search has nothing to resume). The steps
are graphs/search_steps.py's `SEARCH_STEPS`, which `run_search` also runs without LangGraph.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from memoryx.graphs.search_steps import SEARCH_STEPS
from memoryx.runtime.context import Context
from memoryx.search.state import SearchInput, SearchOutput, SearchState

builder = StateGraph(SearchState, context_schema=Context, input_schema=SearchInput, output_schema=SearchOutput)
previous = START
for name, step in SEARCH_STEPS:
    builder.add_node(name, step)
    builder.add_edge(previous, name)
    previous = name
builder.add_edge(previous, END)

graph = builder.compile()
graph.name = "memoryx_search"
