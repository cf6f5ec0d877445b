"""Import support (memoryx.api.export_import): a memory's history replaced by the exported one."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete

from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.schema import HistoryRow
from memoryx.stores.sql.values import new_id, utc_now


class HistoryTransfer(SQLStoreBase):
    def replace_history(self, memory_id: str, events: list[dict]) -> None:
        """The history rows of `memory_id` become `events` (oldest first), as an export recorded them."""
        with self._tx(write=True) as s:
            s.execute(delete(HistoryRow).where(HistoryRow.memory_id == memory_id))
            for e in events:
                when = e.get("created_at")
                s.add(HistoryRow(id=new_id(), memory_id=memory_id, event=e.get("event") or "ADD",
                                 old_memory=e.get("old_memory"), new_memory=e.get("new_memory"),
                                 actor=e.get("actor") or "import", trace_id=e.get("trace_id"),
                                 created_at=datetime.fromisoformat(when) if when else utc_now()))
