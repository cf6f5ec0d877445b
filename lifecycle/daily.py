"""The judgment log's daily accuracy report, and the daily job of `memoryx serve`.

A report covers the records created on one UTC day in one scope ("*": every scope): how many were verified
CORRECT / INCORRECT / PARTIAL, the accuracy (CORRECT / verified), judgment latency p50 / p95, failures, and the
executed events by kind. A finished day's report is kept (stores/sql/findings.py) and read back; today's is
always recomputed. A verification drops the kept reports of the days it touches, so late reviews count.

The daily job: the audit scan of every scope, today's and yesterday's reports, a consolidation pass where
settings.consolidate_on_daily_job is set, then the `schedule.daily` event with what it did.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from memoryx.core.events import SCHEDULE_DAILY
from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError
from memoryx.lifecycle.audit import scan
from memoryx.stores.sql.values import UTC, utc_now

if TYPE_CHECKING:
    from memoryx.runtime.services import Services

ALL_SCOPES = "*"
MAX_DAYS = 366


def _pct(values: list[float], pct: float) -> float | None:
    if not values:
        return None
    return float(values[max(1, math.ceil(pct / 100 * len(values))) - 1])  # nearest rank


def day_report(day: str, rows: list[dict], latency_alert_ms: int) -> dict:
    by_result = {"CORRECT": 0, "INCORRECT": 0, "PARTIAL": 0}
    by_event: dict[str, int] = {}
    latencies = sorted(float(r["latency_ms"]) for r in rows if r.get("latency_ms") is not None)
    for r in rows:
        if r.get("is_verified") and r.get("verification_result") in by_result:
            by_result[r["verification_result"]] += 1
        ops = r.get("executed_operations")
        for op in (ops.get("memory", []) if isinstance(ops, dict) else ops) or []:
            if isinstance(op, dict) and op.get("event"):
                by_event[str(op["event"]).upper()] = by_event.get(str(op["event"]).upper(), 0) + 1
    verified = sum(by_result.values())
    p95 = _pct(latencies, 95)
    return {
        "day": day, "total": len(rows), "verified": verified, "by_result": by_result,
        "accuracy": by_result["CORRECT"] / verified if verified else None,
        "latency_ms": {"p50": _pct(latencies, 50), "p95": p95},
        "latency_alert": p95 is not None and p95 > latency_alert_ms,
        "failed": sum(1 for r in rows if r.get("status") == "failed" or r.get("execution_success") is False),
        "by_event": by_event,
    }


def daily_report(services: "Services", scope: Scope | None = None, *, days: int = 30,
                 now: datetime | None = None) -> dict:
    """{"days": [report per day, oldest first], "scope": key}: the last `days` UTC days including today."""
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= MAX_DAYS:
        raise InvalidInputError(f"days must be an integer from 1 to {MAX_DAYS}, got {days!r}.")
    now = now or utc_now()
    today = now.astimezone(UTC).date()
    wanted = [(today - timedelta(days=n)).isoformat() for n in range(days - 1, -1, -1)]
    key = scope.key() if scope is not None else ALL_SCOPES
    kept = services.sql.daily_reports(key, wanted[:-1])
    missing = [d for d in wanted if d not in kept]
    computed: dict[str, dict] = {}
    if missing:
        start = datetime.fromisoformat(missing[0]).replace(tzinfo=UTC)
        by_day: dict[str, list[dict]] = {d: [] for d in missing}
        for row in services.sql.judgment_rows_between(scope, start):
            day = row["created_at"].astimezone(UTC).date().isoformat()
            if day in by_day:
                by_day[day].append(row)
        for day in missing:
            computed[day] = day_report(day, by_day[day], services.settings.report_latency_alert_ms)
            if day != wanted[-1]:  # a finished day is kept; today still changes
                services.sql.save_daily_report(day, key, computed[day])
    return {"scope": key, "days": [kept.get(d) or computed[d] for d in wanted]}


def run_daily_job(memory: Any, *, now: datetime | None = None) -> dict:
    """One run of the daily job (see the module docstring). Returns what it did, also the event's payload."""
    services = memory.services
    audit = scan(services, None, now=now)
    report = daily_report(services, None, days=2, now=now)
    consolidated = 0
    if services.settings.consolidate_on_daily_job:
        for scope in services.sql.memory_owner_scopes():
            memory.consolidate(**scope.as_dict())
            consolidated += 1
    summary = {"findings": len(audit["findings"]), "new_findings": audit["stored"], "scanned": audit["scanned"],
               "report_days": [d["day"] for d in report["days"]], "consolidated_scopes": consolidated}
    services.sql.events.publish(SCHEDULE_DAILY, summary)
    return summary

