"""The judgment log's audit: what a scan of the log finds that a human should look at.

Kinds (thresholds are settings, `audit_*`):
- add_then_delete: a memory ADDed by one run and DELETEd (or contradicted by an UPDATE) by a later run within
  audit_undo_window_hours: the first judgment, or the second, was probably wrong.
- churn: a memory changed (UPDATE / DELETE) at least audit_churn_changes times within audit_churn_window_hours.
- parsed_vs_executed: an operation the judge decided that was not executed, or executed as another event.
- slow: a run whose judgment took longer than audit_slow_ms.
- failed: a run that failed.
- unverified: records older than audit_unverified_age_hours that nobody verified, a deterministic sample of
  audit_unverified_sample (the same ones come back until reviewed).

A finding's id is derived from its kind, its anchor run and its memory, so storing the findings of two
overlapping scans stores each once. The rules read only the records' operations and timings (one query,
stores/sql/findings.py `judgment_rows_between`), never the conversations.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Iterable

from memoryx.core.instants import instant, span_back
from memoryx.core.scope import SCOPE_FIELDS, Scope
from memoryx.errors import InvalidInputError
from memoryx.stores.sql.values import iso, utc_now

if TYPE_CHECKING:
    from memoryx.runtime.services import Services
    from memoryx.settings import Settings

KINDS = ("add_then_delete", "churn", "parsed_vs_executed", "slow", "failed", "unverified")
SEVERITY = {"add_then_delete": "warning", "churn": "warning", "parsed_vs_executed": "error", "slow": "warning",
            "failed": "error", "unverified": "info"}
_CHANGES = ("UPDATE", "DELETE")
_WRITES = ("ADD", "UPDATE", "DELETE")
# words that turn a statement into its opposite: an UPDATE whose new text gains one contradicts the old text
_NEGATION = re.compile(r"\b(?:no longer|not|never|don't|doesn't|didn't|isn't|wasn't|stopped|anymore|no more)\b"
                       r"|不再|不喜欢|不是|没有|已经不", re.IGNORECASE)


def check_kinds(kinds: Iterable[str] | str | None) -> list[str]:
    """The kinds asked for (a list or a comma-separated string; None: all), each one of KINDS."""
    if kinds is None:
        return list(KINDS)
    items = [k.strip() for k in (kinds.split(",") if isinstance(kinds, str) else kinds) if k and k.strip()]
    unknown = [k for k in items if k not in KINDS]
    if unknown or not items:
        raise InvalidInputError(f"Unknown audit kind(s) {unknown or kinds!r}; use any of {', '.join(KINDS)}.")
    return list(dict.fromkeys(items))


def parse_since(since: datetime | str, now: datetime) -> datetime:
    """An ISO time, or a span back from now: "90m", "24h", "7d"."""
    field = "since (an ISO time or a span such as 24h, 7d)"
    if isinstance(since, str):
        span = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([mhd])\s*", since)
        if span:
            return span_back(now, float(span[1]), {"m": 1, "h": 60, "d": 1440}[span[2]], field)
    return instant(since, field)  # core.instants: one reading of every time, within years 1-9999


def finding_id(kind: str, anchor_trace: str, memory_id: str | None = None) -> str:
    return hashlib.sha1(f"{kind}|{anchor_trace}|{memory_id or ''}".encode()).hexdigest()


def _finding(kind: str, anchor: dict, trace_ids: list[str], detail: str, memory_id: str | None = None,
             at: datetime | None = None) -> dict:
    return {"id": finding_id(kind, anchor["trace_id"], memory_id), "kind": kind, "severity": SEVERITY[kind],
            "trace_ids": trace_ids, "memory_id": memory_id, "detail": detail, "event_at": at or anchor["created_at"],
            **{k: anchor.get(k) for k in SCOPE_FIELDS}}


def _ops(value: Any) -> list[dict]:
    ops = value.get("memory", []) if isinstance(value, dict) else value
    return [op for op in ops if isinstance(op, dict)] if isinstance(ops, list) else []


def _ago(delta: timedelta) -> str:
    minutes = delta.total_seconds() / 60
    if minutes < 2:
        return f"{delta.total_seconds():.0f} seconds"
    return f"{minutes:.0f} minutes" if minutes < 120 else f"{minutes / 60:.1f} hours"


def _timelines(rows: list[dict]) -> dict[str, list[tuple[datetime, str, dict, dict]]]:
    """memory id -> [(when, event, executed op, record)], oldest first, from the executed operations."""
    out: dict[str, list] = {}
    for row in rows:
        for op in _ops(row.get("executed_operations")):
            event = str(op.get("event") or "").upper()
            if event in _WRITES and op.get("id"):
                out.setdefault(op["id"], []).append((row["created_at"], event, op, row))
    return out


def add_then_delete(rows: list[dict], window: timedelta, timelines: dict | None = None) -> list[dict]:
    found = []
    for memory_id, events in (timelines if timelines is not None else _timelines(rows)).items():
        adds = [e for e in events if e[1] == "ADD"]
        for at, _, add_op, add_row in adds:
            for later_at, event, op, row in events:
                if later_at < at or row["trace_id"] == add_row["trace_id"] or later_at - at > window:
                    continue
                old = str(op.get("previous_memory") or add_op.get("memory") or "")
                contradicts = event == "UPDATE" and bool(_NEGATION.search(str(op.get("memory") or ""))) \
                    and not _NEGATION.search(old)
                if event == "DELETE" or contradicts:
                    how = "deleted" if event == "DELETE" else f"contradicted by an UPDATE to {op.get('memory')!r}"
                    found.append(_finding("add_then_delete", add_row, [add_row["trace_id"], row["trace_id"]],
                                          f"Memory {add_op.get('memory')!r} added by run {add_row['trace_id']} was {how} "
                                          f"{_ago(later_at - at)} later by run {row['trace_id']}.", memory_id, later_at))
                    break
    return found


def churn(rows: list[dict], changes: int, window: timedelta, timelines: dict | None = None) -> list[dict]:
    found = []
    for memory_id, events in (timelines if timelines is not None else _timelines(rows)).items():
        times = [e for e in events if e[1] in _CHANGES]
        for start in range(0, len(times) - changes + 1):
            burst = [e for e in times[start:] if e[0] - times[start][0] <= window]
            if len(burst) >= changes:
                traces = list(dict.fromkeys(e[3]["trace_id"] for e in burst))
                found.append(_finding("churn", times[start][3], traces,
                                      f"Memory {memory_id} changed {len(burst)} times in "
                                      f"{_ago(burst[-1][0] - burst[0][0])} (threshold {changes} within "
                                      f"{_ago(window)}).", memory_id, burst[-1][0]))
                break  # one finding per memory per burst start: the id is anchored on the burst's first run
    return found


def parsed_vs_executed(rows: list[dict]) -> list[dict]:
    found = []
    for row in rows:
        if row.get("status") != "done" or row.get("execution_success") is False:
            continue  # paused or failed runs executed nothing on purpose; `failed` reports the latter
        executed: dict[int, list[dict]] = {}
        for op in _ops(row.get("executed_operations")):
            if isinstance(op.get("op"), int):
                executed.setdefault(op["op"], []).append(op)
        problems = []
        for i, op in enumerate(_ops(row.get("parsed_operations"))):
            event = str(op.get("event") or "").upper()
            if event not in _WRITES:
                continue
            done = executed.get(i, [])
            events = {str(e.get("event") or "").upper() for e in done}
            if not done:
                problems.append(f"{event} #{i} was not executed")
            elif event not in events:
                why = "; ".join(str(e["reason"]) for e in done if e.get("reason"))
                problems.append(f"{event} #{i} was executed as {'/'.join(sorted(events))}" + (f" ({why})" if why else ""))
            elif event in _CHANGES and op.get("id") and all(e.get("id") != op["id"] for e in done):
                problems.append(f"{event} #{i} was executed on another memory than {op['id']}")
        if problems:
            found.append(_finding("parsed_vs_executed", row, [row["trace_id"]],
                                  f"Run {row['trace_id']}: " + "; ".join(problems) + "."))
    return found


def slow(rows: list[dict], threshold_ms: int) -> list[dict]:
    return [_finding("slow", r, [r["trace_id"]], f"Run {r['trace_id']} took {r['latency_ms']} ms "
                     f"(threshold {threshold_ms} ms).")
            for r in rows if r.get("latency_ms") is not None and r["latency_ms"] > threshold_ms]


def failed(rows: list[dict]) -> list[dict]:
    return [_finding("failed", r, [r["trace_id"]], f"Run {r['trace_id']} failed: "
                     f"{(r.get('error_message') or 'no error message recorded')[:300]}")
            for r in rows if r.get("status") == "failed" or r.get("execution_success") is False]


def unverified(rows: list[dict], older_than: datetime, sample: int) -> list[dict]:
    waiting = [r for r in rows if not r.get("is_verified") and r.get("status") == "done" and r["created_at"] <= older_than]
    # a stable sample: ordered by a hash of the trace id, so the same records stay picked until reviewed
    waiting.sort(key=lambda r: hashlib.sha1(r["trace_id"].encode()).hexdigest())
    return [_finding("unverified", r, [r["trace_id"]], f"Run {r['trace_id']} of {iso(r['created_at'])[:16]} has not "
                     f"been verified.") for r in waiting[:sample]]


def detect(rows: list[dict], settings: "Settings", kinds: list[str], now: datetime) -> list[dict]:
    """Every finding of the asked kinds in `rows` (the audit columns of a slice of the log, oldest first)."""
    out: list[dict] = []
    timelines = _timelines(rows) if {"add_then_delete", "churn"} & set(kinds) else {}
    if "add_then_delete" in kinds:
        out += add_then_delete(rows, timedelta(hours=settings.audit_undo_window_hours), timelines)
    if "churn" in kinds:
        out += churn(rows, settings.audit_churn_changes, timedelta(hours=settings.audit_churn_window_hours), timelines)
    if "parsed_vs_executed" in kinds:
        out += parsed_vs_executed(rows)
    if "slow" in kinds:
        out += slow(rows, settings.audit_slow_ms)
    if "failed" in kinds:
        out += failed(rows)
    if "unverified" in kinds:
        out += unverified(rows, now - timedelta(hours=settings.audit_unverified_age_hours), settings.audit_unverified_sample)
    return out


def scan(services: "Services", scope: Scope | None = None, *, since: datetime | str | None = None,
         kinds: Iterable[str] | str | None = None, store: bool = True, now: datetime | None = None) -> dict:
    """Audit the log of `scope` (None: every scope) from `since` (default: audit_lookback_hours ago). With
    `store`, new findings are kept (stores/sql/findings.py). Returns {"findings": [...], "stored": n,
    "scanned": records read}; each finding says whether it was new."""
    settings = services.settings
    now = now or utc_now()
    since_dt = parse_since(since, now) if since is not None else now - timedelta(hours=settings.audit_lookback_hours)
    if since_dt > now:
        raise InvalidInputError(f"since {iso(since_dt)} is in the future.")
    wanted = check_kinds(kinds)
    rows = services.sql.judgment_rows_between(scope, since_dt)
    found = detect(rows, settings, wanted, now)
    new_ids = set(services.sql.save_findings([{**f, "found_at_dt": now} for f in found])) if store else set()
    findings = [{**f, "event_at": iso(f["event_at"]), "found_at": iso(now), "new": f["id"] in new_ids}
                for f in found]
    findings.sort(key=lambda f: (f["event_at"] or "", f["kind"]), reverse=True)
    return {"findings": findings, "stored": len(new_ids), "scanned": len(rows), "since": iso(since_dt)}
