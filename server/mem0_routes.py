"""mem0's platform API, so that mem0's own client (`mem0ai` 1.0.x `MemoryClient` / `AsyncMemoryClient`)
works unchanged against `memoryx serve`:

    from mem0 import MemoryClient
    client = MemoryClient(host="http://127.0.0.1:8000", api_key=KEY)   # Authorization: Token KEY

Routes as mem0's client sends them, trailing slashes included (they sit beside our own slash-less /v1
routes and never shadow them): /v1/ping/, POST /v1/memories/ (add), POST /v2/memories/ (list with mem0
`filters`), POST /v2/memories/search/, GET|PUT|DELETE /v1/memories/{id}/, DELETE /v1/memories/ (a scope),
GET /v1/memories/{id}/history/, PUT|DELETE /v1/batch/, POST /v1/feedback/, POST /v1/exports/ and
/v1/exports/get/.

Tenancy is the REST routes' own: every user, agent and run id a request names (top level or anywhere in
`filters`) is granted by `authorize` (memoryx.core.authorization) for the key's Principal; by-id routes use
the app's owner checks (server/served.py: 404 for another's memory).
Errors are the app's JSON errors plus mem0's `detail` field, which its client reports as the message.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Callable

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field

from memoryx.core.authorization import Action, Principal, authorize_messages
from memoryx.core.limits import check_page, check_scopes
from memoryx.core.scope import Scope
from memoryx.errors import ScopeError
from memoryx.ingest.multimodal import is_image_part
from memoryx.server.served import Served, call_args, delete_in, grant, list_in, search_in

_SCOPE_KEYS = ("user_id", "agent_id", "run_id")
_BATCH_MAX = 1000  # mem0's own limit per batch call
_MEM0_OPS = {"icontains": "contains"}  # mem0 operators with a near twin here (ours is case-sensitive)


# --------------------------------------------------------------------------------------------------------
# errors in mem0's form: the app's handlers, plus `detail`
# --------------------------------------------------------------------------------------------------------


class Mem0Route(APIRoute):
    """Runs the app's own exception handlers, then adds `detail` (the message mem0's client raises with)."""

    def get_route_handler(self) -> Callable:
        handler = super().get_route_handler()

        async def route(request: Request):
            try:
                return await handler(request)
            except Exception as exc:
                return await _mem0_error(request, exc)

        return route


async def _mem0_error(request: Request, exc: Exception) -> JSONResponse:
    handlers = request.app.exception_handlers
    handle = next((handlers[c] for c in type(exc).__mro__ if c in handlers), None)
    if handle is None:
        raise exc
    response = await handle(request, exc)
    body = json.loads(response.body)
    body["detail"] = (body.get("error") or {}).get("message") or "Request failed."
    headers = {k: v for k, v in response.headers.items() if k.lower() in ("retry-after", "www-authenticate")}
    return JSONResponse(body, status_code=response.status_code, headers=headers or None)


# --------------------------------------------------------------------------------------------------------
# request bodies (extra fields allowed: mem0 sends org_id, project_id, output_format, version, ...)
# --------------------------------------------------------------------------------------------------------


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class AddBody(_Lenient):
    messages: str | list[dict[str, Any]] = Field(description="A string or mem0 messages ({role, content}).")
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, Any] | None = None
    infer: bool = True
    expiration_date: str | None = Field(None, description="YYYY-MM-DD (UTC, inclusive).")
    immutable: bool = False
    includes: str | None = None
    excludes: str | None = None
    custom_instructions: str | None = None
    custom_categories: list[dict[str, str]] | dict[str, str] | None = None
    memory_type: str | None = Field(None, description='"procedural_memory" (with agent_id): one summary of the agent run.')
    prompt: str | None = Field(None, description="The extraction prompt of this add (the summary's with procedural_memory).")
    update_prompt: str | None = None


class FeedbackBody(_Lenient):
    memory_id: str = Field(min_length=1)
    feedback: str | None = Field(None, description="POSITIVE, NEGATIVE, VERY_NEGATIVE; null withdraws it.")
    feedback_reason: str | None = Field(None, max_length=4000)


class ListBody(_Lenient):
    filters: dict[str, Any] | None = None
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    top_k: int | None = Field(None, ge=1, le=10000)
    limit: int | None = Field(None, ge=1, le=10000)


class SearchBody(ListBody):
    query: str = Field(min_length=1, max_length=8000)
    threshold: float | None = Field(None, ge=-1.0, le=1.0)


class UpdateBody(_Lenient):
    text: str | None = None
    metadata: dict[str, Any] | None = None


class BatchItem(_Lenient):
    memory_id: str = Field(min_length=1)
    text: str | None = None
    metadata: dict[str, Any] | None = None


class BatchBody(_Lenient):
    memories: list[BatchItem] = Field(min_length=1, max_length=_BATCH_MAX)


class ExportBody(ListBody):
    schema_: Any = Field(None, alias="schema")


# --------------------------------------------------------------------------------------------------------
# mem0 filters -> ours, and the scopes a request reaches
# --------------------------------------------------------------------------------------------------------


def translate_filters(filters: Any) -> Any:
    """mem0's filter dialect in ours (memoryx.core.filters): `metadata: {k: v}` -> `metadata.k`, `categories` ->
    the memory's category or its custom categories, `icontains` -> `contains`, `"*"` -> "has a value"."""
    if isinstance(filters, list):
        return [translate_filters(f) for f in filters]
    if not isinstance(filters, dict):
        return filters
    out: dict[str, Any] = {}
    extra: list[dict] = []
    for key, spec in filters.items():
        if key in ("AND", "OR", "NOT"):
            out[key] = translate_filters(spec)
        elif key == "metadata" and isinstance(spec, dict):
            for k, v in spec.items():
                out[f"metadata.{k}"] = _spec(v)
        elif key == "categories":
            spec = _spec(spec)
            extra.append({"OR": [{"category": spec}, {"metadata.categories": spec}]})
        else:
            out[key] = _spec(spec)
    if extra:
        return {"AND": [out, *extra]} if out else (extra[0] if len(extra) == 1 else {"AND": extra})
    return out


def _spec(spec: Any) -> Any:
    if spec == "*":
        return {"ne": None}
    if isinstance(spec, dict):
        ops = {_MEM0_OPS.get(op, op): v for op, v in spec.items()}
        if "contains" in ops and isinstance(ops["contains"], list):
            ops["in"] = ops.pop("contains")  # mem0: categories contains [a, b] = any of them
        return ops
    return spec


def _named(filters: Any, field: str) -> set[str]:
    """Every value a filter gives `field` (eq or in), wherever it sits in the tree."""
    found: set[str] = set()
    if isinstance(filters, list):
        for f in filters:
            found |= _named(f, field)
    elif isinstance(filters, dict):
        for key, spec in filters.items():
            if key in ("AND", "OR", "NOT"):
                found |= _named(spec, field)
            elif key == field:
                if isinstance(spec, str) and spec != "*":
                    found.add(spec)
                elif isinstance(spec, dict):
                    for op in ("eq", "in"):
                        v = spec.get(op)
                        found |= {v} if isinstance(v, str) else {x for x in v or () if isinstance(x, str)}
                elif isinstance(spec, list):
                    found |= {x for x in spec if isinstance(x, str)}
    return found


def _one_or_each(body_value: str | None, named: set[str]) -> list[str | None]:
    return [body_value] if body_value else (sorted(named) or [None])


def request_scopes(principal: Principal, body: ListBody, action: Action = Action.LIST) -> list[Scope]:
    """The scopes a list/search/export reaches: each combination of the user, agent and run ids the body or
    its filters name, each granted by `authorize` (403 for an id the key does not hold; an agent key's scope
    holds its agents' global memories only). The full filter still applies within them."""
    users = _one_or_each(body.user_id, _named(body.filters, "user_id"))
    agents = _one_or_each(body.agent_id, _named(body.filters, "agent_id"))
    runs = _one_or_each(body.run_id, _named(body.filters, "run_id"))
    check_scopes(len(users) * len(agents) * len(runs), "The user, agent and run ids of the filters")
    scopes = []
    for user, agent, run in ((u, a, r) for u in users for a in agents for r in runs):
        scope = grant(principal, action, user_id=user, agent_id=agent, run_id=run)
        if scope is None:
            raise ScopeError("filters must name a user_id, agent_id or run_id, e.g. {'user_id': 'alice'}.")
        scopes.append(scope)
    return scopes


def mem0_memory(m: dict) -> dict:
    """Our memory dict with the fields mem0's platform returns beside ours."""
    meta = m.get("metadata") or {}
    out = dict(m)
    out["categories"] = list(meta.get("categories") or ([m["category"]] if m.get("category") else []))
    out["immutable"] = bool(meta.get("immutable", False))
    out["expiration_date"] = meta.get("expiration_date")
    return out


def _messages(messages: str | list[dict]) -> str | list[dict]:
    if isinstance(messages, str):
        return messages
    out = []
    for msg in messages:
        content = msg.get("content")
        if isinstance(content, dict):  # mem0's multimodal part as the whole content
            content = [content]
        if isinstance(content, list):
            parts = []
            for part in content:
                if isinstance(part, dict) and part.get("type") == "text":
                    parts.append(str(part.get("text") or ""))
                elif is_image_part(part):  # Memory.add reads it (a vision model) or notes that it was not read
                    parts.append(part)
                elif isinstance(part, dict):  # documents, audio: not read here
                    parts.append(f"[a {part.get('type') or 'non-text'} part was shared; it was not read]")
                else:
                    parts.append(str(part))
            content = parts if any(is_image_part(p) for p in parts) else " ".join(p for p in parts if p)
        out.append({**{k: v for k, v in msg.items() if k in ("role", "name", "timestamp")}, "content": content})
    return out


# --------------------------------------------------------------------------------------------------------
# the router
# --------------------------------------------------------------------------------------------------------


def _add_slashless_aliases(router: APIRouter, beside: APIRouter | None) -> None:
    """mem0's paths end in '/'; FastAPI answers the bare path with a 307, which curl and many clients do not
    follow for a POST. Each mem0 route that the REST routes (`beside`) do not already serve without the slash
    (e.g. POST /v2/memories/search) gets the bare path too, outside the OpenAPI document."""
    taken = {(route.path, method) for route in (beside.routes if beside is not None else [])
             if isinstance(route, APIRoute) for method in route.methods}
    for route in list(router.routes):
        if not isinstance(route, APIRoute) or not route.path.endswith("/") or route.path == "/":
            continue
        bare = route.path.rstrip("/")
        methods = sorted(m for m in route.methods if (bare, m) not in taken)
        if methods:
            router.add_api_route(bare, route.endpoint, methods=methods, include_in_schema=False,
                                 status_code=route.status_code, response_model=route.response_model)


def mem0_router(served: Served, beside: APIRouter | None = None) -> APIRouter:
    """mem0's routes over the app's memory, key ring and owner checks (the same ones the REST routes use);
    each also answers without its trailing slash where the REST routes `beside` do not take that path."""
    router = APIRouter(route_class=Mem0Route, tags=["mem0"])
    auth, mem, metrics, get_owned = served.auth, served.mem, served.metrics, served.get_owned

    @router.get("/v1/ping/")
    def ping(principal: Principal = auth):
        # mem0's client requires an org and a project (it then sends them back on every call; ignored here:
        # a key's users are its whole tenancy)
        return {"status": "ok", "message": "MemoryX is up (mem0-compatible API).", "org_id": "memoryx",
                "project_id": "default", "user_email": None}

    @router.post("/v1/memories/")
    def add(body: AddBody, principal: Principal = auth):
        scope = grant(principal, Action.WRITE, user_id=body.user_id, agent_id=body.agent_id, run_id=body.run_id)
        authorize_messages(principal, body.messages)
        with metrics.track("add"):
            result = mem().add(_messages(body.messages), **call_args(scope), metadata=body.metadata, infer=body.infer,
                               expiration_date=body.expiration_date, immutable=body.immutable,
                               includes=body.includes, excludes=body.excludes,
                               custom_instructions=body.custom_instructions, custom_categories=body.custom_categories,
                               memory_type=body.memory_type, prompt=body.prompt, update_prompt=body.update_prompt)
        metrics.record_add_result(result)
        for r in result.get("results") or []:
            r.setdefault("data", {"memory": r.get("memory")})  # mem0's v1 event shape
        return result

    def _collect(principal: Principal, body: ListBody, limit: int, action: Action = Action.LIST) -> list[dict]:
        filters = translate_filters(body.filters) or None
        out: list[dict] = []
        for scope in request_scopes(principal, body, action):
            out.extend(list_in(mem(), principal, scope, limit=limit, filters=filters)["results"])
        out.sort(key=lambda m: m.get("created_at") or "", reverse=True)
        return [mem0_memory(m) for m in out]

    @router.post("/v2/memories/")
    def list_memories(body: ListBody, principal: Principal = auth, page: int | None = Query(None, ge=1, le=1_000_000),
                      page_size: int | None = Query(None, ge=1, le=1000)):
        if page is None or page_size is None:
            return {"results": _collect(principal, body, body.top_k or body.limit or 100)}
        check_page(page, page_size)
        rows = _collect(principal, body, page * page_size + 1)
        chunk = rows[(page - 1) * page_size: page * page_size]
        return {"count": len(rows), "next": page + 1 if len(rows) > page * page_size else None,
                "previous": page - 1 if page > 1 else None, "results": chunk}

    @router.post("/v2/memories/search/")
    def search(body: SearchBody, principal: Principal = auth):
        limit = body.top_k or body.limit or 10
        filters = translate_filters(body.filters) or None
        found: list[dict] = []
        relations: list = []
        total = 0
        with metrics.track("search"):
            for scope in request_scopes(principal, body, Action.SEARCH):
                res = search_in(mem(), principal, scope, body.query, limit=limit, filters=filters,
                                threshold=body.threshold)
                found.extend(res.get("results") or [])
                relations.extend(res.get("relations") or [])
                total += int(res.get("total_count") or 0)  # each scope's candidates past its filters
        found.sort(key=lambda m: m.get("score") or 0.0, reverse=True)
        return {"results": [mem0_memory(m) for m in found[:limit]], "relations": relations, "total_count": total}

    @router.get("/v1/memories/{memory_id}/")
    def get_memory(memory_id: str, principal: Principal = auth):
        return mem0_memory(get_owned(principal, memory_id))

    @router.put("/v1/memories/{memory_id}/")
    def update_memory(memory_id: str, body: UpdateBody, principal: Principal = auth):
        current = get_owned(principal, memory_id)
        return mem().update(memory_id, body.text if body.text is not None else current["memory"],
                            metadata=body.metadata)

    @router.delete("/v1/memories/{memory_id}/")
    def delete_memory(memory_id: str, principal: Principal = auth):
        get_owned(principal, memory_id)
        return mem().delete(memory_id)

    @router.delete("/v1/memories/")
    def delete_all(user_id: str | None = Query(None, min_length=1), agent_id: str | None = Query(None, min_length=1),
                   run_id: str | None = Query(None, min_length=1), principal: Principal = auth):
        return delete_in(mem(), principal, grant(principal, Action.DELETE, user_id=user_id, agent_id=agent_id,
                                                  run_id=run_id))

    @router.get("/v1/memories/{memory_id}/history/")
    def history(memory_id: str, principal: Principal = auth):
        served.owned_even_deleted(principal, memory_id)
        return mem().history(memory_id)

    def _all_owned(principal: Principal, body: BatchBody) -> list[dict]:
        # every id checked before anything changes: a batch with one foreign id changes nothing
        return [get_owned(principal, item.memory_id) for item in body.memories]

    @router.put("/v1/batch/")
    def batch_update(body: BatchBody, principal: Principal = auth):
        currents = _all_owned(principal, body)
        for item, current in zip(body.memories, currents):
            mem().update(item.memory_id, item.text if item.text is not None else current["memory"],
                         metadata=item.metadata)
        return {"message": f"Successfully updated {len(currents)} memories"}

    @router.delete("/v1/batch/")
    def batch_delete(body: BatchBody, principal: Principal = auth):
        _all_owned(principal, body)
        for item in body.memories:
            mem().delete(item.memory_id)
        return {"message": f"Successfully deleted {len(body.memories)} memories"}

    @router.post("/v1/feedback/")
    def feedback(body: FeedbackBody, principal: Principal = auth):
        get_owned(principal, body.memory_id)  # 404 for another tenant's memory
        return mem().feedback(body.memory_id, body.feedback, body.feedback_reason)

    # exports: mem0 runs them as a job whose schema an LLM fills; here an export is the scope's memories as
    # they are, computed when fetched (so creating one only checks the scope), and the schema is not applied
    @router.post("/v1/exports/")
    def create_export(body: ExportBody, principal: Principal = auth):
        request_scopes(principal, body, Action.EXPORT)
        export_id = str(uuid.uuid4())
        return {"message": "Memory export request received. The export is ready.", "id": export_id}

    @router.post("/v1/exports/get/")
    def get_export(body: ExportBody, principal: Principal = auth):
        rows = _collect(principal, body, 10000, Action.EXPORT)
        return {"memories": [{k: m.get(k) for k in ("id", "memory", "user_id", "agent_id", "run_id", "metadata",
                                                      "categories", "created_at", "updated_at")} for m in rows]}

    _add_slashless_aliases(router, beside)
    return router


__all__ = ["mem0_router", "translate_filters", "request_scopes", "mem0_memory"]
