"""Hard deletion in the SQL store: every row of a scope (purge), rows past their retention time (prune), and
the SQLite housekeeping that makes deleted text leave the files (VACUUM, WAL truncation).

Scope rule (the one every MemoryX store uses): a row belongs to the purged scope when it equals the scope on
every field the scope sets. `Scope(user_id="alice")` therefore covers (alice), (alice, bot), (alice, bot,
run-1) alike; `Scope(agent_id="bot")` covers the agent's rows of every user. Rows without scope columns
follow their owner: history rows their memory, outbox rows their memory / entity / relation, relations of
another scope that touch one of the purged entities go with the entity.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import select

from memoryx.scope import Scope
from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.schema import (
    EntityRow,
    FeedbackRow,
    HistoryRow,
    MemoryLinkRow,
    JudgmentRow,
    MemoryRow,
    OutboxRow,
    ProfileValueRow,
    RawInputRow,
    RelationRow,
)
from memoryx.stores.sql.values import as_utc, id_chunks, require_scope, scope_where

# A paused run's judgment is the only record of what waits for a human: retention never removes it.
KEEP_STATUSES = ("awaiting_review",)


class ScopePurge(SQLStoreBase):
    """Purge of a scope, retention pruning and SQLite compaction."""

    def scope_trace_ids(self, scope: Scope) -> set[str]:
        """Trace ids (= checkpoint thread ids) of every add run that left a row in the scope: raw inputs,
        judgments, memories, their history and relations. Read before `purge_scope` deletes the rows."""
        scope = require_scope(scope)
        mem_ids = select(MemoryRow.id).where(*scope_where(MemoryRow, scope))
        queries = [
            select(RawInputRow.trace_id).where(*scope_where(RawInputRow, scope)),
            select(JudgmentRow.trace_id).where(*scope_where(JudgmentRow, scope)),
            select(MemoryRow.trace_id).where(*scope_where(MemoryRow, scope)),
            select(HistoryRow.trace_id).where(HistoryRow.memory_id.in_(mem_ids)),
            select(RelationRow.trace_id).where(*scope_where(RelationRow, scope)),
        ]
        with self._tx() as s:
            return {t for q in queries for t in s.scalars(q) if t}

    def purge_scope(self, scope: Scope) -> dict:
        """Hard-delete every row of the scope in one transaction. Returns
        {"counts": {table: rows}, "memory_ids", "entity_ids", "relation_ids"} (the ids for the projections)."""
        scope = require_scope(scope)
        with self._tx(write=True) as s:
            mem_ids = list(s.scalars(select(MemoryRow.id).where(*scope_where(MemoryRow, scope))))
            ent_ids = list(s.scalars(select(EntityRow.id).where(*scope_where(EntityRow, scope))))
            rel_ids = set(s.scalars(select(RelationRow.id).where(*scope_where(RelationRow, scope))))
            for chunk in id_chunks(ent_ids):
                rel_ids.update(s.scalars(select(RelationRow.id).where(
                    sa.or_(RelationRow.source_id.in_(chunk), RelationRow.target_id.in_(chunk)))))
            counts = {"outbox": 0, "history": 0}
            for kind, ids in (("memory", mem_ids), ("entity", ent_ids), ("relation", rel_ids)):
                for chunk in id_chunks(ids):
                    counts["outbox"] += s.execute(sa.delete(OutboxRow).where(
                        OutboxRow.kind == kind, OutboxRow.target_id.in_(chunk))).rowcount or 0
            counts["relations"] = 0
            for chunk in id_chunks(rel_ids):  # before entities: relations reference them
                counts["relations"] += s.execute(sa.delete(RelationRow).where(RelationRow.id.in_(chunk))).rowcount or 0
            counts["entities"] = s.execute(sa.delete(EntityRow).where(*scope_where(EntityRow, scope))).rowcount or 0
            counts["memory_links"] = s.execute(sa.delete(MemoryLinkRow).where(  # issue 13: agents' links
                *scope_where(MemoryLinkRow, scope))).rowcount or 0
            for chunk in id_chunks(mem_ids):  # before memories: history references them
                counts["history"] += s.execute(sa.delete(HistoryRow).where(HistoryRow.memory_id.in_(chunk))).rowcount or 0
            counts["feedback"] = s.execute(sa.delete(FeedbackRow).where(  # its reasons may quote the memory
                *scope_where(FeedbackRow, scope))).rowcount or 0
            counts["profile_values"] = self._purge_profile_values(s, scope, set(mem_ids))
            counts["memories"] = s.execute(sa.delete(MemoryRow).where(*scope_where(MemoryRow, scope))).rowcount or 0
            counts["judgments"] = s.execute(sa.delete(JudgmentRow).where(*scope_where(JudgmentRow, scope))).rowcount or 0
            counts["raw_inputs"] = s.execute(sa.delete(RawInputRow).where(*scope_where(RawInputRow, scope))).rowcount or 0
        return {"counts": counts, "memory_ids": mem_ids, "entity_ids": ent_ids, "relation_ids": sorted(rel_ids)}

    @staticmethod
    def _purge_profile_values(s, scope: Scope, purged_memory_ids: set[str]) -> int:
        """The profile of a purged user (or group) goes whole; a narrower purge (alice with one agent) removes
        the values read only from the purged memories (a value's text is a memory's words)."""
        narrower = (scope.agent_id, scope.run_id)
        if scope.user_id and not any(narrower) and not scope.group_id:
            whole = [f"user:{scope.user_id}"]
        elif scope.group_id and not scope.user_id and not any(narrower):
            whole = [f"group:{scope.group_id}"]
        else:
            whole = []
        removed = s.execute(sa.delete(ProfileValueRow).where(ProfileValueRow.subject.in_(whole))).rowcount or 0
        partial = [subj for subj in (f"user:{scope.user_id}" if scope.user_id else None,
                                     f"group:{scope.group_id}" if scope.group_id else None) if subj and subj not in whole]
        if partial and purged_memory_ids:
            for row in s.scalars(select(ProfileValueRow).where(ProfileValueRow.subject.in_(partial))):
                if set(row.memory_ids or []) <= purged_memory_ids:
                    s.delete(row)
                    removed += 1
        return removed

    def prune_raw_inputs(self, before: datetime) -> int:
        """Delete raw inputs created before `before`."""
        cutoff = as_utc(before, "before")
        with self._tx(write=True) as s:
            return s.execute(sa.delete(RawInputRow).where(RawInputRow.created_at < cutoff)).rowcount or 0

    def prune_judgments(self, before: datetime) -> int:
        """Delete judgments last updated before `before`, except those still awaiting review."""
        cutoff = as_utc(before, "before")
        with self._tx(write=True) as s:
            return s.execute(sa.delete(JudgmentRow).where(
                JudgmentRow.updated_at < cutoff, JudgmentRow.status.not_in(KEEP_STATUSES))).rowcount or 0

    def trace_statuses(self, trace_ids: list[str]) -> dict[str, str]:
        """{trace id: judgment status} for the trace ids that have a judgment."""
        out: dict[str, str] = {}
        with self._tx() as s:
            for chunk in id_chunks(trace_ids):
                out.update(s.execute(select(JudgmentRow.trace_id, JudgmentRow.status)
                                     .where(JudgmentRow.trace_id.in_(chunk))).all())
        return out

    def compact(self, *, vacuum: bool = True) -> bool:
        """SQLite: rewrite the file without its free pages (VACUUM) and empty the write-ahead log, so that
        deleted rows leave no bytes behind (secure_delete zeroes freed pages; old WAL frames would still hold
        them). PostgreSQL keeps its files outside the data directory: nothing to do (returns False)."""
        if not self.is_sqlite or self._mem_lock is not None:  # in-memory SQLite: no file to clean
            return False
        self._check_open()
        raw = self.engine.raw_connection()  # outside SQLAlchemy's transaction: VACUUM refuses to run in one
        try:
            conn = raw.driver_connection
            if vacuum:
                conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            raw.close()
        return True
