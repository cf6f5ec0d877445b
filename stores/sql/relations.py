"""Relations of the knowledge graph's truth: facts between two entities of one scope, tied to the memory that
states them. A relation is invalidated rather than deleted, so it stays as history; the database holds at
most one VALID copy of a fact per scope and memory. Adds (one or many, an add's invalidations and additions
as one write), invalidation and re-validation, and the reads by id, trace, memory, entity and scope. A mixin
of SQLStore within `GraphTruth` (graph_truth.py); every write that changes a relation queues its
projection in the same transaction (`_record_intent`).
"""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace

import sqlalchemy as sa
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from memoryx.core.scope import Scope
from memoryx.errors import NotFoundError
from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.core_rows import expire_held, flush_held
from memoryx.stores.sql.graph_rows import (
    ENTITIES_BY_ID,
    RELATIONS,
    expanding,
    graph_scope_key,
    named_relation_dict,
    relations_with_names,
    scope_columns,
)
from memoryx.stores.sql.schema import EntityRow, MemoryRow, RelationRow, relation_dict
from memoryx.stores.sql.values import (
    as_utc,
    clean_text,
    id_chunks,
    iso,
    new_id,
    require_scope,
    scope_dict,
    scope_where,
    utc_now,
)

# the statements of every add, built once: building one and its cache key cost more than running it
_MEMORIES = MemoryRow.__table__
_RELATIONS_BY_ID = relations_with_names().where(RELATIONS.c.id.in_(expanding()))
_INVALIDATE = (sa.update(RELATIONS).where(RELATIONS.c.id.in_(expanding()), RELATIONS.c.valid == sa.true())
               .values(valid=False, invalidated_at=sa.bindparam("at"), invalidated_by=sa.bindparam("by"),
                       invalid_at=sa.bindparam("ended")))
_VALID_TWINS = select(RELATIONS).where(
    RELATIONS.c.scope_key == sa.bindparam("scope_key"), RELATIONS.c.valid == sa.true(),
    RELATIONS.c.source_id.in_(expanding("sources")), RELATIONS.c.target_id.in_(expanding("targets")),
    RELATIONS.c.relation.in_(expanding("relations")))
_EVENT_TIMES = select(_MEMORIES.c.id, _MEMORIES.c.valid_at).where(_MEMORIES.c.id.in_(expanding()))
_INSERT_RELATIONS = sa.insert(RELATIONS)


class GraphRelations(SQLStoreBase):
    """Relations with validity, per scope."""

    def _relation_dicts(self, s: Session, rows: list[RelationRow]) -> list[dict]:
        ids = {r.source_id for r in rows} | {r.target_id for r in rows}
        names: dict[str, str] = {}
        for chunk in id_chunks(ids):
            names.update(s.execute(select(EntityRow.id, EntityRow.name).where(EntityRow.id.in_(chunk))).all())
        return [relation_dict(r, names) for r in rows]

    def add_relation(self, *, scope: Scope, source_id: str, relation: str, target_id: str,
                     memory_id: str | None, trace_id: str | None, relation_id: str | None = None,
                     valid_at: datetime | str | None = None) -> dict:
        """`valid_at`: when the relation began to hold in the world; default: its memory's event time."""
        scope = require_scope(scope)
        valid_from = as_utc(valid_at, "valid_at")
        relation = clean_text(relation, "relation")
        key = graph_scope_key(scope)
        for attempt in (1, 2):
            try:
                with self._tx(write=True) as s:
                    if relation_id and (row := s.get(RelationRow, relation_id)) is not None:
                        return self._relation_dicts(s, [row])[0]  # replay under the same id
                    for entity_id in (source_id, target_id):
                        entity = s.get(EntityRow, entity_id)
                        if entity is None or not scope.contains(scope_dict(entity)):
                            raise NotFoundError(f"Entity {entity_id} not found in this scope; upsert it first.")
                    row = s.scalars(select(RelationRow).where(
                        RelationRow.scope_key == key, RelationRow.source_id == source_id,
                        RelationRow.relation == relation, RelationRow.target_id == target_id,
                        RelationRow.memory_id.is_(None) if memory_id is None else RelationRow.memory_id == memory_id,
                        RelationRow.valid == sa.true())).first()
                    if row is None:
                        if valid_from is None and memory_id is not None:
                            valid_from = s.scalar(select(MemoryRow.valid_at).where(MemoryRow.id == memory_id))
                        row = RelationRow(id=relation_id or new_id(), scope_key=key, **scope.as_dict(),
                                          source_id=source_id, relation=relation, target_id=target_id,
                                          memory_id=memory_id, trace_id=trace_id, valid=True, created_at=utc_now(),
                                          valid_at=valid_from)
                        s.add(row)
                        self._record_intent(s, "relation", [row.id])
                        s.flush()
                    return self._relation_dicts(s, [row])[0]
            except IntegrityError:
                if attempt == 2:  # the same fact was written concurrently; the second pass returns it
                    raise
        raise AssertionError("unreachable")

    def add_relations(self, *, scope: Scope, items: list[dict], trace_id: str | None) -> list[dict]:
        """`add_relation` for many relations of one scope in one transaction and a handful of statements
        (seven statements per relation added up on every add). Items: {source_id, relation,
        target_id, memory_id}; a valid twin (same ends, relation and memory) is returned instead of a copy;
        valid_at is the memory's event time. Returns the relation dicts in the order of items."""
        scope = require_scope(scope)
        if not items:
            return []
        with self._tx(write=True) as s:
            out, created = self._add_relations(s, scope, items, trace_id, {})
            self._record_intent(s, "relation", created)
            return out

    def change_relations(self, *, scope: Scope, invalidate: list[str], add: list[dict], trace_id: str | None,
                         ends: dict[str, dict] | None = None) -> tuple[list[dict], list[dict]]:
        """An add's relation changes as one write: `invalidate_relations(invalidate, skip_missing=True)`, then
        `add_relations(add)`, with one projection intent for both. `ends`: entity dicts of the
        relation ends the caller read or wrote in this same transaction (they are not read again).
        Returns (invalidated, added)."""
        scope = require_scope(scope)
        with self._tx(write=True) as s:
            invalidated, changed = self._invalidate_relations(s, invalidate, trace_id=trace_id, ended=None,
                                                              skip_missing=True) if invalidate else ([], [])
            added, created = self._add_relations(s, scope, add, trace_id, ends or {}) if add else ([], [])
            self._record_intent(s, "relation", changed + created)
        return invalidated, added

    def _add_relations(self, s: Session, scope: Scope, items: list[dict], trace_id: str | None,
                       known_ends: dict[str, dict]) -> tuple[list[dict], list[str]]:
        """add_relations' work in the caller's transaction: (relation dicts, ids of the rows created)."""
        key = graph_scope_key(scope)
        wanted = [{**it, "relation": clean_text(it["relation"], "relation")} for it in items]

        def twin_key(src, rel, dst, mem):
            return (src, rel, dst, mem)

        ends = list(dict.fromkeys(e for it in wanted for e in (it["source_id"], it["target_id"])))
        names = {i: e["name"] for i, e in known_ends.items() if i in ends and scope.contains(e)}
        for chunk in id_chunks(i for i in ends if i not in known_ends):
            for r in s.execute(ENTITIES_BY_ID, {"ids": chunk}):
                if scope.contains(scope_dict(r)):
                    names[r.id] = r.name
        for entity_id in ends:
            if entity_id not in names:
                raise NotFoundError(f"Entity {entity_id} not found in this scope; upsert it first.")
        found: dict[tuple, dict] = {}
        # valid twins: exact ends and names (not every relation of the source: the user's own entity is
        # the source of most of them)
        targets = list(dict.fromkeys(it["target_id"] for it in wanted))
        relations = list(dict.fromkeys(it["relation"] for it in wanted))
        for chunk in id_chunks({it["source_id"] for it in wanted}):
            for row in s.execute(_VALID_TWINS, {"scope_key": key, "sources": chunk, "targets": targets,
                                                "relations": relations}):
                found.setdefault(twin_key(row.source_id, row.relation, row.target_id, row.memory_id),
                                 relation_dict(row, names))
        memory_ids = [it["memory_id"] for it in wanted if it.get("memory_id")]
        event_times: dict[str, datetime | None] = {}
        for chunk in id_chunks(memory_ids):
            event_times.update(s.execute(_EVENT_TIMES, {"ids": chunk}).all())
        out: list[dict] = []
        created: list[dict] = []
        now = utc_now()
        for it in wanted:
            k = twin_key(it["source_id"], it["relation"], it["target_id"], it.get("memory_id"))
            row = found.get(k)
            if row is None:
                values = {"id": new_id(), "scope_key": key, **scope_columns(scope), "source_id": it["source_id"],
                          "relation": it["relation"], "target_id": it["target_id"], "memory_id": it.get("memory_id"),
                          "trace_id": trace_id, "valid": True, "created_at": now, "invalidated_at": None,
                          "invalidated_by": None, "invalid_at": None,
                          "valid_at": event_times.get(it.get("memory_id")) if it.get("memory_id") else None}
                created.append(values)
                row = found[k] = relation_dict(SimpleNamespace(**values), names)
            out.append(row)
        if created:
            s.execute(_INSERT_RELATIONS, created)
        return out, [v["id"] for v in created]

    def get_relations(self, ids: list[str]) -> list[dict]:
        """Relations by id (valid or not), in the order of ids; unknown ids are skipped. Used by projections."""
        rows: dict[str, RelationRow] = {}
        with self._tx() as s:
            for chunk in id_chunks(ids):
                rows.update((r.id, r) for r in s.scalars(select(RelationRow).where(RelationRow.id.in_(chunk))))
            ordered = [rows[i] for i in dict.fromkeys(ids) if i in rows]
            return self._relation_dicts(s, ordered)

    def invalidate_relations(self, relation_ids: list[str], *, trace_id: str | None,
                             invalid_at: datetime | str | None = None, skip_missing: bool = False) -> list[dict]:
        """Mark relations invalid (kept as history). Already-invalid ones keep their first invalidation.
        `invalid_at`: when they stopped holding in the world, else now. An unknown id raises
        NotFoundError, or with `skip_missing` is left out (a relation a concurrent run removed meanwhile).
        Returns the relations in the order of ids."""
        ended = as_utc(invalid_at, "invalid_at")
        with self._tx(write=True) as s:
            out, changed = self._invalidate_relations(s, relation_ids, trace_id=trace_id, ended=ended,
                                                      skip_missing=skip_missing)
            self._record_intent(s, "relation", changed)
            return out

    def _invalidate_relations(self, s: Session, relation_ids: list[str], *, trace_id: str | None,
                              ended: datetime | None, skip_missing: bool) -> tuple[list[dict], list[str]]:
        """invalidate_relations' work in the caller's transaction: (relation dicts, ids made invalid)."""
        ids = list(dict.fromkeys(relation_ids))
        flush_held(s, RelationRow, ids)
        rows: dict[str, dict] = {}
        for chunk in id_chunks(ids):
            rows.update((r.id, named_relation_dict(r)) for r in s.execute(_RELATIONS_BY_ID, {"ids": chunk}))
        missing = [i for i in ids if i not in rows]
        if missing and not skip_missing:
            raise NotFoundError(f"Unknown relation ids {missing}; nothing was invalidated.")
        now = utc_now()
        changed = [i for i in ids if i in rows and rows[i]["valid"]]
        ended_at = ended or now
        for chunk in id_chunks(changed):
            s.execute(_INVALIDATE, {"ids": chunk, "at": now, "by": trace_id, "ended": ended_at})
        expire_held(s, RelationRow, changed)
        for i in changed:
            rows[i].update(valid=False, invalidated_at=iso(now), invalidated_by=trace_id, invalid_at=iso(ended_at))
        return [rows[i] for i in ids if i in rows], changed

    def relations_of_trace(self, trace_id: str) -> tuple[list[dict], list[dict]]:
        """(relations the run added, relations the run invalidated), oldest first: what a rollback undoes."""
        return (self._list_relations([RelationRow.trace_id == trace_id], True),
                self._list_relations([RelationRow.invalidated_by == trace_id], True))

    def revalidate_relations(self, relation_ids: list[str]) -> list[dict]:
        """Make invalidated relations valid again (a rollback of the run that invalidated them). One whose
        fact is meanwhile valid again as another row (same scope, ends, relation and memory) stays invalid:
        the database allows one valid copy. Returns the relations made valid."""
        ids = list(dict.fromkeys(relation_ids))
        with self._tx(write=True) as s:
            changed: list[RelationRow] = []
            for chunk in id_chunks(ids):
                for row in s.scalars(select(RelationRow).where(RelationRow.id.in_(chunk), RelationRow.valid == sa.false())):
                    twin = s.scalars(select(RelationRow.id).where(
                        RelationRow.scope_key == row.scope_key, RelationRow.source_id == row.source_id,
                        RelationRow.relation == row.relation, RelationRow.target_id == row.target_id,
                        RelationRow.memory_id.is_(None) if row.memory_id is None else RelationRow.memory_id == row.memory_id,
                        RelationRow.valid == sa.true())).first()
                    if twin is None:
                        row.valid, row.invalidated_at, row.invalidated_by, row.invalid_at = True, None, None, None
                        s.flush()  # the next row's twin check sees this one
                        changed.append(row)
            self._record_intent(s, "relation", [r.id for r in changed])
            return self._relation_dicts(s, changed)

    def _list_relations(self, where: list, include_invalid: bool) -> list[dict]:
        q = select(RelationRow).where(*where)
        if not include_invalid:
            q = q.where(RelationRow.valid == sa.true())
        with self._tx() as s:
            rows = list(s.scalars(q.order_by(RelationRow.created_at, RelationRow.id)))
            return self._relation_dicts(s, rows)

    def relations_for_memory(self, memory_id: str, *, include_invalid: bool = False) -> list[dict]:
        return self._list_relations([RelationRow.memory_id == memory_id], include_invalid)

    def relations_around(self, scope: Scope, entity_ids: list[str], *, include_invalid: bool = False) -> list[dict]:
        """Relations in the scope that start or end at any of the entities (one hop)."""
        ids = list(dict.fromkeys(entity_ids))
        if not ids:
            return []
        found: dict[str, dict] = {}
        for chunk in id_chunks(ids):
            where = [*scope_where(RelationRow, require_scope(scope)),
                     sa.or_(RelationRow.source_id.in_(chunk), RelationRow.target_id.in_(chunk))]
            found.update((r["id"], r) for r in self._list_relations(where, include_invalid))
        return list(found.values())

    def list_relations(self, scope: Scope | None, *, include_invalid: bool = False) -> list[dict]:
        return self._list_relations(scope_where(RelationRow, scope), include_invalid)
