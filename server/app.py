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
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import JSONResponse, Response

from memoryx.errors import (
    InvalidInputError,
    NotFoundError,
    ScopeError,
    StoreUnavailableError,
)
from memoryx.server import guard
from memoryx.server.auth import HEADER, KeyRing, Principal, id_value, request_key
from memoryx.server.errors import install_error_handlers
from memoryx.server.metrics import Metrics
from memoryx.server.runnables import PRINCIPAL_KEY, ServiceBoundGraph, server_trace_id
from memoryx.server.schemas import (
    AddRequest,
    ContextRequest,
    ResumeRequest,
    SearchRequest,
    UpdateRequest,
    VerifyRequest,
)
from memoryx.settings import Settings, get_settings

log = logging.getLogger("memoryx.server")

API_VERSION = "0.1.0"
_NO_USER = {"user_id": None}  # the filter of agent-global records (no user)


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

            from memoryx.api.memory import Memory

            state["memory"] = await asyncio.to_thread(Memory, settings)
            owned = True
        if keys.dev_mode:
            _dev_mode_banner()
        else:
            log.info("MemoryX server: API keys required (%s)", HEADER)
        from memoryx.runtime.recovery import start_replay_loop, stop_background_task

        replay = start_replay_loop(state["memory"].services)  # the projection outbox, replayed periodically
        from memoryx.lifecycle.retention import start_retention_loop

        retention = start_retention_loop(state["memory"])  # raw inputs, judgments, checkpoints past retention
        from memoryx.runtime.webhooks import attach_server_events

        # memory events -> Prometheus counters and, when configured, webhooks (issue 10)
        detach_events = attach_server_events(state["memory"].services.sql.events, settings, metrics.count_event)
        from memoryx.lifecycle.schedule import start_consolidate_loop

        consolidating = start_consolidate_loop(state["memory"])  # issue 10: MEMORYX_CONSOLIDATE_INTERVAL_S
        try:
            yield
        finally:
            await stop_background_task(consolidating)
            detach_events()
            await stop_background_task(replay)
            await stop_background_task(retention)
            if owned and state["memory"] is not None:
                state["memory"].close()
                state["memory"] = None

    app = FastAPI(title="MemoryX", version=API_VERSION, lifespan=lifespan,
                  description="Long-term memory for LLM chatbots and agents (mem0-compatible REST API, "
                              "plus LangServe routes for the add and search graphs).")
    app.state.metrics = metrics
    app.state.keys = keys
    app.state.memory_ref = state
    install_error_handlers(app)
    # a key on every route but /healthz (docs, schemas, metrics too), body size cap, strict JSON
    guard.install(app, keys=keys, max_body_bytes=settings.max_request_bytes)

    @app.middleware("http")
    async def _count_requests(request: Request, call_next):
        response = await call_next(request)
        route = request.scope.get("route")
        path = getattr(route, "path", None) or "unmatched"
        metrics.requests.labels(request.method, path, str(response.status_code)).inc()
        return response

    auth = Depends(keys)

    def _owned(principal: Principal, record: dict, what: str, ident: str) -> dict:
        if not principal.can_record(record):
            raise NotFoundError(f"No {what} with id {ident!r}.")
        return record

    def _get_owned(principal: Principal, memory_id: str) -> dict:
        try:
            return _owned(principal, mem().get(memory_id), "memory", memory_id)
        except NotFoundError:
            raise NotFoundError(f"No memory with id {memory_id!r}; list them with GET /v1/memories.") from None

    # --- agent-global scopes: an agent id without a user matches every user's records in the stores, so a
    # non-admin key's results there keep only records without a user (and are checked one by one) ---------

    def _agent_only(principal: Principal, user_id: str | None, group_id: str | None = None) -> bool:
        return user_id is None and group_id is None and not principal.admin

    def _search(principal: Principal, query: str, user_id, agent_id, run_id, **kwargs) -> dict:
        if not _agent_only(principal, user_id, kwargs.get("group_id")):
            return mem().search(query, user_id=user_id, agent_id=agent_id, run_id=run_id, **kwargs)
        filters = kwargs.pop("filters", None)
        filters = {"AND": [filters, _NO_USER]} if filters else _NO_USER
        found = mem().search(query, user_id=None, agent_id=agent_id, run_id=run_id, filters=filters, **kwargs)
        # graph relations carry no per-record owner to check: an agent-global search returns none
        return {**found, "results": principal.visible(found.get("results") or []), "relations": []}

    def _delete_agent_global(principal: Principal, agent_id, run_id) -> dict:
        deleted = 0
        while True:
            page = principal.visible(mem().get_all(user_id=None, agent_id=agent_id, run_id=run_id, limit=500,
                                                   filters=_NO_USER)["results"])
            if not page:
                break
            for row in page:
                mem().delete(row["id"])
                deleted += 1
        return {"message": "Memories deleted successfully!", "deleted": deleted}

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

    @app.post("/v1/memories/search", tags=["memories"])
    def search_memories(body: SearchRequest, principal: Principal = auth):
        user_id, agent_id, group_id = principal.group_scope_ids(body.user_id, body.agent_id, body.group_id)
        groups = {k: v for k, v in (("group_id", group_id), ("speaker", body.speaker)) if v is not None}
        with metrics.track("search"):
            return _search(principal, body.query, user_id, agent_id, body.run_id, limit=body.limit, **groups,
                           filters=body.filters, threshold=body.threshold, mode=body.mode,
                           query_time_filter=body.query_time_filter,
                           time_range=(body.start, body.end) if body.start is not None or body.end is not None else None)

    @app.post("/v1/memories/context", tags=["memories"])
    def memory_context(body: ContextRequest, principal: Principal = auth):
        user_id, agent_id, group_id = principal.group_scope_ids(body.user_id, body.agent_id, body.group_id)
        if group_id is not None:
            return mem().get_context(body.query, user_id=user_id, agent_id=agent_id, run_id=body.run_id,
                                     max_tokens=body.max_tokens, limit=body.limit, group_id=group_id)
        if _agent_only(principal, user_id):
            found = _search(principal, body.query, user_id, agent_id, body.run_id, limit=body.limit)
            return mem()._core.get_context(body.query, user_id, agent_id, body.run_id, body.max_tokens, body.limit, found)
        return mem().get_context(body.query, user_id=user_id, agent_id=agent_id, run_id=body.run_id,
                                 max_tokens=body.max_tokens, limit=body.limit)

    @app.get("/v1/memories", tags=["memories"])
    def list_memories(user_id: str | None = Query(None, min_length=1), agent_id: str | None = Query(None, min_length=1),
                      run_id: str | None = Query(None, min_length=1), limit: int = Query(100, ge=1, le=10000),
                      group_id: str | None = Query(None, min_length=1), principal: Principal = auth):
        user_id, agent_id, group_id = principal.group_scope_ids(user_id, agent_id, group_id)
        if group_id is not None:
            return mem().get_all(user_id=user_id, agent_id=agent_id, run_id=run_id, limit=limit, group_id=group_id)
        if _agent_only(principal, user_id):
            found = mem().get_all(user_id=None, agent_id=agent_id, run_id=run_id, limit=limit, filters=_NO_USER)
            return {**found, "results": principal.visible(found["results"])}
        return mem().get_all(user_id=user_id, agent_id=agent_id, run_id=run_id, limit=limit)

    @app.delete("/v1/memories", tags=["memories"])
    def delete_all_memories(user_id: str | None = Query(None, min_length=1), agent_id: str | None = Query(None, min_length=1),
                            run_id: str | None = Query(None, min_length=1),
                            group_id: str | None = Query(None, min_length=1), principal: Principal = auth):
        user_id, agent_id, group_id = principal.group_scope_ids(user_id, agent_id, group_id)
        if group_id is not None:
            return mem().delete_all(user_id=user_id, agent_id=agent_id, run_id=run_id, group_id=group_id)
        if _agent_only(principal, user_id):
            return _delete_agent_global(principal, agent_id, run_id)
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
        user_id, agent_id = principal.scope_ids(user_id, agent_id)
        found = mem().list_judgments(user_id=user_id, agent_id=agent_id, run_id=run_id, limit=limit, offset=offset)
        return {"results": principal.visible(found)}

    @app.get("/v1/judgments/stats", tags=["judgments"])
    def judgment_stats(user_id: str | None = Query(None, min_length=1), agent_id: str | None = Query(None, min_length=1),
                       run_id: str | None = Query(None, min_length=1), principal: Principal = auth):
        user_id, agent_id = principal.scope_ids(user_id, agent_id)
        if _agent_only(principal, user_id):  # the statistics cannot be filtered per record
            raise ScopeError("Judgment statistics need a user_id for a non-admin key.")
        return mem().judgment_stats(user_id=user_id, agent_id=agent_id, run_id=run_id)

    @app.get("/v1/judgments/{trace_id}", tags=["judgments"])
    def get_judgment(trace_id: str, principal: Principal = auth):
        return _judgment_owned(principal, trace_id)

    @app.post("/v1/judgments/{trace_id}/verify", tags=["judgments"])
    def verify_judgment(trace_id: str, body: VerifyRequest, principal: Principal = auth):
        _judgment_owned(principal, trace_id)
        return mem().verify(trace_id, body.result, body.notes)

    # --- LangServe ---------------------------------------------------------------------------------------

    from memoryx.server.mem0_routes import mem0_router  # mem0's client: its routes, trailing slashes included

    app.include_router(mem0_router(keys, mem, _get_owned, _owned, metrics))
    from memoryx.server.purge_routes import purge_router

    app.include_router(purge_router(keys, mem))  # POST /v1/purge: every trace of a scope (issue 9 §6)
    from memoryx.server.consolidate_routes import consolidate_router

    app.include_router(consolidate_router(keys, mem, _get_owned))  # POST /v1/consolidate (issue 10)
    from memoryx.server.rollback_routes import rollback_router

    app.include_router(rollback_router(keys, mem))  # POST /v1/judgments/{trace_id}/rollback (issue 10)
    from memoryx.server.bulk_routes import router as bulk_router  # POST /v1/memories/batch (issue 14)

    app.include_router(bulk_router)
    from memoryx.server.profile_routes import profile_router

    app.include_router(profile_router(keys, mem))  # GET /v1/profiles/{user_id} (issue 13)
    _add_langserve_routes(app, keys, mem, metrics, settings)
    from memoryx.server.mcp import mount_mcp

    mount_mcp(app, keys, mem)  # MCP over streamable HTTP at /mcp, same keys
    from memoryx.server.review_runnables import register_review_routes

    register_review_routes(app, keys, mem)  # LangServe /graphs/add_review and /graphs/resume
    from memoryx.server.ui_routes import register_ui

    register_ui(app)  # the judgment review page at /ui (+ its read routes under /v1/ui), same keys
    return app


def _add_langserve_routes(app: FastAPI, keys: KeyRing, mem, metrics: Metrics, settings: Settings) -> None:
    from langserve import add_routes

    from memoryx.graphs.add import graph as add_graph
    from memoryx.graphs.search import graph as search_graph

    async def authorize(config: dict, request: Request) -> dict:
        """Per request: the key (401), the batch size (413), and every input's scope allowed for it
        (403; ids that are not strings: 422). The Runnable checks each input again (runnables.py)."""
        principal = keys.authenticate(request_key(request))
        try:
            body = guard.strict_json_loads(await request.body())
        except ValueError:
            body = {}
        inputs = body.get("inputs") if isinstance(body, dict) and "inputs" in body else [body.get("input") if isinstance(body, dict) else None]
        if isinstance(inputs, list) and len(inputs) > max_batch:
            raise HTTPException(413, detail={"type": "request_too_large", "message": f"{len(inputs)} inputs in one batch; the limit is {max_batch} (MEMORYX_MAX_BATCH_INPUTS)."})
        for item in inputs if isinstance(inputs, list) else []:
            if isinstance(item, dict):
                for name in ("user_id", "agent_id", "run_id", "group_id"):
                    id_value(name, item.get(name))
                if not principal.admin:
                    principal.group_scope_ids(item.get("user_id"), item.get("agent_id"), item.get("group_id"))
        config = dict(config)
        config["configurable"] = {**(config.get("configurable") or {}), PRINCIPAL_KEY: principal}
        return config

    max_batch = settings.max_batch_inputs

    def search_limits(inp: dict) -> dict:
        query = inp.get("query")
        if isinstance(query, str) and len(query) > settings.max_query_chars:
            raise InvalidInputError(f"query is {len(query)} characters; the limit is {settings.max_query_chars} (MEMORYX_MAX_QUERY_CHARS).")
        return inp

    def context():
        return mem()._core.context()

    def add_context():  # these routes run without a checkpointer: no pause for review
        return mem()._core.context(review=False)

    endpoints = ["invoke", "batch", "stream", "input_schema", "output_schema", "config_schema"]
    add_routes(app, ServiceBoundGraph(add_graph, add_context, name="memoryx_add", prepare=server_trace_id),
               path="/graphs/add", per_req_config_modifier=authorize, enabled_endpoints=endpoints)
    add_routes(app, ServiceBoundGraph(search_graph, context, name="memoryx_search", prepare=search_limits,
                                      agent_scope_ok=False),
               path="/graphs/search", per_req_config_modifier=authorize, enabled_endpoints=endpoints)
