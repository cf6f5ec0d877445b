"""The judgments REST routes: the record of every add run (what the model was shown, what it decided, how
long it took), listed per scope, their statistics, one record, and a human's verdict on it.

Tenancy: listings keep the records the key may see; by-trace routes answer 404 for another tenant's run
(Served.judgment_owned). Statistics cannot be filtered per record, so a non-admin key names a user.
"""

from __future__ import annotations

from fastapi import APIRouter, Query

from memoryx.core.authorization import Action, Principal
from memoryx.errors import ScopeError
from memoryx.server.schemas import VerifyRequest
from memoryx.server.served import Served, grant


def judgment_router(served: Served) -> APIRouter:
    router = APIRouter(tags=["judgments"])
    auth, mem = served.auth, served.mem

    @router.get("/v1/judgments")
    def list_judgments(user_id: str | None = Query(None, min_length=1), agent_id: str | None = Query(None, min_length=1),
                       run_id: str | None = Query(None, min_length=1), limit: int = Query(50, ge=1, le=1000),
                       offset: int = Query(0, ge=0, le=1_000_000_000), principal: Principal = auth):
        scope = grant(principal, Action.JUDGMENTS, user_id=user_id, agent_id=agent_id, run_id=run_id)
        # the granted scope as it is: a group's or an agent key's page is that scope's, not the store's filtered
        found = mem()._core.list_judgments(None, None, None, limit, offset, scope=scope)
        return {"results": principal.visible(found)}

    @router.get("/v1/judgments/stats")
    def judgment_stats(user_id: str | None = Query(None, min_length=1), agent_id: str | None = Query(None, min_length=1),
                       run_id: str | None = Query(None, min_length=1), principal: Principal = auth):
        scope = grant(principal, Action.JUDGMENTS, user_id=user_id, agent_id=agent_id, run_id=run_id)
        if scope is None:
            return mem().judgment_stats()
        if not principal.all_access and (scope.no_user or scope.group_id):  # cannot be filtered per record
            raise ScopeError("Judgment statistics need a user_id for a non-admin key.")
        return mem().judgment_stats(user_id=scope.user_id, agent_id=scope.agent_id, run_id=scope.run_id)

    @router.get("/v1/judgments/{trace_id}")
    def get_judgment(trace_id: str, principal: Principal = auth):
        return served.judgment_owned(principal, trace_id)

    @router.post("/v1/judgments/{trace_id}/verify")
    def verify_judgment(trace_id: str, body: VerifyRequest, principal: Principal = auth):
        served.judgment_owned(principal, trace_id)
        return mem().verify(trace_id, body.result, body.notes)

    return router
