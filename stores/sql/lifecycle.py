"""Memory lifecycle in the SQL store: what one consolidation pass writes, in one transaction, and the restore
of an archived or merged memory. The rollback of a pass (what history rows cannot carry) is lifecycle_undo.py.

A memory is `staged` when written, `active` once a pass has seen it, `summarized` when a summary memory
stands for it (still searchable, demoted in ranking), `merged` into an older duplicate (`merged_into`), or
`archived` by the forgetting curve (searchable only with include_archived). Nothing here deletes a row.
Each change writes a history row with the pass's trace id (events MERGE, MERGED, SUMMARY, SUMMARIZED,
ARCHIVE, RESTORE), queues the memory's projection and, after the commit, publishes each history row on the
event bus (MemoryRecords._publish, memoryx.core.events), as every other memory write does. A mixin of SQLStore
beside MemoryRecords.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import select

from memoryx.core.owners import owner_scope
from memoryx.core.scope import Scope
from memoryx.core.text import memory_hash
from memoryx.errors import InvalidInputError, NotFoundError
from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.lifecycle_undo import remember_before, undo_entry
from memoryx.stores.sql.links import link_dict
from memoryx.stores.sql.schema import (
    HistoryRow,
    MemoryLinkRow,
    MemoryRow,
    OutboxRow,
    RelationRow,
    memory_dict,
)
from memoryx.stores.sql.values import (
    check_metadata,
    clean_text,
    id_chunks,
    iso,
    new_id,
    require_scope,
    scope_where,
    utc_now,
)

STATUSES = ("staged", "active", "summarized", "merged", "archived")
HIDDEN_STATUSES = ("merged", "archived")  # left out of search unless include_archived
RESTORABLE = ("archived", "merged", "summarized")


class MemoryLifecycle(SQLStoreBase):
    """Statuses of memories: the writes of a consolidation pass and restore."""

    def apply_consolidation(self, scope: Scope, *, trace_id: str, seen: dict[str, str | None],
                            merges: list[dict], summaries: list[dict], archives: list[dict],
                            promotions: list[dict] = (), actor: str = "consolidate") -> dict:
        """Write one pass's decisions in one transaction. `seen` maps each memory id the pass read to its
        `updated_at` then: a memory changed or deleted since (a concurrent update outside the scope lock, or
        an add that ran before the lock) is left alone and reported in `skipped`; summaries and merges
        that involve it are dropped whole. Staged memories the pass saw become active.

        merges: [{"survivor", "merged", "reason"}]; summaries: [{"text", "sources", "memory_type",
        "importance", "level", "reason"}]; archives: [{"id", "reason"}]; promotions: [{"id", "layer"}] (the
        memory layer in metadata, memoryx.lifecycle.layers; history PROMOTE). Returns {"changed": [memory ids],
        "summary_ids": [...], "relations": [relation dicts re-pointed or invalidated], "skipped": [...],
        "previous_status": {memory id: status before the pass} of the memories changed (what a rollback
        brings back: staged or active)}."""
        scope = require_scope(scope)
        now = utc_now()
        changed: set[str] = set()
        skipped: set[str] = set()
        summary_ids: list[str] = []
        relations: list[RelationRow] = []
        moved: list[dict] = []  # relations a merge moved to its survivor: {"id", "memory_id" (before), "survivor"}
        before: dict[str, dict] = {}  # memory id -> the fields this pass changed, as they were (see _Undo)
        published: list[tuple] = []  # (memory row, event, previous text): published after the commit
        with self._tx(write=True) as s:
            rows: dict[str, MemoryRow] = {}
            for chunk in id_chunks(seen):
                rows.update((r.id, r) for r in s.scalars(select(MemoryRow).where(MemoryRow.id.in_(chunk))))
            for mid, stamp in seen.items():
                r = rows.get(mid)
                if r is None or r.deleted_at is not None or iso(r.updated_at) != stamp or not scope.contains(memory_dict(r)):
                    skipped.add(mid)
            previous = {mid: r.status or "active" for mid, r in rows.items()}
            ok = lambda ids: not any(i in skipped for i in ids)  # noqa: E731

            def history(mid: str, event: str, old: str | None, new: str | None) -> None:
                published.append((mid, event, old))
                s.add(HistoryRow(id=new_id(), memory_id=mid, event=event, old_memory=old, new_memory=new,
                                 actor=actor, trace_id=trace_id, created_at=now))

            for m in merges:
                keep, gone = rows.get(m["survivor"]), rows.get(m["merged"])
                if keep is None or gone is None or not ok([keep.id, gone.id]) or gone.status == "merged":
                    continue
                remember_before(before, keep, meta_keys=set(gone.meta or {}) - set(keep.meta or {}),
                                fields=("importance", "last_accessed_at"), access_added=gone.access_count or 0)
                keep.meta = {**dict(gone.meta or {}), **dict(keep.meta or {})}  # the survivor's keys win
                keep.access_count = (keep.access_count or 0) + (gone.access_count or 0)
                keep.importance = max(keep.importance or 0.0, gone.importance or 0.0)
                if gone.last_accessed_at and (keep.last_accessed_at is None or gone.last_accessed_at > keep.last_accessed_at):
                    keep.last_accessed_at = gone.last_accessed_at
                gone.status, gone.merged_into = "merged", keep.id
                history(keep.id, "MERGE", gone.text, keep.text)
                history(gone.id, "MERGED", gone.text, None)
                rels, went = self._repoint_relations(s, gone.id, keep.id, trace_id, now)
                relations += rels
                moved += went
                changed.update((keep.id, gone.id))
            for summ in summaries:
                sources = [rows[i] for i in summ["sources"] if i in rows]
                if len(sources) < 2 or not ok(summ["sources"]) or any(r.status == "merged" for r in sources):
                    continue
                text = clean_text(summ["text"])
                sid = new_id()
                meta = check_metadata({"abstraction": summ.get("level") or "summary",
                                       "sources": [r.id for r in sources],
                                       **({"layer": summ["layer"]} if summ.get("layer") else {})})
                s.add(MemoryRow(id=sid, text=text, hash=memory_hash(text), **scope.as_dict(),
                                category=sources[0].category, importance=float(summ.get("importance") or 0.5),
                                memory_type=summ.get("memory_type") or sources[0].memory_type, meta=meta,
                                created_at=now, updated_at=now, deleted_at=None, access_count=0,
                                trace_id=trace_id, status="active"))
                s.flush()
                history(sid, "SUMMARY", None, text)
                for r in sources:
                    remember_before(before, r, meta_keys={"summary_id"})
                    r.status = "summarized"
                    r.meta = {**dict(r.meta or {}), "summary_id": sid}
                    history(r.id, "SUMMARIZED", r.text, text)
                    changed.add(r.id)
                summary_ids.append(sid)
                changed.add(sid)
            for a in archives:
                r = rows.get(a["id"])
                if r is None or a["id"] in skipped or r.status in ("merged", "archived"):
                    continue
                r.status = "archived"
                history(r.id, "ARCHIVE", r.text, None)
                changed.add(r.id)
            for p in promotions:
                r = rows.get(p["id"])
                if r is None or p["id"] in skipped or r.status in HIDDEN_STATUSES or (r.meta or {}).get("layer") == p["layer"]:
                    continue
                remember_before(before, r, meta_keys={"layer"})
                r.meta = {**dict(r.meta or {}), "layer": p["layer"]}
                history(r.id, "PROMOTE", r.text, r.text)
                changed.add(r.id)
            for mid, r in rows.items():  # seen by this pass: no longer staged
                if mid not in skipped and r.status == "staged":
                    r.status = "active"
                    changed.add(mid)
            if changed:
                self._record_intent(s, "memory", sorted(changed))
            s.flush()
            restore = {mid: undo_entry(b, rows[mid]) for mid, b in before.items() if mid not in skipped}
            rel_out = self._relation_dicts(s, relations)
            by_id = {r.id: r for r in rows.values()}
            by_id.update((i, s.get(MemoryRow, i)) for i in summary_ids)
            published = [(memory_dict(by_id[mid]), event, old) for mid, event, old in published]
        for data, event, old in published:
            self._publish(data, event, previous=old, trace_id=trace_id, actor=actor)
        return {"changed": sorted(changed), "summary_ids": summary_ids, "relations": rel_out,
                "skipped": sorted(skipped), "previous_status": {i: previous[i] for i in sorted(changed) if i in previous},
                "restore": restore, "relations_moved": moved}

    def unprojected_memories(self, ids: list[str]) -> set[str]:
        """Those of these memory ids whose projection is still queued (outbox): the vector store may hold an
        older text's vector for them (a consolidation pass embeds those again instead of reading it back)."""
        out: set[str] = set()
        self.flush_cleared_projections()  # projected jobs whose rows are still waiting to be deleted
        with self._tx() as s:
            for chunk in id_chunks(list(dict.fromkeys(ids))):
                out.update(s.scalars(select(OutboxRow.target_id).where(OutboxRow.kind == "memory",
                                                                      OutboxRow.target_id.in_(chunk))))
        return out

    def add_consolidation_links(self, scope: Scope, links: list[dict], *, trace_id: str) -> list[dict]:
        """Memory links a pass found (memoryx.lifecycle.graph_upkeep), written with actor
        "consolidate:<trace id>" so a rollback of the pass removes exactly them. Links that exist already
        (any actor) and links to memories no longer live in the scope are skipped. Returns the links written."""
        scope = require_scope(scope)
        out: list[MemoryLinkRow] = []
        ids = {i for link in links for i in (link["source_id"], link["target_id"])}
        with self._tx(write=True) as s:
            live: dict[str, MemoryRow] = {}
            for chunk in id_chunks(ids):
                live.update((r.id, r) for r in s.scalars(select(MemoryRow).where(
                    MemoryRow.id.in_(chunk), MemoryRow.deleted_at.is_(None))) if scope.contains(memory_dict(r)))
            known: set[tuple] = set()
            for chunk in id_chunks(ids):
                known.update(s.execute(select(MemoryLinkRow.source_id, MemoryLinkRow.target_id, MemoryLinkRow.relation)
                                       .where(MemoryLinkRow.source_id.in_(chunk))).all())
            now = utc_now()
            for link in links:
                key = (link["source_id"], link["target_id"], link["relation"])
                if key in known or link["source_id"] not in live or link["target_id"] not in live:
                    continue
                known.add(key)
                row = MemoryLinkRow(id=new_id(), source_id=key[0], target_id=key[1], relation=key[2], importance=0.5,
                                    actor=f"consolidate:{trace_id}", created_at=now, **scope.as_dict())
                s.add(row)
                out.append(row)
            s.flush()
            return [link_dict(r) for r in out]

    def layer_memories(self, scope: Scope, layer: str, *, limit: int = 20) -> list[dict]:
        """Live, visible memories of the scope in one layer (metadata "layer"), most important and most
        recent first (memoryx.lifecycle.layers; a memory without the key is not listed here)."""
        q = (select(MemoryRow).where(MemoryRow.deleted_at.is_(None), *scope_where(MemoryRow, require_scope(scope)),
                                     MemoryRow.status.not_in(HIDDEN_STATUSES),
                                     MemoryRow.meta["layer"].as_string() == layer)
             .order_by(MemoryRow.importance.desc(), MemoryRow.created_at.desc(), MemoryRow.id).limit(limit))
        with self._tx() as s:
            return [memory_dict(r) for r in s.scalars(q)]

    @staticmethod
    def _repoint_relations(s, old_id: str, new_id_: str, trace_id: str, now) -> tuple[list[RelationRow], list[dict]]:
        """The merged memory's valid relations move to the survivor; one the survivor already states is
        invalidated instead (the unique index allows one valid copy per memory). Returns (every relation
        changed, [{"id", "memory_id", "survivor"}] of those moved: what a rollback moves back)."""
        out, moved = [], []
        for rel in s.scalars(select(RelationRow).where(RelationRow.memory_id == old_id, RelationRow.valid.is_(True))):
            twin = s.scalars(select(RelationRow.id).where(
                RelationRow.memory_id == new_id_, RelationRow.valid.is_(True), RelationRow.scope_key == rel.scope_key,
                RelationRow.source_id == rel.source_id, RelationRow.relation == rel.relation,
                RelationRow.target_id == rel.target_id)).first()
            if twin is None:
                rel.memory_id = new_id_
                moved.append({"id": rel.id, "memory_id": old_id, "survivor": new_id_})
            else:
                rel.valid, rel.invalidated_at, rel.invalidated_by = False, now, trace_id
            out.append(rel)
        return out, moved

    def restore_memory(self, memory_id: str, *, trace_id: str | None = None, actor: str = "api") -> dict:
        """Bring an archived, merged or summarized memory back to active (history RESTORE)."""
        with self._tx(write=True) as s:
            row = s.get(MemoryRow, memory_id)
            if row is None or row.deleted_at is not None:
                raise NotFoundError(f"Memory {memory_id} does not exist or was deleted; nothing to restore.")
            if row.status not in RESTORABLE:
                raise InvalidInputError(f"Memory {memory_id} is {row.status}, not archived or merged; nothing to restore.")
            now = utc_now()
            row.status, row.merged_into, row.updated_at = "active", None, now
            row.last_accessed_at = now  # restoring is an access: the forgetting curve starts again
            s.add(HistoryRow(id=new_id(), memory_id=memory_id, event="RESTORE", old_memory=None,
                             new_memory=row.text, actor=actor, trace_id=trace_id, created_at=now))
            self._record_intent(s, "memory", [memory_id])
            s.flush()
            data = memory_dict(row)
        self._publish(data, "RESTORE", previous=None, trace_id=trace_id, actor=actor)
        return data

    def memory_owner_scopes(self) -> list[Scope]:
        """One scope per owner of live memories, as a consolidation pass takes them
        (memoryx.core.owners.owner_scope): each user outside groups and in each group chat they speak
        in, an agent's own memories (no user), a run's (no user nor agent), a group's own (no participant).
        The schedule walks them."""
        q = (select(MemoryRow.user_id, MemoryRow.agent_id, MemoryRow.run_id, MemoryRow.group_id)
             .where(MemoryRow.deleted_at.is_(None)).distinct())
        with self._tx() as s:
            rows = s.execute(q).all()
        owners = {}
        for user_id, agent_id, run_id, group_id in rows:
            scope = owner_scope({"user_id": user_id, "agent_id": agent_id, "run_id": run_id, "group_id": group_id})
            owners[scope.key()] = scope
        return [owners[k] for k in sorted(owners)]

    def status_counts(self, scope: Scope) -> dict[str, int]:
        """{status: live memories} of the scope."""
        q = (select(MemoryRow.status, sa.func.count()).where(MemoryRow.deleted_at.is_(None),
             *scope_where(MemoryRow, require_scope(scope))).group_by(MemoryRow.status))
        with self._tx() as s:
            return {k or "active": int(v) for k, v in s.execute(q).all()}
