"""The judgment log as MemoryCore reads it: one record (within the caller's scope), a page of records,
verification (one or many) and statistics, the audit's findings and the daily report. A mixin of MemoryCore
(memory_core.py): it uses the core's `services`."""

from __future__ import annotations

from memoryx.api.inputs import check_id, check_limit, optional_scope
from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError, NotFoundError
from memoryx.lifecycle import audit as audit_rules
from memoryx.lifecycle.daily import daily_report as report_days
from memoryx.stores.sql.values import utc_now

_VERDICTS = ("CORRECT", "INCORRECT", "PARTIAL")
MAX_BATCH_VERIFY = 1000


class JudgmentReads:
    def judgment(self, trace_id, scope: Scope | None = None) -> dict:
        row = self.services.sql.get_judgment(check_id(trace_id, "trace_id"))
        if scope is not None and not scope.contains(row):
            raise NotFoundError(f"No judgment with trace_id {trace_id!r}; list them with `memoryx judgments list`.")
        return row

    def list_judgments(self, user_id, agent_id, run_id, limit, offset, scope: Scope | None = None) -> list[dict]:
        """The runs of a scope, newest first. `scope`: a granted one as it is (a group's, an agent key's rows
        without a user), which ids alone cannot say: the page is then the scope's, not the store's filtered."""
        where = scope if scope is not None else optional_scope(user_id, agent_id, run_id)
        return self.services.sql.list_judgments(where, limit=check_limit(limit) or 50, offset=offset or 0)

    def verify(self, trace_id, result, notes) -> dict:
        trace_id = check_id(trace_id, "trace_id")
        if not isinstance(result, str) or result.upper() not in _VERDICTS:
            raise InvalidInputError(f"result must be one of {', '.join(_VERDICTS)}, got {result!r}.")
        row = self.services.sql.verify_judgment(trace_id, result.upper(), notes)
        self.services.sql.forget_daily_reports(self.services.sql.judgment_days([trace_id]))
        return row

    def judgment_stats(self, user_id, agent_id, run_id) -> dict:
        scope = optional_scope(user_id, agent_id, run_id)
        return {**self.services.sql.judgment_stats(scope), "feedback": self.services.sql.feedback_counts(scope)}

    # --- the log's audit: findings, batch verification, daily report (memoryx.lifecycle.audit / daily) ------

    def audit(self, user_id, agent_id, run_id, since, kinds, store: bool = True, group_id=None) -> dict:
        scope = optional_scope(user_id, agent_id, run_id, group_id)
        return audit_rules.scan(self.services, scope, since=since, kinds=kinds, store=store)

    def findings(self, user_id, agent_id, run_id, kinds, since, dismissed, limit, offset, group_id=None) -> list[dict]:
        scope = optional_scope(user_id, agent_id, run_id, group_id)
        since_dt = audit_rules.parse_since(since, utc_now()) if since is not None else None
        return self.services.sql.list_findings(scope, kinds=audit_rules.check_kinds(kinds) if kinds else None,
                                               since=since_dt, dismissed=dismissed,
                                               limit=check_limit(limit) or 100, offset=offset or 0)

    def finding(self, finding_id, scope: Scope | None = None) -> dict:
        row = self.services.sql.get_finding(check_id(finding_id, "finding_id"))
        if scope is not None and not scope.contains(row):
            raise NotFoundError(f"No finding with id {finding_id!r}.")
        return row

    def settle_finding(self, finding_id, dismiss: bool, reason, verification_trace_id) -> dict:
        if not dismiss and verification_trace_id is None:
            raise InvalidInputError("Say what settles the finding: dismiss=True (with a reason) and/or "
                                    "verification_trace_id (a verified run).")
        if verification_trace_id is not None:
            check_id(verification_trace_id, "verification_trace_id")
        return self.services.sql.settle_finding(check_id(finding_id, "finding_id"), dismiss=dismiss, reason=reason,
                                                verification_trace_id=verification_trace_id)

    def verify_many(self, trace_ids, result, notes, allowed=None) -> dict:
        """Verify each run on its own (one transaction each): {"results": [{"trace_id", "status": "verified" |
        "not_found" | "not_yours", "verification_result"?}], "verified": n}. `allowed(record)`: whether the caller
        may verify that record (the server's tenancy); None: every record."""
        if not isinstance(trace_ids, list) or not trace_ids or len(trace_ids) > MAX_BATCH_VERIFY:
            raise InvalidInputError(f"trace_ids must be a list of 1 to {MAX_BATCH_VERIFY} trace ids.")
        if not isinstance(result, str) or result.upper() not in _VERDICTS:
            raise InvalidInputError(f"result must be one of {', '.join(_VERDICTS)}, got {result!r}.")
        out = []
        for trace_id in dict.fromkeys(check_id(t, "trace_id") for t in trace_ids):
            try:
                record = self.services.sql.get_judgment(trace_id)
            except NotFoundError:
                out.append({"trace_id": trace_id, "status": "not_found"})
                continue
            if allowed is not None and not allowed(record):
                out.append({"trace_id": trace_id, "status": "not_yours"})
                continue
            row = self.services.sql.verify_judgment(trace_id, result.upper(), notes)
            out.append({"trace_id": trace_id, "status": "verified", "verification_result": row["verification_result"]})
        done = [r["trace_id"] for r in out if r["status"] == "verified"]
        self.services.sql.forget_daily_reports(self.services.sql.judgment_days(done))  # late reviews count
        return {"results": out, "verified": len(done)}

    def daily_report(self, user_id, agent_id, run_id, days, group_id=None) -> dict:
        return report_days(self.services, optional_scope(user_id, agent_id, run_id, group_id), days=days)
