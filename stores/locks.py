"""Cross-process owner locks: writers of one owner queue up, whichever process or thread they run in.

The lock is taken on the scope's widest owner (`lock_owner`): the user id when there is one, else the agent
id, else the run id. An add for alice reads and updates memories of (alice), (alice, bot) and (alice, bot,
run) alike, so a lock per exact scope let two runs update one memory at once. We chose this over versioned
rows with a refused stale update: a refused update throws away the run's model calls and must be judged
again, while adds of one user are rarely concurrent, so queueing them costs little; execute_ops' optimistic
re-check still catches what changed between retrieval and the lock.

PostgreSQL uses a session-level advisory lock (released by the server if the process dies), on one
connection per thread from a bounded pool (`lock_connection`); SQLite uses an flock'ed file next to the
database. Workers of one PostgreSQL also coordinate here: an add run holds a lock on its trace id while it
runs (`TryLockSession`, one connection for all of a process's run locks: a run found unfinished is resumed
only when nobody holds it), and a scheduled job runs on one worker per interval (`job_claim`). Both are taken through `not_reentrant`, which refuses a second
take of the same lock in the same thread instead of letting it wait for itself until the timeout.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Callable

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from memoryx.core.scope import Scope
from memoryx.errors import ConcurrencyError, StoreUnavailableError


def lock_owner(scope: Scope) -> Scope:
    """The scope whose lock guards `scope`: its group (a group's participants share its memories), else its
    user, else its agent, else its run."""
    if scope.group_id is not None:
        return Scope(group_id=scope.group_id)
    if scope.user_id is not None:
        return Scope(user_id=scope.user_id)
    if scope.agent_id is not None:
        return Scope(agent_id=scope.agent_id)
    return Scope(run_id=scope.run_id)


@contextmanager
def not_reentrant(key: tuple[str, str], scope: Scope, lock: AbstractContextManager) -> Iterator[None]:
    """Hold `lock`, marking `key` as held by this thread; raise at once if the thread already holds it."""
    held = _held_locks()
    if key in held:
        raise ConcurrencyError(
            f"scope_lock({scope.key()}) is already held by this thread; it is not reentrant. "
            "Take the lock once around the whole operation."
        )
    with lock:
        held.add(key)
        try:
            yield
        finally:
            held.discard(key)


@contextmanager
def lock_connection(engine: Engine,
                    wrap_errors: Callable[[], AbstractContextManager]) -> Iterator[tuple[sa.Connection, set[int]]]:
    """(connection, the advisory keys held on it): ONE autocommit connection per thread and lock engine for
    all the owner locks it holds there at once (a bulk chunk's owners, nested owner locks), checked out of
    the engine's bounded pool by the outermost lock and returned when that lock ends. A thread never waits
    for a second connection of one pool while holding one. Coroutines of one event loop each get their own:
    they interleave, and one's release must not drop another's locks."""
    conns = _thread_state.__dict__.setdefault("lock_conns", {})
    slot = (id(engine), _task_id())
    if slot in conns:
        yield conns[slot]
        return
    try:
        with wrap_errors():
            conn = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
    except ConcurrencyError as exc:  # the lock pool is exhausted
        raise ConcurrencyError(f"Every lock connection of this process (MEMORYX_PG_LOCK_CONNECTIONS="
                               f"{engine.pool.size()}) stayed held by writes in flight: retry, or raise it "
                               "within the server's max_connections.") from exc
    conns[slot] = entry = (conn, set())
    try:
        yield entry
    finally:
        del conns[slot]
        try:
            # a lock left held would travel with the connection to its next user
            conn.execute(sa.text("SELECT pg_advisory_unlock_all()"))
            conn.close()
        except SQLAlchemyError:
            conn.invalidate()  # closing the connection releases the locks on the server


@contextmanager
def advisory_lock(engine: Engine, scopes: Scope | list[Scope], timeout: float,
                  wrap_errors: Callable[[], AbstractContextManager]) -> Iterator[None]:
    """PostgreSQL advisory locks on one scope or several (taken in the given order), all on the thread's
    lock connection: a session holds any number of advisory locks, so a bulk chunk spanning 256 users costs
    one connection, not 256 (which exceeded max_connections). `wrap_errors` turns driver errors into MemoryX
    errors. Session-level locks live as long as the connection and the server releases them if this
    process dies."""
    scopes = [scopes] if isinstance(scopes, Scope) else list(scopes)
    held: list[int] = []
    with lock_connection(engine, wrap_errors) as (conn, keys):
        try:
            for scope in scopes:
                lock_key = _pg_key(scope.key())
                with wrap_errors():
                    acquired = _poll(lambda: bool(conn.execute(sa.text("SELECT pg_try_advisory_lock(:k)"),
                                                               {"k": lock_key}).scalar()), timeout)
                if not acquired:
                    raise _lock_timeout(scope, timeout, "another MemoryX worker (PostgreSQL advisory lock)")
                held.append(lock_key)
                keys.add(lock_key)
            yield
        finally:
            _unlock(conn, keys, held)


def _unlock(conn: sa.Connection, keys: set[int], held: list[int]) -> None:
    try:
        for lock_key in reversed(held):
            conn.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": lock_key})
    except SQLAlchemyError:
        conn.invalidate()  # the server releases the locks with the connection
    keys.difference_update(held)


def _task_id() -> int:
    try:
        return id(asyncio.current_task())
    except RuntimeError:  # no event loop running in this thread
        return 0


def in_event_loop_task() -> bool:
    """Whether the caller is a coroutine running on this thread's event loop."""
    return _task_id() != 0


def _pg_key(name: str) -> int:
    return int.from_bytes(hashlib.sha1(name.encode("utf-8")).digest()[:8], "big", signed=True)


class TryLockSession:
    """ONE autocommit connection holding every try-lock of this process: add runs' locks and scheduled jobs'.
    They never wait (taken or refused at once) but are held as long as the run: an add holds its run lock
    through its model calls, so a connection per add in flight would cap a worker's adds at its pool's
    size, or open one connection per add. Here any number of them share one session; the process tracks
    which keys it holds (a second take in this process is refused, as another session's would be) and a
    mutex serialises the short statements. The server releases them all if the process dies."""

    def __init__(self, engine: Engine):
        self._engine = engine
        self._conn: sa.Connection | None = None
        self._mutex = threading.Lock()
        self._held: set[int] = set()

    def _connection(self) -> sa.Connection:  # under the mutex
        if self._conn is None or self._conn.invalidated:
            self._conn = self._engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        return self._conn

    def run(self, fn: Callable[[sa.Connection], object], wrap_errors: Callable[[], AbstractContextManager]):
        """fn(connection) under the mutex; a broken connection is dropped (the server released its locks)."""
        with self._mutex, wrap_errors():
            try:
                return fn(self._connection())
            except SQLAlchemyError:
                self._drop()
                raise

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.invalidate()
        self._conn = None
        self._held.clear()

    @contextmanager
    def try_lock(self, name: str, wrap_errors: Callable[[], AbstractContextManager]) -> Iterator[bool]:
        """The advisory lock on `name` if it is free now: yields True (held until the block ends, or until this
        process dies) or False (held by another session, or already by this process)."""
        key = _pg_key(name)

        def take(conn: sa.Connection) -> bool:
            if key in self._held:
                return False
            if conn.execute(sa.text("SELECT pg_try_advisory_lock(:k)"), {"k": key}).scalar():
                self._held.add(key)
                return True
            return False

        held = bool(self.run(take, wrap_errors))
        try:
            yield held
        finally:
            if held:
                with self._mutex:
                    if key in self._held:  # else the connection broke meanwhile: the server released it
                        self._held.discard(key)
                        try:
                            self._connection().execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": key})
                        except SQLAlchemyError:
                            self._drop()

    def close(self) -> None:
        with self._mutex:
            if self._conn is not None:
                self._conn.close()  # the server releases the session's locks
            self._conn = None
            self._held.clear()


# One row per scheduled job: when a worker last started it. Coordination state beside the system of record
# (not part of the memory schema: no migration, nothing exported).
JOB_RUNS_DDL = ("CREATE TABLE IF NOT EXISTS memoryx_job_runs (name text PRIMARY KEY, holder text NOT NULL, "
                "started_at timestamptz NOT NULL)")
_CLAIM = sa.text(
    "INSERT INTO memoryx_job_runs (name, holder, started_at) VALUES (:name, :holder, now()) "
    "ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, started_at = now() "
    "WHERE memoryx_job_runs.started_at <= now() - make_interval(secs => :gap) RETURNING holder")


@contextmanager
def job_claim(session: TryLockSession, name: str, min_gap_s: float,
              wrap_errors: Callable[[], AbstractContextManager]) -> Iterator[bool]:
    """Whether this process runs the scheduled job `name` now (PostgreSQL): True for exactly one of the workers
    whose tick falls in the same interval. The job's advisory lock is held while it runs (a run longer than its
    interval is never started twice), and the claim row says when it last started (a worker whose tick comes
    later in the interval skips it). A worker killed mid-run releases the lock with its connection; the next
    tick after `min_gap_s` runs the job again."""
    with session.try_lock(f"job:{name}", wrap_errors) as held:
        if not held:
            yield False
            return

        def claim(conn: sa.Connection) -> bool:
            table_key = _pg_key("memoryx job runs table")  # concurrent CREATE TABLE IF NOT EXISTS can collide
            conn.execute(sa.text("SELECT pg_advisory_lock(:k)"), {"k": table_key})
            try:
                conn.execute(sa.text(JOB_RUNS_DDL))
                return conn.execute(_CLAIM, {"name": name, "holder": f"pid {os.getpid()}",
                                             "gap": float(min_gap_s)}).first() is not None
            finally:
                conn.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": table_key})

        yield bool(session.run(claim, wrap_errors))


HOLDER_WIDTH = 64  # bytes of a lock file's holder record ("pid N thread M", space-padded)


@contextmanager
def file_lock(lock_dir: Path, scope: Scope, timeout: float) -> Iterator[None]:
    """flock on a file per scope in `lock_dir`; the file names the holder for the next waiter's message."""
    import fcntl  # POSIX only; imported here so the rest of the store works anywhere

    path = lock_dir / f"{hashlib.sha1(scope.key().encode('utf-8')).hexdigest()}.lock"
    try:
        lock_dir.mkdir(parents=True, exist_ok=True)
        # A new open file description per call: flock then excludes other threads of this process too.
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
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
            # who holds it, for the timeout message of the next waiter: one fixed-width record written in
            # place (truncating first cost ~0.1 ms per lock on ext4: a journal transaction)
            os.pwrite(fd, f"pid {os.getpid()} thread {threading.get_ident()}".ljust(HOLDER_WIDTH).encode(), 0)
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
