"""Entity linking: the extracted names of a run (or of Memory.update) matched to the entities of the scope.

1. Exact match of the normalised name (`SQLStore.find_entities_by_names`).
2. The rest: embedded in ONE batch, each vector searched in the entity collection of the scope; the best
   hit at or above `Context.entity_merge_threshold` (0.9) is the same entity. CJK names also need a shared
   character: all-MiniLM-L6-v2 places unrelated short Chinese words close together (咖啡/茶 score 0.90).
   The user's own entity is matched by exact name only.
3. Names still unknown become new entities in SQL (`upsert_entity`), projected to the graph and the entity
   vectors by `Projector.sync_entities`.

Never across scopes: SQL rows and vector hits are kept only when their user/agent/run ids equal the run's
scope exactly (a user-only scope must not pick up the entities of the same user under an agent).
"""

from __future__ import annotations

from memoryx.core.scope import Scope, same_scope
from memoryx.core.text import normalize_name
from memoryx.models.graph_tools import has_cjk


def link_names(services, scope: Scope, entities: list[dict], relations: list[dict], *, user_name: str,
               merge_threshold: float) -> dict[str, dict]:
    """Normalised name of every relation end -> its entity row in `scope` (found or created). Also used
    by Memory.update through memoryx.knowledge.memory_graph."""
    user_key = normalize_name(user_name)
    types = {normalize_name(e["name"]): e.get("entity_type") or "entity" for e in entities}
    names: dict[str, str] = {}  # normalised -> first spelling, in order of appearance
    for r in relations:
        for name in (r["source"], r["destination"]):
            names.setdefault(normalize_name(name), name)

    sql = services.sql
    linked: dict[str, dict] = {}
    for row in sql.find_entities_by_names(scope, list(names.values())):
        if same_scope(row, scope):
            linked.setdefault(row["normalized_name"], row)

    to_embed = [k for k in names if k not in linked and k != user_key]
    embedded: dict[str, list[float]] = {}
    best: dict[str, tuple[float, str]] = {}  # normalised name -> (score, entity id)
    if to_embed:
        vectors = services.embeddings.embed_documents([names[k] for k in to_embed])
        embedded = dict(zip(to_embed, vectors))
        for key, vector in embedded.items():
            for hit in services.vectors.search_entities(vector, scope, limit=5, threshold=merge_threshold):
                payload = hit.payload or {}
                if hit.score < merge_threshold or not same_scope(payload, scope):
                    continue
                if not _compatible(names[key], payload.get("name") or ""):
                    continue
                if key not in best or hit.score > best[key][0]:
                    best[key] = (hit.score, str(payload.get("id") or hit.id))

    # one write transaction for every new name and its projection intents
    created: dict[str, dict] = {}
    vectors: dict[str, list[float]] = {}
    if not best and all(k in linked for k in names):
        return linked  # every name found by its exact name: nothing to write
    with sql.transaction():
        if best:  # the SQL row is the truth (a vector may be stale): link only to rows that still exist here
            rows = {r["id"]: r for r in sql.get_entities([eid for _, eid in best.values()]) if same_scope(r, scope)}
            for key, (_, entity_id) in best.items():
                if entity_id in rows:
                    linked[key] = rows[entity_id]
        unknown = [key for key in names if key not in linked]
        rows = sql.upsert_entities(scope=scope, items=[
            (names[key], "person" if key == user_key else types.get(key, "entity")) for key in unknown])
        for key, row in zip(unknown, rows):
            linked[key] = created[row["id"]] = row
            if key in embedded:  # reuse the name embeddings computed above (the user's own is not embedded)
                vectors[row["id"]] = embedded[key]
    if created:
        services.projector.project_recorded(sql.recorded_intents(), entities=created, entity_vectors=vectors)
    return linked


def _compatible(new_name: str, existing_name: str) -> bool:
    """Lexical sanity check of an embedding match: CJK names must share a character."""
    if has_cjk(new_name) or has_cjk(existing_name):
        return bool(set(filter(has_cjk, new_name)) & set(filter(has_cjk, existing_name)))
    return True
