"""`GET /v1/profiles/{user_id}` and `GET /v1/groups/{group_id}/profile` (memoryx.knowledge.profiles).

Tenancy: a key sees the profile of a user it holds, and a key bound to agents only the values said to those
agents; another user's profile answers 404 like a missing one. A group profile is read with a key bound to the group (or an admin key).
"""

from __future__ import annotations

from fastapi import APIRouter, Query

from memoryx.core.authorization import Action, Principal
from memoryx.errors import AccessDeniedError, NotFoundError
from memoryx.server.served import Served, grant


def profile_router(served: Served) -> APIRouter:
    router = APIRouter(tags=["profiles"])
    auth, mem = served.auth, served.mem

    @router.get("/v1/profiles/{user_id}", summary="The user's profile")
    def user_profile(user_id: str, include_history: bool = Query(False, description="Also the values that ended (an old home, a retracted like)."),
                     agent_id: str | None = Query(None, min_length=1, max_length=256, description=(
                         "Only the values said to this agent (a key bound to several agents names one).")),
                     principal: Principal = auth):
        """Name, aliases, home, work, relationships, preferences, dislikes and goals, each value with the
        memory ids it came from and when it changed."""
        try:
            scope = grant(principal, Action.PROFILE, user_id=user_id, agent_id=agent_id)
        except AccessDeniedError:
            raise NotFoundError(f"No profile for user_id {user_id!r} under this key.") from None
        # a key bound to agents reads the values said to its agents (core.authorization.profile_scope)
        return mem().get_profile(user_id=user_id, include_history=include_history,
                                 agent_id=scope.agent_id if scope is not None else None)

    @router.get("/v1/groups/{group_id}/profile", summary="A group's profile (group and admin keys)")
    def group_profile(group_id: str, include_history: bool = Query(False), principal: Principal = auth):
        """Members (and, when known, roles and recurring topics) of a group chat."""
        try:
            grant(principal, Action.PROFILE, group_id=group_id)
        except AccessDeniedError:
            raise NotFoundError(f"No profile for group_id {group_id!r} under this key.") from None
        return mem().get_profile(group_id=group_id, include_history=include_history)

    return router
