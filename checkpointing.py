"""Checkpoint savers of the add graph (MEMORYX_CHECKPOINTER).

- "auto" (default): PostgresSaver when MEMORYX_SQL_URL is PostgreSQL, else SqliteSaver at
  DATA_DIR/checkpoints.db.
- "sqlite" / "postgres" / "memory" (in-process InMemorySaver) / "none" (no checkpoints: no resume, no review).

Every step of an add run is checkpointed under thread id = the run's trace id, so a run that crashed after
any step resumes to the same end state (`graph.invoke(None, {"configurable": {"thread_id": trace_id}})`).
The returned saver is ready to use (tables created); `close_checkpointer` releases its connections.
`make_async_checkpointer` builds the asyncio twin for AsyncMemory: same database or file, so a run paused by
one front end can be resumed by the other.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from memoryx.errors import StoreUnavailableError
from memoryx.settings import Settings, get_settings


def _serde() -> Any:
    """The savers' serializer, with the add state's own types allowed (LangGraph warns about, and will
    later refuse, types it was not told about when reading a checkpoint)."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    return JsonPlusSerializer(allowed_msgpack_modules=[("memoryx.scope", "Scope")])


def _uses_postgres(kind: str, url: str) -> bool:
    if kind == "postgres" and not url.startswith(("postgresql", "postgres")):
        raise StoreUnavailableError("MEMORYX_CHECKPOINTER=postgres needs MEMORYX_SQL_URL to be a PostgreSQL URL.")
    return kind == "postgres" or (kind == "auto" and url.startswith(("postgresql", "postgres")))


_PG_OPEN_ERROR = ("Cannot open the PostgreSQL checkpointer at MEMORYX_SQL_URL: {exc}. "
                  "Set MEMORYX_CHECKPOINTER=sqlite or memory to keep checkpoints elsewhere.")
_PG_POOL_KWARGS = {"autocommit": True, "prepare_threshold": 0}


def _pg_conninfo(url: str) -> str:
    for prefix in ("postgresql+psycopg://", "postgresql+psycopg2://", "postgres+psycopg://"):
        if url.startswith(prefix):
            return "postgresql://" + url[len(prefix):]
    return url


def sqlite_checkpointer(path: Path) -> Any:
    from langgraph.checkpoint.sqlite import SqliteSaver

    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30.0)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=30000")
    saver = SqliteSaver(conn, serde=_serde())
    saver.setup()
    return saver


def postgres_checkpointer(url: str) -> Any:
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    try:
        pool = ConnectionPool(conninfo=_pg_conninfo(url), min_size=1, max_size=8, open=True, timeout=30,
                              kwargs={**_PG_POOL_KWARGS, "row_factory": dict_row})
        saver = PostgresSaver(pool, serde=_serde())
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
        from langgraph.checkpoint.memory import InMemorySaver

        return InMemorySaver(serde=_serde())
    if _uses_postgres(kind, url):
        return postgres_checkpointer(url)
    return sqlite_checkpointer(Path(settings.data_dir) / "checkpoints.db")


def close_checkpointer(saver: Any) -> None:
    """Release the saver's connections: its SQLite connection or its PostgreSQL pool (both are `conn`)."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.sqlite import SqliteSaver

    if isinstance(saver, (SqliteSaver, PostgresSaver)):
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
        from langgraph.checkpoint.memory import InMemorySaver

        return InMemorySaver(serde=_serde()), None
    if _uses_postgres(kind, url):
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg.rows import dict_row
        from psycopg_pool import AsyncConnectionPool

        try:
            pool = AsyncConnectionPool(conninfo=_pg_conninfo(url), min_size=1, max_size=8, open=False, timeout=30,
                                       kwargs={**_PG_POOL_KWARGS, "row_factory": dict_row})
            await pool.open()
            saver = AsyncPostgresSaver(pool, serde=_serde())
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
    saver = AsyncSqliteSaver(conn, serde=_serde())
    await saver.setup()
    return saver, conn.close
