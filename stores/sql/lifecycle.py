"""Memory lifecycle in the SQL store (issue 10): what one consolidation pass writes, in one transaction, and
the restore of an archived or merged memory.

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

from memoryx.errors import InvalidInputError, NotFoundError
from memoryx.core.scope import Scope
from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.schema import HistoryRow, MemoryRow, RelationRow, memory_dict, relation_dict
from memoryx.stores.sql.values import as_utc, check_metadata, clean_text, id_chunks, iso, new_id, require_scope, utc_now
from memoryx.stores.sql.values import scope_where as scope_where_
from memoryx.core.text import memory_hash

STATUSES = ("staged", "active", "summarized", "merged", "archived")
_TIME_FIELDS = ("last_accessed_at",)
HIDDEN_STATUSES = ("merged", "archived")  # left out of search unless include_archived
RESTORABLE = ("archived", "merged", "summarized")


def _plain(field: str, value):
    return iso(value) if field in _TIME_FIELDS else value


def _remember(before: dict[str, dict], row: MemoryRow, *, meta_keys=(), fields=(), access_added: int = 0) -> None:
    """Note what a pass is about to change on `row`, the first time only: the metadata keys (their value,
    or that they were absent), the columns in `fields`, the accesses folded in. A rollback of the pass
    restores each one that still holds what the pass left (`_after`) and leaves later changes alone."""
    b = before.setdefault(row.id, {"meta": {}, "meta_absent": [], "fields": {}, "access_added": 0})
    meta = dict(row.meta or {})
    for k in sorted(meta_keys):
        if k not in b["meta"] and k not in b["meta_absent"]:
            if k in meta:
                b["meta"][k] = meta[k]
            else:
                b["meta_absent"].append(k)
    for f in fields:
        b["fields"].setdefault(f, _plain(f, getattr(row, f)))
    b["access_added"] += int(access_added)


def _after(b: dict, row: MemoryRow) -> dict:
    meta = dict(row.meta or {})
    return {**b, "after_meta": {k: meta.get(k) for k in [*b["meta"], *b["meta_absent"]]},
            "after_fields": {f: _plain(f, getattr(row, f)) for f in b["fields"]}}


def _valid_twin(s, rel: RelationRow, src: str, dst: str, memory_id: str | None) -> bool:
    """A valid relation other than `rel` stating the same fact at these ends for this memory (the unique
    index allows one)."""
    return s.scalars(select(RelationRow.id).where(
        RelationRow.scope_key == rel.scope_key, RelationRow.source_id == src, RelationRow.relation == rel.relation,
        RelationRow.target_id == dst, RelationRow.id != rel.id, RelationRow.valid.is_(True),
        RelationRow.memory_id.is_(None) if memory_id is None else RelationRow.memory_id == memory_id)).first() is not None


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
                _remember(before, keep, meta_keys=set(gone.meta or {}) - set(keep.meta or {}),
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
                                       "sources": [r.id for r in sources]})
                s.add(MemoryRow(id=sid, text=text, hash=memory_hash(text), **scope.as_dict(),
                                category=sources[0].category, importance=float(summ.get("importance") or 0.5),
                                memory_type=summ.get("memory_type") or sources[0].memory_type, meta=meta,
                                created_at=now, updated_at=now, deleted_at=None, access_count=0,
                                trace_id=trace_id, status="active"))
                s.flush()
                history(sid, "SUMMARY", None, text)
                for r in sources:
                    _remember(before, r, meta_keys={"summary_id"})
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
                _remember(before, r, meta_keys={"layer"})
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
            restore = {mid: _after(b, rows[mid]) for mid, b in before.items() if mid not in skipped}
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
        from memoryx.stores.sql.schema import OutboxRow

        out: set[str] = set()
        self.flush_cleared_projections()  # projected jobs whose rows are still waiting to be deleted
        with self._tx() as s:
            for chunk in id_chunks(list(dict.fromkeys(ids))):
                out.update(s.scalars(select(OutboxRow.target_id).where(OutboxRow.kind == "memory",
                                                                      OutboxRow.target_id.in_(chunk))))
        return out

    def entity_rows(self, ids: list[str]) -> list[dict]:
        """Entity rows as stored (scope_key included), read before a pass merges them away: what a rollback
        of the pass writes back (`undo_consolidation`)."""
        from memoryx.stores.sql.schema import EntityRow

        out: list[dict] = []
        with self._tx() as s:
            for chunk in id_chunks(list(dict.fromkeys(ids))):
                for r in s.scalars(select(EntityRow).where(EntityRow.id.in_(chunk))):
                    out.append({"id": r.id, "scope_key": r.scope_key, "name": r.name, "normalized_name": r.normalized_name,
                                "entity_type": r.entity_type, "user_id": r.user_id, "agent_id": r.agent_id,
                                "run_id": r.run_id, "group_id": r.group_id, "created_at": iso(r.created_at),
                                "updated_at": iso(r.updated_at)})
        return out

    def undo_consolidation(self, *, trace_id: str, restore: dict[str, dict] | None = None,
                           relations_moved: list[dict] | None = None, entity_rows: list[dict] | None = None,
                           entity_merges: list[dict] | None = None, repointed: list[dict] | None = None,
                           actor: str = "rollback") -> dict:
        """The part of a consolidation pass's rollback that history rows cannot carry (memoryx.lifecycle.rollback), in
        one transaction, recorded under the rollback's `trace_id`:

        - entity merges: the merged entities written back (`entity_rows`, as `entity_rows()` read them
          before the pass) and every relation the merge re-pointed (`repointed`: [{"id", "source_id",
          "target_id"}] before) pointed at them again. An entity whose name was meanwhile written again in its
          scope is not re-created: its relations go to that entity. A relation changed since the pass stays.
        - memory merges: relations moved to the survivor (`relations_moved`) go back to their memory;
        - fields (`restore`, from apply_consolidation): metadata keys (layer, summary_id, keys folded into a
          survivor), importance, last access and the access count folded in, each only where it still holds
          what the pass left (a later change stays).

        Relations the pass invalidated are not touched here: the caller re-validates them afterwards (their
        ends are back by then). Returns {"memories": [ids whose fields changed], "relations": [relation
        dicts changed], "entities": [entity ids written back or re-pointed to], "not_undone": [{"reason", ...}]}."""
        from memoryx.stores.sql.schema import EntityRow

        now = utc_now()
        out_memories: list[str] = []
        touched: dict[str, RelationRow] = {}
        entities: list[str] = []
        not_undone: list[dict] = []
        published: list[tuple] = []
        survivor_of = {m["merged"]: m["survivor"] for m in entity_merges or []}
        with self._tx(write=True) as s:
            alias: dict[str, str] = {}
            for e in entity_rows or []:
                if s.get(EntityRow, e["id"]) is not None:
                    continue
                same = s.scalars(select(EntityRow.id).where(EntityRow.scope_key == e["scope_key"],
                                                            EntityRow.normalized_name == e["normalized_name"])).first()
                if same is not None:
                    alias[e["id"]] = same
                    not_undone.append({"entity_id": e["id"], "event": "ENTITY_MERGE",
                                       "reason": f"{e['name']!r} was written again since as entity {same}; its "
                                                 "relations go back to that entity"})
                    entities.append(same)
                    continue
                s.add(EntityRow(id=e["id"], scope_key=e["scope_key"], name=e["name"], normalized_name=e["normalized_name"],
                                entity_type=e.get("entity_type") or "entity", user_id=e.get("user_id"),
                                agent_id=e.get("agent_id"), run_id=e.get("run_id"), group_id=e.get("group_id"),
                                created_at=as_utc(e.get("created_at")) or now, updated_at=now))
                entities.append(e["id"])
            s.flush()
            for b in repointed or []:
                rel = s.get(RelationRow, b["id"])
                if rel is None:
                    continue
                made = (survivor_of.get(b["source_id"], b["source_id"]), survivor_of.get(b["target_id"], b["target_id"]))
                src, dst = alias.get(b["source_id"], b["source_id"]), alias.get(b["target_id"], b["target_id"])
                if (rel.source_id, rel.target_id) != made:
                    not_undone.append({"relation_id": rel.id, "event": "ENTITY_MERGE",
                                       "reason": "the relation changed ends after the pass; left as it is"})
                    continue
                if rel.valid and _valid_twin(s, rel, src, dst, rel.memory_id):
                    not_undone.append({"relation_id": rel.id, "event": "ENTITY_MERGE",
                                       "reason": "the same fact is valid at its old ends already; left on the survivor"})
                    continue
                rel.source_id, rel.target_id = src, dst
                s.flush()  # the next relation's twin check sees this one
                touched[rel.id] = rel
            for mv in relations_moved or []:
                rel = s.get(RelationRow, mv["id"])
                if rel is None or rel.memory_id != mv["survivor"]:
                    continue
                if rel.valid and _valid_twin(s, rel, rel.source_id, rel.target_id, mv["memory_id"]):
                    continue
                rel.memory_id = mv["memory_id"]
                s.flush()
                touched[rel.id] = rel
            for mid, b in (restore or {}).items():
                row = s.get(MemoryRow, mid)
                if row is None or row.deleted_at is not None:
                    continue
                meta, changed = dict(row.meta or {}), False
                for k, v in b.get("meta", {}).items():
                    if meta.get(k) == b["after_meta"].get(k) and meta.get(k) != v:
                        meta[k], changed = v, True
                for k in b.get("meta_absent", []):
                    if k in meta and meta[k] == b["after_meta"].get(k):
                        del meta[k]
                        changed = True
                for f, v in b.get("fields", {}).items():
                    cur = _plain(f, getattr(row, f))
                    if cur == b["after_fields"].get(f) and cur != v:
                        setattr(row, f, as_utc(v) if f in _TIME_FIELDS else v)
                        changed = True
                if b.get("access_added"):
                    row.access_count = max(0, (row.access_count or 0) - int(b["access_added"]))
                    changed = True
                if changed:
                    row.meta, row.updated_at = meta, now
                    s.add(HistoryRow(id=new_id(), memory_id=mid, event="ROLLBACK", old_memory=row.text,
                                     new_memory=row.text, actor=actor, trace_id=trace_id, created_at=now))
                    out_memories.append(mid)
                    published.append(row)
            if out_memories:
                self._record_intent(s, "memory", out_memories)
            if entities:
                self._record_intent(s, "entity", entities)
            if touched:
                self._record_intent(s, "relation", list(touched))
            s.flush()
            rels = self._relation_dicts(s, list(touched.values()))
            published = [memory_dict(r) for r in published]
        for data in published:
            self._publish(data, "ROLLBACK", previous=data["memory"], trace_id=trace_id, actor=actor)
        return {"memories": out_memories, "relations": rels, "entities": entities, "not_undone": not_undone}

    def add_consolidation_links(self, scope: Scope, links: list[dict], *, trace_id: str) -> list[dict]:
        """Memory links a pass found (memoryx.lifecycle.graph_upkeep), written with actor
        "consolidate:<trace id>" so a rollback of the pass removes exactly them. Links that exist already
        (any actor) and links to memories no longer live in the scope are skipped. Returns the links written."""
        from memoryx.stores.sql.links import link_dict
        from memoryx.stores.sql.schema import MemoryLinkRow

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

    def delete_links_of(self, trace_id: str) -> int:
        """Remove the memory links one consolidation pass wrote (its rollback)."""
        from memoryx.stores.sql.schema import MemoryLinkRow

        with self._tx(write=True) as s:
            return s.execute(sa.delete(MemoryLinkRow).where(MemoryLinkRow.actor == f"consolidate:{trace_id}")).rowcount or 0

    def layer_memories(self, scope: Scope, layer: str, *, limit: int = 20) -> list[dict]:
        """Live, visible memories of the scope in one layer (metadata "layer"), most important and most
        recent first (memoryx.lifecycle.layers; a memory without the key is not listed here)."""
        q = (select(MemoryRow).where(MemoryRow.deleted_at.is_(None), *scope_where_(MemoryRow, require_scope(scope)),
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

    @staticmethod
    def _relation_dicts(s, rels: list[RelationRow]) -> list[dict]:
        if not rels:
            return []
        from memoryx.stores.sql.schema import EntityRow

        ids = {r.source_id for r in rels} | {r.target_id for r in rels}
        names = dict(s.execute(select(EntityRow.id, EntityRow.name).where(EntityRow.id.in_(list(ids)))).all())
        return [relation_dict(r, names) for r in rels]

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
        from memoryx.core.owners import owner_scope

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
        from memoryx.stores.sql.values import scope_where

        q = (select(MemoryRow.status, sa.func.count()).where(MemoryRow.deleted_at.is_(None),
             *scope_where(MemoryRow, require_scope(scope))).group_by(MemoryRow.status))
        with self._tx() as s:
            return {k or "active": int(v) for k, v in s.execute(q).all()}

