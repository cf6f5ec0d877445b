"""The knowledge graph's truth: entities (one per scope and normalised name) and relations, which are
invalidated rather than deleted so that they stay as history. The graph database is a projection of these:
every write that changes an entity or relation queues its projection in the same transaction
(`_record_intent`)."""

from __future__ import annotations

import functools
import hashlib
import json
from datetime import datetime
from types import SimpleNamespace

import sqlalchemy as sa
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from memoryx.errors import NotFoundError
from memoryx.core.scope import SCOPE_FIELDS, Scope
from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.schema import (EntityRow, MemoryRow, RelationRow, entity_dict, expire_held, flush_held,
                                      relation_dict, update_row)
from memoryx.stores.sql.values import as_utc, clean_text, id_chunks, iso, new_id, require_scope, scope_dict, scope_where, utc_now
from memoryx.core.text import normalize_name

# Core tables: the graph steps of every add read and write these rows; through the ORM (identity map, unit of
# work, per-statement cache keys) they cost about twice the statements themselves (issue 14).
_ENTITIES = EntityRow.__table__
_RELATIONS = RelationRow.__table__
_SOURCE, _TARGET = _ENTITIES.alias("source_entity"), _ENTITIES.alias("target_entity")


def _relations_with_names() -> sa.Select:
    """Relation rows with the names of their ends (one statement instead of rows, then their names)."""
    return (select(_RELATIONS, _SOURCE.c.name.label("source_name"), _TARGET.c.name.label("target_name"))
            .select_from(_RELATIONS.outerjoin(_SOURCE, _SOURCE.c.id == _RELATIONS.c.source_id)
                         .outerjoin(_TARGET, _TARGET.c.id == _RELATIONS.c.target_id)))


def _named_relation_dict(row) -> dict:
    """relation_dict of a `_relations_with_names` row."""
    return relation_dict(row, {row.source_id: row.source_name, row.target_id: row.target_name})


def _many(name: str = "ids") -> sa.BindParameter:
    return sa.bindparam(name, expanding=True)


# The statements of every add, built once: building one and its cache key cost more than running it (issue 14).
_MEMORIES = MemoryRow.__table__
_ENTITIES_BY_ID = select(_ENTITIES).where(_ENTITIES.c.id.in_(_many()))
_ENTITIES_BY_NAME = select(_ENTITIES).where(_ENTITIES.c.scope_key == sa.bindparam("scope_key"),
                                            _ENTITIES.c.normalized_name.in_(_many("names")))
_UNREFERENCED_ENTITIES = select(_ENTITIES).where(_ENTITIES.c.id.in_(_many()), *(
    ~sa.exists().where(_RELATIONS.c.valid == sa.true(), end == _ENTITIES.c.id)
    for end in (_RELATIONS.c.source_id, _RELATIONS.c.target_id)))
_DELETE_RELATIONS_OF_ENTITIES = sa.delete(_RELATIONS).where(
    sa.or_(_RELATIONS.c.source_id.in_(_many()), _RELATIONS.c.target_id.in_(_many())))
_DELETE_ENTITIES = sa.delete(_ENTITIES).where(_ENTITIES.c.id.in_(_many()))
_RELATIONS_BY_ID = _relations_with_names().where(_RELATIONS.c.id.in_(_many()))
_INVALIDATE = (sa.update(_RELATIONS).where(_RELATIONS.c.id.in_(_many()), _RELATIONS.c.valid == sa.true())
               .values(valid=False, invalidated_at=sa.bindparam("at"), invalidated_by=sa.bindparam("by"),
                       invalid_at=sa.bindparam("ended")))
_VALID_TWINS = select(_RELATIONS).where(
    _RELATIONS.c.scope_key == sa.bindparam("scope_key"), _RELATIONS.c.valid == sa.true(),
    _RELATIONS.c.source_id.in_(_many("sources")), _RELATIONS.c.target_id.in_(_many("targets")),
    _RELATIONS.c.relation.in_(_many("relations")))
_EVENT_TIMES = select(_MEMORIES.c.id, _MEMORIES.c.valid_at).where(_MEMORIES.c.id.in_(_many()))
_INSERT_ENTITIES, _INSERT_RELATIONS = sa.insert(_ENTITIES), sa.insert(_RELATIONS)
_ONE_STATEMENT_IDS = 400  # relations_of_run: ids in one statement at most (bound-parameter limits), else chunked


def _in_scope(table: sa.Table, scope_shape: tuple[tuple[str, bool], ...]) -> list:
    """scope_where's conditions with the values as bound parameters `scope_<field>`: one statement per shape
    of scope (which fields are unset)."""
    return [table.c[k].is_(None) if unset else table.c[k] == sa.bindparam(f"scope_{k}") for k, unset in scope_shape]


@functools.lru_cache(maxsize=64)
def _entities_by_names_statement(scope_shape: tuple[tuple[str, bool], ...]) -> sa.Select:
    return (select(_ENTITIES).where(_ENTITIES.c.normalized_name.in_(_many("names")), *_in_scope(_ENTITIES, scope_shape))
            .order_by(_ENTITIES.c.created_at, _ENTITIES.c.id))


@functools.lru_cache(maxsize=64)
def _relations_of_run_statement(scope_shape: tuple[tuple[str, bool], ...], memories: bool, entities: bool,
                                names: bool) -> sa.Select:
    """`GraphTruth.relations_of_run`'s statement for one shape of scope (which fields are unset) and of input
    (which lists are empty), built once: its values are bound parameters."""
    named_ids = select(_ENTITIES.c.id).where(_ENTITIES.c.scope_key == sa.bindparam("scope_key"),
                                             _ENTITIES.c.normalized_name.in_(_many("names")))
    ends = [end.in_(ids) for end in (_RELATIONS.c.source_id, _RELATIONS.c.target_id)
            for ids in ([_many("entity_ids")] if entities else []) + ([named_ids] if names else [])]
    around = sa.and_(_RELATIONS.c.valid == sa.true(), *_in_scope(_RELATIONS, scope_shape), sa.or_(sa.false(), *ends))
    of_memory = [_RELATIONS.c.memory_id.in_(_many("memory_ids"))] if memories else []
    return (_relations_with_names().add_columns(around.label("is_around"))
            .where(sa.or_(*of_memory, *ends)).order_by(_RELATIONS.c.created_at, _RELATIONS.c.id))


class GraphTruth(SQLStoreBase):
    """Entities and relations with validity, per scope."""

    def upsert_entity(self, *, scope: Scope, name: str, entity_type: str = "entity",
                      entity_id: str | None = None) -> dict:
        """One entity per (exact scope, normalised name). A known name keeps its id and first spelling."""
        scope = require_scope(scope)
        name = clean_text(name, "entity name")
        normalized = normalize_name(name)
        entity_type = (entity_type or "entity").strip() or "entity"
        key = _scope_key(scope)
        for attempt in (1, 2):
            try:
                with self._tx(write=True) as s:
                    row = s.scalars(select(EntityRow).where(EntityRow.scope_key == key,
                                                            EntityRow.normalized_name == normalized)).first()
                    if row is None and entity_id:
                        row = s.get(EntityRow, entity_id)  # replay of a create under the same id
                    if row is None:
                        now = utc_now()
                        row = EntityRow(id=entity_id or new_id(), scope_key=key, **scope.as_dict(), name=name,
                                        normalized_name=normalized, entity_type=entity_type,
                                        created_at=now, updated_at=now)
                        s.add(row)
                        self._record_intent(s, "entity", [row.id])
                    elif entity_type != "entity" and row.entity_type != entity_type:
                        # A specific type refines the generic one; "entity" never overwrites a real type.
                        row.entity_type = entity_type
                        row.updated_at = utc_now()
                        self._record_intent(s, "entity", [row.id])
                    s.flush()
                    return entity_dict(row)
            except IntegrityError:
                if attempt == 2:  # a concurrent writer created it; the second pass finds it
                    raise
        raise AssertionError("unreachable")

    def upsert_entities(self, *, scope: Scope, items: list[tuple[str, str]]) -> list[dict]:
        """`upsert_entity` for many (name, entity_type) of one scope in one transaction: one read of the names
        already there, one INSERT of the others and one projection intent (issue 14: three statements per new
        name). Returns the entity dicts in the order of items."""
        scope = require_scope(scope)
        key = _scope_key(scope)
        wanted = [(clean_text(name, "entity name"), (etype or "entity").strip() or "entity") for name, etype in items]
        if not wanted:
            return []
        with self._tx(write=True) as s:
            found: dict[str, dict] = {}
            for chunk in id_chunks(normalize_name(name) for name, _ in wanted):
                found.update((r.normalized_name, entity_dict(r))
                             for r in s.execute(_ENTITIES_BY_NAME, {"scope_key": key, "names": chunk}))
            new_rows: dict[str, dict] = {}  # normalised name -> column values
            refined: set[str] = set()
            out: list[dict] = []  # each as upsert_entity would have returned it at its turn
            for name, etype in wanted:
                normalized = normalize_name(name)
                row = found.get(normalized)
                now = utc_now()
                if row is None:
                    new_rows[normalized] = {"id": new_id(), "scope_key": key, **_scope_columns(scope), "name": name,
                                            "normalized_name": normalized, "entity_type": etype,
                                            "created_at": now, "updated_at": now}
                    found[normalized] = entity_dict(SimpleNamespace(**new_rows[normalized]))
                elif etype != "entity" and row["entity_type"] != etype:
                    # a specific type refines the generic one; "entity" never overwrites a real type
                    if normalized in new_rows:
                        new_rows[normalized]["entity_type"] = etype
                        found[normalized] = entity_dict(SimpleNamespace(**new_rows[normalized]))
                    else:
                        update_row(s, EntityRow, row["id"], {"entity_type": etype, "updated_at": now})
                        found[normalized] = {**row, "type": etype, "entity_type": etype, "updated_at": iso(now)}
                        refined.add(row["id"])
                out.append(found[normalized])
            if new_rows:
                s.execute(_INSERT_ENTITIES, list(new_rows.values()))
            self._record_intent(s, "entity", [r["id"] for r in new_rows.values()] + list(refined))
            return out

    def get_entities(self, ids: list[str]) -> list[dict]:
        found: dict[str, dict] = {}
        with self._tx() as s:
            for chunk in id_chunks(ids):
                found.update((r.id, entity_dict(r)) for r in s.execute(_ENTITIES_BY_ID, {"ids": chunk}))
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def find_entities_by_names(self, scope: Scope, names: list[str]) -> list[dict]:
        normalized = list(dict.fromkeys(normalize_name(n) for n in names if isinstance(n, str) and n.strip()))
        if not normalized:
            return []
        match = require_scope(scope).match()
        q = _entities_by_names_statement(tuple((k, v is None) for k, v in match.items()))
        params = {"names": normalized, **{f"scope_{k}": v for k, v in match.items() if v is not None}}
        with self._tx() as s:
            return [entity_dict(r) for r in s.execute(q, params)]

    def list_entities(self, scope: Scope | None) -> list[dict]:
        q = select(EntityRow).where(*scope_where(EntityRow, scope)).order_by(EntityRow.created_at, EntityRow.id)
        with self._tx() as s:
            return [entity_dict(r) for r in s.scalars(q)]

    def orphan_entities(self, entity_ids: list[str]) -> list[dict]:
        """Entities (of the given ids) that no VALID relation references: safe to delete (seed 000 §5.4)."""
        ids = list(dict.fromkeys(entity_ids))
        if not ids:
            return []
        found: dict[str, dict] = {}
        with self._tx() as s:
            for chunk in id_chunks(ids):  # one statement: the entities, less those a valid relation references
                found.update((r.id, entity_dict(r)) for r in s.execute(_UNREFERENCED_ENTITIES, {"ids": chunk}))
        return [found[i] for i in ids if i in found]

    def delete_entities(self, entity_ids: list[str]) -> None:
        """Hard delete; relations that reference them (normally only invalidated ones) go too."""
        with self._tx(write=True) as s:
            for chunk in id_chunks(entity_ids):
                # the entity jobs cover their relations too: a gone entity is DETACH DELETEd from the graph
                self._record_intent(s, "entity", chunk)
                s.execute(_DELETE_RELATIONS_OF_ENTITIES, {"ids": chunk})
                s.execute(_DELETE_ENTITIES, {"ids": chunk})
            _forget_deleted(s, set(entity_ids))

    # ---- relations ----------------------------------------------------------------------------------------

    def _relation_dicts(self, s: Session, rows: list[RelationRow]) -> list[dict]:
        ids = {r.source_id for r in rows} | {r.target_id for r in rows}
        names: dict[str, str] = {}
        for chunk in id_chunks(ids):
            names.update(s.execute(select(EntityRow.id, EntityRow.name).where(EntityRow.id.in_(chunk))).all())
        return [relation_dict(r, names) for r in rows]

    def add_relation(self, *, scope: Scope, source_id: str, relation: str, target_id: str,
                     memory_id: str | None, trace_id: str | None, relation_id: str | None = None,
                     valid_at: datetime | str | None = None) -> dict:
        """`valid_at`: when the relation began to hold (issue 13); default: its memory's event time."""
        scope = require_scope(scope)
        valid_from = as_utc(valid_at, "valid_at")
        relation = clean_text(relation, "relation")
        key = _scope_key(scope)
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
        (issue 14: seven statements per relation added up on every add). Items: {source_id, relation,
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
        `add_relations(add)`, with one projection intent for both (issue 14). `ends`: entity dicts of the
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
        key = _scope_key(scope)
        wanted = [{**it, "relation": clean_text(it["relation"], "relation")} for it in items]

        def twin_key(src, rel, dst, mem):
            return (src, rel, dst, mem)

        ends = list(dict.fromkeys(e for it in wanted for e in (it["source_id"], it["target_id"])))
        names = {i: e["name"] for i, e in known_ends.items() if i in ends and scope.contains(e)}
        for chunk in id_chunks(i for i in ends if i not in known_ends):
            for r in s.execute(_ENTITIES_BY_ID, {"ids": chunk}):
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
                values = {"id": new_id(), "scope_key": key, **_scope_columns(scope), "source_id": it["source_id"],
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
        `invalid_at`: when they stopped holding in the world (issue 13), else now. An unknown id raises
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
            rows.update((r.id, _named_relation_dict(r)) for r in s.execute(_RELATIONS_BY_ID, {"ids": chunk}))
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

    def relations_of_run(self, scope: Scope, *, memory_ids: list[str], entity_ids: list[str],
                         entity_names: list[str]) -> tuple[list[dict], list[dict]]:
        """What the conflict step of an add reads, in ONE statement (issue 14: five, with two reads of the same
        rows): (every relation of the memories, valid or not, in any scope — `relations_for_memory` of each;
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
                  "scope_key": _scope_key(scope), **{f"scope_{k}": v for k, v in match.items() if v is not None}}
        memory_set = set(memory_ids)
        of_memories, around_rows = [], []
        with self._tx() as s:
            for row in s.execute(q, params):
                relation = _named_relation_dict(row)
                if row.memory_id in memory_set:
                    of_memories.append(relation)
                if row.is_around:
                    around_rows.append(relation)
        return of_memories, around_rows

    def list_relations(self, scope: Scope | None, *, include_invalid: bool = False) -> list[dict]:
        return self._list_relations(scope_where(RelationRow, scope), include_invalid)

    def merge_entities(self, merges: list[dict], *, trace_id: str) -> dict:
        """Entity upkeep of a consolidation pass (issue 10, seed 002 §5.1): each {"survivor", "merged"} pair
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


def _scope_key(scope: Scope) -> str:
    # Not scope.key(): that renders None as '-', so user_id='-' would collide with "no user". JSON keeps
    # None distinct; sha1 keeps the indexed column short whatever the ids look like.
    # group_id is appended only when set, so the keys of entities written before groups existed stay the same.
    fields = SCOPE_FIELDS if scope.group_id else SCOPE_FIELDS[:3]
    raw = json.dumps([getattr(scope, f) for f in fields], ensure_ascii=False)
    return hashlib.sha1(raw.encode("utf-8")).hexdigest()


def _scope_columns(scope: Scope) -> dict[str, str | None]:
    """Every scope column, unset ones None: the values of a Core INSERT (executemany wants the same keys)."""
    return {k: getattr(scope, k) for k in SCOPE_FIELDS}


def _forget_deleted(s: Session, entity_ids: set[str]) -> None:
    """After a Core DELETE of entities and their relations, drop the session's copies of those rows, as the
    ORM's own bulk delete does (an ORM read later in the transaction must not find them)."""
    if not s.identity_map:
        return
    for held in list(s.identity_map.values()):
        if (isinstance(held, EntityRow) and held.id in entity_ids) or (
                isinstance(held, RelationRow) and (held.source_id in entity_ids or held.target_id in entity_ids)):
            s.expunge(held)
