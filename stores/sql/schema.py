"""The SQL system of record's schema: ORM rows, migrations and the dict shape each row is returned in.

Everything else (Qdrant vectors, the FalkorDB/Neo4j graph) is a projection that can be rebuilt from these
tables. SQLite (default, one file) and PostgreSQL (postgresql+psycopg) share these models.
"""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace
from typing import Any, Callable

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Connection
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.orm.util import identity_key

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
    """user_id / agent_id / run_id / group_id, each indexed: every query filters on them."""

    user_id: Mapped[str | None] = mapped_column(sa.String(255), index=True)
    agent_id: Mapped[str | None] = mapped_column(sa.String(255), index=True)
    run_id: Mapped[str | None] = mapped_column(sa.String(255), index=True)
    group_id: Mapped[str | None] = mapped_column(sa.String(255), index=True)  # group chats (issue 13)


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
    # consolidation (issue 10, memoryx.lifecycle): staged until a pass has seen it, then active; summarized
    # (a summary stands for it, demoted in ranking), merged (into `merged_into`), archived (forgotten, restorable).
    # New rows are staged (ORM default); rows older than the column were already in use: active (server default).
    status: Mapped[str] = mapped_column(sa.String(16), default="staged", server_default="active", index=True)
    merged_into: Mapped[str | None] = mapped_column(sa.String(64))
    # when the remembered event happened (issue 13): a replayed chat log's message time; None = created_at
    valid_at: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)
    # when it stopped holding (issue 13, seed 002): set by a DELETE (superseded or retracted); None = still holds
    invalid_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


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
    # (issue 13, as Graphiti's valid_at / invalid_at): the history is a timeline, not only a change log
    valid_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    invalid_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


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
    # event time (issue 13): when the relation started / stopped holding in the world, apart from when it was
    # recorded (created_at) and invalidated in the store (invalidated_at); valid_at = its memory's valid_at
    valid_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    invalid_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


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


class FeedbackRow(ScopeColumns, Base):
    """Feedback on a memory (issue 12, mem0's POST /v1/feedback/): POSITIVE / NEGATIVE / VERY_NEGATIVE with a
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
    """One value of a user or group profile (issue 13, memoryx.knowledge.profiles): subject "user:<id>" / "group:<id>",
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
    """A link between two memories of one scope (seed 002's link_memories: because, so, led to, refers to,
    based on, related), written by agents' tools (memoryx.api.tools) and reusable by consolidation."""
    __tablename__ = "memory_links"
    __table_args__ = (sa.UniqueConstraint("source_id", "target_id", "relation", name="uq_memory_link"),)
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    source_id: Mapped[str] = mapped_column(sa.String(64), index=True)
    target_id: Mapped[str] = mapped_column(sa.String(64), index=True)
    relation: Mapped[str] = mapped_column(sa.String(255))
    importance: Mapped[float] = mapped_column(sa.Float, default=0.5)
    actor: Mapped[str | None] = mapped_column(sa.String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


# ---- migrations ------------------------------------------------------------------------------------------
# A fresh database gets the current models (create_all) and is stamped with every version below. An existing
# database runs only the versions it lacks, in order, inside one locked transaction. To change the schema:
# edit the models AND append (next_version, fn) where fn(conn) alters an existing database to match.

def _v1_baseline(conn: Connection) -> None:
    Base.metadata.create_all(conn)


def _v2_memory_status(conn: Connection) -> None:
    """Consolidation (issue 10): memories.status (existing rows: active) and memories.merged_into."""
    cols = {c["name"] for c in sa.inspect(conn).get_columns("memories")}
    if "status" not in cols:
        conn.execute(sa.text("ALTER TABLE memories ADD COLUMN status VARCHAR(16) NOT NULL DEFAULT 'active'"))
        conn.execute(sa.text("CREATE INDEX IF NOT EXISTS ix_memories_status ON memories (status)"))
    if "merged_into" not in cols:
        conn.execute(sa.text("ALTER TABLE memories ADD COLUMN merged_into VARCHAR(64)"))


def _v3_feedback(conn: Connection) -> None:
    """issue 12: the memory_feedback table."""
    FeedbackRow.__table__.create(conn, checkfirst=True)


_SCOPED_TABLES = ("memories", "raw_inputs", "memory_judgments", "entities", "relations", "memory_feedback")


def _v4_group_chats(conn: Connection) -> None:
    """issue 13: group_id on every scoped table; memories.valid_at (the event time of a memory)."""
    inspector = sa.inspect(conn)
    for table in _SCOPED_TABLES:
        if table not in inspector.get_table_names():
            continue
        if "group_id" not in {c["name"] for c in inspector.get_columns(table)}:
            conn.execute(sa.text(f"ALTER TABLE {table} ADD COLUMN group_id VARCHAR(255)"))
            conn.execute(sa.text(f"CREATE INDEX IF NOT EXISTS ix_{table}_group_id ON {table} (group_id)"))
    if "valid_at" not in {c["name"] for c in inspector.get_columns("memories")}:
        kind = "TIMESTAMP WITH TIME ZONE" if conn.dialect.name == "postgresql" else "DATETIME"
        conn.execute(sa.text(f"ALTER TABLE memories ADD COLUMN valid_at {kind}"))
        conn.execute(sa.text("CREATE INDEX IF NOT EXISTS ix_memories_valid_at ON memories (valid_at)"))


def _v5_profiles(conn: Connection) -> None:
    """issue 13: the profile_values table (user and group profiles)."""
    ProfileValueRow.__table__.create(conn, checkfirst=True)


def _v6_event_time(conn: Connection) -> None:
    """issue 13 (seed 002): memories.invalid_at; memory_history and relations valid_at / invalid_at; the
    memory_links table."""
    inspector = sa.inspect(conn)
    kind = "TIMESTAMP WITH TIME ZONE" if conn.dialect.name == "postgresql" else "DATETIME"
    wanted = {"memories": ("invalid_at",), "memory_history": ("valid_at", "invalid_at"),
              "relations": ("valid_at", "invalid_at")}
    for table, columns in wanted.items():
        have = {c["name"] for c in inspector.get_columns(table)}
        for column in columns:
            if column not in have:
                conn.execute(sa.text(f"ALTER TABLE {table} ADD COLUMN {column} {kind}"))
    MemoryLinkRow.__table__.create(conn, checkfirst=True)


MIGRATIONS: list[tuple[int, Callable[[Connection], None]]] = [
    (1, _v1_baseline),
    (2, _v2_memory_status),
    (3, _v3_feedback),
    (4, _v4_group_chats),
    (5, _v5_profiles),  # issue 13: profiles
    (6, _v6_event_time),  # issue 13: invalid_at, history / relation event times, memory_links
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
        "status": row.status or "active", "merged_into": row.merged_into, "valid_at": iso(row.valid_at),
        "invalid_at": iso(row.invalid_at),
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


# ---- Core writes of ORM rows (issue 14) -----------------------------------------------------------------------
# An add writes a handful of new rows; the ORM unit of work (identity map, flush planning, attribute events)
# cost about twice the statement itself. These helpers send one row object's INSERT / one UPDATE through
# Core on the session's connection, in its transaction.

_CORE_COLUMNS: dict[type, tuple[sa.Table, list[tuple[str, sa.Column]], Any]] = {}


def _core_columns(cls: type) -> tuple[sa.Table, list[tuple[str, sa.Column]], Any]:
    found = _CORE_COLUMNS.get(cls)
    if found is None:
        mapper = sa.inspect(cls)
        table = mapper.local_table
        cols = [(attr.key, attr.columns[0]) for attr in mapper.column_attrs]
        found = _CORE_COLUMNS[cls] = (table, cols, sa.insert(table))
    return found


def insert_row(session, row: Base) -> Base:
    """INSERT a new (transient) row object through Core; column defaults are applied to the object too, so it
    reads as it would after an ORM flush (an autoincrement key left unset stays unset)."""
    table, cols, stmt = _core_columns(type(row))
    values: dict[str, Any] = {}
    for key, col in cols:
        value = row.__dict__.get(key)
        if value is None and col.default is not None:
            value = col.default.arg(None) if col.default.is_callable else col.default.arg
            setattr(row, key, value)
        if value is None and col.primary_key and col.autoincrement in (True, "auto"):
            continue
        values[col.name] = value
    session.execute(stmt, [values])
    return row


def update_row(session, cls: type, key_value: Any, changes: dict[str, Any]) -> None:
    """UPDATE one row by primary key through Core (`changes` by attribute name). A copy of the row the
    session already holds is expired, so a later ORM read in the same transaction sees the new values."""
    table, cols, _ = _core_columns(cls)
    names = {key: col.name for key, col in cols}
    (pk,) = table.primary_key.columns
    flush_held(session, cls, [key_value])
    session.execute(sa.update(table).where(pk == key_value).values({names[k]: v for k, v in changes.items()}))
    expire_held(session, cls, [key_value])


def load_row(session, cls: type, key_value: Any):
    """The row as a detached object read through Core (no identity map), or None."""
    table, cols, _ = _core_columns(cls)
    (pk,) = table.primary_key.columns
    flush_held(session, cls, [key_value])
    found = session.execute(sa.select(table).where(pk == key_value)).first()
    if found is None:
        return None
    data = found._mapping
    return cls(**{key: data[col.name] for key, col in cols})


def read_plain(session, cls: type, stmt, params: dict) -> list[SimpleNamespace]:
    """Rows of `cls` that the Core `stmt` (a select of its whole table) finds, as plain objects with the
    mapped attribute names (what memory_dict & co. read): no ORM instances, no identity map. The session's
    unflushed changes are written first, as an ORM query would."""
    table, cols, _ = _core_columns(cls)
    if session.new or session.dirty or session.deleted:
        session.flush()
    return [SimpleNamespace(**{key: data[col.name] for key, col in cols})
            for data in (row._mapping for row in session.connection().execute(stmt, params))]


def flush_held(session, cls: type, keys: list) -> None:
    """Write the session's unflushed changes to these rows (by primary key) before a Core statement reads or
    updates them."""
    if session.dirty and any(session.identity_map.get(identity_key(cls, k)) in session.dirty for k in keys):
        session.flush()


def expire_held(session, cls: type, keys: list) -> None:
    """Copies of these rows the session holds are stale after a Core UPDATE: the next ORM read reloads them."""
    if not session.identity_map:
        return
    for k in keys:
        held = session.identity_map.get(identity_key(cls, k))
        if held is not None:
            session.expire(held)
