"""`POST /v1/judgments/{trace_id}/rollback` (memoryx.lifecycle.rollback) and the server's event wiring (metrics, webhooks).

Tenancy: the run must lie within the key's scope — its judgment and every memory and relation it touched;
a run of another tenant answers 404 like a missing one. A conflict with a later run answers 409 naming it.
"""

from __future__ import annotations

from typing import Any, Callable

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse

from memoryx.errors import NotFoundError, RollbackConflictError
from memoryx.core.scope import Scope
from memoryx.server.auth import KeyRing, Principal


def rollback_router(keys: KeyRing, mem: Callable[[], Any]) -> APIRouter:
    router = APIRouter(tags=["judgments"])
    auth = Depends(keys)

    @router.post("/v1/judgments/{trace_id}/rollback", summary="Undo every operation of one run")
    def rollback(trace_id: str, force: bool = Query(False, description="Also roll back later runs that changed the same memories, newest first."),
                 principal: Principal = auth):
        """Old texts back, deleted memories back, added ones removed, relations re-validated or invalidated;
        recorded as a new trace (the result's trace_id) with ROLLBACK history events."""
        scope = None
        if not principal.admin:
            try:
                record = mem().judgments(trace_id)
            except NotFoundError:
                record = None
            if record is None or not principal.can_record(record):
                raise NotFoundError(f"No judgment with trace_id {trace_id!r}; list them with GET /v1/judgments.")
            scope = Scope(user_id=record.get("user_id"), agent_id=record.get("agent_id"), run_id=record.get("run_id"),
                          group_id=record.get("group_id"))
        try:
            return mem()._core.rollback(trace_id, force, scope=scope, actor=f"api:{principal.name}")
        except RollbackConflictError as exc:
            return JSONResponse({"error": {"type": "rollback_conflict", "message": str(exc),
                                           "later_traces": exc.later_traces, "trace_id": exc.trace_id}},
                                status_code=409)

    return router
