"""Hard deletion in the SQL store: every row of a scope (purge), rows past their retention time (prune), and
the SQLite housekeeping that makes deleted text leave the files (VACUUM, WAL truncation).

Scope rule (the one every MemoryX store uses): a row belongs to the purged scope when it equals the scope on
every field the scope sets. `Scope(user_id="alice")` therefore covers (alice), (alice, bot), (alice, bot,
run-1) alike; `Scope(agent_id="bot")` covers the agent's rows of every user. Rows without scope columns
follow their owner: history rows their memory, outbox rows their memory / entity / relation, relations of
another scope that touch one of the purged entities go with the entity.
"""

from __future__ import annotations

import json
import re
import time
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import select

from memoryx.core.scope import Scope
from memoryx.core.text import memory_hash
from memoryx.errors import ConcurrencyError
from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.schema import (
    EntityRow,
    FeedbackRow,
    FindingRow,
    HistoryRow,
    JudgmentRow,
    MemoryLinkRow,
    MemoryRow,
    OutboxRow,
    ProfileValueRow,
    RawInputRow,
    RelationRow,
)
from memoryx.stores.sql.values import as_utc, id_chunks, require_scope, scope_where

# A paused run's judgment is the only record of what waits for a human: retention never removes it.
KEEP_STATUSES = ("awaiting_review",)
REDACTED = "[redacted: a purged participant's words]"


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

    def participant_groups(self, scope: Scope) -> list[str]:
        """The groups where the participant of a user scope (user_id, and agent_id / run_id when set) left rows:
        memories, entities, relations, links, feedback, raw inputs or judgments under their user id."""
        scope = require_scope(scope)
        if not scope.user_id or scope.group_id:
            return []
        wanted = {k: v for k, v in scope.as_dict().items() if k != "group_id"}
        found: set[str] = set()
        with self._tx() as s:
            for model in (MemoryRow, EntityRow, RelationRow, MemoryLinkRow, FeedbackRow, RawInputRow, JudgmentRow):
                q = select(model.group_id).where(model.group_id.is_not(None),
                                                 *[getattr(model, k) == v for k, v in wanted.items()]).distinct()
                found.update(g for g in s.scalars(q) if g)
        return sorted(found)

    def redact_participant(self, group_id: str, ids: set[str], purged_memory_ids: set[str],
                           purged_texts: set[str] = frozenset()) -> dict:
        """A purged participant's words out of the group's shared records (other participants' rows untouched):
        their messages out of the group's raw inputs (a raw input left empty goes), their memory ids out of the
        group's profile values. Returns {"raw_inputs_redacted", "raw_inputs_removed", "profile_values"}."""
        folded = {i.casefold() for i in ids if i}

        def theirs(m: dict) -> bool:
            return isinstance(m, dict) and bool({str(m.get("name") or "").casefold(),
                                                 str(m.get("user_id") or "").casefold()} & folded)

        out = {"raw_inputs_redacted": 0, "raw_inputs_removed": 0, "profile_values": 0, "judgments_redacted": 0}
        needles = [n.casefold() for n in (set(ids) | set(purged_texts) | set(purged_memory_ids)) if n and len(n) > 1]
        speaker = re.compile(r"^(?:#\d+ )?(?:\[[^\]]*\]\s*)?(?:user|assistant) \((?:%s)\):" %
                             "|".join(re.escape(i) for i in ids if i), re.I) if any(ids) else None

        def mentions(value) -> bool:
            text = (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)).casefold()
            return any(n in text for n in needles)

        def scrub(value):  # list items (facts, operations, candidates) naming them go; other values stay
            if isinstance(value, list):
                return [scrub(v) for v in value if not mentions(v)]
            if isinstance(value, dict):
                return {k: scrub(v) for k, v in value.items()}
            return value

        with self._tx(write=True) as s:
            for row in s.scalars(select(JudgmentRow).where(JudgmentRow.group_id == group_id)):
                fields = ("input_content", "extracted_facts", "existing_memories", "llm_response", "parsed_operations",
                          "reasoning", "executed_operations", "error_message", "verification_notes")
                if not any(mentions(getattr(row, f)) for f in fields if getattr(row, f) is not None):
                    continue
                if row.input_content and speaker is not None:
                    row.input_content = "\n".join(l for l in row.input_content.splitlines() if not speaker.match(l.strip()))
                for f in ("extracted_facts", "existing_memories", "parsed_operations", "executed_operations"):
                    if getattr(row, f) is not None:
                        setattr(row, f, scrub(getattr(row, f)))
                for f in ("input_content", "llm_response", "reasoning", "error_message", "verification_notes"):
                    if getattr(row, f) and mentions(getattr(row, f)):
                        setattr(row, f, REDACTED)
                out["judgments_redacted"] += 1
            for row in s.scalars(select(RawInputRow).where(RawInputRow.group_id == group_id)):
                messages = row.messages if isinstance(row.messages, list) else []
                kept = [m for m in messages if not theirs(m)]
                if len(kept) == len(messages):
                    continue
                if kept:
                    row.messages = kept
                    out["raw_inputs_redacted"] += 1
                else:
                    s.delete(row)
                    out["raw_inputs_removed"] += 1
            for row in s.scalars(select(ProfileValueRow).where(ProfileValueRow.subject == f"group:{group_id}")):
                ids_now = list(row.memory_ids or [])
                left = [i for i in ids_now if i not in purged_memory_ids]
                if len(left) != len(ids_now):
                    row.memory_ids = left
                    out["profile_values"] += 1
        return out

    def redact_memory(self, memory_id: str, *, text: str, metadata: dict) -> None:
        """Rewrite a memory in place without keeping its old text (a purge: no history row keeps the purged
        words; the memory's earlier versions go with them)."""
        with self._tx(write=True) as s:
            row = s.get(MemoryRow, memory_id)
            if row is None:
                return
            row.text, row.meta, row.hash = text, metadata, memory_hash(text)
            s.execute(sa.delete(HistoryRow).where(HistoryRow.memory_id == memory_id))
            self._record_intent(s, "memory", [memory_id])

    def hard_delete_memories(self, memory_ids: list[str]) -> int:
        """Remove memories and their history for good (a purge of a group episode left with no turn)."""
        removed = 0
        with self._tx(write=True) as s:
            for chunk in id_chunks(memory_ids):
                s.execute(sa.delete(HistoryRow).where(HistoryRow.memory_id.in_(chunk)))
                s.execute(sa.delete(OutboxRow).where(OutboxRow.kind == "memory", OutboxRow.target_id.in_(chunk)))
                removed += s.execute(sa.delete(MemoryRow).where(MemoryRow.id.in_(chunk))).rowcount or 0
        return removed

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
            counts["memory_links"] = s.execute(sa.delete(MemoryLinkRow).where(  # agents' links between memories
                *scope_where(MemoryLinkRow, scope))).rowcount or 0
            for chunk in id_chunks(mem_ids):  # before memories: history references them
                counts["history"] += s.execute(sa.delete(HistoryRow).where(HistoryRow.memory_id.in_(chunk))).rowcount or 0
            counts["feedback"] = s.execute(sa.delete(FeedbackRow).where(  # its reasons may quote the memory
                *scope_where(FeedbackRow, scope))).rowcount or 0
            counts["profile_values"] = self._purge_profile_values(s, scope, set(mem_ids))
            counts["memories"] = s.execute(sa.delete(MemoryRow).where(*scope_where(MemoryRow, scope))).rowcount or 0
            counts["judgments"] = s.execute(sa.delete(JudgmentRow).where(*scope_where(JudgmentRow, scope))).rowcount or 0
            counts["raw_inputs"] = s.execute(sa.delete(RawInputRow).where(*scope_where(RawInputRow, scope))).rowcount or 0
            counts["findings"] = s.execute(sa.delete(FindingRow).where(  # their details quote the memories
                *scope_where(FindingRow, scope))).rowcount or 0
        return {"counts": counts, "memory_ids": mem_ids, "entity_ids": ent_ids, "relation_ids": sorted(rel_ids)}

    @staticmethod
    def _purge_profile_values(s, scope: Scope, purged_memory_ids: set[str]) -> int:
        """Profile values go by their owner's scope. The profile of a purged user (or group) goes whole. A
        narrower purge (alice with one agent; a participant in a group) removes the values read only from
        the purged memories and drops the purged ids from the others; a value with no memory id left (one
        ended when its memories were deleted) cannot be shown to lie in the narrower scope, so it stays. A
        user's profile is written from their private memories only: a purge inside a group never touches it."""
        narrower = (scope.agent_id, scope.run_id)
        if scope.user_id and not any(narrower) and not scope.group_id:
            whole = [f"user:{scope.user_id}"]
        elif scope.group_id and not scope.user_id and not any(narrower):
            whole = [f"group:{scope.group_id}"]
        else:
            whole = []
        removed = s.execute(sa.delete(ProfileValueRow).where(ProfileValueRow.subject.in_(whole))).rowcount or 0
        owner = f"group:{scope.group_id}" if scope.group_id else (f"user:{scope.user_id}" if scope.user_id else None)
        if owner is None or owner in whole or not purged_memory_ids:
            return removed
        for row in s.scalars(select(ProfileValueRow).where(ProfileValueRow.subject == owner)):
            ids = list(row.memory_ids or [])
            left = [i for i in ids if i not in purged_memory_ids]
            if ids and not left:
                s.delete(row)
                removed += 1
            elif len(left) != len(ids):
                row.memory_ids = left
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
            truncate_wal(conn, self.safe_url)
        finally:
            raw.close()
        return True


def truncate_wal(conn, name: str, timeout_s: float = 30.0) -> None:
    """PRAGMA wal_checkpoint(TRUNCATE) until it completes. While another connection reads an older snapshot
    the checkpoint answers busy and leaves the deleted pages in the database file and the WAL (SQLite reports
    this in the result row, it raises nothing): retried until no reader holds one, else an error, so that a
    purge never returns with the deleted text still on disk."""
    deadline = time.monotonic() + timeout_s
    while True:
        busy, *_ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone() or (0,)
        if not busy:
            return
        if time.monotonic() > deadline:
            raise ConcurrencyError(f"Could not empty the write-ahead log of {name} within {timeout_s:.0f} s: "
                                   "another connection kept reading. The rows are deleted; run the purge "
                                   "again (or `memoryx purge`) to compact the files.")
        time.sleep(0.02)
