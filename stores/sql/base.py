"""The SQL store's base: engine creation (SQLite hooks, PostgreSQL pools), error wrapping, one-transaction
sessions, the cross-process owner lock and the transactional projection intent. It runs the migrations
(migrations.py) when it opens and keeps the planner statistics fresh (statistics.py, its mixin). The concept
modules (memories, judgments, graph truth, outbox) build their queries on `_tx`.

Every write is one short transaction, so every failure leaves nothing half-written. A write that changes
what a projection shows records its projection intent (`_record_intent`) inside that same transaction: a
process killed right after the commit leaves an outbox job, never an invisible fact. A caller that makes
several writes as one step (an add's operations and its judgment record) opens `transaction()`: every
method called inside joins it, so the step commits whole or not at all, in one BEGIN/COMMIT.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Self

import sqlalchemy as sa
from sqlalchemy import event, select
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool, StaticPool

from memoryx.core.scope import Scope
from memoryx.errors import ConcurrencyError, StoreUnavailableError
from memoryx.stores.locks import (
    advisory_lock,
    file_lock,
    in_event_loop_task,
    TryLockSession,
    job_claim,
    lock_owner,
    not_reentrant,
)
from memoryx.stores.sql.migrations import migrate
from memoryx.stores.sql.schema import Base, OutboxRow, SchemaVersion, StoreSettingRow
from memoryx.stores.sql.statistics import (
    STATS_CHECK_EVERY_WRITES,
    STATS_MIN_ROWS,  # noqa: F401 - still read as base.STATS_MIN_ROWS
    PlannerStatistics,
)
from memoryx.stores.sql.values import new_id, require_scope, utc_now

SQLITE_MMAP_BYTES = 1 << 31  # the part of a SQLite file read through a memory mapping (see _on_connect)

# keys of Session.info inside `SQLStoreBase.transaction()`
_WRITE, _AFTER, _INTENTS, _FAILED = "memoryx_write", "memoryx_after_commit", "memoryx_intents", "memoryx_failed"
_OUTBOX = OutboxRow.__table__
_DELETE_JOBS = sa.delete(_OUTBOX).where(_OUTBOX.c.id.in_(sa.bindparam("ids", expanding=True)))


class SQLStoreBase(PlannerStatistics):
    """Owns the engine and sessions. Thread-safe: each method is one short transaction on its own session."""

    def __init__(self, url: str, *, echo: bool = False, pool_size: int = 4, lock_connections: int = 10):
        self._closed = False
        self._pool_size, self._lock_connections = pool_size, lock_connections  # PostgreSQL only
        self._lock_engine: Engine | None = None
        self._writes_since_stats_check, self._stats_rows = 0, 0  # planner statistics (SQLite)
        self._done_jobs: list[str] = []  # projected outbox jobs to delete with the next write transaction
        self._done_jobs_lock = threading.Lock()
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
            self._stats_rows = self._analyzed_rows()
            self.refresh_statistics_if_grown()
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
        if not self.is_postgres:
            return sa.create_engine(url, echo=echo, pool_pre_ping=True)
        connect_args = {"connect_timeout": 10, "application_name": "memoryx"}
        # Owner-lock connections come from a pool of their own: many waiters polling for a scope lock must
        # never take the pooled connections the lock holder needs to finish its work. Run locks and scheduled
        # jobs all share one more connection (`TryLockSession`). Every pool is a hard cap (no overflow): a
        # process opens a known number of connections (Settings.pg_connections_per_process).
        self._lock_engine = sa.create_engine(url, pool_size=self._lock_connections, max_overflow=0, pool_timeout=60,
                                             pool_pre_ping=True, connect_args=connect_args)
        # A coroutine holding a lock across awaits (AsyncMemory's add run) must not wait on the event loop for
        # a pooled connection that other coroutines of the same loop hold: it takes one of its own.
        self._loop_lock_engine = sa.create_engine(url, poolclass=NullPool, connect_args=connect_args)
        self._try_locks = TryLockSession(self._loop_lock_engine)
        # pre_ping: a restarted server must not surface as errors on the first queries afterwards.
        return sa.create_engine(url, echo=echo, pool_pre_ping=True, pool_size=self._pool_size, max_overflow=0,
                                connect_args=connect_args)

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
            cur.execute("PRAGMA secure_delete=ON")  # deleted rows are zeroed, not left in free pages (purge)
            # pages read from a mapping of the file, not by one read() call each into the connection's 2 MB
            # cache, which misses nearly all of the ~200 scattered pages a search reads (100k memories: ~1 ms of
            # a search's CPU). SQLite caps the size at its build's maximum; pages past it are read as before
            cur.execute(f"PRAGMA mmap_size={SQLITE_MMAP_BYTES}")
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
                "operations in this process. Retry, run fewer at once, or raise MEMORYX_PG_POOL_SIZE "
                "(writes: MEMORYX_PG_LOCK_CONNECTIONS) within the server's max_connections."
            ) from exc
        except sa.exc.DBAPIError as exc:
            if exc.connection_invalidated:
                raise self._unavailable(exc) from exc
            raise

    @contextmanager
    def _tx(self, write: bool = False) -> Iterator[Session]:
        """One transaction: committed on success, rolled back on any error (nothing half-written). Inside
        `transaction()` on this thread it is that transaction (joined: no BEGIN or commit of its own)."""
        outer = self._open_session()
        if outer is not None:
            if write and not outer.info.get(_WRITE):
                raise RuntimeError("a write inside a read-only SQLStore.transaction(); open it with write=True")
            if outer.info.get(_FAILED) is not None:  # a joined write failed: the transaction can only roll back
                raise outer.info[_FAILED]
            try:
                yield outer
            except IntegrityError as exc:  # a method's retry-on-conflict cannot retry inside a joined transaction
                outer.info[_FAILED] = exc
                raise
            return
        self._check_open()
        maker = self._write if write else self._read
        mem_lock = self._mem_lock
        if mem_lock is not None:
            mem_lock.acquire()
        try:
            with self._wrap_errors(), maker.begin() as session:
                if write:
                    self._delete_done_jobs(session)
                yield session
        finally:
            if mem_lock is not None:
                mem_lock.release()
        if write:
            self._writes_since_stats_check += 1
            if self._writes_since_stats_check >= STATS_CHECK_EVERY_WRITES:
                self.refresh_statistics_if_grown()

    def clear_projections_later(self, job_ids: list[str]) -> None:
        """Drop these projected jobs with the next write transaction this store opens (or at close /
        before the outbox is read): an add projects right after its commit, and a transaction of their own
        cost one BEGIN/COMMIT per add. A crash before then leaves them queued: the replay
        projects them again, which changes nothing (projections are idempotent)."""
        if job_ids:
            with self._done_jobs_lock:
                self._done_jobs.extend(job_ids)

    def flush_cleared_projections(self) -> None:
        """Delete the jobs `clear_projections_later` holds, now."""
        if not self._done_jobs or self._closed:
            return
        outer = self._open_session()
        if outer is not None:  # inside transaction(): in it when it writes, else with the next one
            if outer.info.get(_WRITE):
                self._delete_done_jobs(outer)
            return
        with self._tx(write=True):
            pass  # the write transaction deletes them as it opens

    def _delete_done_jobs(self, session: Session) -> None:
        if not self._done_jobs:
            return
        with self._done_jobs_lock:
            jobs, self._done_jobs = self._done_jobs, []
        # a Core statement built once: the ORM's bulk DELETE (session synchronisation, a statement and cache key
        # built per call) cost ~2 ms of CPU per add; no OutboxRow object is held in these sessions
        conn = session.connection()
        for chunk in range(0, len(jobs), 500):
            conn.execute(_DELETE_JOBS, {"ids": jobs[chunk:chunk + 500]})

    def _open_session(self) -> Session | None:
        local = self.__dict__.get("_local")
        return getattr(local, "session", None) if local is not None else None

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[Session]:
        """Several store calls as ONE transaction (an add's writes and its judgment record would otherwise be
        a dozen transactions). Every method this thread calls inside joins it: all of them commit together
        or none does, with their projection intents (`_record_intent`) in the same commit. What must only
        happen after the commit (history events, `after_commit`) waits for it and is dropped on a rollback.
        Re-entrant: a nested `transaction()` joins the open one. `write=False`: several reads on one
        snapshot (one BEGIN); a write inside it raises.

        The intents recorded inside are listed by `recorded_intents()` after the block, so a caller that
        projects right away can clear exactly those jobs without reading them back."""
        outer = self._open_session()
        if outer is not None:
            if write and not outer.info.get(_WRITE):
                raise RuntimeError("a write transaction inside a read-only SQLStore.transaction()")
            yield outer
            return
        local = self.__dict__.setdefault("_local", threading.local())
        with self._tx(write=write) as session:
            session.info.update({_WRITE: write, _AFTER: [], _INTENTS: []})
            local.session = session
            try:
                yield session
            finally:
                local.session = None
        local.intents = session.info[_INTENTS]
        for fn in session.info[_AFTER]:
            fn()

    def in_transaction(self) -> bool:
        """True inside `transaction()` on this thread."""
        return self._open_session() is not None

    def after_commit(self, fn) -> None:
        """Call `fn` once the open `transaction()` commits (at once outside one)."""
        outer = self._open_session()
        if outer is None:
            fn()
        else:
            outer.info[_AFTER].append(fn)

    def recorded_intents(self) -> list[tuple[str, str, str]]:
        """(kind, target id, job id) of the projection intents the last `transaction()` of this thread
        committed: the jobs its caller clears once it has projected them (`clear_projections`)."""
        local = self.__dict__.get("_local")
        return list(getattr(local, "intents", None) or [])

    def _record_intent(self, s: Session, kind: str, target_ids) -> None:
        """Queue the projection of these targets inside the caller's write transaction `s`.

        One row per (kind, target); a new write to a target already queued gives its row a fresh id. The
        projector clears only the row ids it read before projecting (`clear_projections`), so a write that
        lands while a projection is in flight keeps its job for the replay."""
        ids = list(dict.fromkeys(t for t in target_ids if t))
        if not ids:
            return
        now = utc_now()
        rows = [{"id": new_id(), "kind": kind, "target_id": target, "error": "pending", "attempts": 0,
                 "created_at": now, "updated_at": now} for target in ids]
        # one statement, compiled once per engine (building it per call cost more than running it);
        # a target already queued gets the new job id
        s.connection().execute(self._intent_statement(), rows)  # Core, not the ORM's bulk path: ~3x cheaper
        if _INTENTS in s.info:
            s.info[_INTENTS].extend((kind, r["target_id"], r["id"]) for r in rows)

    def _intent_statement(self):
        stmt = self.__dict__.get("_intent_stmt")
        if stmt is None:
            if self.is_postgres:
                from sqlalchemy.dialects.postgresql import insert
            else:
                from sqlalchemy.dialects.sqlite import insert
            ins = insert(OutboxRow.__table__)
            stmt = self.__dict__["_intent_stmt"] = ins.on_conflict_do_update(
                index_elements=["kind", "target_id"],
                set_={"id": ins.excluded.id, "error": "pending", "updated_at": ins.excluded.updated_at})
        return stmt

    def _check_open(self) -> None:
        if self._closed:
            raise StoreUnavailableError("This SQLStore is closed; build a new one (or new Services).")

    def _migrate(self) -> None:
        migrate(self._write_engine, is_postgres=self.is_postgres, safe_url=self.safe_url)

    def schema_version(self) -> int:
        with self._tx() as s:
            return int(s.execute(select(sa.func.max(SchemaVersion.version))).scalar() or 0)

    def close(self) -> None:
        if not self._closed:
            try:
                self.flush_cleared_projections()
            except Exception:  # noqa: BLE001 - a store that is down keeps the jobs: the next open replays them
                pass
            self._closed = True
            self.engine.dispose()
            if self._lock_engine is not None:
                self._try_locks.close()
                for engine in (self._lock_engine, self._loop_lock_engine):
                    engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def reset(self) -> None:
        """Delete every row of every table. The schema, its version and the store's recorded settings stay: the
        processes writing to it go on with the settings they opened it with."""
        with self._tx(write=True) as s:
            for table in reversed(Base.metadata.sorted_tables):  # children before parents (foreign keys)
                if table.name not in (SchemaVersion.__tablename__, StoreSettingRow.__tablename__):
                    s.execute(table.delete())

    # ---- concurrency ------------------------------------------------------------------------------------

    def _locks(self) -> Engine:
        """Where owner-lock connections come from: the bounded pool (MEMORYX_PG_LOCK_CONNECTIONS), or one
        connection of its own for a coroutine running on an event loop (see `_make_engine`)."""
        assert self._lock_engine is not None
        return self._loop_lock_engine if in_event_loop_task() else self._lock_engine

    @contextmanager
    def scope_lock(self, scope: Scope, timeout: float = 60.0) -> Iterator[None]:
        """Exclusive lock on the scope's widest owner across threads and processes: the user id when there is
        one, else the agent id, else the run id (stores/locks.py `lock_owner`). Every writer of alice's
        memories, whatever agent or run, queues on alice: an add for (alice) reads and updates (alice, bot)
        memories too, so a lock per exact scope let two runs update one memory at once.

        Not reentrant: taking it again in the same thread (or in a coroutine on the same event loop) raises
        ConcurrencyError at once instead of waiting for itself until the timeout. Scopes of one owner share
        one lock: take it once (`lock_owner` tells which scopes do).
        """
        scope = lock_owner(require_scope(scope))
        self._check_open()
        key = (self.safe_url, scope.key())  # two stores (databases) never share a lock
        if self.is_postgres:
            lock = advisory_lock(self._locks(), scope, timeout, self._wrap_errors)
        else:
            assert self._lock_dir is not None
            lock = file_lock(self._lock_dir, scope, timeout)
        with not_reentrant(key, scope, lock):
            yield

    @contextmanager
    def run_lock(self, trace_id: str) -> Iterator[bool]:
        """Held by the process running add run `trace_id` (PostgreSQL: an advisory lock the server releases if
        that process dies). Yields False when another process holds it: the run is alive there, so neither
        resume nor replay it. SQLite serves one process: always True."""
        if not self.is_postgres:
            yield True
            return
        self._check_open()
        with self._try_locks.try_lock(f"run:{trace_id}", self._wrap_errors) as held:
            yield held

    @contextmanager
    def scheduled_job(self, name: str, every_s: float) -> Iterator[bool]:
        """Whether this process runs the periodic job `name` (every `every_s` seconds) now: on PostgreSQL one
        worker per interval (stores/locks.py `job_claim`); SQLite serves one process: always True."""
        if not self.is_postgres:
            yield True
            return
        self._check_open()
        # a little under the interval: the claiming worker's own next tick must not find it too early
        with job_claim(self._try_locks, name, every_s * 0.8, self._wrap_errors) as mine:
            yield mine

    @contextmanager
    def scope_locks(self, scopes: list[Scope], timeout: float = 60.0) -> Iterator[None]:
        """`scope_lock` on the owners of several scopes at once, in one order for every caller (no lock
        cycles): bulk writes. On PostgreSQL all of them ride on one connection (a bulk chunk spanning 256
        users took 256 connections, past max_connections)."""
        owners = sorted({lock_owner(require_scope(s)) for s in scopes}, key=Scope.key)
        self._check_open()
        with contextlib.ExitStack() as stack:
            if self.is_postgres:
                for owner in owners:  # refuse a lock this thread holds before taking any
                    stack.enter_context(not_reentrant((self.safe_url, owner.key()), owner, contextlib.nullcontext()))
                stack.enter_context(advisory_lock(self._locks(), owners, timeout, self._wrap_errors))
            else:
                for owner in owners:
                    stack.enter_context(self.scope_lock(owner, timeout))
            yield
