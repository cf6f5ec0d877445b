"""The SQL system of record's schema: ORM rows, migrations and the dict shape each row is returned in.

Everything else (Qdrant vectors, the FalkorDB/Neo4j graph) is a projection that can be rebuilt from these
tables. SQLite (default, one file) and PostgreSQL (postgresql+psycopg) share these models.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Connection
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from memoryx.stores.sql.values import UTC, iso, scope_dict, utc_now

# Fields save_judgment accepts besides `scope` (seed 000 §5.6 plus our run status).
JUDGMENT_FIELDS = (
    "operation_type", "input_content", "extracted_facts", "existing_memories", "llm_response",
    "parsed_operations", "reasoning", "executed_operations", "execution_success", "error_message",
    "model_name", "latency_ms", "status",
)


class UTCDateTime(sa.TypeDecorator):
    """Timezone-aware UTC datetimes on both engines (SQLite has no time zone type, so store naive UTC)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# JSONB on PostgreSQL (indexable, compact), plain JSON text elsewhere.
JSONType = sa.JSON().with_variant(JSONB(), "postgresql")


class Base(DeclarativeBase):
    pass


class SchemaVersion(Base):
    __tablename__ = "schema_version"
    version: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=False)
    applied_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utc_now)


class ScopeColumns:
    """user_id / agent_id / run_id, each indexed: every query filters on them."""

    user_id: Mapped[str | None] = mapped_column(sa.String(255), index=True)
    agent_id: Mapped[str | None] = mapped_column(sa.String(255), index=True)
    run_id: Mapped[str | None] = mapped_column(sa.String(255), index=True)


class MemoryRow(ScopeColumns, Base):
    __tablename__ = "memories"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    text: Mapped[str] = mapped_column(sa.Text)
    hash: Mapped[str] = mapped_column(sa.String(32), index=True)
    category: Mapped[str | None] = mapped_column(sa.String(255), index=True)
    importance: Mapped[float] = mapped_column(sa.Float, default=0.5)
    memory_type: Mapped[str] = mapped_column(sa.String(64), default="fact", index=True)
    meta: Mapped[dict] = mapped_column("metadata", JSONType, default=dict)  # `metadata` is reserved by SQLAlchemy
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    deleted_at: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)
    access_count: Mapped[int] = mapped_column(sa.Integer, default=0)
    last_accessed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    trace_id: Mapped[str | None] = mapped_column(sa.String(64), index=True)


class HistoryRow(Base):
    __tablename__ = "memory_history"
    # seq gives a total order (oldest first) even when two events share a timestamp.
    seq: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(sa.String(64), unique=True)
    memory_id: Mapped[str] = mapped_column(sa.ForeignKey("memories.id"), index=True)
    event: Mapped[str] = mapped_column(sa.String(16))
    old_memory: Mapped[str | None] = mapped_column(sa.Text)
    new_memory: Mapped[str | None] = mapped_column(sa.Text)
    actor: Mapped[str | None] = mapped_column(sa.String(255))
    trace_id: Mapped[str | None] = mapped_column(sa.String(64), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class RawInputRow(ScopeColumns, Base):
    __tablename__ = "raw_inputs"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    trace_id: Mapped[str] = mapped_column(sa.String(64), unique=True)
    messages: Mapped[list] = mapped_column(JSONType)
    meta: Mapped[dict] = mapped_column("metadata", JSONType, default=dict)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)


class JudgmentRow(ScopeColumns, Base):
    __tablename__ = "memory_judgments"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    trace_id: Mapped[str] = mapped_column(sa.String(64), unique=True)
    operation_type: Mapped[str] = mapped_column(sa.String(32), default="MEMORY_UPDATE")
    input_content: Mapped[str | None] = mapped_column(sa.Text)
    extracted_facts: Mapped[Any | None] = mapped_column(JSONType, nullable=True)
    existing_memories: Mapped[Any | None] = mapped_column(JSONType, nullable=True)
    llm_response: Mapped[str | None] = mapped_column(sa.Text)
    parsed_operations: Mapped[Any | None] = mapped_column(JSONType, nullable=True)
    reasoning: Mapped[str | None] = mapped_column(sa.Text)
    executed_operations: Mapped[Any | None] = mapped_column(JSONType, nullable=True)
    execution_success: Mapped[bool | None] = mapped_column(sa.Boolean)
    error_message: Mapped[str | None] = mapped_column(sa.Text)
    model_name: Mapped[str | None] = mapped_column(sa.String(255))
    latency_ms: Mapped[int | None] = mapped_column(sa.Integer)
    status: Mapped[str] = mapped_column(sa.String(32), default="running", index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    is_verified: Mapped[bool] = mapped_column(sa.Boolean, default=False)
    verified_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    verification_result: Mapped[str | None] = mapped_column(sa.String(20))
    verification_notes: Mapped[str | None] = mapped_column(sa.Text)


class EntityRow(ScopeColumns, Base):
    __tablename__ = "entities"
    # scope_key instead of the three nullable columns: NULLs never collide in a UNIQUE index.
    __table_args__ = (sa.UniqueConstraint("scope_key", "normalized_name", name="uq_entities_scope_name"),)
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    scope_key: Mapped[str] = mapped_column(sa.String(40))
    name: Mapped[str] = mapped_column(sa.Text)
    normalized_name: Mapped[str] = mapped_column(sa.Text, index=True)
    entity_type: Mapped[str] = mapped_column(sa.String(255), default="entity")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class RelationRow(ScopeColumns, Base):
    __tablename__ = "relations"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    scope_key: Mapped[str] = mapped_column(sa.String(40))
    source_id: Mapped[str] = mapped_column(sa.ForeignKey("entities.id"), index=True)
    relation: Mapped[str] = mapped_column(sa.Text)
    target_id: Mapped[str] = mapped_column(sa.ForeignKey("entities.id"), index=True)
    # No foreign key: a relation outlives a soft-deleted memory as history, and the graph pipeline must
    # not fail because of write order.
    memory_id: Mapped[str | None] = mapped_column(sa.String(64), index=True)
    trace_id: Mapped[str | None] = mapped_column(sa.String(64), index=True)
    valid: Mapped[bool] = mapped_column(sa.Boolean, default=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    invalidated_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    invalidated_by: Mapped[str | None] = mapped_column(sa.String(64))


# At most one VALID copy of a fact per scope and memory; invalidated copies stay as history. The memory is
# part of the key so that two memories stating the same fact each own a copy: deleting one of them must
# not invalidate what the other still states. Enforced by the database (partial unique index, supported by
# both engines) so two concurrent writers cannot duplicate it.
sa.Index(
    "uq_relations_valid",
    RelationRow.scope_key, RelationRow.source_id, RelationRow.relation, RelationRow.target_id,
    sa.func.coalesce(RelationRow.memory_id, ""),  # NULLs are distinct in unique indexes: fold them
    unique=True,
    sqlite_where=RelationRow.valid == sa.true(),
    postgresql_where=RelationRow.valid == sa.true(),
)


class OutboxRow(Base):
    __tablename__ = "projection_outbox"
    __table_args__ = (sa.UniqueConstraint("kind", "target_id", name="uq_outbox_kind_target"),)
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(sa.String(16))
    target_id: Mapped[str] = mapped_column(sa.String(255))
    error: Mapped[str | None] = mapped_column(sa.Text)
    attempts: Mapped[int] = mapped_column(sa.Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


# ---- migrations ------------------------------------------------------------------------------------------
# A fresh database gets the current models (create_all) and is stamped with every version below. An existing
# database runs only the versions it lacks, in order, inside one locked transaction. To change the schema:
# edit the models AND append (next_version, fn) where fn(conn) alters an existing database to match.

def _v1_baseline(conn: Connection) -> None:
    Base.metadata.create_all(conn)


MIGRATIONS: list[tuple[int, Callable[[Connection], None]]] = [
    (1, _v1_baseline),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]
MIGRATION_LOCK_KEY = 0x6D656D6F7279  # "memory": PostgreSQL advisory lock serialising migrations


# ---- row -> dict -----------------------------------------------------------------------------------------

def memory_dict(row: MemoryRow) -> dict:
    return {
        "id": row.id, "memory": row.text, "hash": row.hash, **scope_dict(row),
        "category": row.category, "importance": row.importance, "memory_type": row.memory_type,
        "metadata": dict(row.meta or {}), "created_at": iso(row.created_at), "updated_at": iso(row.updated_at),
        "access_count": row.access_count or 0, "last_accessed_at": iso(row.last_accessed_at),
        "deleted_at": iso(row.deleted_at), "trace_id": row.trace_id,
    }


def history_dict(row: HistoryRow) -> dict:
    return {
        "id": row.id, "memory_id": row.memory_id, "event": row.event, "old_memory": row.old_memory,
        "new_memory": row.new_memory, "actor": row.actor, "trace_id": row.trace_id,
        "created_at": iso(row.created_at),
    }


def judgment_dict(row: JudgmentRow) -> dict:
    return {
        "id": row.id, "trace_id": row.trace_id, **scope_dict(row),
        **{f: getattr(row, f) for f in JUDGMENT_FIELDS},
        "created_at": iso(row.created_at), "updated_at": iso(row.updated_at),
        "is_verified": bool(row.is_verified), "verified_at": iso(row.verified_at),
        "verification_result": row.verification_result, "verification_notes": row.verification_notes,
    }


def entity_dict(row: EntityRow) -> dict:
    return {
        "id": row.id, "name": row.name, "normalized_name": row.normalized_name,
        "type": row.entity_type, "entity_type": row.entity_type, **scope_dict(row),
        "created_at": iso(row.created_at), "updated_at": iso(row.updated_at),
    }


def relation_dict(row: RelationRow, names: dict[str, str]) -> dict:
    return {
        "id": row.id, "source_id": row.source_id, "source": names.get(row.source_id),
        "relation": row.relation, "target_id": row.target_id, "target": names.get(row.target_id),
        "memory_id": row.memory_id, "trace_id": row.trace_id, "valid": bool(row.valid), **scope_dict(row),
        "created_at": iso(row.created_at), "invalidated_at": iso(row.invalidated_at),
        "invalidated_by": row.invalidated_by,
    }


def outbox_dict(row: OutboxRow) -> dict:
    return {
        "id": row.id, "kind": row.kind, "target_id": row.target_id, "error": row.error,
        "attempts": row.attempts, "created_at": iso(row.created_at), "updated_at": iso(row.updated_at),
    }
