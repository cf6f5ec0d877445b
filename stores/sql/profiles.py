"""Profile values: the user and group profiles kept by the add graph's update_profile node.

A profile is a set of rows of `profile_values` under one subject ("user:alice", "group:g1"). Each row is one
value of one field with the memory ids it was read from. Changes are idempotent (a replayed add run after a
crash changes nothing twice): a memory id is appended once, `changed_at` moves only when the value starts,
ends or restarts, and ending a value keeps it as history (`ended_at`).

Incremental: a change reads only the rows it can touch (the values it names, and the current values
of a single-valued field it sets), never the whole profile, which grows with every preference the user states;
reads and writes are Core statements (no ORM unit of work) and join the caller's `SQLStore.transaction()`.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String, and_, cast, delete, or_, select, update
from sqlalchemy.sql import bindparam

from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.schema import MemoryRow, ProfileValueRow
from memoryx.stores.sql.values import id_chunks, iso, new_id, utc_now

PROFILE_OPS = ("set", "add", "end")

_T = ProfileValueRow.__table__
_MUTABLE = ("memory_ids", "changed_at", "ended_at")


def _row_dict(row: ProfileValueRow) -> dict:
    return {"field": row.field, "value": row.value, "memory_ids": list(row.memory_ids or []), "source": row.source,
            "first_seen_at": iso(row.first_seen_at), "changed_at": iso(row.changed_at), "ended_at": iso(row.ended_at)}


def _save(s, inserted: list[dict], changed: dict[str, dict]) -> None:
    """New rows in one INSERT, changed rows in one executemany UPDATE of their mutable columns."""
    if inserted:
        s.execute(_T.insert(), inserted)
    if changed:
        # bound names apart from the column names (SQLAlchemy reserves those for its own SET parameters)
        s.execute(update(_T).where(_T.c.id == bindparam("_id")).values({c: bindparam(f"_{c}") for c in _MUTABLE}),
                  [{"_id": rid, **{f"_{c}": row[c] for c in _MUTABLE}} for rid, row in changed.items()])


class ProfileValues(SQLStoreBase):
    """Rows of the user and group profiles."""

    def profile_values(self, subject: str, *, include_ended: bool = False) -> list[dict]:
        """The subject's values, oldest first (ended ones too when asked)."""
        q = select(ProfileValueRow).where(ProfileValueRow.subject == subject)
        if not include_ended:
            q = q.where(ProfileValueRow.ended_at.is_(None))
        with self._tx() as s:
            rows = s.scalars(q.order_by(ProfileValueRow.first_seen_at, ProfileValueRow.id)).all()
            return [_row_dict(r) for r in rows]

    def profile_sources(self, memory_ids: list[str]) -> dict[str, dict]:
        """{id: {"user_id", "group_id", "metadata", "deleted"}} of memories (soft-deleted ones included): who a
        memory an add run wrote or deleted belongs to. Four columns by primary key, no ORM rows."""
        out: dict[str, dict] = {}
        with self._tx() as s:
            for chunk in id_chunks(list(dict.fromkeys(i for i in memory_ids if i))):
                q = select(MemoryRow.id, MemoryRow.user_id, MemoryRow.group_id, MemoryRow.meta,
                           MemoryRow.deleted_at).where(MemoryRow.id.in_(chunk))
                for mid, user_id, group_id, meta, deleted_at in s.execute(q):
                    out[mid] = {"user_id": user_id, "group_id": group_id, "metadata": dict(meta or {}),
                                "deleted": deleted_at is not None}
        return out

    def apply_profile_changes(self, subject: str, changes: list[dict], *, at: datetime | None = None) -> int:
        """Apply [{"op": set|add|end, "field", "value", "key", "memory_id"?, "source"?}] in order; returns how many
        rows changed. `set` ends the field's other current values (a single-valued field such as home); `add`
        keeps them (a preference); `end` ends the value with that key (a retracted preference).

        Reads only the rows the changes can touch: each (field, key) named, and the current values of each
        field a `set` names."""
        if not changes:
            return 0
        now = at or utc_now()
        changes = [{**ch, "key": ch["key"][:255]} for ch in changes]
        pairs = {(ch["field"], ch["key"]) for ch in changes}
        set_fields = sorted({ch["field"] for ch in changes if ch["op"] == "set"})
        keys_of: dict[str, list[str]] = {}
        for field, key in sorted(pairs):
            keys_of.setdefault(field, []).append(key)
        # one IN list per field (in chunks), not one condition per pair: SQLite refuses an expression more
        # than 1,000 deep, which a long conversation's likes reached
        wanted = [and_(_T.c.field == field, _T.c.value_key.in_(chunk))
                  for field, keys in keys_of.items() for chunk in id_chunks(keys)]
        if set_fields:
            wanted.append(and_(_T.c.field.in_(set_fields), _T.c.ended_at.is_(None)))
        changed = 0
        with self._tx(write=True) as s:
            rows: dict[tuple[str, str], dict] = {}
            for r in s.execute(select(_T).where(_T.c.subject == subject, or_(*wanted))).mappings():
                row = dict(r)
                row["memory_ids"] = list(row["memory_ids"] or [])
                rows[(row["field"], row["value_key"])] = row
            inserted: list[dict] = []
            dirty: dict[str, dict] = {}
            new_ids: set[str] = set()

            def touch(row: dict) -> None:
                if row["id"] not in new_ids:
                    dirty[row["id"]] = row

            for ch in changes:
                op, field, key = ch["op"], ch["field"], ch["key"]
                row = rows.get((field, key))
                if op == "end":
                    if row is not None and row["ended_at"] is None:
                        row["ended_at"] = row["changed_at"] = now
                        touch(row)
                        changed += 1
                    continue
                if op == "set":
                    for (f, k), other in rows.items():
                        if f == field and k != key and other["ended_at"] is None:
                            other["ended_at"] = other["changed_at"] = now
                            touch(other)
                            changed += 1
                mid = ch.get("memory_id")
                if row is None:
                    row = {"id": new_id(), "subject": subject, "field": field, "value": ch["value"], "value_key": key,
                           "memory_ids": [mid] if mid else [], "source": ch.get("source") or "rule",
                           "first_seen_at": now, "changed_at": now, "ended_at": None}
                    inserted.append(row)  # the dict itself: later changes of this batch land in the INSERT
                    new_ids.add(row["id"])
                    rows[(field, key)] = row
                    changed += 1
                    continue
                if row["ended_at"] is not None:
                    row["ended_at"] = None
                    row["changed_at"] = now
                    touch(row)
                    changed += 1
                if mid and mid not in row["memory_ids"]:
                    row["memory_ids"] = [*row["memory_ids"], mid]
                    touch(row)
                    changed += 1
            _save(s, inserted, dirty)
        return changed

    def forget_profile_memories(self, subject: str, memory_ids: list[str], *, at: datetime | None = None) -> int:
        """Deleted memories no longer back any value; a value left without a memory ends. Reads only the rows
        whose memory ids mention one of them (a text match on the JSON list, checked exactly here)."""
        gone = set(i for i in memory_ids if i)
        if not gone:
            return 0
        now = at or utc_now()
        changed: dict[str, dict] = {}
        text = cast(_T.c.memory_ids, String)
        mentions = or_(*[text.like(f"%{i}%") for i in sorted(gone)])
        with self._tx(write=True) as s:
            for r in s.execute(select(_T.c.id, _T.c.memory_ids, _T.c.changed_at, _T.c.ended_at)
                               .where(_T.c.subject == subject, mentions)).mappings():
                ids = list(r["memory_ids"] or [])
                if not gone & set(ids):
                    continue
                row = {"memory_ids": [i for i in ids if i not in gone], "changed_at": r["changed_at"],
                       "ended_at": r["ended_at"]}
                if not row["memory_ids"] and row["ended_at"] is None:
                    row["ended_at"] = row["changed_at"] = now
                changed[r["id"]] = row
            _save(s, [], changed)
        return len(changed)

    def delete_profile(self, subject: str) -> int:
        with self._tx(write=True) as s:
            return s.execute(delete(ProfileValueRow).where(ProfileValueRow.subject == subject)).rowcount or 0
