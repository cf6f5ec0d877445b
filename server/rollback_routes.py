"""`POST /v1/judgments/{trace_id}/rollback`: undo every operation of one run (memoryx.lifecycle.rollback).

Tenancy: the run must lie within the key's scope — its judgment and every memory and relation it touched;
a run of another tenant answers 404 like a missing one. A conflict with a later run answers 409 naming it.
"""

from __future__ import annotations

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from memoryx.core.authorization import Action, Principal
from memoryx.errors import RollbackConflictError
from memoryx.server.served import Served, grant


def rollback_router(served: Served) -> APIRouter:
    router = APIRouter(tags=["judgments"])
    auth, mem = served.auth, served.mem

    @router.post("/v1/judgments/{trace_id}/rollback", summary="Undo every operation of one run")
    def rollback(trace_id: str, force: bool = Query(False, description="Also roll back later runs that changed the same memories, newest first."),
                 principal: Principal = auth):
        """Old texts back, deleted memories back, added ones removed, relations re-validated or invalidated;
        recorded as a new trace (the result's trace_id) with ROLLBACK history events."""
        scope = None
        if not principal.all_access:
            record = served.judgment_owned(principal, trace_id)
            scope = grant(principal, Action.ROLLBACK, user_id=record.get("user_id"), agent_id=record.get("agent_id"),
                          run_id=record.get("run_id"), group_id=record.get("group_id"))
        try:
            return mem()._core.rollback(trace_id, force, scope=scope, actor=f"api:{principal.name}")
        except RollbackConflictError as exc:
            return JSONResponse({"error": {"type": "rollback_conflict", "message": str(exc),
                                           "later_traces": exc.later_traces, "trace_id": exc.trace_id}},
                                status_code=409)

    return router
