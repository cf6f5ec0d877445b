"""Settings a store's contents depend on, recorded by the first process that opens it (the `store_settings`
table): a later process configured otherwise learns what the store holds instead of mixing its own in."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.schema import MemoryRow, StoreSettingRow
from memoryx.stores.sql.values import utc_now


class StoreSettings(SQLStoreBase):
    """Read and record-once of store settings; whether the store holds any memory yet."""

    def store_setting(self, key: str) -> str | None:
        with self._tx() as s:
            row = s.get(StoreSettingRow, key)
            return None if row is None else row.value

    def record_store_setting(self, key: str, value: str) -> str:
        """Record `value` under `key` unless a value is recorded already; returns the value the store keeps."""
        try:
            with self._tx(write=True) as s:
                row = s.get(StoreSettingRow, key)
                if row is not None:
                    return row.value
                s.add(StoreSettingRow(key=key, value=value, recorded_at=utc_now()))
                return value
        except IntegrityError:  # another process recorded it between the read and the insert
            recorded = self.store_setting(key)
            if recorded is None:
                raise
            return recorded

    def holds_memories(self) -> bool:
        """Whether any memory row exists, in any scope or state."""
        with self._tx() as s:
            return s.execute(select(MemoryRow.id).limit(1)).first() is not None
