"""The SQL system of record's schema: its tables (ORM rows) and the dict shape each row is returned in.

Everything else (Qdrant vectors, the FalkorDB/Neo4j graph) is a projection that can be rebuilt from these
tables. SQLite (default, one file) and PostgreSQL (postgresql+psycopg) share these models. Changing a table
needs a migration too (migrations.py); writing and reading rows through Core is core_rows.py.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from memoryx.stores.sql.values import UTC, iso, scope_dict, utc_now

# Fields save_judgment accepts besides `scope`: the judgment record of one run (what was read, what the model
# answered, what was executed) plus the run's status.
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


class JSONDocument(sa.TypeDecorator):
    """JSONB on PostgreSQL (indexable, compact), plain JSON text elsewhere. The PostgreSQL dialect is imported
    only when a PostgreSQL engine asks (a SQLite process never loads it: ~0.1 s of a CLI command's start)."""

    impl = sa.JSON
    cache_ok = True

    def load_dialect_impl(self, dialect):
        if dialect.name == "postgresql":
            from sqlalchemy.dialects.postgresql import JSONB

            return dialect.type_descriptor(JSONB())
        return dialect.type_descriptor(sa.JSON())


JSONType = JSONDocument()


class Base(DeclarativeBase):
    pass


class SchemaVersion(Base):
    __tablename__ = "schema_version"
    version: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=False)
    applied_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utc_now)


class StoreSettingRow(Base):
    """A setting the store's contents depend on, written once by the first process that opened it (which
    encoder precision wrote its vectors, say): a later process with other settings is told, not mixed in."""
    __tablename__ = "store_settings"
    key: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    value: Mapped[str] = mapped_column(sa.Text)
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utc_now)


class ScopeColumns:
    """user_id / agent_id / run_id / group_id, each indexed: every query filters on them."""

    user_id: Mapped[str | None] = mapped_column(sa.String(255), index=True)
    agent_id: Mapped[str | None] = mapped_column(sa.String(255), index=True)
    run_id: Mapped[str | None] = mapped_column(sa.String(255), index=True)
    group_id: Mapped[str | None] = mapped_column(sa.String(255), index=True)  # group chats


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
    # consolidation (memoryx.lifecycle): staged until a pass has seen it, then active; summarized
    # (a summary stands for it, demoted in ranking), merged (into `merged_into`), archived (forgotten, restorable).
    # New rows are staged (ORM default); rows older than the column were already in use: active (server default).
    status: Mapped[str] = mapped_column(sa.String(16), default="staged", server_default="active", index=True)
    merged_into: Mapped[str | None] = mapped_column(sa.String(64))
    # when the remembered event happened: a replayed chat log's message time; None = created_at
    valid_at: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)
    # when it stopped holding: set by a DELETE (superseded or retracted); None = still holds
    invalid_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # what `importance` was reasoned from (scarcity, impact, recency, certainty: memoryx.knowledge.importance)
    # and how sure the statement and its source are (conflict resolution); None for memories written without
    importance_factors: Mapped[dict | None] = mapped_column(JSONType, nullable=True)
    confidence: Mapped[float | None] = mapped_column(sa.Float, nullable=True)


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
    # the version this row closes (UPDATE / DELETE): the event time it held from and when it stopped holding
    # (as Graphiti's valid_at / invalid_at): the history is a timeline, not only a change log
    valid_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    invalid_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # an UPDATE's other changed fields as they were before it ({"meta": {...}, "category": ..., ...}): what
    # undoing the run that made it puts back besides the text
    old_fields: Mapped[dict | None] = mapped_column(JSONType, nullable=True)


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
    # event time: when the relation started / stopped holding in the world, apart from when it was
    # recorded (created_at) and invalidated in the store (invalidated_at); valid_at = its memory's valid_at
    valid_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    invalid_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


# At most one VALID copy of a fact per scope and memory; invalidated copies stay as history. The memory is
# part of the key so that two memories stating the same fact each own a copy: deleting one of them must
# not invalidate what the other still states. Enforced by the database (partial unique index, supported by
# both engines) so two concurrent writers cannot duplicate it.
VALID_RELATIONS_UNIQUE = sa.Index(
    "uq_relations_valid",
    RelationRow.scope_key, RelationRow.source_id, RelationRow.relation, RelationRow.target_id,
    sa.func.coalesce(RelationRow.memory_id, ""),  # NULLs are distinct in unique indexes: fold them
    unique=True,
    sqlite_where=RelationRow.valid == sa.true(),
)


def add_postgres_options() -> None:
    """The schema's PostgreSQL-only options, added before the first DDL on a PostgreSQL database. Naming them
    loads SQLAlchemy's PostgreSQL dialect, which a SQLite process never needs (~0.05 s of a command's start)."""
    VALID_RELATIONS_UNIQUE.dialect_kwargs["postgresql_where"] = RelationRow.valid == sa.true()


class FeedbackRow(ScopeColumns, Base):
    """Feedback on a memory (mem0's POST /v1/feedback/): POSITIVE / NEGATIVE / VERY_NEGATIVE with a
    reason. The scope is the memory's (copied, so stats per scope need no join and survive its deletion)."""
    __tablename__ = "memory_feedback"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    memory_id: Mapped[str] = mapped_column(sa.String(64), index=True)
    feedback: Mapped[str | None] = mapped_column(sa.String(16))  # None: the earlier feedback withdrawn
    reason: Mapped[str | None] = mapped_column(sa.Text)
    actor: Mapped[str | None] = mapped_column(sa.String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)


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


class ProfileValueRow(Base):
    """One value of a user or group profile (memoryx.knowledge.profiles): subject "user:<id>" / "group:<id>",
    field (name, alias, home, work, relationship, preference, dislike, goal, member, role, topic), the memory ids
    it was read from, and when it was first seen / last changed / ended (a single-valued field's old value and a
    retracted preference stay as history with ended_at set)."""
    __tablename__ = "profile_values"
    __table_args__ = (sa.UniqueConstraint("subject", "field", "value_key", name="uq_profile_value"),)
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    subject: Mapped[str] = mapped_column(sa.String(300), index=True)
    field: Mapped[str] = mapped_column(sa.String(32))
    value: Mapped[str] = mapped_column(sa.Text)
    value_key: Mapped[str] = mapped_column(sa.String(255))
    memory_ids: Mapped[list] = mapped_column(JSONType, default=list)
    source: Mapped[str] = mapped_column(sa.String(16), default="rule")  # rule | model
    first_seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class MemoryLinkRow(ScopeColumns, Base):
    """A link between two memories of one scope (because, so, led to, refers to, based on, related), written
    by agents' tools (memoryx.api.tools `link_memories`) and reusable by consolidation."""
    __tablename__ = "memory_links"
    __table_args__ = (sa.UniqueConstraint("source_id", "target_id", "relation", name="uq_memory_link"),)
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    source_id: Mapped[str] = mapped_column(sa.String(64), index=True)
    target_id: Mapped[str] = mapped_column(sa.String(64), index=True)
    relation: Mapped[str] = mapped_column(sa.String(255))
    importance: Mapped[float] = mapped_column(sa.Float, default=0.5)
    actor: Mapped[str | None] = mapped_column(sa.String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class FindingRow(ScopeColumns, Base):
    """A finding of the judgment log's audit (lifecycle/audit.py). The id is derived from what was found (kind,
    runs, memory), so a scan that sees the same anomaly again stores nothing new."""
    __tablename__ = "judgment_findings"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(sa.String(32), index=True)
    severity: Mapped[str] = mapped_column(sa.String(16))
    trace_ids: Mapped[list] = mapped_column(JSONType)
    memory_id: Mapped[str | None] = mapped_column(sa.String(64), index=True)
    detail: Mapped[str] = mapped_column(sa.Text)
    event_at: Mapped[datetime | None] = mapped_column(UTCDateTime)  # when the anomaly happened
    found_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    dismissed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    dismissed_reason: Mapped[str | None] = mapped_column(sa.Text)
    verification_trace_id: Mapped[str | None] = mapped_column(sa.String(64))  # the verified run it was settled by


class DailyReportRow(Base):
    """The judgment log's report of one UTC day for one scope ("*": every scope), kept once computed."""
    __tablename__ = "judgment_daily_reports"
    __table_args__ = (sa.UniqueConstraint("day", "scope_key", name="uq_daily_report_day_scope"),)
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    day: Mapped[str] = mapped_column(sa.String(10), index=True)
    scope_key: Mapped[str] = mapped_column(sa.String(1100))
    report: Mapped[dict] = mapped_column(JSONType)
    computed_at: Mapped[datetime] = mapped_column(UTCDateTime)


# ---- row -> dict -----------------------------------------------------------------------------------------

def memory_dict(row: MemoryRow) -> dict:
    return {
        "id": row.id, "memory": row.text, "hash": row.hash, **scope_dict(row),
        "category": row.category, "importance": row.importance, "memory_type": row.memory_type,
        "metadata": dict(row.meta or {}), "created_at": iso(row.created_at), "updated_at": iso(row.updated_at),
        "access_count": row.access_count or 0, "last_accessed_at": iso(row.last_accessed_at),
        "deleted_at": iso(row.deleted_at), "trace_id": row.trace_id,
        "status": row.status or "active", "merged_into": row.merged_into, "valid_at": iso(row.valid_at),
        "invalid_at": iso(row.invalid_at), "importance_factors": dict(row.importance_factors or {}) or None,
        "confidence": row.confidence,
    }


def history_dict(row: HistoryRow) -> dict:
    return {
        "id": row.id, "memory_id": row.memory_id, "event": row.event, "old_memory": row.old_memory,
        "new_memory": row.new_memory, "actor": row.actor, "trace_id": row.trace_id,
        "created_at": iso(row.created_at), "valid_at": iso(row.valid_at), "invalid_at": iso(row.invalid_at),
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
        "invalidated_by": row.invalidated_by, "valid_at": iso(row.valid_at), "invalid_at": iso(row.invalid_at),
    }


def outbox_dict(row: OutboxRow) -> dict:
    return {
        "id": row.id, "kind": row.kind, "target_id": row.target_id, "error": row.error,
        "attempts": row.attempts, "created_at": iso(row.created_at), "updated_at": iso(row.updated_at),
    }


def finding_dict(row: FindingRow) -> dict:
    return {
        "id": row.id, "kind": row.kind, "severity": row.severity, "trace_ids": list(row.trace_ids or []),
        "memory_id": row.memory_id, "detail": row.detail, **scope_dict(row), "event_at": iso(row.event_at),
        "found_at": iso(row.found_at), "dismissed": row.dismissed_at is not None, "dismissed_at": iso(row.dismissed_at),
        "dismissed_reason": row.dismissed_reason, "verification_trace_id": row.verification_trace_id,
    }
