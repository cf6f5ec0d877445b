"""Entities of the knowledge graph's truth: one row per scope and normalised name (a known name keeps its id
and first spelling; a specific type refines the generic "entity"), their lookups, the orphans no valid
relation references any more, and their hard delete. A mixin of SQLStore within `GraphTruth`
(graph_truth.py); every write that changes an entity queues its projection in the same transaction
(`_record_intent`).
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import sqlalchemy as sa
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from memoryx.core.scope import Scope
from memoryx.core.text import normalize_name
from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.core_rows import update_row
from memoryx.stores.sql.graph_rows import (
    ENTITIES,
    ENTITIES_BY_ID,
    RELATIONS,
    expanding,
    graph_scope_key,
    in_scope,
    scope_columns,
)
from memoryx.stores.sql.schema import EntityRow, RelationRow, entity_dict
from memoryx.stores.sql.values import clean_text, id_chunks, iso, new_id, require_scope, scope_where, utc_now

# the statements of every add, built once: building one and its cache key cost more than running it
_ENTITIES_BY_NAME = select(ENTITIES).where(ENTITIES.c.scope_key == sa.bindparam("scope_key"),
                                           ENTITIES.c.normalized_name.in_(expanding("names")))
_UNREFERENCED_ENTITIES = select(ENTITIES).where(ENTITIES.c.id.in_(expanding()), *(
    ~sa.exists().where(RELATIONS.c.valid == sa.true(), end == ENTITIES.c.id)
    for end in (RELATIONS.c.source_id, RELATIONS.c.target_id)))
_DELETE_RELATIONS_OF_ENTITIES = sa.delete(RELATIONS).where(
    sa.or_(RELATIONS.c.source_id.in_(expanding()), RELATIONS.c.target_id.in_(expanding())))
_DELETE_ENTITIES = sa.delete(ENTITIES).where(ENTITIES.c.id.in_(expanding()))
_INSERT_ENTITIES = sa.insert(ENTITIES)


@functools.lru_cache(maxsize=64)
def _entities_by_names_statement(scope_shape: tuple[tuple[str, bool], ...]) -> sa.Select:
    return (select(ENTITIES).where(ENTITIES.c.normalized_name.in_(expanding("names")), *in_scope(ENTITIES, scope_shape))
            .order_by(ENTITIES.c.created_at, ENTITIES.c.id))


class GraphEntities(SQLStoreBase):
    """Entities per scope: upserts (one or many), lookups by id and name, orphans and hard deletes."""

    def upsert_entity(self, *, scope: Scope, name: str, entity_type: str = "entity",
                      entity_id: str | None = None) -> dict:
        """One entity per (exact scope, normalised name). A known name keeps its id and first spelling."""
        scope = require_scope(scope)
        name = clean_text(name, "entity name")
        normalized = normalize_name(name)
        entity_type = (entity_type or "entity").strip() or "entity"
        key = graph_scope_key(scope)
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
        already there, one INSERT of the others and one projection intent (rather than three statements per
        new name). Returns the entity dicts in the order of items."""
        scope = require_scope(scope)
        key = graph_scope_key(scope)
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
                    new_rows[normalized] = {"id": new_id(), "scope_key": key, **scope_columns(scope), "name": name,
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
                found.update((r.id, entity_dict(r)) for r in s.execute(ENTITIES_BY_ID, {"ids": chunk}))
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
        """Entities (of the given ids) that no VALID relation references: safe to delete (`delete_entities`
        takes the invalidated relations that still reference them along)."""
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


def _forget_deleted(s: Session, entity_ids: set[str]) -> None:
    """After a Core DELETE of entities and their relations, drop the session's copies of those rows, as the
    ORM's own bulk delete does (an ORM read later in the transaction must not find them)."""
    if not s.identity_map:
        return
    for held in list(s.identity_map.values()):
        if (isinstance(held, EntityRow) and held.id in entity_ids) or (
                isinstance(held, RelationRow) and (held.source_id in entity_ids or held.target_id in entity_ids)):
            s.expunge(held)
