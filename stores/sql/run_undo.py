"""The SQL side of undoing an add run whose caller was told it failed (memoryx.lifecycle.compensate).

Unlike a rollback (a traced run of its own that keeps what it undid as history), this leaves the system of
record as if the run never happened, in one transaction:
- memories the run created (their first history row of the run is an ADD or SUMMARY) are deleted for good,
  with their history, memory links and feedback;
- memories it updated or deleted get the text they had before (the old text of the run's first history row
  on them) and are live again; the run's history rows go;
- relations it added are deleted, relations it invalidated are valid again (unless a valid twin exists);
- its raw input goes;
- a memory another run (or the API) changed after the run wrote it is left as that later write made it, with
  its history: that write was acknowledged to its caller; the memory is reported as "kept";
- profile values lose the memory ids of the memories it created: a value left with none that first
  appeared during the run goes, and a value the run ended (a single-valued field it set) is current again.
Every change queues its projection (outbox), so vectors and graph follow even when a store is down now.
What is not restored: a profile value's memory ids that a DELETE of the run removed. An UPDATE's other fields
(metadata, category, importance, type, confidence) come back from its history row's `old_fields`; an UPDATE
written before that column existed restores its text only.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import String, cast, select

from memoryx.core.text import memory_hash
from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.schema import (
    FeedbackRow,
    HistoryRow,
    JudgmentRow,
    MemoryLinkRow,
    MemoryRow,
    OutboxRow,
    ProfileValueRow,
    RawInputRow,
    RelationRow,
)
from memoryx.stores.sql.values import as_utc, id_chunks, utc_now

_CREATING = ("ADD", "SUMMARY")
# the fields besides the text an UPDATE's history row keeps as they were (stores/sql/memories.update_memory)
_RESTORABLE = ("meta", "category", "importance", "memory_type", "importance_factors", "confidence")


class RunUndo(SQLStoreBase):
    """Undo of a failed add run's rows (see the module docstring)."""

    def undo_run_rows(self, trace_id: str) -> dict:
        """Returns {"memories_removed", "memories_restored", "relations_removed", "relations_invalidated",
        "entity_ends", "profile_values", "kept"}: the ids the projections must follow (relations_invalidated are
        made valid again by the caller, `revalidate_relations`, which checks for a valid twin); "kept" lists
        the memories changed since by another write, left as they are: [{"memory_id", "changed_by", "event"}]."""
        out: dict = {"memories_removed": [], "memories_restored": [], "relations_removed": [],
                     "relations_invalidated": [], "entity_ends": [], "profile_values": 0, "kept": []}
        with self._tx(write=True) as s:
            history = list(s.scalars(select(HistoryRow).where(HistoryRow.trace_id == trace_id).order_by(HistoryRow.seq)))
            later = _changed_since(s, trace_id, history)
            out["kept"] = [{"memory_id": mid, "changed_by": by, "event": event}
                           for mid, (by, event) in later.items()]
            first: dict[str, HistoryRow] = {}
            for h in history:
                if h.memory_id not in later:  # another run's acknowledged change stands: the memory is not undone
                    first.setdefault(h.memory_id, h)
            since = _run_start(s, trace_id, history)
            created = [mid for mid, h in first.items() if h.event in _CREATING]
            # memories carrying the run's id without an ADD row of it (written by a path that keeps no history)
            created += [mid for mid in s.scalars(select(MemoryRow.id).where(MemoryRow.trace_id == trace_id))
                        if mid not in first and mid not in later]
            restored: list[str] = []
            for mid, h in first.items():
                if h.event in _CREATING:
                    continue
                row = s.get(MemoryRow, mid)
                if row is None:
                    continue
                for key, value in (h.old_fields or {}).items():
                    if key in _RESTORABLE:
                        setattr(row, key, value)
                if h.old_memory is not None:
                    row.text, row.hash = h.old_memory, memory_hash(h.old_memory)
                    row.deleted_at, row.invalid_at = None, None
                    if h.event == "UPDATE" and h.valid_at is not None:
                        row.valid_at = h.valid_at  # the version it closed held from then
                row.updated_at = utc_now()
                restored.append(mid)
            # the run's history rows go, except on the memories kept: their history goes on from them
            mine = sa.delete(HistoryRow).where(HistoryRow.trace_id == trace_id)
            s.execute(mine.where(HistoryRow.memory_id.not_in(list(later))) if later else mine)
            for chunk in id_chunks(created):
                s.execute(sa.delete(HistoryRow).where(HistoryRow.memory_id.in_(chunk)))
                s.execute(sa.delete(MemoryLinkRow).where(sa.or_(MemoryLinkRow.source_id.in_(chunk),
                                                                MemoryLinkRow.target_id.in_(chunk))))
                s.execute(sa.delete(FeedbackRow).where(FeedbackRow.memory_id.in_(chunk)))
                s.execute(sa.delete(OutboxRow).where(OutboxRow.kind == "memory", OutboxRow.target_id.in_(chunk)))
                s.execute(sa.delete(MemoryRow).where(MemoryRow.id.in_(chunk)))
            added = list(s.execute(select(RelationRow.id, RelationRow.source_id, RelationRow.target_id)
                                   .where(RelationRow.trace_id == trace_id)))
            for chunk in id_chunks([r.id for r in added]):
                s.execute(sa.delete(RelationRow).where(RelationRow.id.in_(chunk)))
            out["relations_invalidated"] = list(s.scalars(select(RelationRow.id).where(
                RelationRow.invalidated_by == trace_id)))
            s.execute(sa.delete(RawInputRow).where(RawInputRow.trace_id == trace_id))
            out["profile_values"] = _undo_profiles(s, set(created), since)
            self._record_intent(s, "memory", created + restored)  # removed: the projection deletes the point
            self._record_intent(s, "relation", [r.id for r in added])  # gone from SQL: the edge is deleted
        out.update(memories_removed=created, memories_restored=restored, relations_removed=[r.id for r in added],
                   entity_ends=sorted({e for r in added for e in (r.source_id, r.target_id)}))
        return out


def _changed_since(s, trace_id: str, history: list[HistoryRow]) -> dict[str, tuple[str | None, str]]:
    """{memory id: (trace id, event)} of the memories the run wrote that a later write of another run (or of
    the API) changed since: a history row after the run's last one on the memory. History rows are the
    memory's versions (every write of a text, a deletion, a rollback keeps one), so a later row means the
    caller of that write was answered with a memory this undo must leave as it is."""
    last: dict[str, int] = {}
    for h in history:
        last[h.memory_id] = max(h.seq, last.get(h.memory_id, h.seq))
    out: dict[str, tuple[str | None, str]] = {}
    for chunk in id_chunks(sorted(last)):
        q = (select(HistoryRow.memory_id, HistoryRow.seq, HistoryRow.trace_id, HistoryRow.event)
             .where(HistoryRow.memory_id.in_(chunk), HistoryRow.seq > min(last[m] for m in chunk))
             .order_by(HistoryRow.seq))
        for mid, seq, by, event in s.execute(q):
            if seq > last[mid] and by != trace_id:
                out.setdefault(mid, (by, event))
    return out


def _run_start(s, trace_id: str, history: list[HistoryRow]) -> datetime | None:
    """When the run started writing: its judgment record's creation, else its first history row."""
    started = s.scalars(select(JudgmentRow.created_at).where(JudgmentRow.trace_id == trace_id)).first()
    times = [t for t in [started, *(h.created_at for h in history[:1])] if t is not None]
    return min(as_utc(t, "since") for t in times) if times else None


def _undo_profiles(s, created: set[str], since: datetime | None) -> int:
    """Profile values read from the run's memories: their ids go; a value left with none that first appeared
    during the run goes; a value of the same subject the run ended (while still backed) is current again."""
    if not created:
        return 0
    text = cast(ProfileValueRow.memory_ids, String)
    changed = 0
    subjects: set[str] = set()
    for chunk in id_chunks(sorted(created)):
        for row in s.scalars(select(ProfileValueRow).where(sa.or_(*[text.like(f"%{i}%") for i in chunk]))):
            ids = list(row.memory_ids or [])
            left = [i for i in ids if i not in created]
            if len(left) == len(ids):
                continue
            subjects.add(row.subject)
            changed += 1
            if not left and (since is None or as_utc(row.first_seen_at, "first_seen_at") >= since):
                s.delete(row)
            else:
                row.memory_ids = left
    if since is not None and subjects:
        for row in s.scalars(select(ProfileValueRow).where(ProfileValueRow.subject.in_(sorted(subjects)),
                                                           ProfileValueRow.ended_at.is_not(None))):
            if row.memory_ids and as_utc(row.ended_at, "ended_at") >= since:
                row.ended_at = None
                changed += 1
    s.flush()
    return changed
