"""The graph side of a memory's life: what happens to the knowledge graph when a memory is added, updated,
deleted, or its whole scope is cleared. One home for it, used by the add graph (resolve_graph_conflicts)
and by `Memory.update` / `delete` / `delete_all` alike.

- DELETE cascade: every valid relation the memory supported is invalidated; a deleted memory
  takes the history of its relations with it, so the ends of its invalid relations are checked too.
- UPDATE delta: the memory's valid relations that its new text no longer yields are
  invalidated; those it still yields stay as they are; the new ones are added.
- Orphans: entities of cascaded relations left without any valid relation are removed (SQL rows, graph
  nodes, entity vectors). Ends of relations outdated by a conflict are not cascaded, so "lived in Berlin"
  stays as history.
- Scope clear: what is left of a scope's graph once its memories are gone.

Relations are soft-invalidated (valid=false, invalidated_by=trace id). SQL is written first, then the
projections (`Projector.sync_relations` / `sync_entities`). Callers hold the scope lock for every write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memoryx.core.scope import Scope
from memoryx.core.text import normalize_name
from memoryx.knowledge.entity_linking import link_names
from memoryx.knowledge.graph_extraction import extract_graph
from memoryx.models.factory import model_name_of

if TYPE_CHECKING:
    from memoryx.runtime.services import Services

Triple = tuple[str, str, str]


def empty_changes() -> dict:
    return {"added_entities": [], "deleted_entities": []}


def change_of(row: dict) -> dict:
    """A relation row in mem0's "relations" shape."""
    return {"source": row.get("source"), "relationship": row.get("relation"), "destination": row.get("target")}


def relation_key(row: dict) -> Triple:
    return (row["source_id"], row["relation"], row["target_id"])


def relations_with_ids(linked: dict, relations: list[dict]) -> list[dict]:
    """Extracted relations ({"source", "relation", "destination", "memory_id"}) with the ids of their linked
    entities, one per triple (first wins); relations whose ends could not be linked are dropped."""
    out: dict[Triple, dict] = {}
    for r in relations:
        src, dst = linked.get(normalize_name(r["source"])), linked.get(normalize_name(r["destination"]))
        if src and dst and src["id"] != dst["id"]:
            row = {"source_id": src["id"], "source": src["name"], "relation": r["relation"],
                   "target_id": dst["id"], "target": dst["name"], "memory_id": r.get("memory_id")}
            out.setdefault(relation_key(row), row)
    return list(out.values())


def _ends(rows: list[dict]) -> set[str]:
    return {e for row in rows for e in (row["source_id"], row["target_id"])}


def delete_cascade(sql, memory_id: str) -> tuple[list[dict], set[str]]:
    """(valid relations to invalidate, entities to check for orphans) when the memory is deleted."""
    return deleted_memory_cascade(sql.relations_for_memory(memory_id, include_invalid=True))


def update_delta(sql, memory_id: str, new_keys: set[Triple]) -> tuple[list[dict], set[str]]:
    """(valid relations to invalidate, entities to check for orphans) when the memory's new text yields
    `new_keys` (relation_key triples): the relations it no longer yields."""
    return updated_memory_delta(sql.relations_for_memory(memory_id), new_keys)


def deleted_memory_cascade(memory_relations: list[dict]) -> tuple[list[dict], set[str]]:
    """`delete_cascade` over the memory's relations (valid or not) the caller already read."""
    return [row for row in memory_relations if row["valid"]], _ends(memory_relations)


def updated_memory_delta(memory_relations: list[dict], new_keys: set[Triple]) -> tuple[list[dict], set[str]]:
    """`update_delta` over the memory's relations (valid or not) the caller already read."""
    rows = [row for row in memory_relations if row["valid"] and relation_key(row) not in new_keys]
    return rows, _ends(rows)


def delete_orphans(sql, entity_ids: set[str] | list[str]) -> list[str]:
    """SQL only (inside the caller's transaction, if any): delete the given entities that no valid relation
    references any more; returns their ids, for the caller to project once committed."""
    ids = list(entity_ids)
    orphans = [row["id"] for row in sql.orphan_entities(ids)] if ids else []
    if orphans:
        sql.delete_entities(orphans)
    return orphans


def remove_orphans(services: "Services", entity_ids: set[str] | list[str]) -> list[str]:
    """Delete the given entities that no valid relation references any more; returns their ids."""
    orphans = delete_orphans(services.sql, entity_ids)
    if orphans:
        services.projector.sync_entities(orphans)  # rows gone: graph nodes and entity vectors deleted
    return orphans


def cascade_memory_delete(services: "Services", memory_ids: list[str], *, trace_id: str | None) -> dict:
    """The DELETE cascade for memories deleted outside the add graph (Memory.delete / delete_all)."""
    to_invalidate: dict[str, dict] = {}
    entities: set[str] = set()
    for memory_id in memory_ids:
        rows, ends = delete_cascade(services.sql, memory_id)
        to_invalidate.update((row["id"], row) for row in rows)
        entities |= ends
    invalidated = services.sql.invalidate_relations(list(to_invalidate), trace_id=trace_id) if to_invalidate else []
    if invalidated:
        services.projector.sync_relations(invalidated)
    remove_orphans(services, entities)
    return {"added_entities": [], "deleted_entities": [change_of(r) for r in invalidated]}


def clear_scope(services: "Services", scope: Scope, *, trace_id: str | None) -> None:
    """What is left of the scope's graph once its memories are gone: relations no memory backs are
    invalidated, entities without a valid relation removed."""
    sql = services.sql
    valid = [r["id"] for r in sql.list_relations(scope) if r.get("valid", True)]
    if valid:
        services.projector.sync_relations(sql.invalidate_relations(valid, trace_id=trace_id))
    remove_orphans(services, [e["id"] for e in sql.list_entities(scope)])


def extract_memory_relations(services: "Services", memory: dict, *, trace_id: str) -> tuple[list[dict], list[dict]]:
    """(entities, relations) the graph model reads in one memory's text (as the add graph's extraction
    does for the memories of a run). The model call; no write."""

    llm = services.graph_llm
    user_name = memory.get("user_id") or "user"
    config = {"run_name": "extract_relations_llm",
              "tags": ["memoryx:extract_relations", f"trace_id:{trace_id}", f"model:{model_name_of(llm)}"],
              "metadata": {"trace_id": trace_id, "memory_id": memory["id"], "user_id": memory.get("user_id"),
                           "memoryx_step": "extract_relations"}}
    return extract_graph(llm, [memory], user_name, mode=services.settings.graph_extraction_mode, trace_id=trace_id,
                         config=config)


def apply_memory_update(services: "Services", memory: dict, entities: list[dict], relations: list[dict], *,
                        trace_id: str | None) -> dict:
    """The UPDATE delta for a memory updated outside the add graph (Memory.update): link the extracted
    entities, invalidate the memory's relations its new text no longer yields, add the new ones, remove the
    orphans. Caller holds the scope lock. Returns the mem0-shaped relation changes."""

    sql = services.sql
    scope = Scope(user_id=memory.get("user_id"), agent_id=memory.get("agent_id"), run_id=memory.get("run_id"),
                  group_id=memory.get("group_id"))
    linked = link_names(services, scope, entities, relations, user_name=memory.get("user_id") or "user",
                        merge_threshold=services.settings.entity_merge_threshold) if relations else {}
    new = relations_with_ids(linked, [{**r, "memory_id": memory["id"]} for r in relations])
    new_keys = {relation_key(n) for n in new}
    existing_keys = {relation_key(r) for r in sql.relations_for_memory(memory["id"])}
    stale, entities_touched = update_delta(sql, memory["id"], new_keys)
    invalidated = sql.invalidate_relations([r["id"] for r in stale], trace_id=trace_id) if stale else []
    added = [sql.add_relation(scope=scope, source_id=n["source_id"], relation=n["relation"], target_id=n["target_id"],
                              memory_id=memory["id"], trace_id=trace_id)
             for n in new if relation_key(n) not in existing_keys]
    if invalidated or added:
        services.projector.sync_relations(invalidated + added)
    remove_orphans(services, entities_touched | {row["id"] for row in linked.values()})
    return {"added_entities": [change_of(r) for r in added], "deleted_entities": [change_of(r) for r in invalidated]}
