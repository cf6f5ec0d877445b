"""The MemoryX HTTP server: REST under /v1 (shapes as the Python API), LangServe routes for the add and
search graphs, /healthz and Prometheus /metrics.

    memoryx serve --host 127.0.0.1 --port 8000
    uvicorn --factory memoryx.server.app:create_app

Auth: `X-API-Key`, each key bound to the user ids it may touch (MEMORYX_API_KEYS). A key never reaches
another user's memories: scoped routes check the user_id, by-id routes check the memory's owner and answer
404 (never revealing that the id exists). No keys configured: local development mode, said loudly.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Literal

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from memoryx.errors import (
    ConcurrencyError,
    InvalidInputError,
    MemoryXError,
    ModelOutputError,
    NotFoundError,
    ScopeError,
    StoreUnavailableError,
)
from memoryx.server.auth import HEADER, KeyRing, Principal
from memoryx.server.metrics import Metrics
from memoryx.server.runnables import PRINCIPAL_KEY, ServiceBoundGraph, TenancyError
from memoryx.settings import Settings, get_settings

log = logging.getLogger("memoryx.server")

API_VERSION = "0.1.0"


# --------------------------------------------------------------------------------------------------------
# request bodies
# --------------------------------------------------------------------------------------------------------


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Message(BaseModel):
    role: Literal["user", "assistant", "system", "tool"] = Field(description="Who said it.")
    content: str = Field(min_length=1, description="The message text.")
    name: str | None = Field(None, description="Speaker name, e.g. in a group conversation.")
    timestamp: str | None = Field(None, description="When it was said (ISO-8601).")


class ScopeFields(_Body):
    user_id: str | None = Field(None, min_length=1, max_length=256)
    agent_id: str | None = Field(None, min_length=1, max_length=256)
    run_id: str | None = Field(None, min_length=1, max_length=256)


class AddRequest(ScopeFields):
    messages: str | list[Message] = Field(description="A string or a list of {role, content} messages.")
    metadata: dict[str, Any] | None = None
    infer: bool = Field(True, description="Extract facts with the model (True) or store the messages verbatim (False).")

    @field_validator("messages")
    @classmethod
    def _not_empty(cls, v):
        if isinstance(v, str) and not v.strip() or isinstance(v, list) and not v:
            raise ValueError("messages must not be empty")
        return v


class SearchRequest(ScopeFields):
    query: str = Field(min_length=1, max_length=8000)
    limit: int = Field(10, ge=1, le=1000)
    filters: dict[str, Any] | None = None
    threshold: float | None = Field(None, ge=-1.0, le=1.0)
    mode: Literal["fast", "deep", "auto"] | None = None


class ContextRequest(ScopeFields):
    query: str = Field(min_length=1, max_length=8000)
    max_tokens: int = Field(1000, ge=16, le=100000)
    limit: int = Field(20, ge=1, le=200)


class UpdateRequest(_Body):
    text: str = Field(min_length=1, description="The new text of the memory.")
    metadata: dict[str, Any] | None = None


class VerifyRequest(_Body):
    result: Literal["CORRECT", "INCORRECT", "PARTIAL"]
    notes: str | None = Field(None, max_length=4000)


class ResumeRequest(_Body):
    operations: list[dict[str, Any]] | None = Field(None, description="Approved (possibly edited) operations; null approves the pending ones, [] rejects them.")


# --------------------------------------------------------------------------------------------------------
# errors: JSON, never a stack trace
# --------------------------------------------------------------------------------------------------------

_STATUS: list[tuple[type, int, str]] = [
    (ScopeError, 400, "scope_error"),
    (InvalidInputError, 422, "invalid_input"),
    (NotFoundError, 404, "not_found"),
    (StoreUnavailableError, 503, "store_unavailable"),
    (ConcurrencyError, 503, "busy"),
    (ModelOutputError, 502, "model_output_error"),
]


def _error(status: int, type_: str, message: str, **extra: Any) -> JSONResponse:
    body = {"error": {"type": type_, "message": message, **{k: v for k, v in extra.items() if v is not None}}}
    headers = {"Retry-After": "5"} if status == 503 else None
    return JSONResponse(body, status_code=status, headers=headers)


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(MemoryXError)
    async def _memoryx_error(request: Request, exc: MemoryXError):
        for cls, status, type_ in _STATUS:
            if isinstance(exc, cls):
                break
        else:
            status, type_ = 500, "memoryx_error"
        message = str(exc.args[0]) if exc.args else type(exc).__name__  # no KeyError-style quoting
        if status >= 500:
            log.warning("%s %s -> %s: %s", request.method, request.url.path, status, exc)
        return _error(status, type_, message, trace_id=exc.trace_id)

    @app.exception_handler(TenancyError)
    async def _tenancy(request: Request, exc: TenancyError):
        return _error(403, "forbidden", str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        detail = exc.detail
        if isinstance(detail, dict) and "message" in detail:
            body = {"error": {"type": detail.get("type", "http_error"), **detail}}
        else:
            body = {"error": {"type": {401: "unauthorized", 403: "forbidden", 404: "not_found",
                                       405: "method_not_allowed"}.get(exc.status_code, "http_error"),
                              "message": str(detail) if detail else "Request failed."}}
        return JSONResponse(body, status_code=exc.status_code, headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError):
        details = []
        for err in exc.errors():
            loc = [str(p) for p in err.get("loc", ())]
            details.append({"loc": loc, "field": ".".join(p for p in loc if p not in ("body", "query", "path")),
                            "message": err.get("msg", "invalid"), "type": err.get("type", "value_error")})
        summary = "; ".join(f"{d['field'] or 'body'}: {d['message']}" for d in details[:5])
        return _error(422, "validation_error", f"Invalid request: {summary}. See /docs for the request schema.",
                      details=details)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):
        log.exception("Unhandled error on %s %s", request.method, request.url.path)
        return _error(500, "internal_error", "Internal server error; the server log has the details.")


# --------------------------------------------------------------------------------------------------------
# the app
# --------------------------------------------------------------------------------------------------------


def _dev_mode_banner() -> None:
    line = "=" * 78
    msg = (f"\n{line}\n  MemoryX server in LOCAL DEVELOPMENT MODE: no API keys configured, every request is\n"
           f"  allowed for every user. Set MEMORYX_API_KEYS='{{\"<key>\": [\"<user_id>\"]}}' before exposing it.\n{line}")
    log.warning("LOCAL DEVELOPMENT MODE: no API keys configured (MEMORYX_API_KEYS); every request is allowed for every user")
    import sys

    print(msg, file=sys.stderr, flush=True)


def create_app(memory: Any = None, settings: Settings | None = None) -> FastAPI:
    """The FastAPI app. `memory`: a `memoryx.Memory` to serve (not closed on shutdown); None builds one from
    `settings` (default: MEMORYX_* environment) at startup and closes it at shutdown."""
    settings = settings or (memory.settings if memory is not None else get_settings())
    keys = KeyRing(settings.api_keys)
    state: dict[str, Any] = {"memory": memory}

    def mem():
        m = state["memory"]
        if m is None:
            raise StoreUnavailableError("The server's stores are not open (startup failed); see the server log.")
        return m

    metrics = Metrics(count_memories=lambda: mem().services.sql.count_memories())

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        owned = False
        if state["memory"] is None:
            import asyncio

            from memoryx.memory import Memory

            state["memory"] = await asyncio.to_thread(Memory, settings)
            owned = True
        if keys.dev_mode:
            _dev_mode_banner()
        else:
            log.info("MemoryX server: API keys required (%s)", HEADER)
        try:
            yield
        finally:
            if owned and state["memory"] is not None:
                state["memory"].close()
                state["memory"] = None

    app = FastAPI(title="MemoryX", version=API_VERSION, lifespan=lifespan,
                  description="Long-term memory for LLM chatbots and agents (mem0-compatible REST API, "
                              "plus LangServe routes for the add and search graphs).")
    app.state.metrics = metrics
    app.state.keys = keys
    app.state.memory_ref = state
    _install_error_handlers(app)

    @app.middleware("http")
    async def _count_requests(request: Request, call_next):
        response = await call_next(request)
        route = request.scope.get("route")
        path = getattr(route, "path", None) or "unmatched"
        metrics.requests.labels(request.method, path, str(response.status_code)).inc()
        return response

    auth = Depends(keys)

    def _owned(principal: Principal, record: dict, what: str, ident: str) -> dict:
        if not principal.can(record.get("user_id")):
            raise NotFoundError(f"No {what} with id {ident!r}.")
        return record

    def _get_owned(principal: Principal, memory_id: str) -> dict:
        try:
            return _owned(principal, mem().get(memory_id), "memory", memory_id)
        except NotFoundError:
            raise NotFoundError(f"No memory with id {memory_id!r}; list them with GET /v1/memories.") from None

    # --- health and metrics -----------------------------------------------------------------------------

    @app.get("/healthz", tags=["ops"])
    def healthz():
        m = state["memory"]
        if m is None:
            return JSONResponse({"status": "starting"}, status_code=503)
        checks: dict[str, str] = {}
        s = m.services
        for name, probe in (("sql", lambda: s.sql.count_memories()), ("vectors", lambda: s.vectors.count_memories()),
                            ("graph", (lambda: s.graph.counts()) if s.graph is not None else None)):
            if probe is None:
                checks[name] = "disabled"
                continue
            try:
                probe()
                checks[name] = "ok"
            except Exception as exc:  # report, don't raise
                checks[name] = f"error: {type(exc).__name__}"
        ok = all(v in ("ok", "disabled") for v in checks.values())
        return JSONResponse({"status": "ok" if ok else "degraded", "stores": checks, "version": API_VERSION,
                             "auth": "dev" if keys.dev_mode else "api_keys"}, status_code=200 if ok else 503)

    @app.get("/metrics", tags=["ops"])
    def prometheus_metrics():
        return Response(metrics.render(), media_type=metrics.content_type)

    # --- memories ---------------------------------------------------------------------------------------

    @app.post("/v1/memories", tags=["memories"])
    def add_memories(body: AddRequest, principal: Principal = auth):
        user_id = principal.scope_user(body.user_id)
        messages = body.messages if isinstance(body.messages, str) else [
            m.model_dump(exclude_none=True) for m in body.messages]
        with metrics.track("add"):
            result = mem().add(messages, user_id=user_id, agent_id=body.agent_id, run_id=body.run_id,
                               metadata=body.metadata, infer=body.infer)
        metrics.record_add_result(result)
        return result

    @app.post("/v1/memories/search", tags=["memories"])
    def search_memories(body: SearchRequest, principal: Principal = auth):
        user_id = principal.scope_user(body.user_id)
        with metrics.track("search"):
            return mem().search(body.query, user_id=user_id, agent_id=body.agent_id, run_id=body.run_id,
                                limit=body.limit, filters=body.filters, threshold=body.threshold, mode=body.mode)

    @app.post("/v1/memories/context", tags=["memories"])
    def memory_context(body: ContextRequest, principal: Principal = auth):
        user_id = principal.scope_user(body.user_id)
        return mem().get_context(body.query, user_id=user_id, agent_id=body.agent_id, run_id=body.run_id,
                                 max_tokens=body.max_tokens, limit=body.limit)

    @app.get("/v1/memories", tags=["memories"])
    def list_memories(user_id: str | None = Query(None, min_length=1), agent_id: str | None = Query(None, min_length=1),
                      run_id: str | None = Query(None, min_length=1), limit: int = Query(100, ge=1, le=10000),
                      principal: Principal = auth):
        user_id = principal.scope_user(user_id)
        return mem().get_all(user_id=user_id, agent_id=agent_id, run_id=run_id, limit=limit)

    @app.delete("/v1/memories", tags=["memories"])
    def delete_all_memories(user_id: str | None = Query(None, min_length=1), agent_id: str | None = Query(None, min_length=1),
                            run_id: str | None = Query(None, min_length=1), principal: Principal = auth):
        user_id = principal.scope_user(user_id)
        return mem().delete_all(user_id=user_id, agent_id=agent_id, run_id=run_id)

    @app.get("/v1/memories/{memory_id}", tags=["memories"])
    def get_memory(memory_id: str, principal: Principal = auth):
        return _get_owned(principal, memory_id)

    @app.put("/v1/memories/{memory_id}", tags=["memories"])
    def update_memory(memory_id: str, body: UpdateRequest, principal: Principal = auth):
        _get_owned(principal, memory_id)
        return mem().update(memory_id, body.text, metadata=body.metadata)

    @app.delete("/v1/memories/{memory_id}", tags=["memories"])
    def delete_memory(memory_id: str, principal: Principal = auth):
        _get_owned(principal, memory_id)
        return mem().delete(memory_id)

    @app.get("/v1/memories/{memory_id}/history", tags=["memories"])
    def memory_history(memory_id: str, principal: Principal = auth):
        m = mem()
        try:
            _owned(principal, m.services.sql.get_memory(memory_id, include_deleted=True), "memory", memory_id)
        except NotFoundError:
            raise NotFoundError(f"No memory with id {memory_id!r}; list them with GET /v1/memories.") from None
        return m.history(memory_id)

    # --- review (add runs paused for a human) -----------------------------------------------------------

    @app.post("/v1/reviews/{trace_id}", tags=["memories"])
    def resume_review(trace_id: str, body: ResumeRequest, principal: Principal = auth):
        _judgment_owned(principal, trace_id)
        result = mem().resume_add(trace_id, body.operations)
        metrics.record_add_result(result)
        return result

    # --- judgments --------------------------------------------------------------------------------------

    def _judgment_owned(principal: Principal, trace_id: str) -> dict:
        try:
            return _owned(principal, mem().judgments(trace_id), "judgment", trace_id)
        except NotFoundError:
            raise NotFoundError(f"No judgment with trace_id {trace_id!r}; list them with GET /v1/judgments.") from None

    @app.get("/v1/judgments", tags=["judgments"])
    def list_judgments(user_id: str | None = Query(None, min_length=1), agent_id: str | None = Query(None, min_length=1),
                       run_id: str | None = Query(None, min_length=1), limit: int = Query(50, ge=1, le=1000),
                       offset: int = Query(0, ge=0), principal: Principal = auth):
        user_id = principal.scope_user(user_id)
        return {"results": mem().list_judgments(user_id=user_id, agent_id=agent_id, run_id=run_id, limit=limit,
                                                offset=offset)}

    @app.get("/v1/judgments/stats", tags=["judgments"])
    def judgment_stats(user_id: str | None = Query(None, min_length=1), agent_id: str | None = Query(None, min_length=1),
                       run_id: str | None = Query(None, min_length=1), principal: Principal = auth):
        user_id = principal.scope_user(user_id)
        return mem().judgment_stats(user_id=user_id, agent_id=agent_id, run_id=run_id)

    @app.get("/v1/judgments/{trace_id}", tags=["judgments"])
    def get_judgment(trace_id: str, principal: Principal = auth):
        return _judgment_owned(principal, trace_id)

    @app.post("/v1/judgments/{trace_id}/verify", tags=["judgments"])
    def verify_judgment(trace_id: str, body: VerifyRequest, principal: Principal = auth):
        _judgment_owned(principal, trace_id)
        return mem().verify(trace_id, body.result, body.notes)

    # --- LangServe ---------------------------------------------------------------------------------------

    _add_langserve_routes(app, keys, mem, metrics)
    from memoryx.server.mcp import mount_mcp

    mount_mcp(app, keys, mem)  # MCP over streamable HTTP at /mcp, same keys
    from memoryx.server.review_runnables import register_review_routes

    register_review_routes(app, keys, mem)  # LangServe /graphs/add_review and /graphs/resume
    return app


def _add_langserve_routes(app: FastAPI, keys: KeyRing, mem, metrics: Metrics) -> None:
    from langserve import add_routes

    from memoryx.graphs.add import graph as add_graph
    from memoryx.graphs.search import graph as search_graph

    async def authorize(config: dict, request: Request) -> dict:
        """Per request: the key (401), and every input's user_id allowed for it (403)."""
        principal = keys.authenticate(request.headers.get(HEADER))
        if not principal.admin:
            try:
                body = await request.json()
            except Exception:
                body = {}
            inputs = body.get("inputs") if isinstance(body, dict) and "inputs" in body else [body.get("input") if isinstance(body, dict) else None]
            for item in inputs or []:
                if isinstance(item, dict):
                    principal.scope_user(item.get("user_id"))
        config = dict(config)
        config["configurable"] = {**(config.get("configurable") or {}), PRINCIPAL_KEY: principal}
        return config

    def context():
        return mem()._core.context()

    def add_context():  # these routes run without a checkpointer: no pause for review
        return mem()._core.context(review=False)

    def _add_prepare(inp: dict) -> dict:
        if not inp.get("trace_id"):
            import uuid

            inp = {**inp, "trace_id": str(uuid.uuid4())}
        return inp

    endpoints = ["invoke", "batch", "stream", "input_schema", "output_schema", "config_schema"]
    add_routes(app, ServiceBoundGraph(add_graph, add_context, name="memoryx_add", prepare=_add_prepare),
               path="/graphs/add", per_req_config_modifier=authorize, enabled_endpoints=endpoints)
    add_routes(app, ServiceBoundGraph(search_graph, context, name="memoryx_search"),
               path="/graphs/search", per_req_config_modifier=authorize, enabled_endpoints=endpoints)
