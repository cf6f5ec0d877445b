"""`POST /v1/consolidate` (issue 10): one consolidation pass over a scope of the caller's tenancy, and
`POST /v1/memories/{memory_id}/restore` for an archived or merged memory."""

from __future__ import annotations

from typing import Any, Callable

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from memoryx.server.auth import KeyRing, Principal


class ConsolidateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    user_id: str | None = Field(None, min_length=1, max_length=256, description="The user whose memories are consolidated.")
    agent_id: str | None = Field(None, min_length=1, max_length=256, description="Only this agent's memories.")
    run_id: str | None = Field(None, min_length=1, max_length=256, description="Only this run's memories.")
    now: float | str | None = Field(None, description="When the forgetting curve is read (epoch seconds or ISO); default: now.")
    dry_run: bool = Field(False, description="Decide and report, write nothing.")


def consolidate_router(keys: KeyRing, mem: Callable[[], Any], get_owned: Callable[[Principal, str], dict]) -> APIRouter:
    router = APIRouter(tags=["consolidation"])
    auth = Depends(keys)

    @router.post("/v1/consolidate", summary="Merge duplicates, summarise clusters, archive faded memories")
    def consolidate(body: ConsolidateRequest, principal: Principal = auth) -> dict:
        user_id, agent_id = principal.scope_ids(body.user_id, body.agent_id)  # a key's own users only
        return mem().consolidate(user_id=user_id, agent_id=agent_id, run_id=body.run_id, now=body.now,
                                 dry_run=body.dry_run)

    @router.post("/v1/memories/{memory_id}/restore", summary="Bring an archived or merged memory back")
    def restore(memory_id: str, principal: Principal = auth) -> dict:
        get_owned(principal, memory_id)  # 404 for another tenant's id
        return mem().restore(memory_id)

    return router
