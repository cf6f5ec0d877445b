"""POST /v1/memories/batch: `Memory.add_many` over REST (memoryx.ingest.bulk).

Tenancy is checked per item: an item whose user (or agent) the API key may not touch gets a 403-shaped
error as its result and is not written; the other items go on. One result per item, in order.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from memoryx.core.authorization import Action, Principal, authorize_messages
from memoryx.errors import AccessDeniedError, InvalidInputError, MemoryXError, ScopeError
from memoryx.ingest import bulk
from memoryx.server.served import Served, call_args, grant


class BatchItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    messages: str | list[dict[str, Any]] = Field(description="A string or a list of {role, content} messages, as in POST /v1/memories.")
    user_id: str | None = Field(None, min_length=1, max_length=256)
    agent_id: str | None = Field(None, min_length=1, max_length=256)
    run_id: str | None = Field(None, min_length=1, max_length=256)
    group_id: str | None = Field(None, min_length=1, max_length=256, description="A group chat.")
    metadata: dict[str, Any] | None = None


class BatchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    items: list[BatchItem] = Field(min_length=1, description="The adds, each with its own scope; at most MEMORYX_BULK_MAX_ITEMS.")
    infer: bool = Field(True, description="Extract facts with the model (True) or store the messages verbatim (False, batched).")


def _denied(exc: MemoryXError) -> dict:
    type_ = {AccessDeniedError: "forbidden", ScopeError: "scope_error"}.get(type(exc), "invalid_input")
    return {"results": [], "relations": {"added_entities": [], "deleted_entities": []}, "trace_id": None,
            "error": {"type": type_, "message": str(exc.args[0]) if exc.args else type_}}


def bulk_router(served: Served) -> APIRouter:
    router = APIRouter(tags=["memories"])
    metrics = served.metrics

    @router.post("/v1/memories/batch")
    def add_batch(body: BatchRequest, principal: Principal = served.auth) -> dict:
        """`{"results": [one add result per item, in order], "summary": {"items", "failed", "events"}}`."""
        memory = served.mem()
        if len(body.items) > memory.settings.bulk_max_items:
            raise InvalidInputError(f"{len(body.items)} items exceed the limit of {memory.settings.bulk_max_items} per "
                                    "batch (MEMORYX_BULK_MAX_ITEMS); send several batches.")
        results: list[dict | None] = [None] * len(body.items)
        allowed: list[tuple[int, dict]] = []
        for index, item in enumerate(body.items):
            args = item.model_dump()
            try:
                scope = grant(principal, Action.WRITE, user_id=args["user_id"], agent_id=args["agent_id"],
                              run_id=args["run_id"], group_id=args["group_id"])
                authorize_messages(principal, args.get("messages"), args.get("participants"))
            except (AccessDeniedError, ScopeError, InvalidInputError) as exc:
                results[index] = _denied(exc)
                continue
            allowed.append((index, {**args, "group_id": None, **call_args(scope)}))
        with metrics.track("add"):
            done = memory.add_many([args for _, args in allowed], infer=body.infer)
        for (index, _), result in zip(allowed, done):
            results[index] = result
            metrics.record_add_result(result)
        return {"results": results, "summary": bulk.summarize(results)}

    return router
