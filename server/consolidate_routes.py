"""`POST /v1/consolidate`: one consolidation pass over a scope of the caller's tenancy (a group
chat's participant with group_id), `POST /v1/runs/{run_id}/end` to close a run's working memory, and
`POST /v1/memories/{memory_id}/restore` for an archived or merged memory."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from memoryx.core.authorization import Action, Principal
from memoryx.errors import AccessDeniedError
from memoryx.server.served import Served, grant


class ConsolidateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    user_id: str | None = Field(None, min_length=1, max_length=256, description="The user whose memories are consolidated.")
    agent_id: str | None = Field(None, min_length=1, max_length=256, description="Only this agent's memories.")
    run_id: str | None = Field(None, min_length=1, max_length=256, description="Only this run's memories.")
    group_id: str | None = Field(None, min_length=1, max_length=256,
                                 description="A group chat: with user_id, that participant's memories in the group; "
                                             "alone, the group's own memories.")
    now: float | str | None = Field(None, description="When the forgetting curve is read (epoch seconds or ISO); default: now.")
    dry_run: bool = Field(False, description="Decide and report, write nothing.")


class EndRunRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    user_id: str | None = Field(None, min_length=1, max_length=256, description="The user the run belongs to.")
    agent_id: str | None = Field(None, min_length=1, max_length=256, description="The agent the run belongs to.")
    group_id: str | None = Field(None, min_length=1, max_length=256, description="The group chat the run is in.")


def consolidate_router(served: Served) -> APIRouter:
    router = APIRouter(tags=["consolidation"])
    auth, mem = served.auth, served.mem

    @router.post("/v1/consolidate", summary="Merge duplicates, summarise clusters, archive faded memories")
    def consolidate(body: ConsolidateRequest, principal: Principal = auth) -> dict:
        # a key's own users / agents / groups only
        scope = grant(principal, Action.WRITE, user_id=body.user_id, agent_id=body.agent_id, run_id=body.run_id,
                      group_id=body.group_id)
        # an agent key's scope: a pass over an agent takes its rows without a user only (core/owners.py)
        return mem().consolidate(user_id=scope.user_id, agent_id=scope.agent_id, run_id=scope.run_id, now=body.now,
                                 dry_run=body.dry_run, group_id=scope.group_id)

    @router.post("/v1/runs/{run_id}/end", summary="Close a run: keep its working memories that mattered")
    def end_run(run_id: str, body: EndRunRequest | None = None, principal: Principal = auth) -> dict:
        """The run's working memories of importance >= MEMORYX_WORKING_KEEP_IMPORTANCE (or recalled) stay as
        short-term, the rest are archived (restorable); a judgment END_RUN that rollback undoes."""
        body = body or EndRunRequest()
        scope = grant(principal, Action.END_RUN, user_id=body.user_id, agent_id=body.agent_id, run_id=run_id,
                      group_id=body.group_id)
        if scope.no_user:  # end_run takes every row of the run; an agent key owns no user's run
            raise AccessDeniedError("Ending a run needs a key bound to the run's user (or group); an agent key "
                                    "reaches its agents' global memories only.")
        return mem().end_run(run_id, user_id=scope.user_id, agent_id=scope.agent_id, group_id=scope.group_id)

    @router.post("/v1/memories/{memory_id}/restore", summary="Bring an archived or merged memory back")
    def restore(memory_id: str, principal: Principal = auth) -> dict:
        served.get_owned(principal, memory_id)  # 404 for another tenant's id
        return mem().restore(memory_id)

    return router
