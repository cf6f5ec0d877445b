"""The projection outbox: projection writes that are pending or failed, one job per (kind, target), so the
vector and graph projections can be retried until they match the SQL truth.

Jobs are born inside the transaction of the SQL change they project (`SQLStoreBase._record_intent`), and
each new write to a target gives its job a new id. Whoever projects reads the job ids first
(`projection_jobs`) and deletes only those afterwards (`clear_projections`): a write that lands while the
projection is in flight keeps its job.
"""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from memoryx.errors import InvalidInputError
from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.schema import OutboxRow, outbox_dict
from memoryx.stores.sql.values import new_id, utc_now

PROJECTION_KINDS = ("memory", "entity", "relation", "scope")


class ProjectionOutbox(SQLStoreBase):
    """Pending projection jobs: written with the SQL change (or on failure), cleared once projected."""

    def enqueue_projection(self, *, kind: str, target_id: str, error: str) -> None:
        """Remember a projection write that failed; one pending job per (kind, target_id)."""
        if kind not in PROJECTION_KINDS:
            raise InvalidInputError(f"kind must be one of {PROJECTION_KINDS}, got {kind!r}")
        if not target_id:
            raise InvalidInputError("target_id is required")
        for attempt in (1, 2):
            try:
                with self._tx(write=True) as s:
                    now = utc_now()
                    row = s.scalars(select(OutboxRow).where(OutboxRow.kind == kind,
                                                            OutboxRow.target_id == target_id)).first()
                    if row is None:
                        s.add(OutboxRow(id=new_id(), kind=kind, target_id=target_id, error=error, attempts=0,
                                        created_at=now, updated_at=now))
                    else:
                        row.error, row.updated_at = error, now
                return
            except IntegrityError:
                if attempt == 2:
                    raise

    def enqueue_projections(self, *, kind: str, target_ids: list[str], error: str) -> None:
        """Batch form of enqueue_projection, in one transaction (used to record write intents)."""
        if kind not in PROJECTION_KINDS:
            raise InvalidInputError(f"kind must be one of {PROJECTION_KINDS}, got {kind!r}")
        ids = list(dict.fromkeys(t for t in target_ids if t))
        if not ids:
            return
        for attempt in (1, 2):
            try:
                with self._tx(write=True) as s:
                    now = utc_now()
                    have = set(s.scalars(select(OutboxRow.target_id).where(OutboxRow.kind == kind,
                                                                          OutboxRow.target_id.in_(ids))))
                    s.add_all(OutboxRow(id=new_id(), kind=kind, target_id=t, error=error, attempts=0,
                                        created_at=now, updated_at=now) for t in ids if t not in have)
                    if have:
                        s.execute(sa.update(OutboxRow).where(OutboxRow.kind == kind, OutboxRow.target_id.in_(have))
                                  .values(error=error, updated_at=now))
                return
            except IntegrityError:  # a concurrent writer queued the same target: the second pass sees it
                if attempt == 2:
                    raise

    def projection_jobs(self, *, kind: str, target_ids: list[str]) -> list[str]:
        """Ids of the queued jobs of these targets (read BEFORE projecting; cleared after)."""
        ids = list(dict.fromkeys(t for t in target_ids if t))
        if not ids:
            return []
        with self._tx() as s:
            return list(s.scalars(select(OutboxRow.id).where(OutboxRow.kind == kind, OutboxRow.target_id.in_(ids))))

    def clear_projections(self, job_ids: list[str]) -> None:
        """Drop these jobs (their projection has just been written). A job re-queued by a later write has a
        new id and stays."""
        if not job_ids:
            return
        with self._tx(write=True) as s:
            s.execute(sa.delete(OutboxRow).where(OutboxRow.id.in_(list(job_ids))))

    def pending_projections(self, limit: int = 500, *, min_age_s: float = 0.0) -> list[dict]:
        """Queued jobs, oldest first. `min_age_s` skips jobs younger than that: the periodic replay leaves
        the jobs of writes whose own projection is still running to their writer."""
        self.flush_cleared_projections()
        q = select(OutboxRow)
        if min_age_s > 0:
            q = q.where(OutboxRow.updated_at <= utc_now() - timedelta(seconds=min_age_s))
        q = q.order_by(OutboxRow.created_at, OutboxRow.id).limit(max(0, limit))
        with self._tx() as s:
            return [outbox_dict(r) for r in s.scalars(q)]

    def count_pending_projections(self) -> int:
        self.flush_cleared_projections()
        with self._tx() as s:
            return int(s.scalar(select(sa.func.count()).select_from(OutboxRow)) or 0)

    def complete_projection(self, job_id: str) -> None:
        # Idempotent: two retriers may finish the same job.
        with self._tx(write=True) as s:
            s.execute(sa.delete(OutboxRow).where(OutboxRow.id == job_id))

    def fail_projection(self, job_id: str, error: str) -> None:
        # A job another retrier already completed is simply gone: nothing to record.
        with self._tx(write=True) as s:
            s.execute(sa.update(OutboxRow).where(OutboxRow.id == job_id)
                      .values(attempts=OutboxRow.attempts + 1, error=error, updated_at=utc_now()))
