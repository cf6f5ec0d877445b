"""Memories in the SQL store: their rows and history, lookups and listings, access counts, the raw inputs
a run started from, and the hard delete of a whole scope. Every insert, update and delete queues the
memory's projection in its own transaction (`_record_intent`)."""

from __future__ import annotations

from datetime import datetime, timezone

import sqlalchemy as sa
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from memoryx.core.events import EventBus, history_event
from memoryx.core.scope import Scope
from memoryx.core.text import memory_hash
from memoryx.errors import InvalidInputError, NotFoundError, ScopeError
from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.core_rows import insert_row, load_row, read_plain, update_row
from memoryx.stores.sql.schema import (
    EntityRow,
    HistoryRow,
    JudgmentRow,
    MemoryRow,
    OutboxRow,
    RawInputRow,
    RelationRow,
    history_dict,
    memory_dict,
)
from memoryx.stores.sql.values import (
    as_utc,
    check_importance,
    check_metadata,
    clean_text,
    id_chunks,
    iso,
    new_id,
    require_scope,
    scope_dict,
    scope_where,
    utc_now,
)

_MEMORIES = MemoryRow.__table__
_LIVE_BY_ID = sa.select(_MEMORIES).where(_MEMORIES.c.id.in_(sa.bindparam("ids", expanding=True)),
                                         _MEMORIES.c.deleted_at.is_(None))

# statements an add runs every time, built once
_MEMORY_EXISTS = select(MemoryRow.__table__.c.id).where(MemoryRow.__table__.c.id == sa.bindparam("id"))
_RAW_INPUT_EXISTS = select(RawInputRow.__table__.c.id).where(RawInputRow.__table__.c.trace_id == sa.bindparam("trace_id"))
_MEM_T = MemoryRow.__table__
_COUNT_ACCESS = (sa.update(_MEM_T).where(_MEM_T.c.id.in_(sa.bindparam("ids", expanding=True)))
                 .values(access_count=_MEM_T.c.access_count + sa.bindparam("n", type_=sa.Integer),
                         last_accessed_at=sa.bindparam("now", type_=_MEM_T.c.last_accessed_at.type)))


class MemoryRecords(SQLStoreBase):
    """Memories and what belongs to them: history rows, access counts, raw inputs."""

    memory_hash = staticmethod(memory_hash)

    @property
    def events(self) -> EventBus:
        """The in-process event bus (memoryx.core.events): every history row written here is published on it
        after its transaction commits, so adds, updates, deletes and rollbacks of every path reach it."""
        bus = self.__dict__.get("_event_bus")
        return bus if bus is not None else self.__dict__.setdefault("_event_bus", EventBus())

    def _publish(self, memory: dict, event: str, *, previous: str | None, trace_id: str | None, actor: str) -> None:
        """Publish one history row's event; call after the commit (a rolled-back write publishes nothing).
        Inside `transaction()` it waits for that transaction's commit."""
        self.after_commit(lambda: self.events.emit(history_event(event), memory=memory, previous_memory=previous,
                                                   trace_id=trace_id, actor=actor))

    def insert_memory(self, *, scope: Scope, text: str, category: str | None = None, importance: float = 0.5,
                      memory_type: str = "fact", metadata: dict | None = None, trace_id: str | None = None,
                      memory_id: str | None = None, created_at: datetime | None = None,
                      actor: str = "memoryx", valid_at: datetime | None = None,
                      importance_factors: dict | None = None, confidence: float | None = None) -> dict:
        """`valid_at`: when the remembered event happened (a replayed message's time), if not the write time.
        `importance_factors` / `confidence`: what the importance was reasoned from, how sure the statement is."""
        scope = require_scope(scope)
        text = clean_text(text)
        meta = check_metadata(metadata)
        importance = check_importance(importance)
        memory_id = memory_id or new_id()
        created = as_utc(created_at, "created_at") or utc_now()
        try:
            with self._tx(write=True) as s:
                if s.execute(_MEMORY_EXISTS, {"id": memory_id}).first() is not None:
                    return self._replayed(s.get(MemoryRow, memory_id), scope)
                row = insert_row(s, MemoryRow(
                    id=memory_id, text=text, hash=memory_hash(text), **scope.as_dict(), category=category,
                    importance=importance, memory_type=memory_type or "fact", meta=meta, created_at=created,
                    updated_at=created, deleted_at=None, access_count=0, trace_id=trace_id,
                    valid_at=as_utc(valid_at, "valid_at"), importance_factors=importance_factors or None,
                    confidence=None if confidence is None else check_importance(confidence),
                ))
                insert_row(s, HistoryRow(id=new_id(), memory_id=memory_id, event="ADD", old_memory=None,
                                         new_memory=text, actor=actor, trace_id=trace_id, created_at=created))
                self._record_intent(s, "memory", [memory_id])
                data = memory_dict(row)
            self._publish(data, "ADD", previous=None, trace_id=trace_id, actor=actor)
            return data
        except IntegrityError:
            # A concurrent replay inserted the same id between our check and our insert.
            with self._tx() as s:
                existing = s.get(MemoryRow, memory_id)
                if existing is None:
                    raise
                return self._replayed(existing, scope)

    @staticmethod
    def _replayed(row: MemoryRow, scope: Scope) -> dict:
        data = memory_dict(row)
        if not scope.contains(data):
            raise ScopeError(f"Memory id {row.id} already exists in another scope; use a new id.")
        return data

    def update_memory(self, memory_id: str, *, text: str, metadata: dict | None = None, trace_id: str | None = None,
                      actor: str = "memoryx", category: str | None = None, importance: float | None = None,
                      memory_type: str | None = None, valid_at: datetime | str | None = None,
                      importance_factors: dict | None = None, confidence: float | None = None) -> dict:
        """A new text closes the old version: its history row keeps when it held (valid_at ..
        invalid_at = `valid_at`, else now); with `valid_at` the memory holds from then (a replayed message's
        time), without it its event time is left as it was (None: created_at)."""
        text = clean_text(text)
        new_valid = as_utc(valid_at, "valid_at")
        meta = check_metadata(metadata) if metadata is not None else None
        importance = check_importance(importance) if importance is not None else None
        with self._tx(write=True) as s:
            row = load_row(s, MemoryRow, memory_id)  # through Core: an add's update is one SELECT, UPDATE, INSERT
            if row is None or row.deleted_at is not None:
                raise NotFoundError(f"Memory {memory_id} does not exist or was deleted; nothing to update.")
            changes = {"text": text, "meta": meta, "category": category, "importance": importance,
                       "memory_type": memory_type, "importance_factors": importance_factors or None,
                       "confidence": None if confidence is None else check_importance(confidence)}
            changes = {k: v for k, v in changes.items() if v is not None and v != getattr(row, k)}
            if not changes:
                return memory_dict(row)  # unchanged: no write, no history
            old_text = row.text
            old_fields = {k: getattr(row, k) for k in changes if k != "text"} or None
            now = utc_now()
            held_from = row.valid_at or row.created_at
            changes.update(hash=memory_hash(changes.get("text", row.text)), updated_at=now)
            if trace_id is not None:
                changes["trace_id"] = trace_id  # the latest run that touched it: where to look for "why"
            if "text" in changes and new_valid is not None:
                changes["valid_at"] = new_valid
            update_row(s, MemoryRow, memory_id, changes)
            for key, value in changes.items():
                setattr(row, key, value)
            insert_row(s, HistoryRow(id=new_id(), memory_id=memory_id, event="UPDATE", old_memory=old_text,
                                     new_memory=row.text, actor=actor, trace_id=trace_id, created_at=now,
                                     valid_at=held_from if "text" in changes else None,
                                     invalid_at=(new_valid or now) if "text" in changes else None,
                                     old_fields=old_fields))
            self._record_intent(s, "memory", [memory_id])
            data = memory_dict(row)
        self._publish(data, "UPDATE", previous=old_text, trace_id=trace_id, actor=actor)
        return data

    def delete_memory(self, memory_id: str, *, trace_id: str | None = None, actor: str = "memoryx",
                      invalid_at: datetime | str | None = None) -> dict:
        """Soft delete; the memory stops holding at `invalid_at` (when the event that ended it happened), else now."""
        ended = as_utc(invalid_at, "invalid_at")
        deleted = False
        with self._tx(write=True) as s:
            row = s.get(MemoryRow, memory_id)
            if row is None:
                raise NotFoundError(f"Memory {memory_id} does not exist.")
            if row.deleted_at is None:  # second delete: no second history row
                now = utc_now()
                row.deleted_at = now
                row.updated_at = now
                row.invalid_at = ended or now
                s.add(HistoryRow(id=new_id(), memory_id=memory_id, event="DELETE", old_memory=row.text,
                                 new_memory=None, actor=actor, trace_id=trace_id, created_at=now,
                                 valid_at=row.valid_at or row.created_at, invalid_at=row.invalid_at))
                self._record_intent(s, "memory", [memory_id])
                s.flush()
                deleted = True
            data = memory_dict(row)
        if deleted:
            self._publish(data, "DELETE", previous=data["memory"], trace_id=trace_id, actor=actor)
        return data

    def rollback_memory_state(self, memory_id: str, *, text: str | None, trace_id: str, status: str | None = None,
                              actor: str = "rollback") -> dict:
        """Bring a memory back to a state a rollback read off its history (memoryx.lifecycle.rollback): live with `text`,
        or soft-deleted when `text` is None; `status` (consolidation's column) when given. One ROLLBACK
        history row (old = what it showed, None when deleted; new = what it shows now); no change, no row."""
        with self._tx(write=True) as s:
            row = s.get(MemoryRow, memory_id)
            if row is None:
                raise NotFoundError(f"Memory {memory_id} does not exist; it cannot be rolled back.")
            before = None if row.deleted_at is not None else row.text
            if before == text and (status is None or row.status == status):
                return memory_dict(row)
            now = utc_now()
            if text is None:
                row.deleted_at = row.deleted_at or now
            else:
                row.text, row.hash, row.deleted_at = text, memory_hash(text), None
            if status is not None:
                row.status = status
                if status != "merged":
                    row.merged_into = None
            row.updated_at, row.trace_id = now, trace_id
            s.add(HistoryRow(id=new_id(), memory_id=memory_id, event="ROLLBACK", old_memory=before, new_memory=text,
                             actor=actor, trace_id=trace_id, created_at=now))
            self._record_intent(s, "memory", [memory_id])
            s.flush()
            data = memory_dict(row)
        self._publish(data, "ROLLBACK", previous=before, trace_id=trace_id, actor=actor)
        return data

    def trace_history(self, trace_id: str) -> list[dict]:
        """Every history row one run wrote, oldest first, with its `seq` (the total order of history)."""
        q = select(HistoryRow).where(HistoryRow.trace_id == trace_id).order_by(HistoryRow.seq)
        with self._tx() as s:
            return [{"seq": r.seq, **history_dict(r)} for r in s.scalars(q)]

    def history_after(self, memory_ids: list[str], after_seq: int) -> list[dict]:
        """History rows of these memories written after position `after_seq`, oldest first (with `seq`)."""
        out: list[dict] = []
        with self._tx() as s:
            for chunk in id_chunks(list(dict.fromkeys(memory_ids))):
                q = select(HistoryRow).where(HistoryRow.memory_id.in_(chunk), HistoryRow.seq > after_seq)
                out.extend({"seq": r.seq, **history_dict(r)} for r in s.scalars(q))
        return sorted(out, key=lambda r: r["seq"])

    def rollback_links(self, trace_ids: list[str]) -> dict[str, dict[str, str]]:
        """Which of these traces were rolled back, and which are rollbacks themselves: {"rolled_back":
        {trace: rollback trace}, "rollbacks": {rollback trace: trace}}, from the ROLLBACK judgment records
        (operation_type ROLLBACK, input_content = the trace rolled back)."""
        ids = [t for t in dict.fromkeys(trace_ids) if t]
        links: dict[str, dict[str, str]] = {"rolled_back": {}, "rollbacks": {}}
        with self._tx() as s:
            for chunk in id_chunks(ids):
                q = select(JudgmentRow.trace_id, JudgmentRow.input_content).where(
                    JudgmentRow.operation_type == "ROLLBACK",
                    sa.or_(JudgmentRow.trace_id.in_(chunk), JudgmentRow.input_content.in_(chunk)))
                for rollback, target in s.execute(q):
                    links["rolled_back"][target] = rollback
                    links["rollbacks"][rollback] = target
        return links

    def get_memory(self, memory_id: str, *, scope: Scope | None = None, include_deleted: bool = False) -> dict:
        with self._tx() as s:
            row = s.get(MemoryRow, memory_id)
            data = memory_dict(row) if row is not None else None
        if data is None or (data["deleted_at"] and not include_deleted) or (
                scope is not None and not require_scope(scope).contains(data)):
            # Same message for "missing" and "someone else's": never confirm another tenant's ids.
            raise NotFoundError(f"Memory {memory_id} not found in this scope.")
        return data

    def list_memories(self, scope: Scope | None, *, limit: int | None = 100, offset: int = 0,
                      include_deleted: bool = False, memory_types: list[str] | None = None,
                      categories: list[str] | None = None, created_after: datetime | str | None = None,
                      created_before: datetime | str | None = None) -> list[dict]:
        q = select(MemoryRow).where(*scope_where(MemoryRow, scope))
        if not include_deleted:
            q = q.where(MemoryRow.deleted_at.is_(None))
        if memory_types:
            q = q.where(MemoryRow.memory_type.in_(list(memory_types)))
        if categories:
            q = q.where(MemoryRow.category.in_(list(categories)))
        if created_after is not None:
            q = q.where(MemoryRow.created_at >= as_utc(created_after, "created_after"))
        if created_before is not None:
            q = q.where(MemoryRow.created_at < as_utc(created_before, "created_before"))
        q = q.order_by(MemoryRow.created_at.desc(), MemoryRow.id.desc()).offset(max(0, offset))
        if limit is not None:
            q = q.limit(max(0, limit))
        with self._tx() as s:
            return [memory_dict(r) for r in s.scalars(q)]

    def count_memories(self, scope: Scope | None = None) -> int:
        q = select(sa.func.count()).select_from(MemoryRow).where(
            MemoryRow.deleted_at.is_(None), *scope_where(MemoryRow, scope))
        with self._tx() as s:
            return int(s.execute(q).scalar() or 0)

    def find_by_hash(self, scope: Scope, text_hash: str) -> dict | None:
        q = (select(MemoryRow)
             .where(MemoryRow.hash == text_hash, MemoryRow.deleted_at.is_(None), *scope_where(MemoryRow, scope))
             .order_by(MemoryRow.created_at, MemoryRow.id).limit(1))
        with self._tx() as s:
            row = s.scalars(q).first()
            return memory_dict(row) if row is not None else None

    def get_memories(self, ids: list[str]) -> list[dict]:
        """Live memories by id, in the order of ids (unknown or deleted ids skipped). Core, a statement built
        once: the add graph reads the memories it changed twice per run."""
        found: dict[str, dict] = {}
        with self._tx() as s:
            for chunk in id_chunks(ids):
                found.update((r.id, memory_dict(r)) for r in read_plain(s, MemoryRow, _LIVE_BY_ID, {"ids": chunk}))
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def get_memories_any(self, ids: list[str]) -> list[dict]:
        """Memories by id, soft-deleted ones included, in the order of ids (unknown ids skipped)."""
        found: dict[str, dict] = {}
        with self._tx() as s:
            for chunk in id_chunks(ids):
                found.update((r.id, memory_dict(r)) for r in s.scalars(select(MemoryRow).where(MemoryRow.id.in_(chunk))))
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def rows_with_context(self, scope: Scope, ids: list[str], seed_times: list[float], *,
                          max_gap_s: float) -> list[dict]:
        """One statement: the live memories of `scope` whose id is in `ids` OR whose created_at lies within
        `max_gap_s` of one of `seed_times` (epoch seconds), as memory dicts, oldest first. The search graph
        reads the neighbouring turns of its best hits off this list; Core, not ORM, because a search must
        stay within a few milliseconds."""
        scope = require_scope(scope)
        col = MemoryRow.__table__.c
        conds = [col.id.in_(list(ids))] if ids else []
        for ts in seed_times:
            conds.append(col.created_at.between(datetime.fromtimestamp(ts - max_gap_s, tz=timezone.utc),
                                                datetime.fromtimestamp(ts + max_gap_s, tz=timezone.utc)))
        if not conds:
            return []
        stmt = (select(MemoryRow)
                .where(*scope_where(MemoryRow, scope), MemoryRow.deleted_at.is_(None), sa.or_(*conds))
                .order_by(MemoryRow.created_at, MemoryRow.id))
        with self._tx() as s:
            return [memory_dict(r) for r in s.scalars(stmt)]

    def latest_event(self, scope: Scope) -> tuple[datetime, datetime] | None:
        """(valid_at, created_at) of the live memory of `scope` whose event happened last (by valid_at), None
        when no memory has an event time. A replayed chat log's "present" is read from it."""
        stmt = (select(MemoryRow.valid_at, MemoryRow.created_at)
                .where(*scope_where(MemoryRow, scope), MemoryRow.deleted_at.is_(None), MemoryRow.valid_at.is_not(None))
                .order_by(MemoryRow.valid_at.desc()).limit(1))
        with self._tx() as s:
            row = s.execute(stmt).first()
        return (as_utc(row[0]), as_utc(row[1])) if row is not None else None

    def last_change_seq(self) -> int:
        """A number that grows whenever any memory is added, updated or deleted (the newest history row)."""
        with self._tx() as s:
            return int(s.scalar(select(sa.func.max(HistoryRow.seq))) or 0)

    def history(self, memory_id: str) -> list[dict]:
        with self._tx() as s:
            if s.get(MemoryRow, memory_id) is None:
                raise NotFoundError(f"Memory {memory_id} does not exist.")
            rows = s.scalars(select(HistoryRow).where(HistoryRow.memory_id == memory_id).order_by(HistoryRow.seq))
            return [history_dict(r) for r in rows]

    def record_access(self, ids: list[str]) -> None:
        """One access for each of these memories."""
        self.record_accesses(dict.fromkeys(ids, 1))

    def record_accesses(self, counts: dict[str, int]) -> None:
        """`counts` {memory id: accesses} added in one write transaction: one Core UPDATE per distinct count
        (usually one; the ORM-enabled UPDATE cost ~2.5x the CPU, and the search's access writer holds the GIL
        the next search needs)."""
        by_count: dict[int, list[str]] = {}
        for mid, n in counts.items():
            by_count.setdefault(int(n), []).append(mid)
        if not by_count:
            return
        now = utc_now()
        with self._tx(write=True) as s:
            conn = s.connection()
            for n, ids in by_count.items():
                for chunk in id_chunks(ids):
                    conn.execute(_COUNT_ACCESS, {"ids": chunk, "n": n, "now": now})

    def delete_scope(self, scope: Scope) -> int:
        """Hard delete of everything in the scope (memories, history, judgments, inputs, graph, outbox)."""
        scope = require_scope(scope)
        mem_ids = select(MemoryRow.id).where(*scope_where(MemoryRow, scope))
        ent_ids = select(EntityRow.id).where(*scope_where(EntityRow, scope))
        with self._tx(write=True) as s:
            rel_q = select(RelationRow.id).where(sa.or_(
                sa.and_(*scope_where(RelationRow, scope)),
                RelationRow.source_id.in_(ent_ids), RelationRow.target_id.in_(ent_ids)))
            rel_id_list = list(s.scalars(rel_q))
            mem_id_list = list(s.scalars(mem_ids))
            ent_id_list = list(s.scalars(ent_ids))
            for kind, id_list in (("memory", mem_id_list), ("entity", ent_id_list), ("relation", rel_id_list)):
                for chunk in id_chunks(id_list):
                    s.execute(sa.delete(OutboxRow).where(OutboxRow.kind == kind, OutboxRow.target_id.in_(chunk)))
            for chunk in id_chunks(rel_id_list):
                s.execute(sa.delete(RelationRow).where(RelationRow.id.in_(chunk)))
            s.execute(sa.delete(EntityRow).where(*scope_where(EntityRow, scope)))
            s.execute(sa.delete(HistoryRow).where(HistoryRow.memory_id.in_(mem_ids)))
            s.execute(sa.delete(MemoryRow).where(*scope_where(MemoryRow, scope)))
            s.execute(sa.delete(JudgmentRow).where(*scope_where(JudgmentRow, scope)))
            s.execute(sa.delete(RawInputRow).where(*scope_where(RawInputRow, scope)))
            return len(mem_id_list)


    # ---- raw inputs -----------------------------------------------------------------------------------------

    def save_raw_input(self, *, trace_id: str, scope: Scope, messages: list[dict], metadata: dict | None) -> None:
        """Keep what the user sent, verbatim; a replay of the same trace keeps the first copy."""
        scope = require_scope(scope)
        if not trace_id:
            raise InvalidInputError("trace_id is required to save a raw input")
        meta = check_metadata(metadata)
        try:
            with self._tx(write=True) as s:
                if s.execute(_RAW_INPUT_EXISTS, {"trace_id": trace_id}).first() is None:
                    insert_row(s, RawInputRow(id=new_id(), trace_id=trace_id, **scope.as_dict(), messages=messages,
                                              meta=meta, created_at=utc_now()))
        except IntegrityError:
            pass  # a concurrent replay saved it first

    def run_turns(self, scope: Scope, limit: int, *, inputs: int = 200) -> list[dict]:
        """A run's working memory: the last `limit` messages its adds sent (raw inputs of `scope`, which names
        the run; at most `inputs` adds read), oldest first, none from before the run's last end (a raw input
        whose metadata has "run_end", saved by end_run; an end saved with fewer ids than `scope` ends it too)."""
        scope = require_scope(scope)
        if not scope.run_id:
            raise ScopeError("a run's turns need run_id")
        out: list[dict] = []
        q = (select(RawInputRow).where(RawInputRow.run_id == scope.run_id)
             .order_by(RawInputRow.created_at.desc(), RawInputRow.id.desc()).limit(inputs))
        with self._tx() as s:
            for row in s.scalars(q):
                where = scope_dict(row)
                if (row.meta or {}).get("run_end"):
                    if all(v in (None, getattr(scope, k)) for k, v in where.items()):
                        break
                    continue
                if len(out) >= limit:
                    break
                if not scope.contains(where):
                    continue
                out.extend({**m, "trace_id": row.trace_id, "created_at": iso(row.created_at)}
                           for m in reversed(row.messages or []))
        return out[:limit][::-1]

    def get_raw_input(self, trace_id: str) -> dict:
        with self._tx() as s:
            row = s.scalars(select(RawInputRow).where(RawInputRow.trace_id == trace_id)).first()
            if row is None:
                raise NotFoundError(f"No raw input for trace {trace_id}.")
            return {"id": row.id, "trace_id": row.trace_id, **scope_dict(row), "messages": row.messages,
                    "metadata": dict(row.meta or {}), "created_at": iso(row.created_at)}
