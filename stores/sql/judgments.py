"""The judgment log: one row per add run (what the judge saw, decided and executed), human verification,
and the statistics over both."""

from __future__ import annotations

import math
from typing import Any

import sqlalchemy as sa
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from memoryx.core.scope import SCOPE_FIELDS, Scope
from memoryx.errors import InvalidInputError, NotFoundError, ScopeError
from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.core_rows import insert_row
from memoryx.stores.sql.schema import JUDGMENT_FIELDS, JudgmentRow, judgment_dict
from memoryx.stores.sql.values import new_id, require_scope, scope_where, utc_now

JUDGMENT_STATUSES = ("running", "done", "failed", "awaiting_review")
VERIFICATION_RESULTS = ("CORRECT", "INCORRECT", "PARTIAL")
_JUDGMENT_EXISTS = select(JudgmentRow.__table__.c.id).where(JudgmentRow.__table__.c.trace_id == sa.bindparam("trace_id"))


class JudgmentLog(SQLStoreBase):
    """Judgments by trace id: saved in steps during a run, verified by a human afterwards."""

    def save_judgment(self, trace_id: str, **fields: Any) -> None:
        """Upsert by trace_id; only the fields given are written (a run saves its judgment in steps).

        A judgment never changes scope: saving with a scope other than the record's raises ScopeError (a
        trace id chosen by one tenant cannot take over another tenant's record)."""
        if not trace_id:
            raise InvalidInputError("trace_id is required to save a judgment")
        scope = fields.pop("scope", None)
        unknown = set(fields) - set(JUDGMENT_FIELDS)
        if unknown:
            raise InvalidInputError(f"Unknown judgment fields {sorted(unknown)}; allowed: {', '.join(JUDGMENT_FIELDS)}, scope")
        if "status" in fields and fields["status"] not in JUDGMENT_STATUSES:
            raise InvalidInputError(f"status must be one of {JUDGMENT_STATUSES}, got {fields['status']!r}")
        if fields.get("latency_ms") is not None:
            fields["latency_ms"] = int(round(float(fields["latency_ms"])))
        values = dict(fields)
        if scope is not None:
            values.update({k: getattr(require_scope(scope), k) for k in SCOPE_FIELDS})
        for attempt in (1, 2):
            try:
                with self._tx(write=True) as s:
                    now = utc_now()
                    # an add's record is new: one Core SELECT and INSERT; a record saved in steps
                    # (review) is updated through the ORM
                    exists = s.execute(_JUDGMENT_EXISTS, {"trace_id": trace_id}).first() is not None
                    row = s.scalars(select(JudgmentRow).where(JudgmentRow.trace_id == trace_id)).first() if exists else None
                    if row is None:
                        insert_row(s, JudgmentRow(id=new_id(), trace_id=trace_id, created_at=now, updated_at=now,
                                                  is_verified=False, **values))
                    else:
                        if scope is not None:
                            _same_scope_or_refuse(row, scope, trace_id)
                        for key, value in values.items():
                            setattr(row, key, value)
                        row.updated_at = now
                return
            except IntegrityError:
                if attempt == 2:  # the other writer's row exists now; the second pass updates it
                    raise

    def get_judgment(self, trace_id: str) -> dict:
        with self._tx() as s:
            row = s.scalars(select(JudgmentRow).where(JudgmentRow.trace_id == trace_id)).first()
            if row is None:
                raise NotFoundError(f"No judgment with trace_id {trace_id}.")
            return judgment_dict(row)

    def list_judgments(self, scope: Scope | None = None, *, limit: int = 50, offset: int = 0,
                       status: str | None = None) -> list[dict]:
        q = select(JudgmentRow).where(*scope_where(JudgmentRow, scope))
        if status is not None:
            q = q.where(JudgmentRow.status == status)
        q = q.order_by(JudgmentRow.created_at.desc(), JudgmentRow.id.desc()).offset(max(0, offset)).limit(max(0, limit))
        with self._tx() as s:
            return [judgment_dict(r) for r in s.scalars(q)]

    def verify_judgment(self, trace_id: str, result: str, notes: str | None = None) -> dict:
        result_norm = (result or "").strip().upper() if isinstance(result, str) else ""
        if result_norm not in VERIFICATION_RESULTS:
            raise InvalidInputError(f"result must be one of {', '.join(VERIFICATION_RESULTS)}, got {result!r}")
        with self._tx(write=True) as s:
            row = s.scalars(select(JudgmentRow).where(JudgmentRow.trace_id == trace_id)).first()
            if row is None:
                raise NotFoundError(f"No judgment with trace_id {trace_id}.")
            row.is_verified = True
            row.verified_at = utc_now()
            row.verification_result = result_norm
            row.verification_notes = notes
            s.flush()
            return judgment_dict(row)

    def judgment_stats(self, scope: Scope | None = None) -> dict:
        """Accuracy of reviewed judgments, latency percentiles, execution success and decided events.

        by_event counts the events the judge decided (parsed_operations), which is what accuracy is about.
        """
        where = scope_where(JudgmentRow, scope)
        with self._tx() as s:
            rows = s.execute(select(JudgmentRow.is_verified, JudgmentRow.verification_result,
                                    JudgmentRow.latency_ms, JudgmentRow.execution_success,
                                    JudgmentRow.parsed_operations).where(*where)).all()
        by_result = {r: 0 for r in VERIFICATION_RESULTS}
        latencies: list[float] = []
        outcomes: list[bool] = []
        by_event: dict[str, int] = {}
        verified = 0
        for is_verified, result, latency, success, parsed in rows:
            if is_verified:
                verified += 1
                if result in by_result:
                    by_result[result] += 1
            if latency is not None:
                latencies.append(float(latency))
            if success is not None:
                outcomes.append(bool(success))
            ops = parsed.get("memory", []) if isinstance(parsed, dict) else parsed
            for op in ops if isinstance(ops, list) else []:
                if isinstance(op, dict) and op.get("event"):
                    event_name = str(op["event"]).upper()
                    by_event[event_name] = by_event.get(event_name, 0) + 1
        latencies.sort()
        return {
            "total": len(rows),
            "verified": verified,
            "accuracy": by_result["CORRECT"] / verified if verified else None,
            "by_result": by_result,
            "latency_ms": {
                "p50": _percentile(latencies, 50), "p90": _percentile(latencies, 90),
                "p99": _percentile(latencies, 99),
                "mean": sum(latencies) / len(latencies) if latencies else None,
            },
            "success_rate": sum(outcomes) / len(outcomes) if outcomes else None,
            "by_event": by_event,
        }


def _same_scope_or_refuse(row: JudgmentRow, scope: Scope, trace_id: str) -> None:
    current = {k: getattr(row, k) for k in SCOPE_FIELDS}
    if not any(current.values()):
        return  # a record saved before its scope was known takes the run's scope once
    if current != {k: getattr(scope, k) for k in SCOPE_FIELDS}:
        raise ScopeError(f"trace_id {trace_id!r} belongs to another scope's judgment; a judgment never changes "
                         f"scope. Let MemoryX generate the trace id (pass none).", trace_id=trace_id)


def _percentile(sorted_values: list[float], pct: float) -> float | None:
    if not sorted_values:
        return None
    rank = max(1, math.ceil(pct / 100 * len(sorted_values)))  # nearest-rank
    return float(sorted_values[rank - 1])
