"""The judgment log's audit routes: findings (listed, a scan run now, dismissed or linked to a verification),
batch verification, and the daily accuracy report.

Tenancy, one place per route: listings, the report and a scan ask `authorize` (Action.JUDGMENTS) for the
scope and keep only `principal.visible` records; by-id and per-trace checks use `principal.can_record`
(another tenant's finding or run reads as missing); the report and a scan cannot be filtered record by
record, so a non-admin key names a user (as the statistics route does).
These routes are included before the judgment routes: /v1/judgments/{trace_id} would shadow them.
"""

from __future__ import annotations

from fastapi import APIRouter, Query

from memoryx.core.authorization import Action, Principal
from memoryx.core.scope import Scope
from memoryx.errors import NotFoundError, ScopeError
from memoryx.server.schemas import AuditRequest, BatchVerifyRequest, SettleFindingRequest
from memoryx.server.served import Served, grant


def scope_ids(scope: Scope | None) -> dict:
    """A granted scope as the user/agent/run ids of the audit methods (None: the whole store)."""
    return {} if scope is None else {"user_id": scope.user_id, "agent_id": scope.agent_id, "run_id": scope.run_id}


def per_user(principal: Principal, scope: Scope | None, what: str) -> dict:
    """The ids of a request whose answer cannot be filtered record by record: a non-admin key names a user."""
    if scope is not None and not principal.all_access and (scope.no_user or scope.group_id or not scope.user_id):
        raise ScopeError(f"{what} needs a user_id for a non-admin key.")
    return scope_ids(scope)


def audit_router(served: Served) -> APIRouter:
    router = APIRouter(tags=["judgments"])
    auth, mem = served.auth, served.mem

    def finding_owned(principal: Principal, finding_id: str) -> dict:
        try:
            return served.owned(principal, mem().finding(finding_id), "finding", finding_id)
        except NotFoundError:
            raise NotFoundError(f"No finding with id {finding_id!r}; list them with GET /v1/judgments/findings.") from None

    @router.get("/v1/judgments/findings")
    def list_findings(user_id: str | None = Query(None, min_length=1), agent_id: str | None = Query(None, min_length=1),
                      run_id: str | None = Query(None, min_length=1),
                      kind: list[str] | None = Query(None, description="One or more finding kinds."),
                      since: str | None = Query(None, max_length=64, description="ISO time or span (24h, 7d)."),
                      dismissed: bool | None = Query(False, description="false: open ones; true: dismissed ones."),
                      limit: int = Query(100, ge=1, le=1000), offset: int = Query(0, ge=0, le=1_000_000_000),
                      principal: Principal = auth):
        scope = grant(principal, Action.JUDGMENTS, user_id=user_id, agent_id=agent_id, run_id=run_id)
        found = mem().findings(**scope_ids(scope), kinds=kind, since=since, dismissed=dismissed, limit=limit,
                               offset=offset)
        return {"results": principal.visible(found)}

    @router.post("/v1/judgments/audit")
    def run_audit(body: AuditRequest, principal: Principal = auth):
        scope = grant(principal, Action.JUDGMENTS, user_id=body.user_id, agent_id=body.agent_id, run_id=body.run_id)
        result = mem().audit(**per_user(principal, scope, "An audit"), since=body.since, kinds=body.kinds)
        return {**result, "findings": principal.visible(result["findings"])}

    @router.get("/v1/judgments/findings/{finding_id}")
    def get_finding(finding_id: str, principal: Principal = auth):
        return finding_owned(principal, finding_id)

    @router.post("/v1/judgments/findings/{finding_id}/settle")
    def settle_finding(finding_id: str, body: SettleFindingRequest, principal: Principal = auth):
        finding_owned(principal, finding_id)
        if body.verification_trace_id is not None:
            served.judgment_owned(principal, body.verification_trace_id)
        return mem().settle_finding(finding_id, dismiss=body.dismiss, reason=body.reason,
                                    verification_trace_id=body.verification_trace_id)

    @router.post("/v1/judgments/verify")
    def verify_many(body: BatchVerifyRequest, principal: Principal = auth):
        # another tenant's run answers "not_found", as a by-id route's 404 would: its existence is not revealed
        result = mem().verify_many(body.trace_ids, body.result, body.notes, allowed=principal.can_record)
        for item in result["results"]:
            if item["status"] == "not_yours":
                item["status"] = "not_found"
        return result

    @router.get("/v1/judgments/report")
    def daily_report(days: int = Query(30, ge=1, le=366), user_id: str | None = Query(None, min_length=1),
                     agent_id: str | None = Query(None, min_length=1), run_id: str | None = Query(None, min_length=1),
                     principal: Principal = auth):
        scope = grant(principal, Action.JUDGMENTS, user_id=user_id, agent_id=agent_id, run_id=run_id)
        return mem().judgment_report(days=days, **per_user(principal, scope, "The judgment report"))

    return router
