"""The knowledge graph's truth: entities (one per scope and normalised name, entities.py) and relations,
which are invalidated rather than deleted so that they stay as history (relations.py). The graph database
is a projection of these: every write that changes an entity or relation queues its projection in the same
transaction (`_record_intent`).

`GraphTruth` is those two mixins together, with what spans both: what the conflict step of an add reads
(`relations_of_run`), merging entities (their relations re-pointed) and the counts the graph projection is
checked against. The shared Core tables and scope key are graph_rows.py.
"""

from __future__ import annotations

import functools

import sqlalchemy as sa
from sqlalchemy import select

from memoryx.core.scope import SCOPE_FIELDS, Scope
from memoryx.core.text import normalize_name
from memoryx.stores.sql.entities import GraphEntities
from memoryx.stores.sql.graph_rows import (
    ENTITIES,
    RELATIONS,
    expanding,
    graph_scope_key,
    in_scope,
    named_relation_dict,
    relations_with_names,
)
from memoryx.stores.sql.relations import GraphRelations
from memoryx.stores.sql.schema import EntityRow, RelationRow
from memoryx.stores.sql.values import require_scope, utc_now

_ONE_STATEMENT_IDS = 400  # relations_of_run: ids in one statement at most (bound-parameter limits), else chunked


@functools.lru_cache(maxsize=64)
def _relations_of_run_statement(scope_shape: tuple[tuple[str, bool], ...], memories: bool, entities: bool,
                                names: bool) -> sa.Select:
    """`GraphTruth.relations_of_run`'s statement for one shape of scope (which fields are unset) and of input
    (which lists are empty), built once: its values are bound parameters."""
    named_ids = select(ENTITIES.c.id).where(ENTITIES.c.scope_key == sa.bindparam("scope_key"),
                                            ENTITIES.c.normalized_name.in_(expanding("names")))
    ends = [end.in_(ids) for end in (RELATIONS.c.source_id, RELATIONS.c.target_id)
            for ids in ([expanding("entity_ids")] if entities else []) + ([named_ids] if names else [])]
    around = sa.and_(RELATIONS.c.valid == sa.true(), *in_scope(RELATIONS, scope_shape), sa.or_(sa.false(), *ends))
    of_memory = [RELATIONS.c.memory_id.in_(expanding("memory_ids"))] if memories else []
    return (relations_with_names().add_columns(around.label("is_around"))
            .where(sa.or_(*of_memory, *ends)).order_by(RELATIONS.c.created_at, RELATIONS.c.id))


class GraphTruth(GraphEntities, GraphRelations):
    """Entities and relations with validity, per scope."""

    def relations_of_run(self, scope: Scope, *, memory_ids: list[str], entity_ids: list[str],
                         entity_names: list[str]) -> tuple[list[dict], list[dict]]:
        """What the conflict step of an add reads, in ONE statement (instead of five, two of them reading the
        same rows): (every relation of the memories, valid or not, in any scope — `relations_for_memory` of each;
        `relations_around` the entities plus the entities of exactly this scope named `entity_names`).
        Both oldest first."""
        scope = require_scope(scope)
        memory_ids, entity_ids = list(dict.fromkeys(memory_ids)), list(dict.fromkeys(entity_ids))
        normalized = list(dict.fromkeys(normalize_name(n) for n in entity_names if isinstance(n, str) and n.strip()))
        if len(memory_ids) + len(entity_ids) + len(normalized) > _ONE_STATEMENT_IDS:  # bound-parameter limits
            named = [r["id"] for r in self.find_entities_by_names(scope, normalized)
                     if all((r.get(k) or None) == getattr(scope, k) for k in SCOPE_FIELDS)]
            of_memories = [r for m in memory_ids for r in self.relations_for_memory(m, include_invalid=True)]
            return of_memories, self.relations_around(scope, entity_ids + named)
        match = scope.match()
        if not (memory_ids or entity_ids or normalized):
            return [], []
        q = _relations_of_run_statement(tuple((k, v is None) for k, v in match.items()),
                                        bool(memory_ids), bool(entity_ids), bool(normalized))
        params = {"memory_ids": memory_ids, "entity_ids": entity_ids, "names": normalized,
                  "scope_key": graph_scope_key(scope), **{f"scope_{k}": v for k, v in match.items() if v is not None}}
        memory_set = set(memory_ids)
        of_memories, around_rows = [], []
        with self._tx() as s:
            for row in s.execute(q, params):
                relation = named_relation_dict(row)
                if row.memory_id in memory_set:
                    of_memories.append(relation)
                if row.is_around:
                    around_rows.append(relation)
        return of_memories, around_rows

    def merge_entities(self, merges: list[dict], *, trace_id: str) -> dict:
        """Entity upkeep of a consolidation pass (duplicate entities merged): each {"survivor", "merged"} pair
        of one scope; every relation of the merged entity (valid or not) is re-pointed to the survivor, a
        valid one the survivor already states (or that becomes a self-loop) is invalidated instead (one valid
        copy per fact and memory), and the merged entity row is deleted. Projection jobs are queued for the
        relations and both entities. Returns {"merged": [entity ids deleted], "relations": [relation dicts],
        "repointed": [{"id", "source_id", "target_id"} before the change]}."""
        done: list[str] = []
        touched: dict[str, RelationRow] = {}
        before: list[dict] = []
        now = utc_now()
        with self._tx(write=True) as s:
            for m in merges:
                keep, gone = s.get(EntityRow, m["survivor"]), s.get(EntityRow, m["merged"])
                if keep is None or gone is None or keep.scope_key != gone.scope_key or keep.id == gone.id:
                    continue
                q = select(RelationRow).where(sa.or_(RelationRow.source_id == gone.id, RelationRow.target_id == gone.id))
                for rel in sorted(s.scalars(q), key=lambda r: (not r.valid, r.created_at, r.id)):
                    before.append({"id": rel.id, "source_id": rel.source_id, "target_id": rel.target_id})
                    src = keep.id if rel.source_id == gone.id else rel.source_id
                    dst = keep.id if rel.target_id == gone.id else rel.target_id
                    if rel.valid:
                        twin = s.scalars(select(RelationRow.id).where(
                            RelationRow.scope_key == rel.scope_key, RelationRow.source_id == src,
                            RelationRow.relation == rel.relation, RelationRow.target_id == dst, RelationRow.id != rel.id,
                            RelationRow.memory_id.is_(None) if rel.memory_id is None else RelationRow.memory_id == rel.memory_id,
                            RelationRow.valid == sa.true())).first()
                        if twin is not None or src == dst:
                            rel.valid, rel.invalidated_at, rel.invalidated_by, rel.invalid_at = False, now, trace_id, now
                    rel.source_id, rel.target_id = src, dst
                    s.flush()  # the next relation's twin check sees this one
                    touched[rel.id] = rel
                keep.updated_at = now
                s.delete(gone)
                s.flush()
                done.append(gone.id)
                self._record_intent(s, "entity", [gone.id, keep.id])
            self._record_intent(s, "relation", list(touched))
            rels = self._relation_dicts(s, list(touched.values()))
        return {"merged": done, "relations": rels, "repointed": before}

    def graph_counts(self) -> dict:
        """{"entities", "relations", "valid_relations"} over every scope: what the graph projection must hold
        (compared with GraphStore.counts() after a restart)."""
        with self._tx() as s:
            entities = s.scalar(select(sa.func.count()).select_from(EntityRow)) or 0
            relations, valid = s.execute(select(
                sa.func.count(), sa.func.sum(sa.case((RelationRow.valid == sa.true(), 1), else_=0)))).one()
        return {"entities": int(entities), "relations": int(relations or 0), "valid_relations": int(valid or 0)}
