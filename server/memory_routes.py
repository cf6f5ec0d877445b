"""The core REST routes over one memory, in the Python API's shapes: add, search, context, list and delete
a scope under /v1/memories; get, update, delete, the history and the explanation of one memory; and resuming an add run that
paused for review (POST /v1/reviews/{trace_id}).

Scoped routes act on the scope `authorize()` grants the key's Principal (memoryx.core.authorization); by-id
routes check the record's owner (Served.get_owned: 404 for another tenant's id).
"""

from __future__ import annotations

from fastapi import APIRouter, Query

from memoryx.core.authorization import Action, Principal, authorize_messages
from memoryx.errors import AccessDeniedError, ScopeError
from memoryx.server.schemas import AddRequest, ContextRequest, ResumeRequest, SearchRequest, UpdateRequest
from memoryx.server.served import Served, call_args, context_in, delete_in, grant, list_in, search_in


def memory_router(served: Served) -> APIRouter:
    router = APIRouter(tags=["memories"])
    auth, mem, metrics = served.auth, served.mem, served.metrics

    @router.post("/v1/memories")
    def add_memories(body: AddRequest, principal: Principal = auth):
        scope = grant(principal, Action.WRITE, user_id=body.user_id, agent_id=body.agent_id, run_id=body.run_id,
                      group_id=body.group_id)
        if body.agent_memory == "global":
            if scope.agent_id is None:
                raise ScopeError('agent_memory="global" needs an agent_id.')
            if not principal.can(None, scope.agent_id):
                raise AccessDeniedError(
                    f'agent_memory="global" writes memories every user of agent {scope.agent_id!r} shares; it needs '
                    f'an agent key ({{"agents": [{scope.agent_id!r}]}}, no users) or an admin key.')
        messages = body.messages if isinstance(body.messages, str) else [
            m.model_dump(exclude_none=True) for m in body.messages]
        authorize_messages(principal, messages, body.participants)
        with metrics.track("add"):
            result = mem().add(messages, **call_args(scope), metadata=body.metadata, infer=body.infer,
                               agent_memory=body.agent_memory, participants=body.participants)
        metrics.record_add_result(result)
        return result

    @router.post("/v1/memories/search")
    def search_memories(body: SearchRequest, principal: Principal = auth):
        scope = grant(principal, Action.SEARCH, user_id=body.user_id, agent_id=body.agent_id, run_id=body.run_id,
                      group_id=body.group_id)
        speaker = {"speaker": body.speaker} if body.speaker is not None else {}
        when = {k: v for k, v in (("now", body.now), ("as_of", body.as_of), ("memory_types", body.memory_types))
                if v is not None}
        with metrics.track("search"):
            return search_in(mem(), principal, scope, body.query, limit=body.limit, **speaker,
                             filters=body.filters, threshold=body.threshold, mode=body.mode,
                             query_time_filter=body.query_time_filter, **when,
                             time_range=(body.start, body.end) if body.start is not None or body.end is not None else None)

    @router.post("/v1/memories/context")
    def memory_context(body: ContextRequest, principal: Principal = auth):
        scope = grant(principal, Action.SEARCH, user_id=body.user_id, agent_id=body.agent_id, run_id=body.run_id,
                      group_id=body.group_id)
        return context_in(mem(), principal, scope, body.query, body.max_tokens, body.limit)

    @router.get("/v1/memories")
    def list_memories(user_id: str | None = Query(None, min_length=1), agent_id: str | None = Query(None, min_length=1),
                      run_id: str | None = Query(None, min_length=1), limit: int = Query(100, ge=1, le=10000),
                      group_id: str | None = Query(None, min_length=1), principal: Principal = auth):
        scope = grant(principal, Action.LIST, user_id=user_id, agent_id=agent_id, run_id=run_id, group_id=group_id)
        if scope is None:
            raise ScopeError("Name a user_id, agent_id, run_id or group_id to list, e.g. ?user_id=alice.")
        return list_in(mem(), principal, scope, limit=limit)

    @router.delete("/v1/memories")
    def delete_all_memories(user_id: str | None = Query(None, min_length=1), agent_id: str | None = Query(None, min_length=1),
                            run_id: str | None = Query(None, min_length=1),
                            group_id: str | None = Query(None, min_length=1), principal: Principal = auth):
        scope = grant(principal, Action.DELETE, user_id=user_id, agent_id=agent_id, run_id=run_id, group_id=group_id)
        return delete_in(mem(), principal, scope)

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
        served.owned_even_deleted(principal, memory_id)
        return mem().history(memory_id)

    @router.get("/v1/memories/{memory_id}/explain")
    def memory_explain(memory_id: str, principal: Principal = auth):
        """Why the memory is remembered: source messages, judgments (trace id, event, reason), importance
        and its four factors, confidence, layer, strength and retention, links, history."""
        served.owned_even_deleted(principal, memory_id)
        return mem().explain(memory_id)

    @router.post("/v1/reviews/{trace_id}")
    def resume_review(trace_id: str, body: ResumeRequest, principal: Principal = auth):
        served.judgment_owned(principal, trace_id)
        result = mem().resume_add(trace_id, body.operations)
        metrics.record_add_result(result)
        return result

    return router
