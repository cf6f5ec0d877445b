"""Checkpoint savers of the add graph (MEMORYX_CHECKPOINTER).

- "auto" (default): PostgresSaver when MEMORYX_SQL_URL is PostgreSQL, else SqliteSaver at
  DATA_DIR/checkpoints.db.
- "sqlite" / "postgres" / "memory" (in-process InMemorySaver) / "none" (no checkpoints: no resume, no review).

Every step of an add run is checkpointed under thread id = the run's trace id, so a run that crashed after
any step resumes to the same end state (`graph.invoke(None, {"configurable": {"thread_id": trace_id}})`).
The returned saver is ready to use (tables created); `close_checkpointer` releases its connections.

The SQLite and PostgreSQL savers keep a step's own channel writes out of the database (`StepWritesOnly`):
every graph here runs one task per step and checkpoints each step before the next starts (durability
"sync"), so the checkpoint after a step already holds what it wrote. Interrupts, resume values and errors
are still written at once. A crash between a step's end and its checkpoint re-runs that step, as a crash
inside it would (every node is idempotent: tests/test_crash_recovery.py).
`make_async_checkpointer` builds the asyncio twin for AsyncMemory: same database or file, so a run paused by
one front end can be resumed by the other.
"""

from __future__ import annotations

import contextlib
import sqlite3
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from memoryx.errors import StoreUnavailableError
from memoryx.settings import Settings, get_settings
from memoryx.stores.sql.purge import truncate_wal


def _serde() -> Any:
    """The savers' serializer, with the add state's own types allowed (LangGraph warns about, and will
    later refuse, types it was not told about when reading a checkpoint)."""

    return JsonPlusSerializer(allowed_msgpack_modules=[("memoryx.core.scope", "Scope")])


class StepWritesOnly:
    """Mixin for a checkpoint saver: `put_writes` keeps only LangGraph's own channels ("__interrupt__",
    "__resume__", "__error__", "__no_writes__", ...); a task's writes to the state reach the database with the
    checkpoint that follows its step. Saves one commit per step (8 of an add's 19 checkpoint writes).

    Only for graphs that run one task per step (the add, consolidate and chat graphs: tests assert it): with
    parallel tasks, a finished task's writes are what spares it from re-running when a sibling fails."""

    @staticmethod
    def _own_channels(writes):
        return [(channel, value) for channel, value in writes if channel.startswith("__")]

    def put_writes(self, config, writes, task_id, task_path=""):
        kept = self._own_channels(writes)
        if kept:
            super().put_writes(config, kept, task_id, task_path)

    async def aput_writes(self, config, writes, task_id, task_path=""):
        kept = self._own_channels(writes)
        if kept:
            await super().aput_writes(config, kept, task_id, task_path)


_LEAN: dict[type, type] = {}


def _lean(saver_class: type) -> type:
    """`saver_class` with StepWritesOnly (one subclass per saver class, so isinstance checks hold)."""
    cls = _LEAN.get(saver_class)
    if cls is None:
        cls = _LEAN[saver_class] = type(f"Step{saver_class.__name__}", (StepWritesOnly, saver_class), {})
    return cls


def _uses_postgres(kind: str, url: str) -> bool:
    if kind == "postgres" and not url.startswith(("postgresql", "postgres")):
        raise StoreUnavailableError("MEMORYX_CHECKPOINTER=postgres needs MEMORYX_SQL_URL to be a PostgreSQL URL.")
    return kind == "postgres" or (kind == "auto" and url.startswith(("postgresql", "postgres")))


_PG_OPEN_ERROR = ("Cannot open the PostgreSQL checkpointer at MEMORYX_SQL_URL: {exc}. "
                  "Set MEMORYX_CHECKPOINTER=sqlite or memory to keep checkpoints elsewhere.")
_PG_POOL_KWARGS = {"autocommit": True, "prepare_threshold": 0, "application_name": "memoryx"}


def _pg_conninfo(url: str) -> str:
    for prefix in ("postgresql+psycopg://", "postgresql+psycopg2://", "postgres+psycopg://"):
        if url.startswith(prefix):
            return "postgresql://" + url[len(prefix):]
    return url


SETUP_LOCK_TIMEOUT_S = 120.0


@contextlib.contextmanager
def _one_setup_at_a_time(url: str):
    """Workers starting together would run the saver's migrations at once (and fail on its version table's
    key): hold a PostgreSQL advisory lock around the setup. It lives on its own connection, released when
    the block ends or the process dies. Taken by polling, never by a blocking pg_advisory_lock: the setup's
    CREATE INDEX CONCURRENTLY waits for every running statement, a blocked lock request among them, which
    waits for the setup (a deadlock PostgreSQL does not detect)."""
    import psycopg

    with psycopg.connect(_pg_conninfo(url), autocommit=True) as conn:
        deadline = time.monotonic() + SETUP_LOCK_TIMEOUT_S
        while not conn.execute("SELECT pg_try_advisory_lock(hashtext('memoryx checkpointer setup'))").fetchone()[0]:
            if time.monotonic() > deadline:
                raise StoreUnavailableError("Another process has been setting up the checkpoint tables for "
                                            f"{SETUP_LOCK_TIMEOUT_S:g} s; retry, or check the database's locks.")
            time.sleep(0.2)
        yield


def sqlite_checkpointer(path: Path) -> Any:
    from langgraph.checkpoint.sqlite import SqliteSaver

    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30.0)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=30000")
    conn.execute("PRAGMA secure_delete=ON")  # a deleted thread leaves zeroed pages, not its text
    saver = _lean(SqliteSaver)(conn, serde=_serde())
    saver.setup()
    return saver


def postgres_checkpointer(url: str, pool_size: int = 4) -> Any:
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    try:
        pool = ConnectionPool(conninfo=_pg_conninfo(url), min_size=1, max_size=pool_size, open=True, timeout=30,
                              kwargs={**_PG_POOL_KWARGS, "row_factory": dict_row})
        saver = _lean(PostgresSaver)(pool, serde=_serde())
        with _one_setup_at_a_time(url):
            saver.setup()
    except Exception as exc:  # noqa: BLE001
        raise StoreUnavailableError(_PG_OPEN_ERROR.format(exc=exc)) from exc
    return saver


def make_checkpointer(settings: Settings | None = None, kind: str | None = None) -> Any:
    """The configured checkpoint saver (None for "none")."""
    settings = settings or get_settings()
    kind = kind or settings.checkpointer
    url = settings.resolved_sql_url()
    if kind == "none":
        return None
    if kind == "memory":
        return InMemorySaver(serde=_serde())
    if _uses_postgres(kind, url):
        return postgres_checkpointer(url, settings.pg_pool_size)
    return sqlite_checkpointer(Path(settings.data_dir) / "checkpoints.db")


def _is_postgres_saver(saver: Any) -> bool:
    """isinstance(saver, PostgresSaver) without importing psycopg for a SQLite or in-memory saver: a
    PostgresSaver exists only once its module is imported (~0.1 s of a CLI command's start otherwise)."""
    if "langgraph.checkpoint.postgres" not in sys.modules:
        return False
    from langgraph.checkpoint.postgres import PostgresSaver

    return isinstance(saver, PostgresSaver)


def close_checkpointer(saver: Any) -> None:
    """Release the saver's connections: its SQLite connection or its PostgreSQL pool (both are `conn`)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    if isinstance(saver, SqliteSaver) or _is_postgres_saver(saver):
        saver.conn.close()


async def make_async_checkpointer(settings: Settings | None = None) -> tuple[Any, Any]:
    """(saver, async close function or None): the asyncio twin of `make_checkpointer` (same kinds, same
    database or file)."""
    settings = settings or get_settings()
    kind = settings.checkpointer
    url = settings.resolved_sql_url()
    if kind == "none":
        return None, None
    if kind == "memory":
        return InMemorySaver(serde=_serde()), None
    if _uses_postgres(kind, url):
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import AsyncConnectionPool

        try:
            pool = AsyncConnectionPool(conninfo=_pg_conninfo(url), min_size=1, max_size=settings.pg_pool_size,
                                       open=False, timeout=30,
                                       kwargs={**_PG_POOL_KWARGS, "row_factory": dict_row})
            await pool.open()
            saver = _lean(AsyncPostgresSaver)(pool, serde=_serde())
            with _one_setup_at_a_time(url):  # blocks this loop only while another process sets up
                await saver.setup()
        except Exception as exc:  # noqa: BLE001
            raise StoreUnavailableError(_PG_OPEN_ERROR.format(exc=exc)) from exc
        return saver, pool.close
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = Path(settings.data_dir) / "checkpoints.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = await aiosqlite.connect(str(path), timeout=30.0)
    await conn.execute("PRAGMA journal_mode=WAL")
    await conn.execute("PRAGMA busy_timeout=30000")
    await conn.execute("PRAGMA secure_delete=ON")
    saver = _lean(AsyncSqliteSaver)(conn, serde=_serde())
    await saver.setup()
    return saver, conn.close


# --- deleting threads (purge, retention, finished runs) ------------------------------------------------------

def delete_threads(saver: Any, thread_ids: Any) -> int:
    """Delete every checkpoint and pending write of these threads (sync API: call it off the event loop of an
    async saver). Returns how many of them had checkpoints."""
    deleted = 0
    for thread_id in dict.fromkeys(t for t in thread_ids if t):
        config = {"configurable": {"thread_id": thread_id}}
        if saver.get_tuple(config) is not None:
            deleted += 1
        saver.delete_thread(thread_id)
    return deleted


def thread_times(saver: Any) -> dict[str, float]:
    """{thread id: epoch seconds of its newest checkpoint} for every thread of the saver. Checkpoint ids are
    uuid6 (time-ordered), so the SQL savers answer from their ids without unpacking a checkpoint."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    query = "SELECT thread_id, MAX(checkpoint_id) AS newest FROM checkpoints GROUP BY thread_id"
    if isinstance(saver, SqliteSaver):
        with saver.cursor(transaction=False) as cur:
            rows = [(r[0], r[1]) for r in cur.execute(query).fetchall()]
    elif _is_postgres_saver(saver):
        with saver._cursor() as cur:
            cur.execute(query)
            rows = [(r["thread_id"], r["newest"]) for r in cur.fetchall()]
    elif isinstance(saver, InMemorySaver):
        rows = [(tid, max(cp for ns in nss.values() for cp in ns) if any(nss.values()) else None)
                for tid, nss in saver.storage.items()]
    else:
        raise TypeError(f"thread_times does not know the saver {type(saver).__name__}")
    return {str(tid): _uuid6_seconds(newest) for tid, newest in rows if newest}


def _uuid6_seconds(checkpoint_id: str) -> float:
    """The time of a uuid6 (RFC 9562: 60-bit count of 100 ns since 1582-10-15), in Unix seconds."""

    value = uuid.UUID(str(checkpoint_id)).int
    ticks = (((value >> 80) & 0xFFFFFFFFFFFF) << 12) | ((value >> 64) & 0x0FFF)  # 48 high bits, then 12 low
    return (ticks - 0x01B21DD213814000) / 1e7


def vacuum_checkpoints(saver: Any) -> bool:
    """SQLite saver: rewrite checkpoints.db without free pages and empty its WAL (what a purge needs so that
    no deleted checkpoint stays in the file). Other savers: nothing to do (False)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    if not isinstance(saver, SqliteSaver):
        return False
    with saver.lock:
        saver.conn.commit()  # VACUUM refuses to run inside the connection's open transaction
        saver.conn.execute("VACUUM")
        truncate_wal(saver.conn, "checkpoints.db")  # retried while a reader holds an older snapshot
    return True


def recent_threads(saver: Any, limit: int) -> list[str]:
    """Thread ids (= add-run trace ids) with the newest checkpoints first, at most `limit`. Checkpoint ids
    are time-ordered (uuid6), so the newest threads are the runs a crash can have cut short."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    if limit <= 0 or saver is None:
        return []
    query = ("SELECT thread_id, MAX(checkpoint_id) AS newest FROM checkpoints WHERE checkpoint_ns = '' "
             "GROUP BY thread_id ORDER BY newest DESC LIMIT {p}")
    if isinstance(saver, SqliteSaver):
        with saver.lock:
            return [row[0] for row in saver.conn.execute(query.format(p="?"), (limit,)).fetchall()]
    if _is_postgres_saver(saver):
        with saver._cursor() as cur:
            cur.execute(query.format(p="%s"), (limit,))
            return [row["thread_id"] for row in cur.fetchall()]
    if isinstance(saver, InMemorySaver):
        return list(saver.storage)[-limit:][::-1]  # insertion order: newest threads last
    return []
