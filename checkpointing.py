"""Checkpoint savers of the add graph (MEMORYX_CHECKPOINTER).

- "auto" (default): PostgresSaver when MEMORYX_SQL_URL is PostgreSQL, else SqliteSaver at
  DATA_DIR/checkpoints.db.
- "sqlite" / "postgres" / "memory" (in-process InMemorySaver) / "none" (no checkpoints: no resume, no review).

Every step of an add run is checkpointed under thread id = the run's trace id, so a run that crashed after
any step resumes to the same end state (`graph.invoke(None, {"configurable": {"thread_id": trace_id}})`).
The returned saver is ready to use (tables created); `close_checkpointer` releases its connections.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from memoryx.errors import StoreUnavailableError
from memoryx.settings import Settings, get_settings


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
    saver = SqliteSaver(conn)
    saver.setup()
    return saver


def postgres_checkpointer(url: str) -> Any:
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    try:
        pool = ConnectionPool(conninfo=_pg_conninfo(url), min_size=1, max_size=8, open=True, timeout=30,
                              kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row})
        saver = PostgresSaver(pool)
        saver.setup()
    except Exception as exc:  # noqa: BLE001
        raise StoreUnavailableError(f"Cannot open the PostgreSQL checkpointer at MEMORYX_SQL_URL: {exc}. "
                                    "Set MEMORYX_CHECKPOINTER=sqlite or memory to keep checkpoints elsewhere.") from exc
    saver._memoryx_pool = pool  # noqa: SLF001 - closed by close_checkpointer
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

        return InMemorySaver()
    if kind == "postgres" or (kind == "auto" and url.startswith(("postgresql", "postgres"))):
        if not url.startswith(("postgresql", "postgres")):
            raise StoreUnavailableError("MEMORYX_CHECKPOINTER=postgres needs MEMORYX_SQL_URL to be a PostgreSQL URL.")
        return postgres_checkpointer(url)
    return sqlite_checkpointer(Path(settings.data_dir) / "checkpoints.db")


def close_checkpointer(saver: Any) -> None:
    """Release the saver's connections (SQLite connection or PostgreSQL pool)."""
    if saver is None:
        return
    pool = getattr(saver, "_memoryx_pool", None)
    if pool is not None:
        pool.close()
        return
    conn = getattr(saver, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        conn.close()
