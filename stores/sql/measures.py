"""What the server's metrics read from the SQL store: the live memories' columns that layer, compression and
retention are computed from (never their text), run latencies since a time, and recent verdicts."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import select

from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.schema import JudgmentRow, MemoryRow

_M = MemoryRow.__table__.c
_J = JudgmentRow.__table__.c


class StoreMeasures(SQLStoreBase):
    def memory_measure_rows(self) -> list[dict]:
        """Every memory that is not deleted: status, memory_type, run_id, metadata, importance, access count and
        times (what lifecycle.layers / lifecycle.forgetting read)."""
        q = select(_M.id, _M.status, _M.memory_type, _M.run_id, _M["metadata"], _M.importance, _M.access_count,
                   _M.created_at, _M.last_accessed_at).where(_M.deleted_at.is_(None))
        with self._tx() as s:
            return [dict(r._mapping) for r in s.execute(q)]

    def run_latencies_since(self, after: datetime) -> tuple[list[int], datetime | None]:
        """Latencies (ms) of the runs that finished (done / failed) after `after`, and the latest finish seen."""
        q = select(_J.latency_ms, _J.updated_at).where(_J.updated_at > after, _J.latency_ms.is_not(None),
                                                       _J.status.in_(("done", "failed")))
        with self._tx() as s:
            rows = s.execute(q).all()
        return [int(r[0]) for r in rows], max((r[1] for r in rows), default=None)

    def verdict_counts(self, since: datetime) -> dict[str, int]:
        """{verdict: runs} of the verifications made since `since`."""
        q = (select(_J.verification_result, sa.func.count()).where(_J.is_verified.is_(True), _J.verified_at >= since)
             .group_by(_J.verification_result))
        with self._tx() as s:
            return {str(v): int(n) for v, n in s.execute(q).all() if v}
