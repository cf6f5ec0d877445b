"""The rollback of a consolidation pass in the SQL store: what history rows cannot carry. A pass notes, for
each memory it changes, the metadata keys and fields as they were (`remember_before`) and as it left them
(`undo_entry`); it reads the entities it is about to merge away (`entity_rows`). Its rollback
(`undo_consolidation`, driven by memoryx.lifecycle.rollback) writes back what still holds what the pass left,
moves re-pointed relations back and removes the memory links the pass wrote (`delete_links_of`). A mixin
of SQLStore beside MemoryLifecycle (lifecycle.py), which writes the pass.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import select

from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.schema import EntityRow, HistoryRow, MemoryLinkRow, MemoryRow, RelationRow, memory_dict
from memoryx.stores.sql.values import as_utc, id_chunks, iso, new_id, utc_now

TIME_FIELDS = ("last_accessed_at",)  # datetime fields: noted as ISO text


def plain_value(field: str, value):
    """A field's value as the undo record notes it."""
    return iso(value) if field in TIME_FIELDS else value


def remember_before(before: dict[str, dict], row: MemoryRow, *, meta_keys=(), fields=(), access_added: int = 0) -> None:
    """Note what a pass is about to change on `row`, the first time only: the metadata keys (their value,
    or that they were absent), the columns in `fields`, the accesses folded in. A rollback of the pass
    restores each one that still holds what the pass left (`undo_entry`) and leaves later changes alone."""
    b = before.setdefault(row.id, {"meta": {}, "meta_absent": [], "fields": {}, "access_added": 0})
    meta = dict(row.meta or {})
    for k in sorted(meta_keys):
        if k not in b["meta"] and k not in b["meta_absent"]:
            if k in meta:
                b["meta"][k] = meta[k]
            else:
                b["meta_absent"].append(k)
    for f in fields:
        b["fields"].setdefault(f, plain_value(f, getattr(row, f)))
    b["access_added"] += int(access_added)


def undo_entry(b: dict, row: MemoryRow) -> dict:
    """The undo record of one memory: what `remember_before` noted, with what the pass left (a rollback writes
    a value back only where the memory still holds what the pass left)."""
    meta = dict(row.meta or {})
    return {**b, "after_meta": {k: meta.get(k) for k in [*b["meta"], *b["meta_absent"]]},
            "after_fields": {f: plain_value(f, getattr(row, f)) for f in b["fields"]}}


def _valid_twin(s, rel: RelationRow, src: str, dst: str, memory_id: str | None) -> bool:
    """A valid relation other than `rel` stating the same fact at these ends for this memory (the unique
    index allows one)."""
    return s.scalars(select(RelationRow.id).where(
        RelationRow.scope_key == rel.scope_key, RelationRow.source_id == src, RelationRow.relation == rel.relation,
        RelationRow.target_id == dst, RelationRow.id != rel.id, RelationRow.valid.is_(True),
        RelationRow.memory_id.is_(None) if memory_id is None else RelationRow.memory_id == memory_id)).first() is not None


class ConsolidationUndo(SQLStoreBase):
    """The part of a consolidation pass's rollback that history rows cannot carry."""

    def entity_rows(self, ids: list[str]) -> list[dict]:
        """Entity rows as stored (scope_key included), read before a pass merges them away: what a rollback
        of the pass writes back (`undo_consolidation`)."""
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
                    cur = plain_value(f, getattr(row, f))
                    if cur == b["after_fields"].get(f) and cur != v:
                        setattr(row, f, as_utc(v) if f in TIME_FIELDS else v)
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

    def delete_links_of(self, trace_id: str) -> int:
        """Remove the memory links one consolidation pass wrote (its rollback)."""
        with self._tx(write=True) as s:
            return s.execute(sa.delete(MemoryLinkRow).where(MemoryLinkRow.actor == f"consolidate:{trace_id}")).rowcount or 0
