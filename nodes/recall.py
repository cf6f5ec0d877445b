"""recall: the search's recall paths, one after the other in the caller's thread - dense (the query embedded
once, plus the period the query names), keyword (BM25) and graph (from the entities the query names).

Why one node and not three parallel branches: a LangGraph superstep with several tasks hands them to a thread
pool that each graph run creates and shuts down again (two thread starts per search), and on a 2-core machine
that churn and the hand-offs cost more (about 3-5 ms per search at p50, far more at p99 under load) than the
paths themselves take together (~1-2 ms without the encoder: each is an in-process index lookup or one
round trip). Each path stays its own function in its own module (nodes/dense_recall.py, keyword_recall.py,
graph_recall.py) and reports its own time in `timings`. Dense comes last: its query embedding, started by
analyze_query on a worker thread (memoryx.search.query_vectors), runs meanwhile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memoryx.nodes.dense_recall import dense_recall
from memoryx.nodes.graph_recall import graph_recall
from memoryx.nodes.keyword_recall import keyword_recall
from memoryx.runtime.context import Context
from memoryx.search.state import SearchState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

PATHS = (keyword_recall, graph_recall, dense_recall)


def recall(state: SearchState, runtime: Runtime[Context]) -> dict:
    if state["plan"].empty:  # nothing to search: finalize returns the empty result
        return {}
    out: dict = {"timings": {}}
    for path in PATHS:
        part = path({**state, **out} if len(out) > 1 else state, runtime)  # graph reads the keyword hits
        out["timings"].update(part.pop("timings", {}))
        out.update(part)
    return out
