"""The core REST routes over one memory, in the Python API's shapes: add, search, context, list and delete
a scope under /v1/memories; get, update, delete, the history and the explanation of one memory; and resuming an add run that
paused for review (POST /v1/reviews/{trace_id}).

Scoped routes take the ids they act for from the key's Principal (server/auth.py); by-id routes check the
record's owner (Served.get_owned: 404 for another tenant's id). In an agent-global scope (an agent id
without a user) a non-admin key reads only records without a user, each checked against the key.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from memoryx.errors import NotFoundError
from memoryx.server.auth import Principal
from memoryx.server.schemas import AddRequest, ContextRequest, ResumeRequest, SearchRequest, UpdateRequest
from memoryx.server.served import Served, agent_only

_NO_USER = {"user_id": None}  # the filter of agent-global records (no user)


def _search(memory: Any, principal: Principal, query: str, user_id, agent_id, run_id, **kwargs) -> dict:
    if not agent_only(principal, user_id, kwargs.get("group_id")):
        return memory.search(query, user_id=user_id, agent_id=agent_id, run_id=run_id, **kwargs)
    filters = kwargs.pop("filters", None)
    filters = {"AND": [filters, _NO_USER]} if filters else _NO_USER
    found = memory.search(query, user_id=None, agent_id=agent_id, run_id=run_id, filters=filters, **kwargs)
    # graph relations carry no per-record owner to check: an agent-global search returns none
    return {**found, "results": principal.visible(found.get("results") or []), "relations": []}


def _delete_agent_global(memory: Any, principal: Principal, agent_id, run_id) -> dict:
    deleted = 0
    while True:
        page = principal.visible(memory.get_all(user_id=None, agent_id=agent_id, run_id=run_id, limit=500,
                                                filters=_NO_USER)["results"])
        if not page:
            break
        for row in page:
            memory.delete(row["id"])
            deleted += 1
    return {"message": "Memories deleted successfully!", "deleted": deleted}


def memory_router(served: Served) -> APIRouter:
    router = APIRouter(tags=["memories"])
    auth, mem, metrics = served.auth, served.mem, served.metrics

    @router.post("/v1/memories")
    def add_memories(body: AddRequest, principal: Principal = auth):
        user_id, agent_id, group_id = principal.group_scope_ids(body.user_id, body.agent_id, body.group_id)
        if body.agent_memory == "global":
            principal.check_global_agent(agent_id)
        messages = body.messages if isinstance(body.messages, str) else [
            m.model_dump(exclude_none=True) for m in body.messages]
        with metrics.track("add"):
            result = mem().add(messages, user_id=user_id, agent_id=agent_id, run_id=body.run_id,
                               metadata=body.metadata, infer=body.infer, agent_memory=body.agent_memory,
                               **({"group_id": group_id} if group_id else {}))
        metrics.record_add_result(result)
        return result

    @router.post("/v1/memories/search")
    def search_memories(body: SearchRequest, principal: Principal = auth):
        user_id, agent_id, group_id = principal.group_scope_ids(body.user_id, body.agent_id, body.group_id)
        groups = {k: v for k, v in (("group_id", group_id), ("speaker", body.speaker)) if v is not None}
        with metrics.track("search"):
            return _search(mem(), principal, body.query, user_id, agent_id, body.run_id, limit=body.limit, **groups,
                           filters=body.filters, threshold=body.threshold, mode=body.mode,
                           query_time_filter=body.query_time_filter,
                           time_range=(body.start, body.end) if body.start is not None or body.end is not None else None)

    @router.post("/v1/memories/context")
    def memory_context(body: ContextRequest, principal: Principal = auth):
        user_id, agent_id, group_id = principal.group_scope_ids(body.user_id, body.agent_id, body.group_id)
        if group_id is not None:
            return mem().get_context(body.query, user_id=user_id, agent_id=agent_id, run_id=body.run_id,
                                     max_tokens=body.max_tokens, limit=body.limit, group_id=group_id)
        if agent_only(principal, user_id):
            found = _search(mem(), principal, body.query, user_id, agent_id, body.run_id, limit=body.limit)
            return mem()._core.get_context(body.query, user_id, agent_id, body.run_id, body.max_tokens, body.limit, found)
        return mem().get_context(body.query, user_id=user_id, agent_id=agent_id, run_id=body.run_id,
                                 max_tokens=body.max_tokens, limit=body.limit)

    @router.get("/v1/memories")
    def list_memories(user_id: str | None = Query(None, min_length=1), agent_id: str | None = Query(None, min_length=1),
                      run_id: str | None = Query(None, min_length=1), limit: int = Query(100, ge=1, le=10000),
                      group_id: str | None = Query(None, min_length=1), principal: Principal = auth):
        user_id, agent_id, group_id = principal.group_scope_ids(user_id, agent_id, group_id)
        if group_id is not None:
            return mem().get_all(user_id=user_id, agent_id=agent_id, run_id=run_id, limit=limit, group_id=group_id)
        if agent_only(principal, user_id):
            found = mem().get_all(user_id=None, agent_id=agent_id, run_id=run_id, limit=limit, filters=_NO_USER)
            return {**found, "results": principal.visible(found["results"])}
        return mem().get_all(user_id=user_id, agent_id=agent_id, run_id=run_id, limit=limit)

    @router.delete("/v1/memories")
    def delete_all_memories(user_id: str | None = Query(None, min_length=1), agent_id: str | None = Query(None, min_length=1),
                            run_id: str | None = Query(None, min_length=1),
                            group_id: str | None = Query(None, min_length=1), principal: Principal = auth):
        user_id, agent_id, group_id = principal.group_scope_ids(user_id, agent_id, group_id)
        if group_id is not None:
            return mem().delete_all(user_id=user_id, agent_id=agent_id, run_id=run_id, group_id=group_id)
        if agent_only(principal, user_id):
            return _delete_agent_global(mem(), principal, agent_id, run_id)
        return mem().delete_all(user_id=user_id, agent_id=agent_id, run_id=run_id)

    @router.get("/v1/memories/{memory_id}")
    def get_memory(memory_id: str, principal: Principal = auth):
        return served.get_owned(principal, memory_id)

    @router.put("/v1/memories/{memory_id}")
    def update_memory(memory_id: str, body: UpdateRequest, principal: Principal = auth):
        served.get_owned(principal, memory_id)
        return mem().update(memory_id, body.text, metadata=body.metadata)

    @router.delete("/v1/memories/{memory_id}")
    def delete_memory(memory_id: str, principal: Principal = auth):
        served.get_owned(principal, memory_id)
        return mem().delete(memory_id)

    @router.get("/v1/memories/{memory_id}/history")
    def memory_history(memory_id: str, principal: Principal = auth):
        m = mem()
        try:
            served.owned(principal, m.services.sql.get_memory(memory_id, include_deleted=True), "memory", memory_id)
        except NotFoundError:
            raise NotFoundError(f"No memory with id {memory_id!r}; list them with GET /v1/memories.") from None
        return m.history(memory_id)

    @router.get("/v1/memories/{memory_id}/explain")
    def memory_explain(memory_id: str, principal: Principal = auth):
        """Why the memory is remembered: source messages, judgments (trace id, event, reason), importance
        and its four factors, confidence, layer, strength and retention, links, history."""
        m = mem()
        try:
            served.owned(principal, m.services.sql.get_memory(memory_id, include_deleted=True), "memory", memory_id)
        except NotFoundError:
            raise NotFoundError(f"No memory with id {memory_id!r}; list them with GET /v1/memories.") from None
        return m.explain(memory_id)

    @router.post("/v1/reviews/{trace_id}")
    def resume_review(trace_id: str, body: ResumeRequest, principal: Principal = auth):
        served.judgment_owned(principal, trace_id)
        result = mem().resume_add(trace_id, body.operations)
        metrics.record_add_result(result)
        return result

    return router
