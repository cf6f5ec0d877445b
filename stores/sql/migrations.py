"""The SQL store's schema migrations and the runner that applies them when a store opens.

A fresh database gets the current models (create_all) and is stamped with every version in `MIGRATIONS`. An
existing database runs only the versions it lacks, in order, inside one transaction (on PostgreSQL under an
advisory lock, so two processes opening one database never migrate it twice). To change the schema: edit
the models in schema.py AND append (next_version, fn) here, where fn(conn) alters an existing database to
match.
"""

from __future__ import annotations

from typing import Callable

import sqlalchemy as sa
from sqlalchemy import select
from sqlalchemy.engine import Connection, Engine

from memoryx.core.link_types import LINK_TYPES, link_type
from memoryx.errors import InvalidInputError, StoreUnavailableError
from memoryx.stores.sql.schema import (
    Base,
    DailyReportRow,
    FeedbackRow,
    FindingRow,
    MemoryLinkRow,
    ProfileValueRow,
    SchemaVersion,
    StoreSettingRow,
    add_postgres_options,
)
from memoryx.stores.sql.values import utc_now


def _v1_baseline(conn: Connection) -> None:
    Base.metadata.create_all(conn)


def _v2_memory_status(conn: Connection) -> None:
    """Consolidation: memories.status (existing rows: active) and memories.merged_into."""
    cols = {c["name"] for c in sa.inspect(conn).get_columns("memories")}
    if "status" not in cols:
        conn.execute(sa.text("ALTER TABLE memories ADD COLUMN status VARCHAR(16) NOT NULL DEFAULT 'active'"))
        conn.execute(sa.text("CREATE INDEX IF NOT EXISTS ix_memories_status ON memories (status)"))
    if "merged_into" not in cols:
        conn.execute(sa.text("ALTER TABLE memories ADD COLUMN merged_into VARCHAR(64)"))


def _v3_feedback(conn: Connection) -> None:
    """Feedback on memories: the memory_feedback table."""
    FeedbackRow.__table__.create(conn, checkfirst=True)


_SCOPED_TABLES = ("memories", "raw_inputs", "memory_judgments", "entities", "relations", "memory_feedback")


def _v4_group_chats(conn: Connection) -> None:
    """Group chats: group_id on every scoped table; memories.valid_at (the event time of a memory)."""
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
    """User and group profiles: the profile_values table."""
    ProfileValueRow.__table__.create(conn, checkfirst=True)


def _v6_event_time(conn: Connection) -> None:
    """Event time: memories.invalid_at; memory_history and relations valid_at / invalid_at. Also the
    memory_links table (links between memories written by agents' tools)."""
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


def _v7_importance(conn: Connection) -> None:
    """Reasoned importance: memories.importance_factors (JSON) and memories.confidence; typed memory links."""
    have = {c["name"] for c in sa.inspect(conn).get_columns("memories")}
    kind = "JSONB" if conn.dialect.name == "postgresql" else "JSON"
    if "importance_factors" not in have:
        conn.execute(sa.text(f"ALTER TABLE memories ADD COLUMN importance_factors {kind}"))
    if "confidence" not in have:
        conn.execute(sa.text("ALTER TABLE memories ADD COLUMN confidence FLOAT"))
    _typed_links(conn)


def _v9_history_fields(conn: Connection) -> None:
    """memory_history.old_fields (JSON): an UPDATE's other changed fields as they were, for its undo."""
    have = {c["name"] for c in sa.inspect(conn).get_columns("memory_history")}
    kind = "JSONB" if conn.dialect.name == "postgresql" else "JSON"
    if "old_fields" not in have:
        conn.execute(sa.text(f"ALTER TABLE memory_history ADD COLUMN old_fields {kind}"))


def _typed_links(conn: Connection) -> None:
    """Memory links get a type of the closed set (memoryx.core.link_types): a known word becomes its type, any
    other text same_topic; a link that would repeat one of the same pair and type is dropped."""
    if "memory_links" not in sa.inspect(conn).get_table_names():
        return
    table = MemoryLinkRow.__table__
    rows = conn.execute(select(table.c.id, table.c.source_id, table.c.target_id, table.c.relation)).all()
    taken = {(r.source_id, r.target_id, r.relation) for r in rows if r.relation in LINK_TYPES}
    for r in rows:
        if r.relation in LINK_TYPES:
            continue
        try:
            kind = link_type(r.relation)
        except InvalidInputError:
            kind = "same_topic"
        if (r.source_id, r.target_id, kind) in taken:
            conn.execute(sa.delete(table).where(table.c.id == r.id))
        else:
            taken.add((r.source_id, r.target_id, kind))
            conn.execute(sa.update(table).where(table.c.id == r.id).values(relation=kind))


def _v8_judgment_audits(conn: Connection) -> None:
    """The judgment log's audit: the judgment_findings and judgment_daily_reports tables."""
    FindingRow.__table__.create(conn, checkfirst=True)
    DailyReportRow.__table__.create(conn, checkfirst=True)


def _v10_store_settings(conn: Connection) -> None:
    StoreSettingRow.__table__.create(conn, checkfirst=True)


MIGRATIONS: list[tuple[int, Callable[[Connection], None]]] = [
    (1, _v1_baseline),
    (2, _v2_memory_status),
    (3, _v3_feedback),
    (4, _v4_group_chats),
    (5, _v5_profiles),
    (6, _v6_event_time),  # invalid_at, history / relation event times, memory_links
    (7, _v7_importance),  # importance_factors, confidence; memory links typed
    (8, _v8_judgment_audits),  # judgment_findings, judgment_daily_reports
    (9, _v9_history_fields),  # memory_history.old_fields
    (10, _v10_store_settings),  # store_settings: the encoder precision that wrote the vectors
]
SCHEMA_VERSION = MIGRATIONS[-1][0]
MIGRATION_LOCK_KEY = 0x6D656D6F7279  # "memory": PostgreSQL advisory lock serialising migrations


def _create_missing_tables(conn) -> None:
    """The tables of the schema the database lacks, found with one listing of its tables: `create_all`'s own
    check asks for each table in turn, a few hundred ms of every start of an up-to-date store."""
    present = set(sa.inspect(conn).get_table_names())
    missing = [table for name, table in Base.metadata.tables.items() if name not in present]
    if missing:
        Base.metadata.create_all(conn, tables=missing)


def migrate(engine: Engine, *, is_postgres: bool, safe_url: str) -> None:
    """Bring the database behind `engine` (a write engine) to `SCHEMA_VERSION`, in one transaction. A
    database of a newer version than this code raises StoreUnavailableError (named by `safe_url`)."""
    if is_postgres:
        add_postgres_options()
    with engine.begin() as conn:
        if is_postgres:
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
        SchemaVersion.__table__.create(conn, checkfirst=True)
        current = conn.execute(select(sa.func.max(SchemaVersion.version))).scalar()
        if current is not None and current > SCHEMA_VERSION:
            raise StoreUnavailableError(
                f"The database at {safe_url} has schema version {current}, newer than this MemoryX "
                f"({SCHEMA_VERSION}). Upgrade memoryx, or point MEMORYX_SQL_URL at another database."
            )
        if current is None:
            Base.metadata.create_all(conn)
            todo = [v for v, _ in MIGRATIONS]
        else:
            todo = []
            for version, migrate_to in MIGRATIONS:
                if version > current:
                    migrate_to(conn)
                    todo.append(version)
            _create_missing_tables(conn)  # brand-new tables of later versions
        for version in todo:
            conn.execute(sa.insert(SchemaVersion).values(version=version, applied_at=utc_now()))
