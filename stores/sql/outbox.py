"""The projection outbox: projection writes that are pending or failed, one job per (kind, target), so the
vector and graph projections can be retried until they match the SQL truth."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from memoryx.errors import InvalidInputError
from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.schema import OutboxRow, outbox_dict
from memoryx.stores.sql.values import new_id, utc_now

PROJECTION_KINDS = ("memory", "entity", "relation", "scope")


class ProjectionOutbox(SQLStoreBase):
    """Pending projection jobs: enqueued on failure (or as intent), cleared once projected."""

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

    def clear_projections(self, *, kind: str, target_ids: list[str]) -> None:
        """Drop pending jobs of these targets (their projection has just been written)."""
        if not target_ids:
            return
        with self._tx(write=True) as s:
            s.execute(sa.delete(OutboxRow).where(OutboxRow.kind == kind, OutboxRow.target_id.in_(list(target_ids))))

    def pending_projections(self, limit: int = 500) -> list[dict]:
        q = select(OutboxRow).order_by(OutboxRow.created_at, OutboxRow.id).limit(max(0, limit))
        with self._tx() as s:
            return [outbox_dict(r) for r in s.scalars(q)]

    def complete_projection(self, job_id: str) -> None:
        # Idempotent: two retriers may finish the same job.
        with self._tx(write=True) as s:
            s.execute(sa.delete(OutboxRow).where(OutboxRow.id == job_id))

    def fail_projection(self, job_id: str, error: str) -> None:
        # A job another retrier already completed is simply gone: nothing to record.
        with self._tx(write=True) as s:
            s.execute(sa.update(OutboxRow).where(OutboxRow.id == job_id)
                      .values(attempts=OutboxRow.attempts + 1, error=error, updated_at=utc_now()))
