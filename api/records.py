"""Reads of the system of record alone: one memory, a scope's memories, a memory's history and the judgment
log. `RecordReader` serves them without starting anything else (no vector shard, no graph server, no
encoder, no model, no LangGraph), so the CLI's read commands answer in well under a second; `MemoryCore`
lists memories through the same `list_records`, so both read the same thing."""

from __future__ import annotations

from typing import Any

from memoryx.api.inputs import check_id, check_limit, optional_scope, scope_of_ids
from memoryx.api.judgment_reads import JudgmentReads
from memoryx.core.filters import matches, parse_filters, with_alive
from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError
from memoryx.runtime.private_files import prepare_data_dir
from memoryx.settings import Settings, get_settings
from memoryx.stores.sql import SQLStore

_PAGE = 500


def list_records(sql, scope: Scope, limit, filters, include_archived: bool = False) -> dict:
    """`{"results": [...]}`: the scope's memories, newest first; expired ones never, merged and archived
    ones only with include_archived (as search does)."""
    limit = check_limit(limit) or 100
    if filters is not None and not isinstance(filters, dict):
        raise InvalidInputError(f"filters must be a dict, got {type(filters).__name__}.")
    node = parse_filters(with_alive(filters))
    out: list[dict] = []
    offset = 0
    while len(out) < limit:
        page = sql.list_memories(scope, limit=_PAGE, offset=offset)
        out.extend(m for m in page if matches(node, m)
                   and (include_archived or m.get("status") not in ("merged", "archived")))
        if len(page) < _PAGE:
            break
        offset += _PAGE
    return {"results": out[:limit]}


class _SQLOnly:
    def __init__(self, sql: SQLStore):
        self.sql = sql


class RecordReader(JudgmentReads):
    """`Memory`'s read methods (same names, arguments and results) over the SQL store only."""

    def __init__(self, settings: Settings | None = None):
        self.settings = settings or get_settings()
        if self.settings.sql_url is None:  # SQLite in the data directory: created private, as every store's
            prepare_data_dir(self.settings.data_dir, private=self.settings.private_files)
        self.services = _SQLOnly(SQLStore(self.settings.resolved_sql_url(), pool_size=self.settings.pg_pool_size,
                                          lock_connections=self.settings.pg_lock_connections))

    def get(self, memory_id: str, *, user_id=None, agent_id=None, run_id=None, group_id=None) -> dict:
        return self.services.sql.get_memory(check_id(memory_id), scope=optional_scope(user_id, agent_id, run_id, group_id))

    def get_all(self, *, user_id=None, agent_id=None, run_id=None, limit: int = 100, filters: dict | None = None,
                group_id=None, include_archived: bool = False) -> dict:
        return list_records(self.services.sql, scope_of_ids(user_id, agent_id, run_id, group_id), limit, filters,
                            include_archived)

    def history(self, memory_id: str) -> list[dict]:
        memory_id = check_id(memory_id)
        self.services.sql.get_memory(memory_id, include_deleted=True)
        return self.services.sql.history(memory_id)

    def judgments(self, trace_id: str) -> dict:
        return self.judgment(trace_id)

    def list_judgments(self, *, user_id=None, agent_id=None, run_id=None, limit: int = 50, offset: int = 0) -> list[dict]:
        return JudgmentReads.list_judgments(self, user_id, agent_id, run_id, limit, offset)

    def judgment_stats(self, *, user_id=None, agent_id=None, run_id=None) -> dict:
        return JudgmentReads.judgment_stats(self, user_id, agent_id, run_id)

    def close(self) -> None:
        close: Any = getattr(self.services.sql, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> "RecordReader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
