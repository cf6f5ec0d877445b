"""Links between memories (link_memories): "I was tired" -causes-> "I skipped work". A link joins
two live memories of the same scope; its relation is one of the closed set of memoryx.core.link_types (a word
for one, such as 因为 or "led to", is stored as its type), never a query keyword. Deleting a memory leaves its links as history; `memory_links` skips the deleted ends."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from memoryx.core.link_types import link_type
from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError, NotFoundError
from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.schema import MemoryLinkRow, MemoryRow
from memoryx.stores.sql.values import (
    check_importance,
    clean_text,
    id_chunks,
    iso,
    new_id,
    require_scope,
    scope_dict,
    utc_now,
)

MAX_RELATION_CHARS = 255


_LINK = MemoryLinkRow.__table__
_LINKS_TOUCHING = sa.select(_LINK).where(sa.or_(_LINK.c.source_id.in_(sa.bindparam("ids", expanding=True)),
                                                _LINK.c.target_id.in_(sa.bindparam("ids", expanding=True))))
_LIVENESS = sa.select(MemoryRow.__table__.c.id, MemoryRow.__table__.c.deleted_at).where(
    MemoryRow.__table__.c.id.in_(sa.bindparam("ids", expanding=True)))


def link_dict(row: MemoryLinkRow) -> dict:
    return {"id": row.id, "source_id": row.source_id, "target_id": row.target_id, "relation": row.relation,
            "importance": row.importance, "actor": row.actor, **scope_dict(row), "created_at": iso(row.created_at)}


class MemoryLinks(SQLStoreBase):
    """memory ↔ memory links, per scope."""

    def link_memories(self, scope: Scope, source_id: str, target_id: str, relation: str, *,
                      importance: float = 0.5, actor: str = "agent") -> dict:
        """Link two live memories of `scope` (NotFoundError for an id outside it: never confirms other
        tenants' ids). Linking the same pair with the same relation again returns the existing link."""
        scope = require_scope(scope)
        relation = clean_text(relation, "relation")
        if len(relation) > MAX_RELATION_CHARS:
            raise InvalidInputError(f"relation is longer than {MAX_RELATION_CHARS} characters")
        relation = link_type(relation)  # the closed set: a word for a type is stored as the type
        if source_id == target_id:
            raise InvalidInputError("a memory cannot be linked to itself")
        importance = check_importance(importance)
        try:
            with self._tx(write=True) as s:
                for mid in (source_id, target_id):
                    row = s.get(MemoryRow, mid)
                    if row is None or row.deleted_at is not None or not scope.contains(scope_dict(row)):
                        raise NotFoundError(f"Memory {mid} not found in this scope.")
                found = s.scalars(select(MemoryLinkRow).where(
                    MemoryLinkRow.source_id == source_id, MemoryLinkRow.target_id == target_id,
                    MemoryLinkRow.relation == relation)).first()
                if found is None:
                    found = MemoryLinkRow(id=new_id(), source_id=source_id, target_id=target_id, relation=relation,
                                          importance=importance, actor=actor, created_at=utc_now(), **scope.as_dict())
                    s.add(found)
                    s.flush()
                return link_dict(found)
        except IntegrityError:  # the same link written concurrently: return it
            with self._tx() as s:
                row = s.scalars(select(MemoryLinkRow).where(
                    MemoryLinkRow.source_id == source_id, MemoryLinkRow.target_id == target_id,
                    MemoryLinkRow.relation == relation)).one()
                return link_dict(row)

    def memory_links(self, memory_ids: list[str], *, depth: int = 1, limit: int = 200) -> list[dict]:
        """Links touching these memories, walked `depth` hops (either direction), between live memories only;
        nearest first."""
        seen: set[str] = set(memory_ids)
        frontier = list(dict.fromkeys(memory_ids))
        out: dict[str, dict] = {}
        # Core reads, rows by attribute of the Core row (the search's graph path follows links one hop on
        # every search that names an entity: ORM objects cost more than the SQL)
        with self._tx() as s:
            conn = s.connection()
            for _ in range(max(0, depth)):
                nxt: list[str] = []
                for chunk in id_chunks(frontier):
                    for row in conn.execute(_LINKS_TOUCHING, {"ids": chunk}):
                        if row.id in out:
                            continue
                        out[row.id] = link_dict(row)
                        for end in (row.source_id, row.target_id):
                            if end not in seen:
                                seen.add(end)
                                nxt.append(end)
                frontier = nxt
                if not frontier or len(out) >= limit:
                    break
            ends = list({e for link in out.values() for e in (link["source_id"], link["target_id"])})
            live: set[str] = set()
            for chunk in id_chunks(ends):
                # deleted rows dropped here, not in SQL: beside `id IN (...)` SQLite's planner may walk the
                # deleted_at index (every live row) instead of the primary key
                live.update(mid for mid, deleted in conn.execute(_LIVENESS, {"ids": chunk}) if deleted is None)
        return [link for link in out.values() if link["source_id"] in live and link["target_id"] in live][:limit]
