"""`POST /v1/purge`: remove every trace of a scope (memoryx.lifecycle.purge), for an admin key or the scope's owner.

Owner rule: a key bound to users may purge a scope of one of its users (all of alice's rows, or alice's rows
with one of its agents); the agent-global scope (an agent id without a user) covers that agent's rows of
every user, so only an admin key may purge it. No keys configured (local development): allowed.
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from memoryx.core.authorization import Action, Principal
from memoryx.server.served import Served, grant


class PurgeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    user_id: str | None = Field(None, min_length=1, max_length=256, description="Purge this user's rows (of every agent and run unless those are given).")
    agent_id: str | None = Field(None, min_length=1, max_length=256, description="Only the rows of this agent (without user_id: the agent's rows of every user; admin keys only).")
    run_id: str | None = Field(None, min_length=1, max_length=256, description="Only the rows of this run.")
    compact: bool = Field(True, description="Rewrite the stores' files so that no deleted byte stays on disk (seconds per 100k points).")


def purge_router(served: Served) -> APIRouter:
    router = APIRouter(tags=["purge"])
    auth, mem = served.auth, served.mem

    @router.post("/v1/purge", summary="Remove every trace of a scope from every store")
    def purge(body: PurgeRequest, principal: Principal = auth) -> dict:
        """Memories, history, raw inputs, judgments, entities, relations, vectors, graph and the add runs'
        checkpoints of every row whose scope lies within the given one; returns the counts per store."""
        scope = grant(principal, Action.PURGE, user_id=body.user_id, agent_id=body.agent_id, run_id=body.run_id)
        return mem().purge(user_id=scope.user_id, agent_id=scope.agent_id, run_id=scope.run_id, compact=body.compact,
                           group_id=scope.group_id)

    return router
