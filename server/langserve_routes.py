"""The LangServe routes: the add and search graphs as runnables, and review and resume beside REST's
POST /v1/reviews/{trace_id}.

    /graphs/add          the add graph, run without a checkpointer: it never pauses for review
    /graphs/search       the search graph (a non-admin key names a user: its streamed state is not filtered)
    /graphs/add_review   an add run that stops at the review interrupt: {"status": "awaiting_review",
                         "trace_id", "pending_operations"}; nothing is written yet
    /graphs/resume       {"trace_id", "operations"}: null approves the pending operations, a list approves
                         that (edited) list, [] rejects them all

Review and resume go through `Memory` (the add graph compiled with the checkpointer, thread id = trace id), so
a run paused through REST or the Python API can be resumed here and the other way round. Tenancy: a
per-request config modifier puts the key's Principal into the config; the graphs' runnables apply it to
each input (server/runnables.py), review needs it to cover the add's user, resume the run's owner (someone
else's trace id is "not found").
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import FastAPI, HTTPException, Request
from langchain_core.runnables import RunnableConfig, RunnableLambda
from pydantic import BaseModel, ConfigDict, Field

from memoryx.core.authorization import Action, Principal, Requested, authorize, authorize_messages
from memoryx.errors import AccessDeniedError, InvalidInputError, MemoryXError, NotFoundError, ScopeError
from memoryx.graphs.add import graph as add_graph
from memoryx.graphs.search import graph as search_graph
from memoryx.ingest.messages import normalize_messages
from memoryx.search.dates import checked_reference_time, checked_time_range
from memoryx.server import guard
from memoryx.server.auth import request_key
from memoryx.server.runnables import (
    PRINCIPAL_KEY,
    ServiceBoundGraph,
    TenancyError,
    apply_principal,
    server_trace_id,
    with_principal,
)
from memoryx.server.served import Served, call_args, grant

_GRAPH_ENDPOINTS = ["invoke", "batch", "stream", "input_schema", "output_schema", "config_schema"]
_REVIEW_ENDPOINTS = ["invoke", "batch", "input_schema", "output_schema", "config_schema"]


_HTTP_STATUS = ((AccessDeniedError, 403, "forbidden"), (ScopeError, 400, "scope_error"),
                (InvalidInputError, 422, "validation_error"))


def as_http(call) -> Any:
    """Run an authorize() call where LangServe expects HTTP errors (its config modifier)."""
    try:
        return call()
    except MemoryXError as exc:
        for cls, status, type_ in _HTTP_STATUS:
            if isinstance(exc, cls):
                raise HTTPException(status, detail={"type": type_, "message": str(exc.args[0])}) from None
        raise


def action_of(request: Request) -> Action:
    return Action.SEARCH if request.url.path.startswith("/graphs/search") else Action.WRITE


def early_checks(principal: Principal, action: Action, item: dict) -> None:
    """What the graphs' runnables and first nodes would refuse, read here, before the answer starts: once
    /stream has sent its 200 and first event, a refusal can only be an error event inside it (a 403 or 422 of
    /invoke would become a 200 carrying a 500). The runnable's own checks (the lock, the messages' scope
    fields, agent_memory="global", a search without a user), then the dates (core.instants, via
    search.dates) and the messages (the add's own normaliser)."""
    try:
        apply_principal(item, with_principal({}, principal), action=action,
                        agent_scope_ok=action is not Action.SEARCH)
    except TenancyError as exc:
        raise AccessDeniedError(str(exc)) from None
    if action is Action.SEARCH:
        reference, _ = checked_reference_time(item.get("now"), item.get("as_of"))
        checked_time_range(item.get("time_range"), reference)
    elif item.get("messages") is not None:
        normalize_messages(item["messages"])


def add_graph_routes(app: FastAPI, served: Served) -> None:
    """/graphs/add and /graphs/search over the app's memory."""
    from langserve import add_routes

    settings, max_batch = served.settings, served.settings.max_batch_inputs

    async def principal_config(config: dict, request: Request) -> dict:
        """Per request: the key (401), the batch size (413), and every input's scope allowed for it
        (403; ids that are not strings: 422). The Runnable checks each input again (runnables.py)."""
        principal = served.keys.authenticate(request_key(request))
        try:
            body = guard.strict_json_loads(await request.body())
        except ValueError:
            body = {}
        inputs = body.get("inputs") if isinstance(body, dict) and "inputs" in body else [body.get("input") if isinstance(body, dict) else None]
        if isinstance(inputs, list) and len(inputs) > max_batch:
            raise HTTPException(413, detail={"type": "request_too_large", "message": f"{len(inputs)} inputs in one batch; the limit is {max_batch} (MEMORYX_MAX_BATCH_INPUTS)."})
        for item in inputs if isinstance(inputs, list) else []:
            if isinstance(item, dict):
                as_http(lambda item=item: authorize(principal, action_of(request), Requested.of(item)))
                as_http(lambda item=item: early_checks(principal, action_of(request), item))
        return with_principal(config, principal)

    def search_limits(inp: dict) -> dict:
        query = inp.get("query")
        if isinstance(query, str) and len(query) > settings.max_query_chars:
            raise InvalidInputError(f"query is {len(query)} characters; the limit is {settings.max_query_chars} (MEMORYX_MAX_QUERY_CHARS).")
        return inp

    def context():
        return served.mem()._core.context()

    def add_context():  # these routes run without a checkpointer: no pause for review
        return served.mem()._core.context(review=False)

    add_routes(app, ServiceBoundGraph(add_graph, add_context, name="memoryx_add", prepare=server_trace_id),
               path="/graphs/add", per_req_config_modifier=principal_config, enabled_endpoints=_GRAPH_ENDPOINTS)
    add_routes(app, ServiceBoundGraph(search_graph, context, name="memoryx_search", prepare=search_limits,
                                      agent_scope_ok=False, action=Action.SEARCH),
               path="/graphs/search", per_req_config_modifier=principal_config, enabled_endpoints=_GRAPH_ENDPOINTS)


# --------------------------------------------------------------------------------------------------------
# review and resume
# --------------------------------------------------------------------------------------------------------


class ReviewMessage(BaseModel):
    role: Literal["user", "assistant", "system", "tool"] = Field(description="Who said it.")
    content: str = Field(min_length=1, description="The message text.")


class AddForReview(BaseModel):
    model_config = ConfigDict(extra="forbid")
    messages: str | list[ReviewMessage] = Field(description="A string or a list of {role, content} messages.")
    user_id: str | None = Field(None, min_length=1, max_length=256)
    agent_id: str | None = Field(None, min_length=1, max_length=256)
    run_id: str | None = Field(None, min_length=1, max_length=256)
    metadata: dict[str, Any] | None = None


class Resume(BaseModel):
    model_config = ConfigDict(extra="forbid")
    trace_id: str = Field(min_length=1, description="The paused run's trace id (from the add's answer).")
    operations: list[dict[str, Any]] | None = Field(None, description="Approved (possibly edited) operations; null approves the pending ones, [] rejects them.")


def _plain(value: Any) -> Any:
    """LangServe hands the input over unpacked one level only: nested models become dicts here."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _fields(inp: Any) -> dict:
    return _plain(inp if isinstance(inp, dict) else inp.model_dump())


def _principal(config: RunnableConfig | None) -> Principal:
    principal = ((config or {}).get("configurable") or {}).get(PRINCIPAL_KEY)
    if principal is None:  # only reachable through add_routes with the modifier below
        raise HTTPException(401, detail={"type": "unauthorized", "message": "Not authenticated."})
    return principal


def add_review_routes(app: FastAPI, served: Served) -> None:
    """/graphs/add_review and /graphs/resume over the app's memory."""
    from langserve import add_routes

    mem = served.mem

    async def principal_config(config: dict, request: Request) -> dict:
        return with_principal(config, served.keys.authenticate(request_key(request)))

    def add_for_review(inp: Any, config: RunnableConfig) -> dict:
        body = _fields(inp)
        scope = grant(_principal(config), Action.WRITE, user_id=body.get("user_id"), agent_id=body.get("agent_id"),
                      run_id=body.get("run_id"))
        authorize_messages(_principal(config), body.get("messages"))
        return mem().add(body["messages"], **call_args(scope), metadata=body.get("metadata"), review=True)

    def resume(inp: Any, config: RunnableConfig) -> dict:
        body = _fields(inp)
        trace_id = body["trace_id"]
        try:
            record = mem().judgments(trace_id)
        except NotFoundError:
            record = None
        if record is None or not _principal(config).can_record(record):
            raise NotFoundError(f"No add run awaiting review with trace_id {trace_id!r}.")
        return mem().resume_add(trace_id, body.get("operations"))

    add_routes(app, RunnableLambda(add_for_review, name="memoryx_add_review"), path="/graphs/add_review",
               input_type=AddForReview, output_type=dict, per_req_config_modifier=principal_config,
               enabled_endpoints=_REVIEW_ENDPOINTS)
    add_routes(app, RunnableLambda(resume, name="memoryx_add_resume"), path="/graphs/resume",
               input_type=Resume, output_type=dict, per_req_config_modifier=principal_config,
               enabled_endpoints=_REVIEW_ENDPOINTS)
