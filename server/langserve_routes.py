"""Review and resume on the LangServe side, next to REST's POST /v1/reviews/{trace_id}:

    /graphs/add_review   an add run that stops at the review interrupt: {"status": "awaiting_review",
                         "trace_id", "pending_operations"}; nothing is written yet
    /graphs/resume       {"trace_id", "operations"}: null approves the pending operations, a list approves
                         that (edited) list, [] rejects them all

Both go through `Memory` (the add graph compiled with the checkpointer, thread id = trace id), so a run paused
through REST or the Python API can be resumed here and the other way round. /graphs/add itself runs without
a checkpointer and never pauses. Tenancy: the key's Principal (put into the config per request) must cover
the add's user, and the resumed run's owner (someone else's trace id is "not found").
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import HTTPException, Request
from langchain_core.runnables import RunnableConfig, RunnableLambda
from pydantic import BaseModel, ConfigDict, Field

from memoryx.errors import NotFoundError
from memoryx.server.auth import KeyRing, Principal, request_key

_PRINCIPAL = "memoryx_review_principal"


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
    principal = ((config or {}).get("configurable") or {}).get(_PRINCIPAL)
    if principal is None:  # only reachable through add_routes with the modifier below
        raise HTTPException(401, detail={"type": "unauthorized", "message": "Not authenticated."})
    return principal


def register_review_routes(app, keys: KeyRing, mem) -> None:
    from langserve import add_routes

    async def authorize(config: dict, request: Request) -> dict:
        principal = keys.authenticate(request_key(request))
        return {**config, "configurable": {**(config.get("configurable") or {}), _PRINCIPAL: principal}}

    def add_for_review(inp: Any, config: RunnableConfig) -> dict:
        body = _fields(inp)
        user_id, agent_id = _principal(config).scope_ids(body.get("user_id"), body.get("agent_id"))
        return mem().add(body["messages"], user_id=user_id, agent_id=agent_id, run_id=body.get("run_id"),
                         metadata=body.get("metadata"), review=True)

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

    endpoints = ["invoke", "batch", "input_schema", "output_schema", "config_schema"]
    add_routes(app, RunnableLambda(add_for_review, name="memoryx_add_review"), path="/graphs/add_review",
               input_type=AddForReview, output_type=dict, per_req_config_modifier=authorize, enabled_endpoints=endpoints)
    add_routes(app, RunnableLambda(resume, name="memoryx_add_resume"), path="/graphs/resume",
               input_type=Resume, output_type=dict, per_req_config_modifier=authorize, enabled_endpoints=endpoints)
