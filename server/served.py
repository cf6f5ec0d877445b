"""What every route group of one app shares: the memory it serves (opened at startup), the key ring, the
metrics, and the owner checks of by-id routes.

By-id routes answer 404 for a record outside the key's scope, with the same words as for a missing one, so
that a key never learns that another tenant's id exists. Which scope a request may act on is decided by
`memoryx.core.authorization.authorize` alone; the helpers here apply a granted Scope to the memory (an
agent key's scope holds rows without a user only: the stores filter them, and every answer is checked
record by record again).
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends

from memoryx.core.authorization import Action, Principal, Requested, authorize
from memoryx.core.scope import Scope
from memoryx.errors import NotFoundError, StoreUnavailableError
from memoryx.server.auth import KeyRing
from memoryx.server.metrics import Metrics
from memoryx.settings import Settings


class Served:
    """One app's shared state. `memory` is None until the lifespan opens it (and stays None if that failed);
    `mem()` is how a route reaches it."""

    def __init__(self, settings: Settings, memory: Any = None):
        self.settings = settings
        self.memory = memory
        self.keys = KeyRing(settings.api_keys)
        self.auth = Depends(self.keys)  # a route's `principal` parameter: 401 for a missing or unknown key
        self.metrics = Metrics(count_memories=lambda: self.mem().services.sql.count_memories(),
                               sql=lambda: self.mem().services.sql, refresh_s=settings.metrics_refresh_s)

    def mem(self) -> Any:
        if self.memory is None:
            raise StoreUnavailableError("The server's stores are not open (startup failed); see the server log.")
        return self.memory

    @staticmethod
    def owned(principal: Principal, record: dict, what: str, ident: str) -> dict:
        """`record`, if the key may touch it; else NotFoundError."""
        if not principal.can_record(record):
            raise NotFoundError(f"No {what} with id {ident!r}.")
        return record

    def get_owned(self, principal: Principal, memory_id: str) -> dict:
        """The memory `memory_id`, if it exists and the key may touch it."""
        try:
            return self.owned(principal, self.mem().get(memory_id), "memory", memory_id)
        except NotFoundError:
            raise NotFoundError(f"No memory with id {memory_id!r}; list them with GET /v1/memories.") from None

    def owned_even_deleted(self, principal: Principal, memory_id: str) -> dict:
        """The memory `memory_id`, deleted ones included (their history and explanation stay readable), if it
        exists and the key may touch it."""
        try:
            return self.owned(principal, self.mem().services.sql.get_memory(memory_id, include_deleted=True),
                              "memory", memory_id)
        except NotFoundError:
            raise NotFoundError(f"No memory with id {memory_id!r}; list them with GET /v1/memories.") from None

    def judgment_owned(self, principal: Principal, trace_id: str) -> dict:
        """The judgment record of run `trace_id`, if it exists and the key may touch it."""
        try:
            return self.owned(principal, self.mem().judgments(trace_id), "judgment", trace_id)
        except NotFoundError:
            raise NotFoundError(f"No judgment with trace_id {trace_id!r}; list them with GET /v1/judgments.") from None


NO_USER = {"user_id": None}  # the filter of rows without a user


def call_args(scope: Scope | None) -> dict[str, Any]:
    """A granted scope as the keyword arguments of the memory's methods."""
    if scope is None:
        return {}
    out: dict[str, Any] = {"user_id": scope.user_id, "agent_id": scope.agent_id, "run_id": scope.run_id}
    if scope.group_id:
        out["group_id"] = scope.group_id
    return out


def with_scope_filter(scope: Scope | None, filters: Any) -> Any:
    """The request's filters, plus "no user" for an agent key's scope (the memory's methods take ids,
    where an unset user_id means every user)."""
    if scope is None or not scope.no_user:
        return filters
    return {"AND": [filters, NO_USER]} if filters else NO_USER


def grant(principal: Principal, action: Action, **requested: Any) -> Scope | None:
    """`authorize` with the ids as keywords (what the routes read from a body or a query)."""
    return authorize(principal, action, Requested.of(requested))


def search_in(memory: Any, principal: Principal, scope: Scope, query: str, **kwargs: Any) -> dict:
    kwargs["filters"] = with_scope_filter(scope, kwargs.get("filters"))
    found = memory.search(query, **call_args(scope), **kwargs)
    shown = principal.visible(found.get("results") or [])
    out = {**found, "results": shown}
    if "total_count" in found and len(shown) < len(found.get("results") or []):
        out["total_count"] = len(shown)  # a count of records the caller may not see would tell of them
    if scope.no_user:  # graph relations carry no per-record owner to check
        out["relations"] = []
    return out


def list_in(memory: Any, principal: Principal, scope: Scope, **kwargs: Any) -> dict:
    kwargs["filters"] = with_scope_filter(scope, kwargs.get("filters"))
    found = memory.get_all(**call_args(scope), **kwargs)
    return {**found, "results": principal.visible(found.get("results") or [])}


def context_in(memory: Any, principal: Principal, scope: Scope, query: str, max_tokens: int, limit: int) -> dict:
    """The context block of the granted scope: its search answer checked record by record, the profile the
    scope reaches (none in a group) and a cold start's borrowed memories filtered by the principal."""
    found = search_in(memory, principal, scope, query, limit=limit)
    return memory._core.get_context(query, scope.user_id, scope.agent_id, scope.run_id, max_tokens, limit, found,
                                    scope.group_id, visible=principal.visible, no_user=scope.no_user)


def delete_in(memory: Any, principal: Principal, scope: Scope) -> dict:
    if not scope.no_user:
        return memory.delete_all(**call_args(scope))
    deleted = 0
    while True:
        page = list_in(memory, principal, scope, limit=500)["results"]
        if not page:
            break
        for row in page:
            memory.delete(row["id"])
            deleted += 1
    return {"message": "Memories deleted successfully!", "deleted": deleted}
