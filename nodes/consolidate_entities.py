"""consolidate_entities: graph upkeep (memoryx.lifecycle.graph_upkeep). Decides which of the
scope's entities are one (name embeddings: each entity's nearest names in the vector store's entity
collection, the same exact scope only) and which memories link (same entity, sequence in a run/session, cause).
Writes nothing: consolidate_apply merges the entities (SQL truth, then the graph and entity vectors) and
writes the links under the scope lock; every pair decision, merged or kept apart, goes to the judgment.

Causal links are written by rule only where a memory's own words state the cause (memoryx.lifecycle.causal);
agents write any other link with link_memories."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from memoryx.core.owners import owned_by
from memoryx.core.runs import elapsed_ms
from memoryx.core.scope import SCOPE_FIELDS, Scope
from memoryx.lifecycle.graph_upkeep import entity_decisions, entity_pairs, memory_links, neighbours
from memoryx.lifecycle.state import ConsolidateState
from memoryx.nodes.consolidate_load import scope_of
from memoryx.lifecycle.cause_check import check_causes
from memoryx.runtime.context import Context, services_of

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

log = logging.getLogger(__name__)
EMBED_BATCH = 256
NEAREST = 6  # names looked up per entity (the seed's top-k of 5, plus the entity itself)


def consolidate_entities(state: ConsolidateState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    s = services.settings
    scope = scope_of(state)
    sql = services.sql
    entities = {e["id"]: e for e in sql.list_entities(scope) if owned_by(scope, e)}
    relations = [r for r in sql.list_relations(scope) if owned_by(scope, r)]
    hits: dict[str, list[tuple[str, float]]] = {}
    rows = list(entities.values())
    for i in range(0, len(rows), EMBED_BATCH):
        batch = rows[i:i + EMBED_BATCH]
        for e, vec in zip(batch, services.embeddings.embed_documents([e["name"] for e in batch])):
            own = Scope(**{k: e.get(k) for k in SCOPE_FIELDS})
            found = services.vectors.search_entities(vec, own, limit=NEAREST, threshold=s.consolidate_entity_judge_threshold)
            hits[e["id"]] = [(h.id, float(h.score)) for h in found]
    pairs = entity_pairs(hits, entities)
    merges, decisions = entity_decisions(entities, pairs, neighbours(relations), s.consolidate_entity_merge_threshold,
                                         s.consolidate_entity_judge_threshold)
    gone = {m["merged"] for m in state.get("merges") or []} | {a["id"] for a in state.get("archives") or []}
    live = [m for m in state.get("memories") or [] if m["status"] not in ("merged", "archived") and m["id"] not in gone]
    links = memory_links(live, relations, {m["merged"]: m["survivor"] for m in merges}, s.link_max_group) \
        if s.consolidate_links else []
    # the rule's cause links, checked by the chat model where one is configured (memoryx.lifecycle.cause_check)
    links, check = check_causes(services.judgment_llm, links, {m["id"]: m["memory"] for m in live})
    calls = {k: check.pop(k) for k in ("model_calls", "model_raw", "model_problems") if k in check}
    return {"entity_merges": merges, "entity_decisions": decisions, "links": links, "cause_check": check, **calls,
            "timings": {"entities": elapsed_ms(start)}}
