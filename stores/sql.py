"""The SQL system of record (SQLAlchemy 2): memories, their history, judgments, the knowledge graph's truth
(entities/relations), raw inputs and the projection outbox.

Everything else (Qdrant vectors, the FalkorDB/Neo4j graph) is a projection that can be rebuilt from these
tables, so every write here is one short transaction and every failure leaves nothing half-written.
SQLite (default, one file) and PostgreSQL (postgresql+psycopg) run the same code.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import sqlalchemy as sa
from sqlalchemy import event, select
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker
from sqlalchemy.pool import NullPool, StaticPool

from memoryx.errors import (
    ConcurrencyError,
    InvalidInputError,
    NotFoundError,
    ScopeError,
    StoreUnavailableError,
)
from memoryx.scope import SCOPE_FIELDS, Scope
from memoryx.text import memory_hash, normalize_name

UTC = timezone.utc
JUDGMENT_STATUSES = ("running", "done", "failed", "awaiting_review")
VERIFICATION_RESULTS = ("CORRECT", "INCORRECT", "PARTIAL")
PROJECTION_KINDS = ("memory", "entity", "relation", "scope")
# Fields save_judgment accepts besides `scope` (seed 000 §5.6 plus our run status).
JUDGMENT_FIELDS = (
    "operation_type", "input_content", "extracted_facts", "existing_memories", "llm_response",
    "parsed_operations", "reasoning", "executed_operations", "execution_success", "error_message",
    "model_name", "latency_ms", "status",
)
_ID_CHUNK = 500  # keeps IN (...) lists far below SQLite's and PostgreSQL's bound-parameter limits


# ----------------------------------------------------------------------------------------------------------
# Small pure helpers
# ----------------------------------------------------------------------------------------------------------

def _now() -> datetime:
    return datetime.now(UTC)


def _new_id() -> str:
    return str(uuid.uuid4())


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None


def _as_utc(value: datetime | str | None, name: str = "time") -> datetime | None:
    """Accept aware/naive datetimes (naive = UTC) and ISO strings; everything stored is UTC."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise InvalidInputError(f"{name} must be an ISO-8601 time, got {value!r}") from exc
    if not isinstance(value, datetime):
        raise InvalidInputError(f"{name} must be a datetime or ISO-8601 string, got {type(value).__name__}")
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _scope_key(scope: Scope) -> str:
    # Not scope.key(): that renders None as '-', so user_id='-' would collide with "no user". JSON keeps
    # None distinct; sha1 keeps the indexed column short whatever the ids look like.
    raw = json.dumps([getattr(scope, f) for f in SCOPE_FIELDS], ensure_ascii=False)
    return hashlib.sha1(raw.encode("utf-8")).hexdigest()


def _require_scope(scope: Any) -> Scope:
    if not isinstance(scope, Scope):
        raise ScopeError(f"A Scope is required (e.g. Scope(user_id='alice')), got {type(scope).__name__}")
    return scope


def _clean_text(text: Any, what: str = "text") -> str:
    if not isinstance(text, str):
        raise InvalidInputError(f"{what} must be a string, got {type(text).__name__}")
    # PostgreSQL rejects NUL in text columns; it never carries meaning in a memory.
    text = text.replace("\x00", "").strip()
    if not text:
        raise InvalidInputError(f"{what} is empty; pass non-blank text")
    return text


def _check_metadata(metadata: Any) -> dict:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidInputError(f"metadata must be a dict, got {type(metadata).__name__}")
    try:
        json.dumps(metadata)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"metadata must be JSON-serialisable: {exc}") from exc
    return metadata


def _check_importance(importance: Any) -> float:
    try:
        value = float(importance)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"importance must be a number in [0, 1], got {importance!r}") from exc
    if not 0.0 <= value <= 1.0:
        raise InvalidInputError(f"importance must be in [0, 1], got {value}")
    return value


def _chunks(ids: Iterable[str]) -> Iterator[list[str]]:
    items = list(dict.fromkeys(ids))  # unique, order kept
    for i in range(0, len(items), _ID_CHUNK):
        yield items[i:i + _ID_CHUNK]


def _scope_where(model: Any, scope: Scope | None) -> list:
    """Exact match on the fields the scope sets (the same rule the vector and graph stores use)."""
    if scope is None:
        return []
    return [getattr(model, k) == v for k, v in _require_scope(scope).as_dict().items()]


def _percentile(sorted_values: list[float], pct: float) -> float | None:
    if not sorted_values:
        return None
    rank = max(1, math.ceil(pct / 100 * len(sorted_values)))  # nearest-rank
    return float(sorted_values[rank - 1])


# ----------------------------------------------------------------------------------------------------------
# Schema
# ----------------------------------------------------------------------------------------------------------

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
    applied_at: Mapped[datetime] = mapped_column(UTCDateTime, default=_now)


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
_MIGRATION_LOCK_KEY = 0x6D656D6F7279  # "memory": PostgreSQL advisory lock serialising migrations


# ----------------------------------------------------------------------------------------------------------
# Row -> dict
# ----------------------------------------------------------------------------------------------------------

def _scope_dict(row: Any) -> dict:
    return {k: getattr(row, k) for k in SCOPE_FIELDS}


def _memory_dict(row: MemoryRow) -> dict:
    return {
        "id": row.id, "memory": row.text, "hash": row.hash, **_scope_dict(row),
        "category": row.category, "importance": row.importance, "memory_type": row.memory_type,
        "metadata": dict(row.meta or {}), "created_at": _iso(row.created_at), "updated_at": _iso(row.updated_at),
        "access_count": row.access_count or 0, "last_accessed_at": _iso(row.last_accessed_at),
        "deleted_at": _iso(row.deleted_at), "trace_id": row.trace_id,
    }


def _history_dict(row: HistoryRow) -> dict:
    return {
        "id": row.id, "memory_id": row.memory_id, "event": row.event, "old_memory": row.old_memory,
        "new_memory": row.new_memory, "actor": row.actor, "trace_id": row.trace_id,
        "created_at": _iso(row.created_at),
    }


def _judgment_dict(row: JudgmentRow) -> dict:
    return {
        "id": row.id, "trace_id": row.trace_id, **_scope_dict(row),
        **{f: getattr(row, f) for f in JUDGMENT_FIELDS},
        "created_at": _iso(row.created_at), "updated_at": _iso(row.updated_at),
        "is_verified": bool(row.is_verified), "verified_at": _iso(row.verified_at),
        "verification_result": row.verification_result, "verification_notes": row.verification_notes,
    }


def _entity_dict(row: EntityRow) -> dict:
    return {
        "id": row.id, "name": row.name, "normalized_name": row.normalized_name,
        "type": row.entity_type, "entity_type": row.entity_type, **_scope_dict(row),
        "created_at": _iso(row.created_at), "updated_at": _iso(row.updated_at),
    }


def _relation_dict(row: RelationRow, names: dict[str, str]) -> dict:
    return {
        "id": row.id, "source_id": row.source_id, "source": names.get(row.source_id),
        "relation": row.relation, "target_id": row.target_id, "target": names.get(row.target_id),
        "memory_id": row.memory_id, "trace_id": row.trace_id, "valid": bool(row.valid), **_scope_dict(row),
        "created_at": _iso(row.created_at), "invalidated_at": _iso(row.invalidated_at),
        "invalidated_by": row.invalidated_by,
    }


def _outbox_dict(row: OutboxRow) -> dict:
    return {
        "id": row.id, "kind": row.kind, "target_id": row.target_id, "error": row.error,
        "attempts": row.attempts, "created_at": _iso(row.created_at), "updated_at": _iso(row.updated_at),
    }


# ----------------------------------------------------------------------------------------------------------
# The store
# ----------------------------------------------------------------------------------------------------------

class SQLStore:
    """System of record. Thread-safe: each method is one short transaction on its own session."""

    memory_hash = staticmethod(memory_hash)

    def __init__(self, url: str, *, echo: bool = False):
        self._closed = False
        self._lock_engine: Engine | None = None
        try:
            parsed = make_url(url)
        except Exception as exc:  # ArgumentError, ValueError, TypeError on garbage input
            raise StoreUnavailableError(
                f"MEMORYX_SQL_URL is not a valid SQLAlchemy URL ({url!r}: {exc}). Use e.g. "
                "sqlite:////path/memoryx.db or postgresql+psycopg://user@host:5432/db, or unset it to use "
                "SQLite in MEMORYX_DATA_DIR."
            ) from exc
        if parsed.drivername in ("postgresql", "postgres"):
            parsed = parsed.set(drivername="postgresql+psycopg")  # psycopg 3 is the driver we ship
        self.url = parsed
        self.safe_url = parsed.render_as_string(hide_password=True)
        self.is_postgres = parsed.get_backend_name() == "postgresql"
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        try:
            self.engine = self._make_engine(parsed, echo)
            # Reads and writes share one pool; on SQLite the "write" copy starts BEGIN IMMEDIATE so writers
            # queue on busy_timeout instead of failing when a read snapshot tries to upgrade.
            self._write_engine = self.engine.execution_options(memoryx_write=True)
            with self._wrap_errors():
                self._migrate()
        except StoreUnavailableError:
            raise
        except Exception as exc:
            raise self._unavailable(exc) from exc
        self._read = sessionmaker(bind=self.engine, expire_on_commit=False)
        self._write = sessionmaker(bind=self._write_engine, expire_on_commit=False)

    # ---- engine, errors, transactions --------------------------------------------------------------------

    def _make_engine(self, url, echo: bool) -> Engine:
        if self.is_sqlite:
            database = url.database or ""
            in_memory = database in ("", ":memory:") or database.startswith("file::memory:")
            if in_memory:
                # One shared connection (an in-memory database exists per connection); a process lock
                # serialises transactions on it. Tests and throwaway use only.
                engine = sa.create_engine(url, echo=echo, poolclass=StaticPool,
                                          connect_args={"check_same_thread": False})
                self._lock_dir = Path(tempfile.mkdtemp(prefix="memoryx-locks-"))
                self._mem_lock: threading.RLock | None = threading.RLock()
            else:
                path = Path(database).expanduser().resolve()
                path.parent.mkdir(parents=True, exist_ok=True)
                engine = sa.create_engine(url, echo=echo, connect_args={"check_same_thread": False, "timeout": 30})
                self._lock_dir = path.parent / "locks"
                self._mem_lock = None
            self._install_sqlite_hooks(engine)
            return engine
        self._mem_lock = None
        self._lock_dir = None
        connect_args = {"connect_timeout": 10} if self.is_postgres else {}
        if self.is_postgres:
            # Lock connections come from their own unpooled engine: many waiters polling for a scope lock
            # must never take the pooled connections the lock holder needs to finish its work.
            self._lock_engine = sa.create_engine(url, poolclass=NullPool, connect_args=connect_args)
        # pre_ping: a restarted server must not surface as errors on the first queries afterwards.
        return sa.create_engine(url, echo=echo, pool_pre_ping=True, connect_args=connect_args)

    @staticmethod
    def _install_sqlite_hooks(engine: Engine) -> None:
        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn, _record):
            # Let SQLAlchemy, not the sqlite3 module, decide where transactions begin (SQLAlchemy's
            # documented recipe); then BEGIN below makes reads and writes real transactions.
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA busy_timeout=30000")
            cur.execute("PRAGMA journal_mode=WAL")  # readers never block the writer
            cur.execute("PRAGMA synchronous=NORMAL")  # durable enough with WAL, much faster
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn):
            write = conn.get_execution_options().get("memoryx_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    def _unavailable(self, exc: BaseException) -> StoreUnavailableError:
        hint = ("Start PostgreSQL or fix host/port/database/user in the URL"
                if self.is_postgres else "Check that the directory exists and is writable")
        return StoreUnavailableError(
            f"The SQL store at {self.safe_url} is unavailable: {str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}. "
            f"{hint}, or set MEMORYX_SQL_URL to a reachable database "
            "(unset it to use SQLite under MEMORYX_DATA_DIR)."
        )

    @contextmanager
    def _wrap_errors(self) -> Iterator[None]:
        try:
            yield
        except OperationalError as exc:
            if self.is_sqlite and "locked" in str(exc).lower():
                raise ConcurrencyError(
                    f"The SQLite database {self.safe_url} stayed locked by another writer for 30 s. "
                    "Retry; for many concurrent writers set MEMORYX_SQL_URL to PostgreSQL."
                ) from exc
            raise self._unavailable(exc) from exc
        except (sa.exc.InterfaceError, sa.exc.NoSuchModuleError) as exc:
            raise self._unavailable(exc) from exc
        except sa.exc.TimeoutError as exc:  # connection pool exhausted
            raise ConcurrencyError(
                f"No free connection to {self.safe_url} within the pool timeout: too many concurrent "
                "operations in this process. Retry, or run fewer operations at once."
            ) from exc
        except sa.exc.DBAPIError as exc:
            if exc.connection_invalidated:
                raise self._unavailable(exc) from exc
            raise

    @contextmanager
    def _tx(self, write: bool = False) -> Iterator[Session]:
        """One transaction: committed on success, rolled back on any error (nothing half-written)."""
        self._check_open()
        maker = self._write if write else self._read
        mem_lock = self._mem_lock
        if mem_lock is not None:
            mem_lock.acquire()
        try:
            with self._wrap_errors(), maker.begin() as session:
                yield session
        finally:
            if mem_lock is not None:
                mem_lock.release()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreUnavailableError("This SQLStore is closed; build a new one (or new Services).")

    def _migrate(self) -> None:
        with self._write_engine.begin() as conn:
            if self.is_postgres:
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _MIGRATION_LOCK_KEY})
            SchemaVersion.__table__.create(conn, checkfirst=True)
            current = conn.execute(select(sa.func.max(SchemaVersion.version))).scalar()
            if current is not None and current > SCHEMA_VERSION:
                raise StoreUnavailableError(
                    f"The database at {self.safe_url} has schema version {current}, newer than this MemoryX "
                    f"({SCHEMA_VERSION}). Upgrade memoryx, or point MEMORYX_SQL_URL at another database."
                )
            if current is None:
                Base.metadata.create_all(conn)
                todo = [v for v, _ in MIGRATIONS]
            else:
                todo = []
                for version, migrate in MIGRATIONS:
                    if version > current:
                        migrate(conn)
                        todo.append(version)
                Base.metadata.create_all(conn)  # brand-new tables of later versions (checkfirst)
            for version in todo:
                conn.execute(sa.insert(SchemaVersion).values(version=version, applied_at=_now()))

    def schema_version(self) -> int:
        with self._tx() as s:
            return int(s.execute(select(sa.func.max(SchemaVersion.version))).scalar() or 0)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.engine.dispose()
            if self._lock_engine is not None:
                self._lock_engine.dispose()

    def __enter__(self) -> "SQLStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- memories -----------------------------------------------------------------------------------------

    def insert_memory(self, *, scope: Scope, text: str, category: str | None = None, importance: float = 0.5,
                      memory_type: str = "fact", metadata: dict | None = None, trace_id: str | None = None,
                      memory_id: str | None = None, created_at: datetime | None = None,
                      actor: str = "memoryx") -> dict:
        scope = _require_scope(scope)
        text = _clean_text(text)
        meta = _check_metadata(metadata)
        importance = _check_importance(importance)
        memory_id = memory_id or _new_id()
        created = _as_utc(created_at, "created_at") or _now()
        try:
            with self._tx(write=True) as s:
                existing = s.get(MemoryRow, memory_id)
                if existing is not None:
                    return self._replayed(existing, scope)
                row = MemoryRow(
                    id=memory_id, text=text, hash=memory_hash(text), **scope.as_dict(), category=category,
                    importance=importance, memory_type=memory_type or "fact", meta=meta, created_at=created,
                    updated_at=created, deleted_at=None, access_count=0, trace_id=trace_id,
                )
                s.add(row)
                s.flush()  # the history row references it
                s.add(HistoryRow(id=_new_id(), memory_id=memory_id, event="ADD", old_memory=None,
                                 new_memory=text, actor=actor, trace_id=trace_id, created_at=created))
                s.flush()
                return _memory_dict(row)
        except IntegrityError:
            # A concurrent replay inserted the same id between our check and our insert.
            with self._tx() as s:
                existing = s.get(MemoryRow, memory_id)
                if existing is None:
                    raise
                return self._replayed(existing, scope)

    @staticmethod
    def _replayed(row: MemoryRow, scope: Scope) -> dict:
        data = _memory_dict(row)
        if not scope.contains(data):
            raise ScopeError(f"Memory id {row.id} already exists in another scope; use a new id.")
        return data

    def update_memory(self, memory_id: str, *, text: str, metadata: dict | None = None, trace_id: str | None = None,
                      actor: str = "memoryx", category: str | None = None, importance: float | None = None,
                      memory_type: str | None = None) -> dict:
        text = _clean_text(text)
        meta = _check_metadata(metadata) if metadata is not None else None
        importance = _check_importance(importance) if importance is not None else None
        with self._tx(write=True) as s:
            row = s.get(MemoryRow, memory_id)
            if row is None or row.deleted_at is not None:
                raise NotFoundError(f"Memory {memory_id} does not exist or was deleted; nothing to update.")
            changes = {"text": text, "meta": meta, "category": category, "importance": importance,
                       "memory_type": memory_type}
            changes = {k: v for k, v in changes.items() if v is not None and v != getattr(row, k)}
            if not changes:
                return _memory_dict(row)  # unchanged: no write, no history
            old_text = row.text
            now = _now()
            for key, value in changes.items():
                setattr(row, key, value)
            row.hash = memory_hash(row.text)
            row.updated_at = now
            if trace_id is not None:
                row.trace_id = trace_id  # the latest run that touched it: where to look for "why"
            s.add(HistoryRow(id=_new_id(), memory_id=memory_id, event="UPDATE", old_memory=old_text,
                             new_memory=row.text, actor=actor, trace_id=trace_id, created_at=now))
            s.flush()
            return _memory_dict(row)

    def delete_memory(self, memory_id: str, *, trace_id: str | None = None, actor: str = "memoryx") -> dict:
        with self._tx(write=True) as s:
            row = s.get(MemoryRow, memory_id)
            if row is None:
                raise NotFoundError(f"Memory {memory_id} does not exist.")
            if row.deleted_at is None:  # second delete: no second history row
                now = _now()
                row.deleted_at = now
                row.updated_at = now
                s.add(HistoryRow(id=_new_id(), memory_id=memory_id, event="DELETE", old_memory=row.text,
                                 new_memory=None, actor=actor, trace_id=trace_id, created_at=now))
                s.flush()
            return _memory_dict(row)

    def get_memory(self, memory_id: str, *, scope: Scope | None = None, include_deleted: bool = False) -> dict:
        with self._tx() as s:
            row = s.get(MemoryRow, memory_id)
            data = _memory_dict(row) if row is not None else None
        if data is None or (data["deleted_at"] and not include_deleted) or (
                scope is not None and not _require_scope(scope).contains(data)):
            # Same message for "missing" and "someone else's": never confirm another tenant's ids.
            raise NotFoundError(f"Memory {memory_id} not found in this scope.")
        return data

    def list_memories(self, scope: Scope | None, *, limit: int | None = 100, offset: int = 0,
                      include_deleted: bool = False, memory_types: list[str] | None = None,
                      categories: list[str] | None = None, created_after: datetime | str | None = None,
                      created_before: datetime | str | None = None) -> list[dict]:
        q = select(MemoryRow).where(*_scope_where(MemoryRow, scope))
        if not include_deleted:
            q = q.where(MemoryRow.deleted_at.is_(None))
        if memory_types:
            q = q.where(MemoryRow.memory_type.in_(list(memory_types)))
        if categories:
            q = q.where(MemoryRow.category.in_(list(categories)))
        if created_after is not None:
            q = q.where(MemoryRow.created_at >= _as_utc(created_after, "created_after"))
        if created_before is not None:
            q = q.where(MemoryRow.created_at < _as_utc(created_before, "created_before"))
        q = q.order_by(MemoryRow.created_at.desc(), MemoryRow.id.desc()).offset(max(0, offset))
        if limit is not None:
            q = q.limit(max(0, limit))
        with self._tx() as s:
            return [_memory_dict(r) for r in s.scalars(q)]

    def count_memories(self, scope: Scope | None = None) -> int:
        q = select(sa.func.count()).select_from(MemoryRow).where(
            MemoryRow.deleted_at.is_(None), *_scope_where(MemoryRow, scope))
        with self._tx() as s:
            return int(s.execute(q).scalar() or 0)

    def find_by_hash(self, scope: Scope, text_hash: str) -> dict | None:
        q = (select(MemoryRow)
             .where(MemoryRow.hash == text_hash, MemoryRow.deleted_at.is_(None), *_scope_where(MemoryRow, scope))
             .order_by(MemoryRow.created_at, MemoryRow.id).limit(1))
        with self._tx() as s:
            row = s.scalars(q).first()
            return _memory_dict(row) if row is not None else None

    def get_memories(self, ids: list[str]) -> list[dict]:
        found: dict[str, dict] = {}
        with self._tx() as s:
            for chunk in _chunks(ids):
                q = select(MemoryRow).where(MemoryRow.id.in_(chunk), MemoryRow.deleted_at.is_(None))
                found.update((r.id, _memory_dict(r)) for r in s.scalars(q))
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def rows_with_context(self, scope: Scope, ids: list[str], seed_times: list[float], *,
                          max_gap_s: float) -> list[dict]:
        """One statement: the live memories of `scope` whose id is in `ids` OR whose created_at lies within
        `max_gap_s` of one of `seed_times` (epoch seconds), as memory dicts, oldest first. The search graph
        reads the neighbouring turns of its best hits off this list; Core, not ORM, because a search must
        stay within a few milliseconds."""
        scope = _require_scope(scope)
        col = MemoryRow.__table__.c
        conds = [col.id.in_(list(ids))] if ids else []
        for ts in seed_times:
            conds.append(col.created_at.between(datetime.fromtimestamp(ts - max_gap_s, tz=timezone.utc),
                                                datetime.fromtimestamp(ts + max_gap_s, tz=timezone.utc)))
        if not conds:
            return []
        stmt = (select(MemoryRow)
                .where(*_scope_where(MemoryRow, scope), MemoryRow.deleted_at.is_(None), sa.or_(*conds))
                .order_by(MemoryRow.created_at, MemoryRow.id))
        with self._tx() as s:
            return [_memory_dict(r) for r in s.scalars(stmt)]

    def last_change_seq(self) -> int:
        """A number that grows whenever any memory is added, updated or deleted (the newest history row)."""
        with self._tx() as s:
            return int(s.scalar(select(sa.func.max(HistoryRow.seq))) or 0)

    def history(self, memory_id: str) -> list[dict]:
        with self._tx() as s:
            if s.get(MemoryRow, memory_id) is None:
                raise NotFoundError(f"Memory {memory_id} does not exist.")
            rows = s.scalars(select(HistoryRow).where(HistoryRow.memory_id == memory_id).order_by(HistoryRow.seq))
            return [_history_dict(r) for r in rows]

    def record_access(self, ids: list[str]) -> None:
        if not ids:
            return
        now = _now()
        with self._tx(write=True) as s:
            for chunk in _chunks(ids):
                s.execute(sa.update(MemoryRow).where(MemoryRow.id.in_(chunk))
                          .values(access_count=MemoryRow.access_count + 1, last_accessed_at=now))

    def delete_scope(self, scope: Scope) -> int:
        """Hard delete of everything in the scope (memories, history, judgments, inputs, graph, outbox)."""
        scope = _require_scope(scope)
        mem_ids = select(MemoryRow.id).where(*_scope_where(MemoryRow, scope))
        ent_ids = select(EntityRow.id).where(*_scope_where(EntityRow, scope))
        with self._tx(write=True) as s:
            rel_q = select(RelationRow.id).where(sa.or_(
                sa.and_(*_scope_where(RelationRow, scope)),
                RelationRow.source_id.in_(ent_ids), RelationRow.target_id.in_(ent_ids)))
            rel_id_list = list(s.scalars(rel_q))
            mem_id_list = list(s.scalars(mem_ids))
            ent_id_list = list(s.scalars(ent_ids))
            for kind, id_list in (("memory", mem_id_list), ("entity", ent_id_list), ("relation", rel_id_list)):
                for chunk in _chunks(id_list):
                    s.execute(sa.delete(OutboxRow).where(OutboxRow.kind == kind, OutboxRow.target_id.in_(chunk)))
            for chunk in _chunks(rel_id_list):
                s.execute(sa.delete(RelationRow).where(RelationRow.id.in_(chunk)))
            s.execute(sa.delete(EntityRow).where(*_scope_where(EntityRow, scope)))
            s.execute(sa.delete(HistoryRow).where(HistoryRow.memory_id.in_(mem_ids)))
            s.execute(sa.delete(MemoryRow).where(*_scope_where(MemoryRow, scope)))
            s.execute(sa.delete(JudgmentRow).where(*_scope_where(JudgmentRow, scope)))
            s.execute(sa.delete(RawInputRow).where(*_scope_where(RawInputRow, scope)))
            return len(mem_id_list)

    def reset(self) -> None:
        """Delete every row of every table (the schema and its version stay)."""
        with self._tx(write=True) as s:
            for table in reversed(Base.metadata.sorted_tables):  # children before parents (foreign keys)
                if table.name != SchemaVersion.__tablename__:
                    s.execute(table.delete())

    # ---- raw inputs -----------------------------------------------------------------------------------------

    def save_raw_input(self, *, trace_id: str, scope: Scope, messages: list[dict], metadata: dict | None) -> None:
        """Keep what the user sent, verbatim; a replay of the same trace keeps the first copy."""
        scope = _require_scope(scope)
        if not trace_id:
            raise InvalidInputError("trace_id is required to save a raw input")
        meta = _check_metadata(metadata)
        try:
            with self._tx(write=True) as s:
                if s.scalars(select(RawInputRow.id).where(RawInputRow.trace_id == trace_id)).first() is None:
                    s.add(RawInputRow(id=_new_id(), trace_id=trace_id, **scope.as_dict(), messages=messages,
                                      meta=meta, created_at=_now()))
        except IntegrityError:
            pass  # a concurrent replay saved it first

    def get_raw_input(self, trace_id: str) -> dict:
        with self._tx() as s:
            row = s.scalars(select(RawInputRow).where(RawInputRow.trace_id == trace_id)).first()
            if row is None:
                raise NotFoundError(f"No raw input for trace {trace_id}.")
            return {"id": row.id, "trace_id": row.trace_id, **_scope_dict(row), "messages": row.messages,
                    "metadata": dict(row.meta or {}), "created_at": _iso(row.created_at)}

    # ---- judgments ------------------------------------------------------------------------------------------

    def save_judgment(self, trace_id: str, **fields: Any) -> None:
        """Upsert by trace_id; only the fields given are written (a run saves its judgment in steps)."""
        if not trace_id:
            raise InvalidInputError("trace_id is required to save a judgment")
        scope = fields.pop("scope", None)
        unknown = set(fields) - set(JUDGMENT_FIELDS)
        if unknown:
            raise InvalidInputError(f"Unknown judgment fields {sorted(unknown)}; allowed: {', '.join(JUDGMENT_FIELDS)}, scope")
        if "status" in fields and fields["status"] not in JUDGMENT_STATUSES:
            raise InvalidInputError(f"status must be one of {JUDGMENT_STATUSES}, got {fields['status']!r}")
        if fields.get("latency_ms") is not None:
            fields["latency_ms"] = int(round(float(fields["latency_ms"])))
        values = dict(fields)
        if scope is not None:
            values.update({k: getattr(_require_scope(scope), k) for k in SCOPE_FIELDS})
        for attempt in (1, 2):
            try:
                with self._tx(write=True) as s:
                    now = _now()
                    row = s.scalars(select(JudgmentRow).where(JudgmentRow.trace_id == trace_id)).first()
                    if row is None:
                        s.add(JudgmentRow(id=_new_id(), trace_id=trace_id, created_at=now, updated_at=now,
                                          is_verified=False, **values))
                    else:
                        for key, value in values.items():
                            setattr(row, key, value)
                        row.updated_at = now
                return
            except IntegrityError:
                if attempt == 2:  # the other writer's row exists now; the second pass updates it
                    raise

    def get_judgment(self, trace_id: str) -> dict:
        with self._tx() as s:
            row = s.scalars(select(JudgmentRow).where(JudgmentRow.trace_id == trace_id)).first()
            if row is None:
                raise NotFoundError(f"No judgment with trace_id {trace_id}.")
            return _judgment_dict(row)

    def list_judgments(self, scope: Scope | None = None, *, limit: int = 50, offset: int = 0,
                       status: str | None = None) -> list[dict]:
        q = select(JudgmentRow).where(*_scope_where(JudgmentRow, scope))
        if status is not None:
            q = q.where(JudgmentRow.status == status)
        q = q.order_by(JudgmentRow.created_at.desc(), JudgmentRow.id.desc()).offset(max(0, offset)).limit(max(0, limit))
        with self._tx() as s:
            return [_judgment_dict(r) for r in s.scalars(q)]

    def verify_judgment(self, trace_id: str, result: str, notes: str | None = None) -> dict:
        result_norm = (result or "").strip().upper() if isinstance(result, str) else ""
        if result_norm not in VERIFICATION_RESULTS:
            raise InvalidInputError(f"result must be one of {', '.join(VERIFICATION_RESULTS)}, got {result!r}")
        with self._tx(write=True) as s:
            row = s.scalars(select(JudgmentRow).where(JudgmentRow.trace_id == trace_id)).first()
            if row is None:
                raise NotFoundError(f"No judgment with trace_id {trace_id}.")
            row.is_verified = True
            row.verified_at = _now()
            row.verification_result = result_norm
            row.verification_notes = notes
            s.flush()
            return _judgment_dict(row)

    def judgment_stats(self, scope: Scope | None = None) -> dict:
        """Accuracy of reviewed judgments, latency percentiles, execution success and decided events.

        by_event counts the events the judge decided (parsed_operations), which is what accuracy is about.
        """
        where = _scope_where(JudgmentRow, scope)
        with self._tx() as s:
            rows = s.execute(select(JudgmentRow.is_verified, JudgmentRow.verification_result,
                                    JudgmentRow.latency_ms, JudgmentRow.execution_success,
                                    JudgmentRow.parsed_operations).where(*where)).all()
        by_result = {r: 0 for r in VERIFICATION_RESULTS}
        latencies: list[float] = []
        outcomes: list[bool] = []
        by_event: dict[str, int] = {}
        verified = 0
        for is_verified, result, latency, success, parsed in rows:
            if is_verified:
                verified += 1
                if result in by_result:
                    by_result[result] += 1
            if latency is not None:
                latencies.append(float(latency))
            if success is not None:
                outcomes.append(bool(success))
            ops = parsed.get("memory", []) if isinstance(parsed, dict) else parsed
            for op in ops if isinstance(ops, list) else []:
                if isinstance(op, dict) and op.get("event"):
                    event_name = str(op["event"]).upper()
                    by_event[event_name] = by_event.get(event_name, 0) + 1
        latencies.sort()
        return {
            "total": len(rows),
            "verified": verified,
            "accuracy": by_result["CORRECT"] / verified if verified else None,
            "by_result": by_result,
            "latency_ms": {
                "p50": _percentile(latencies, 50), "p90": _percentile(latencies, 90),
                "p99": _percentile(latencies, 99),
                "mean": sum(latencies) / len(latencies) if latencies else None,
            },
            "success_rate": sum(outcomes) / len(outcomes) if outcomes else None,
            "by_event": by_event,
        }

    # ---- entities ---------------------------------------------------------------------------------------

    def upsert_entity(self, *, scope: Scope, name: str, entity_type: str = "entity",
                      entity_id: str | None = None) -> dict:
        """One entity per (exact scope, normalised name). A known name keeps its id and first spelling."""
        scope = _require_scope(scope)
        name = _clean_text(name, "entity name")
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
                        now = _now()
                        row = EntityRow(id=entity_id or _new_id(), scope_key=key, **scope.as_dict(), name=name,
                                        normalized_name=normalized, entity_type=entity_type,
                                        created_at=now, updated_at=now)
                        s.add(row)
                    elif entity_type != "entity" and row.entity_type != entity_type:
                        # A specific type refines the generic one; "entity" never overwrites a real type.
                        row.entity_type = entity_type
                        row.updated_at = _now()
                    s.flush()
                    return _entity_dict(row)
            except IntegrityError:
                if attempt == 2:  # a concurrent writer created it; the second pass finds it
                    raise
        raise AssertionError("unreachable")

    def get_entities(self, ids: list[str]) -> list[dict]:
        found: dict[str, dict] = {}
        with self._tx() as s:
            for chunk in _chunks(ids):
                found.update((r.id, _entity_dict(r)) for r in s.scalars(select(EntityRow).where(EntityRow.id.in_(chunk))))
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def find_entities_by_names(self, scope: Scope, names: list[str]) -> list[dict]:
        normalized = list(dict.fromkeys(normalize_name(n) for n in names if isinstance(n, str) and n.strip()))
        if not normalized:
            return []
        q = (select(EntityRow).where(EntityRow.normalized_name.in_(normalized), *_scope_where(EntityRow, scope))
             .order_by(EntityRow.created_at, EntityRow.id))
        with self._tx() as s:
            return [_entity_dict(r) for r in s.scalars(q)]

    def list_entities(self, scope: Scope | None) -> list[dict]:
        q = select(EntityRow).where(*_scope_where(EntityRow, scope)).order_by(EntityRow.created_at, EntityRow.id)
        with self._tx() as s:
            return [_entity_dict(r) for r in s.scalars(q)]

    def orphan_entities(self, entity_ids: list[str]) -> list[dict]:
        """Entities (of the given ids) that no VALID relation references: safe to delete (seed 000 §5.4)."""
        ids = list(dict.fromkeys(entity_ids))
        if not ids:
            return []
        used: set[str] = set()
        with self._tx() as s:
            for chunk in _chunks(ids):
                q = select(RelationRow.source_id, RelationRow.target_id).where(
                    RelationRow.valid == sa.true(),
                    sa.or_(RelationRow.source_id.in_(chunk), RelationRow.target_id.in_(chunk)))
                for src, dst in s.execute(q):
                    used.update((src, dst))
        return self.get_entities([i for i in ids if i not in used])

    def delete_entities(self, entity_ids: list[str]) -> None:
        """Hard delete; relations that reference them (normally only invalidated ones) go too."""
        with self._tx(write=True) as s:
            for chunk in _chunks(entity_ids):
                s.execute(sa.delete(RelationRow).where(
                    sa.or_(RelationRow.source_id.in_(chunk), RelationRow.target_id.in_(chunk))))
                s.execute(sa.delete(EntityRow).where(EntityRow.id.in_(chunk)))

    # ---- relations ----------------------------------------------------------------------------------------

    def _relation_dicts(self, s: Session, rows: list[RelationRow]) -> list[dict]:
        ids = {r.source_id for r in rows} | {r.target_id for r in rows}
        names: dict[str, str] = {}
        for chunk in _chunks(ids):
            names.update(s.execute(select(EntityRow.id, EntityRow.name).where(EntityRow.id.in_(chunk))).all())
        return [_relation_dict(r, names) for r in rows]

    def add_relation(self, *, scope: Scope, source_id: str, relation: str, target_id: str,
                     memory_id: str | None, trace_id: str | None, relation_id: str | None = None) -> dict:
        scope = _require_scope(scope)
        relation = _clean_text(relation, "relation")
        key = _scope_key(scope)
        for attempt in (1, 2):
            try:
                with self._tx(write=True) as s:
                    if relation_id and (row := s.get(RelationRow, relation_id)) is not None:
                        return self._relation_dicts(s, [row])[0]  # replay under the same id
                    for entity_id in (source_id, target_id):
                        entity = s.get(EntityRow, entity_id)
                        if entity is None or not scope.contains(_scope_dict(entity)):
                            raise NotFoundError(f"Entity {entity_id} not found in this scope; upsert it first.")
                    row = s.scalars(select(RelationRow).where(
                        RelationRow.scope_key == key, RelationRow.source_id == source_id,
                        RelationRow.relation == relation, RelationRow.target_id == target_id,
                        RelationRow.memory_id.is_(None) if memory_id is None else RelationRow.memory_id == memory_id,
                        RelationRow.valid == sa.true())).first()
                    if row is None:
                        row = RelationRow(id=relation_id or _new_id(), scope_key=key, **scope.as_dict(),
                                          source_id=source_id, relation=relation, target_id=target_id,
                                          memory_id=memory_id, trace_id=trace_id, valid=True, created_at=_now())
                        s.add(row)
                        s.flush()
                    return self._relation_dicts(s, [row])[0]
            except IntegrityError:
                if attempt == 2:  # the same fact was written concurrently; the second pass returns it
                    raise
        raise AssertionError("unreachable")

    def get_relations(self, ids: list[str]) -> list[dict]:
        """Relations by id (valid or not), in the order of ids; unknown ids are skipped. Used by projections."""
        rows: dict[str, RelationRow] = {}
        with self._tx() as s:
            for chunk in _chunks(ids):
                rows.update((r.id, r) for r in s.scalars(select(RelationRow).where(RelationRow.id.in_(chunk))))
            ordered = [rows[i] for i in dict.fromkeys(ids) if i in rows]
            return self._relation_dicts(s, ordered)

    def invalidate_relations(self, relation_ids: list[str], *, trace_id: str | None) -> list[dict]:
        """Mark relations invalid (kept as history). Already-invalid ones keep their first invalidation."""
        ids = list(dict.fromkeys(relation_ids))
        with self._tx(write=True) as s:
            rows: dict[str, RelationRow] = {}
            for chunk in _chunks(ids):
                rows.update((r.id, r) for r in s.scalars(select(RelationRow).where(RelationRow.id.in_(chunk))))
            missing = [i for i in ids if i not in rows]
            if missing:
                raise NotFoundError(f"Unknown relation ids {missing}; nothing was invalidated.")
            now = _now()
            for row in rows.values():
                if row.valid:
                    row.valid, row.invalidated_at, row.invalidated_by = False, now, trace_id
            s.flush()
            return self._relation_dicts(s, [rows[i] for i in ids])

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
        for chunk in _chunks(ids):
            where = [*_scope_where(RelationRow, _require_scope(scope)),
                     sa.or_(RelationRow.source_id.in_(chunk), RelationRow.target_id.in_(chunk))]
            found.update((r["id"], r) for r in self._list_relations(where, include_invalid))
        return list(found.values())

    def list_relations(self, scope: Scope | None, *, include_invalid: bool = False) -> list[dict]:
        return self._list_relations(_scope_where(RelationRow, scope), include_invalid)

    # ---- projection outbox ------------------------------------------------------------------------------

    def enqueue_projection(self, *, kind: str, target_id: str, error: str) -> None:
        """Remember a projection write that failed; one pending job per (kind, target_id)."""
        if kind not in PROJECTION_KINDS:
            raise InvalidInputError(f"kind must be one of {PROJECTION_KINDS}, got {kind!r}")
        if not target_id:
            raise InvalidInputError("target_id is required")
        for attempt in (1, 2):
            try:
                with self._tx(write=True) as s:
                    now = _now()
                    row = s.scalars(select(OutboxRow).where(OutboxRow.kind == kind,
                                                            OutboxRow.target_id == target_id)).first()
                    if row is None:
                        s.add(OutboxRow(id=_new_id(), kind=kind, target_id=target_id, error=error, attempts=0,
                                        created_at=now, updated_at=now))
                    else:
                        row.error, row.updated_at = error, now
                return
            except IntegrityError:
                if attempt == 2:
                    raise

    def enqueue_projections(self, *, kind: str, target_ids: list[str], error: str) -> None:
        """Batch form of enqueue_projection, in one transaction (used to record write intents)."""
        if kind not in PROJECTION_KINDS:
            raise InvalidInputError(f"kind must be one of {PROJECTION_KINDS}, got {kind!r}")
        ids = list(dict.fromkeys(t for t in target_ids if t))
        if not ids:
            return
        for attempt in (1, 2):
            try:
                with self._tx(write=True) as s:
                    now = _now()
                    have = set(s.scalars(select(OutboxRow.target_id).where(OutboxRow.kind == kind,
                                                                          OutboxRow.target_id.in_(ids))))
                    s.add_all(OutboxRow(id=_new_id(), kind=kind, target_id=t, error=error, attempts=0,
                                        created_at=now, updated_at=now) for t in ids if t not in have)
                    if have:
                        s.execute(sa.update(OutboxRow).where(OutboxRow.kind == kind, OutboxRow.target_id.in_(have))
                                  .values(error=error, updated_at=now))
                return
            except IntegrityError:  # a concurrent writer queued the same target: the second pass sees it
                if attempt == 2:
                    raise

    def clear_projections(self, *, kind: str, target_ids: list[str]) -> None:
        """Drop pending jobs of these targets (their projection has just been written)."""
        if not target_ids:
            return
        with self._tx(write=True) as s:
            s.execute(sa.delete(OutboxRow).where(OutboxRow.kind == kind, OutboxRow.target_id.in_(list(target_ids))))

    def pending_projections(self, limit: int = 500) -> list[dict]:
        q = select(OutboxRow).order_by(OutboxRow.created_at, OutboxRow.id).limit(max(0, limit))
        with self._tx() as s:
            return [_outbox_dict(r) for r in s.scalars(q)]

    def complete_projection(self, job_id: str) -> None:
        # Idempotent: two retriers may finish the same job.
        with self._tx(write=True) as s:
            s.execute(sa.delete(OutboxRow).where(OutboxRow.id == job_id))

    def fail_projection(self, job_id: str, error: str) -> None:
        # A job another retrier already completed is simply gone: nothing to record.
        with self._tx(write=True) as s:
            s.execute(sa.update(OutboxRow).where(OutboxRow.id == job_id)
                      .values(attempts=OutboxRow.attempts + 1, error=error, updated_at=_now()))

    # ---- concurrency ------------------------------------------------------------------------------------

    @contextmanager
    def scope_lock(self, scope: Scope, timeout: float = 60.0) -> Iterator[None]:
        """Exclusive lock on one scope across threads and processes (writers of one user queue up).

        Not reentrant: taking it again in the same thread (or in a coroutine on the same event loop) raises
        ConcurrencyError at once instead of waiting for itself until the timeout.
        """
        scope = _require_scope(scope)
        self._check_open()
        key = (self.safe_url, scope.key())  # two stores (databases) never share a lock
        held = _held_locks()
        if key in held:
            raise ConcurrencyError(
                f"scope_lock({scope.key()}) is already held by this thread; it is not reentrant. "
                "Take the lock once around the whole operation."
            )
        lock = self._pg_lock(scope, timeout) if self.is_postgres else self._file_lock(scope, timeout)
        with lock:
            held.add(key)
            try:
                yield
            finally:
                held.discard(key)

    @contextmanager
    def _pg_lock(self, scope: Scope, timeout: float) -> Iterator[None]:
        lock_key = int.from_bytes(hashlib.sha1(scope.key().encode("utf-8")).digest()[:8], "big", signed=True)
        # A dedicated autocommit connection: the session-level advisory lock lives as long as it does and is
        # released by the server if this process dies.
        assert self._lock_engine is not None
        with self._wrap_errors():
            conn = self._lock_engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        acquired = False
        try:
            with self._wrap_errors():
                acquired = _poll(lambda: bool(conn.execute(sa.text("SELECT pg_try_advisory_lock(:k)"),
                                                           {"k": lock_key}).scalar()), timeout)
            if not acquired:
                raise _lock_timeout(scope, timeout, "another MemoryX worker (PostgreSQL advisory lock)")
            yield
        finally:
            try:
                if acquired:
                    conn.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": lock_key})
                conn.close()
            except SQLAlchemyError:
                conn.invalidate()  # closing the connection releases the lock on the server

    @contextmanager
    def _file_lock(self, scope: Scope, timeout: float) -> Iterator[None]:
        import fcntl  # POSIX only; imported here so the rest of the store works anywhere

        assert self._lock_dir is not None
        path = self._lock_dir / f"{hashlib.sha1(scope.key().encode('utf-8')).hexdigest()}.lock"
        try:
            self._lock_dir.mkdir(parents=True, exist_ok=True)
            # A new open file description per call: flock then excludes other threads of this process too.
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreUnavailableError(
                f"Cannot create the scope lock file {path}: {exc}. The locks live next to the SQLite file of "
                "MEMORYX_SQL_URL; make that directory writable or point MEMORYX_SQL_URL elsewhere."
            ) from exc
        try:
            def try_lock() -> bool:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return True
                except BlockingIOError:
                    return False

            if not _poll(try_lock, timeout):
                holder = _read_holder(path)
                raise _lock_timeout(scope, timeout, f"{holder} (lock file {path})")
            try:
                os.ftruncate(fd, 0)  # who holds it, for the timeout message of the next waiter
                os.write(fd, f"pid {os.getpid()} thread {threading.get_ident()}".encode())
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)  # the file stays: unlinking a lock file races with a waiter that opened it


_thread_state = threading.local()


def _held_locks() -> set[tuple[str, str]]:
    held = getattr(_thread_state, "held", None)
    if held is None:
        held = _thread_state.held = set()
    return held


def _poll(attempt: Callable[[], bool], timeout: float) -> bool:
    """Try at once, then with growing pauses (10 ms .. 100 ms) until the deadline."""
    deadline = time.monotonic() + max(0.0, timeout)
    pause = 0.01
    while True:
        if attempt():
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(pause, remaining))
        pause = min(pause * 2, 0.1)


def _read_holder(path: Path) -> str:
    try:
        text = path.read_text().strip()
    except OSError:
        text = ""
    return f"another writer ({text})" if text else "another writer"


def _lock_timeout(scope: Scope, timeout: float, holder: str) -> ConcurrencyError:
    return ConcurrencyError(
        f"Could not lock scope {scope.key()} within {timeout:g} s: held by {holder}. Another add/update for "
        "this scope is still running; retry when it finishes or pass a larger timeout."
    )
