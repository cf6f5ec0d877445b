"""Profile values (issue 13): the user and group profiles kept by the add graph's update_profile node.

A profile is a set of rows of `profile_values` under one subject ("user:alice", "group:g1"). Each row is one
value of one field with the memory ids it was read from. Changes are idempotent (a replayed add run after a
crash changes nothing twice): a memory id is appended once, `changed_at` moves only when the value starts,
ends or restarts, and ending a value keeps it as history (`ended_at`).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select

from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.schema import ProfileValueRow
from memoryx.stores.sql.values import iso, new_id, utc_now

PROFILE_OPS = ("set", "add", "end")


def _row_dict(row: ProfileValueRow) -> dict:
    return {"field": row.field, "value": row.value, "memory_ids": list(row.memory_ids or []), "source": row.source,
            "first_seen_at": iso(row.first_seen_at), "changed_at": iso(row.changed_at), "ended_at": iso(row.ended_at)}


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

    def apply_profile_changes(self, subject: str, changes: list[dict], *, at: datetime | None = None) -> int:
        """Apply [{"op": set|add|end, "field", "value", "key", "memory_id"?, "source"?}] in order; returns how many
        rows changed. `set` ends the field's other current values (a single-valued field such as home); `add`
        keeps them (a preference); `end` ends the value with that key (a retracted preference)."""
        now = at or utc_now()
        changed = 0
        with self._tx(write=True) as s:
            rows = {(r.field, r.value_key): r for r in
                    s.scalars(select(ProfileValueRow).where(ProfileValueRow.subject == subject))}
            for ch in changes:
                op, field, key = ch["op"], ch["field"], ch["key"][:255]
                row = rows.get((field, key))
                if op == "end":
                    if row is not None and row.ended_at is None:
                        row.ended_at = row.changed_at = now
                        changed += 1
                    continue
                if op == "set":
                    for (f, k), other in rows.items():
                        if f == field and k != key and other.ended_at is None:
                            other.ended_at = other.changed_at = now
                            changed += 1
                mid = ch.get("memory_id")
                if row is None:
                    row = ProfileValueRow(id=new_id(), subject=subject, field=field, value=ch["value"], value_key=key,
                                          memory_ids=[mid] if mid else [], source=ch.get("source") or "rule",
                                          first_seen_at=now, changed_at=now, ended_at=None)
                    s.add(row)
                    rows[(field, key)] = row
                    changed += 1
                    continue
                if row.ended_at is not None:
                    row.ended_at = None
                    row.changed_at = now
                    changed += 1
                if mid and mid not in (row.memory_ids or []):
                    row.memory_ids = [*(row.memory_ids or []), mid]  # a new list: JSON columns track assignment
                    changed += 1
        return changed

    def forget_profile_memories(self, subject: str, memory_ids: list[str], *, at: datetime | None = None) -> int:
        """Deleted memories no longer back any value; a value left without a memory ends."""
        gone = set(memory_ids)
        if not gone:
            return 0
        now = at or utc_now()
        changed = 0
        with self._tx(write=True) as s:
            for row in s.scalars(select(ProfileValueRow).where(ProfileValueRow.subject == subject)):
                ids = list(row.memory_ids or [])
                if not gone & set(ids):
                    continue
                row.memory_ids = [i for i in ids if i not in gone]
                if not row.memory_ids and row.ended_at is None:
                    row.ended_at = row.changed_at = now
                changed += 1
        return changed

    def delete_profile(self, subject: str) -> int:
        with self._tx(write=True) as s:
            return s.execute(delete(ProfileValueRow).where(ProfileValueRow.subject == subject)).rowcount or 0
