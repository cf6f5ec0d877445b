"""The judgment log's audit in the SQL store: the records an audit reads, the findings it stores (once each:
a finding's id is derived from what was found), their dismissal and link to a verification, and the daily
reports kept per day and scope."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from memoryx.core.scope import SCOPE_FIELDS, Scope
from memoryx.errors import InvalidInputError, NotFoundError
from memoryx.stores.sql.base import SQLStoreBase
from memoryx.stores.sql.schema import DailyReportRow, FindingRow, JudgmentRow, finding_dict
from memoryx.stores.sql.values import id_chunks, iso, new_id, scope_where, utc_now

FINDING_FIELDS = ("id", "kind", "severity", "trace_ids", "memory_id", "detail", "event_at")
_J = JudgmentRow.__table__.c
# what an audit or a report reads of a record: never the conversation itself
_AUDIT_COLUMNS = (_J.trace_id, _J.created_at, _J.status, _J.latency_ms, _J.execution_success, _J.error_message,
                  _J.parsed_operations, _J.executed_operations, _J.is_verified, _J.verification_result,
                  _J.user_id, _J.agent_id, _J.run_id, _J.group_id)


class JudgmentAudits(SQLStoreBase):
    """Findings by id, daily reports by (day, scope key), and the slice of the judgment log both read."""

    def judgment_rows_between(self, scope: Scope | None, since: datetime, until: datetime | None = None) -> list[dict]:
        """The audit columns of the records created in [since, until), oldest first (Core: no ORM objects)."""
        q = select(*_AUDIT_COLUMNS).where(_J.created_at >= since, *scope_where(JudgmentRow, scope))
        if until is not None:
            q = q.where(_J.created_at < until)
        q = q.order_by(_J.created_at, _J.id)
        with self._tx() as s:
            return [dict(r._mapping) for r in s.execute(q)]

    def save_findings(self, findings: list[dict]) -> list[str]:
        """Store the findings whose id is new; returns those ids (a finding seen again is left as it is, dismissed
        or not)."""
        if not findings:
            return []
        by_id = {f["id"]: f for f in findings}
        with self._tx() as s:
            have = set()
            for chunk in id_chunks(sorted(by_id)):
                have.update(s.scalars(select(FindingRow.id).where(FindingRow.id.in_(chunk))))
        fresh = [f for i, f in by_id.items() if i not in have]
        rows = [{**{k: f.get(k) for k in FINDING_FIELDS}, **{k: f.get(k) for k in SCOPE_FIELDS},
                 "found_at": f.get("found_at_dt") or utc_now()} for f in fresh]
        if not rows:
            return []
        try:
            with self._tx(write=True) as s:  # one transaction for the lot: a day's scan stores thousands
                s.execute(FindingRow.__table__.insert(), rows)
            return [r["id"] for r in rows]
        except IntegrityError:
            pass  # a concurrent scan stored some of them first: store the rest one by one
        stored = []
        for row in rows:
            try:
                with self._tx(write=True) as s:
                    s.execute(FindingRow.__table__.insert(), [row])
                stored.append(row["id"])
            except IntegrityError:
                continue
        return stored

    def list_findings(self, scope: Scope | None = None, *, kinds: list[str] | None = None,
                      since: datetime | None = None, dismissed: bool | None = False, limit: int = 100,
                      offset: int = 0) -> list[dict]:
        """Stored findings, newest first; `dismissed` None lists both."""
        q = select(FindingRow).where(*scope_where(FindingRow, scope))
        if kinds:
            q = q.where(FindingRow.kind.in_(kinds))
        if since is not None:
            q = q.where(FindingRow.found_at >= since)
        if dismissed is not None:
            q = q.where(FindingRow.dismissed_at.is_not(None) if dismissed else FindingRow.dismissed_at.is_(None))
        q = q.order_by(FindingRow.found_at.desc(), FindingRow.id).offset(max(0, offset)).limit(max(0, limit))
        with self._tx() as s:
            return [finding_dict(r) for r in s.scalars(q)]

    def get_finding(self, finding_id: str) -> dict:
        with self._tx() as s:
            row = s.get(FindingRow, finding_id)
            if row is None:
                raise NotFoundError(f"No finding with id {finding_id!r}.")
            return finding_dict(row)

    def settle_finding(self, finding_id: str, *, dismiss: bool = False, reason: str | None = None,
                       verification_trace_id: str | None = None) -> dict:
        """Dismiss a finding (with a reason), or link it to the verified run that settles it."""
        with self._tx(write=True) as s:
            row = s.get(FindingRow, finding_id)
            if row is None:
                raise NotFoundError(f"No finding with id {finding_id!r}.")
            if verification_trace_id is not None:
                verified = s.execute(select(_J.is_verified).where(_J.trace_id == verification_trace_id)).scalar()
                if verified is None:
                    raise NotFoundError(f"No judgment with trace_id {verification_trace_id!r}.")
                if not verified:
                    raise InvalidInputError(f"Judgment {verification_trace_id!r} is not verified yet; verify it first "
                                            f"(POST /v1/judgments/verify).")
                row.verification_trace_id = verification_trace_id
            if dismiss:
                row.dismissed_at = utc_now()
                row.dismissed_reason = reason
            s.flush()
            return finding_dict(row)

    def daily_reports(self, scope_key: str, days: list[str]) -> dict[str, dict]:
        """{day: stored report} of the given days that have one."""
        with self._tx() as s:
            rows = s.execute(select(DailyReportRow.day, DailyReportRow.report, DailyReportRow.computed_at)
                             .where(DailyReportRow.scope_key == scope_key, DailyReportRow.day.in_(days))).all()
        return {day: {**report, "computed_at": iso(at)} for day, report, at in rows}

    def save_daily_report(self, day: str, scope_key: str, report: dict[str, Any]) -> None:
        """Keep (or replace) the report of one day and scope key."""
        with self._tx(write=True) as s:
            s.execute(sa.delete(DailyReportRow).where(DailyReportRow.day == day, DailyReportRow.scope_key == scope_key))
            s.add(DailyReportRow(id=new_id(), day=day, scope_key=scope_key, report=report, computed_at=utc_now()))

    def forget_daily_reports(self, days: list[str]) -> int:
        """Drop the kept reports of these days (every scope): a verification changed their numbers."""
        if not days:
            return 0
        with self._tx(write=True) as s:
            return s.execute(sa.delete(DailyReportRow).where(DailyReportRow.day.in_(sorted(set(days))))).rowcount or 0

    def judgment_days(self, trace_ids: list[str]) -> list[str]:
        """The UTC days (YYYY-MM-DD) the given runs were recorded on."""
        with self._tx() as s:
            out = set()
            for chunk in id_chunks(sorted(set(trace_ids))):
                for at in s.scalars(select(_J.created_at).where(_J.trace_id.in_(chunk))):
                    out.add(iso(at)[:10])
        return sorted(out)
