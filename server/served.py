"""What every route group of one app shares: the memory it serves (opened at startup), the key ring, the
metrics, and the owner checks of by-id routes.

By-id routes answer 404 for a record outside the key's scope, with the same words as for a missing one, so
that a key never learns that another tenant's id exists. The key's scopes themselves are the Principal's
(server/auth.py); the helpers here only apply them to a record.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends

from memoryx.errors import NotFoundError, StoreUnavailableError
from memoryx.server.auth import KeyRing, Principal
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

    def judgment_owned(self, principal: Principal, trace_id: str) -> dict:
        """The judgment record of run `trace_id`, if it exists and the key may touch it."""
        try:
            return self.owned(principal, self.mem().judgments(trace_id), "judgment", trace_id)
        except NotFoundError:
            raise NotFoundError(f"No judgment with trace_id {trace_id!r}; list them with GET /v1/judgments.") from None


def agent_only(principal: Principal, user_id: str | None, group_id: str | None = None) -> bool:
    """An agent-global scope for a non-admin key: an agent id without a user matches every user's records in
    the stores, so what such a request reads is filtered record by record (Principal.visible)."""
    return user_id is None and group_id is None and not principal.admin
