"""The consolidate graph: one scope's memories merged, compressed and forgotten.

    consolidate_load ─ consolidate_merge ─ consolidate_contradict ─ consolidate_compress ─ consolidate_digest
        ─ consolidate_forget ─ consolidate_layers ─ consolidate_entities ─ consolidate_apply

load reads the scope's live memories and the neighbours of each staged one; merge decides duplicates (rule
at cosine >= 0.95, the judge model in one batched call for 0.85-0.95); contradict finds memories giving one
subject and relation incompatible values and supersedes the loser (later event time, confidence, importance)
with a `contradicts` link; compress writes one summary per cluster of >= 3 (one batched call); digest writes
one summary of a period's episodic memories when it has more than settings.digest_min_memories (the chat
model, one batched call; offline: extractive); forget reads the forgetting curve; layers promotes short-term
memories to long-term (importance read at the pass's clock) and closes idle runs' working memories (one
session.end each); entities decides entity merges (two tiers) and memory links (same entity, sequence, cause,
the causes checked by a configured chat model); apply writes everything under the scope lock, projects it,
logs the judgment (operation_type CONSOLIDATE) and returns the report:

    {"trace_id", "dry_run", "memories", "staged_seen", "pairs", "merged", "merged_by_model", "compressed",
     "summarized_sources", "digests", "archived", "contradictions", "entities_merged", "links_found",
     "cause_check", "promoted", "relations_repointed", "runs_ended", "model_calls", "model_problems",
     "skipped_changed", "summary_ids", "timings_ms"}

`builder` is exported; `graph` is compiled without persistence (for `langgraph dev`); the Python
API compiles with the configured checkpointer (`compile_consolidate_graph`), thread id = trace id.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from memoryx.lifecycle.state import ConsolidateInput, ConsolidateOutput, ConsolidateState
from memoryx.nodes.consolidate_apply import consolidate_apply
from memoryx.nodes.consolidate_compress import consolidate_compress
from memoryx.nodes.consolidate_contradict import consolidate_contradict
from memoryx.nodes.consolidate_digest import consolidate_digest
from memoryx.nodes.consolidate_entities import consolidate_entities
from memoryx.nodes.consolidate_forget import consolidate_forget
from memoryx.nodes.consolidate_layers import consolidate_layers
from memoryx.nodes.consolidate_load import consolidate_load
from memoryx.nodes.consolidate_merge import consolidate_merge
from memoryx.runtime.context import Context

GRAPH_NAME = "memoryx_consolidate"


def compile_consolidate_graph(checkpointer: Any = None):
    """The consolidate graph compiled with a checkpointer (memoryx.runtime.checkpointing.make_checkpointer)."""
    return builder.compile(checkpointer=checkpointer, name=GRAPH_NAME)


# ------------------------------------------------------------------------------------------------ wiring

builder = StateGraph(ConsolidateState, context_schema=Context, input_schema=ConsolidateInput,
                     output_schema=ConsolidateOutput)
builder.add_node("consolidate_load", consolidate_load)
builder.add_node("consolidate_merge", consolidate_merge)
builder.add_node("consolidate_contradict", consolidate_contradict)
builder.add_node("consolidate_compress", consolidate_compress)
builder.add_node("consolidate_digest", consolidate_digest)
builder.add_node("consolidate_forget", consolidate_forget)
builder.add_node("consolidate_layers", consolidate_layers)
builder.add_node("consolidate_entities", consolidate_entities)
builder.add_node("consolidate_apply", consolidate_apply)
builder.add_edge(START, "consolidate_load")
builder.add_edge("consolidate_load", "consolidate_merge")
builder.add_edge("consolidate_merge", "consolidate_contradict")
builder.add_edge("consolidate_contradict", "consolidate_compress")
builder.add_edge("consolidate_compress", "consolidate_digest")
builder.add_edge("consolidate_digest", "consolidate_forget")
builder.add_edge("consolidate_forget", "consolidate_layers")
builder.add_edge("consolidate_layers", "consolidate_entities")
builder.add_edge("consolidate_entities", "consolidate_apply")
builder.add_edge("consolidate_apply", END)

graph = compile_consolidate_graph()
