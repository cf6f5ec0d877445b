"""Step 6 of the add graph: link the extracted entity names to the entities of the scope (the rules are
memoryx.knowledge.entity_linking's: exact name, then embedding match, never across scopes)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from memoryx.core.runs import elapsed_ms, scope_of
from memoryx.knowledge.entity_linking import link_names
from memoryx.nodes.graph_relations import graph_active, self_name
from memoryx.runtime.context import Context, context_of, services_of
from memoryx.state import AddState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime


def link_entities(state: AddState, runtime: Runtime[Context]) -> dict:
    """linked_entities: normalised extracted name -> entity row (existing or newly created)."""
    started = time.perf_counter()
    relations = state.get("relations") or []
    if not relations or not graph_active(runtime):
        return {"linked_entities": {}}
    linked = link_names(services_of(runtime), scope_of(state), state.get("entities") or [], relations,
                        user_name=self_name(state), merge_threshold=context_of(runtime).entity_merge_threshold)
    return {"linked_entities": linked, "timings": {"link_entities": elapsed_ms(started)}}
