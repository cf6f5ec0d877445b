"""Feedback on memories: POSITIVE / NEGATIVE / VERY_NEGATIVE with a reason, one row per call
(the latest row of a memory is its current feedback; feedback=None withdraws it)."""

from __future__ import annotations

from sqlalchemy import func, select

from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError, NotFoundError
from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.schema import FeedbackRow, MemoryRow
from memoryx.stores.sql.values import id_chunks, iso, new_id, scope_dict, scope_where, utc_now

FEEDBACK_VALUES = ("POSITIVE", "NEGATIVE", "VERY_NEGATIVE")


class MemoryFeedback(SQLStoreBase):
    """Feedback rows, their counts per scope and the latest feedback of given memories."""

    def add_feedback(self, memory_id: str, feedback: str | None, reason: str | None = None,
                     actor: str | None = None) -> dict:
        if feedback is not None and feedback not in FEEDBACK_VALUES:
            raise InvalidInputError(f"feedback must be one of {', '.join(FEEDBACK_VALUES)} or None, got {feedback!r}.")
        with self._tx(write=True) as s:
            memory = s.get(MemoryRow, memory_id)
            if memory is None:
                raise NotFoundError(f"No memory with id {memory_id!r}.")
            row = FeedbackRow(id=new_id(), memory_id=memory_id, **scope_dict(memory), feedback=feedback,
                              reason=reason, actor=actor, created_at=utc_now())
            s.add(row)
            s.flush()
            return {"id": row.id, "memory_id": memory_id, "feedback": feedback, "feedback_reason": reason,
                    "created_at": iso(row.created_at)}

    def latest_feedback(self, memory_ids: list[str]) -> dict[str, str | None]:
        """{memory id: its latest feedback value} for the ids that have any."""
        out: dict[str, tuple] = {}
        with self._tx() as s:
            for chunk in id_chunks(sorted(set(memory_ids))):
                rows = s.execute(select(FeedbackRow.memory_id, FeedbackRow.feedback, FeedbackRow.created_at,
                                        FeedbackRow.id).where(FeedbackRow.memory_id.in_(chunk))).all()
                for mid, value, created, rid in rows:
                    if mid not in out or (created, rid) > out[mid][1:]:
                        out[mid] = (value, created, rid)
        return {mid: v[0] for mid, v in out.items()}

    def feedback_counts(self, scope: Scope | None = None) -> dict:
        """Counts of the feedback given in a scope, per value (every call counts)."""
        with self._tx() as s:
            rows = s.execute(select(FeedbackRow.feedback, func.count()).where(*scope_where(FeedbackRow, scope))
                             .group_by(FeedbackRow.feedback)).all()
        counts = {v: 0 for v in FEEDBACK_VALUES}
        for value, n in rows:
            if value in counts:
                counts[value] += n
        return counts

    def feedback_rows(self, memory_id: str) -> list[dict]:
        with self._tx() as s:
            rows = s.scalars(select(FeedbackRow).where(FeedbackRow.memory_id == memory_id)
                             .order_by(FeedbackRow.created_at, FeedbackRow.id)).all()
            return [{"memory_id": r.memory_id, "feedback": r.feedback, "feedback_reason": r.reason,
                     "actor": r.actor, "created_at": iso(r.created_at)} for r in rows]
