"""The MemoryX HTTP server: REST under /v1 (shapes as the Python API), LangServe routes for the add and
search graphs, /healthz and Prometheus /metrics.

    memoryx serve --host 127.0.0.1 --port 8000
    uvicorn --factory memoryx.server.app:create_app

Auth: `X-API-Key`, each key bound to the user ids it may touch (MEMORYX_API_KEYS). A key never reaches
another user's memories: scoped routes check the user_id, by-id routes check the memory's owner and answer
404 (never revealing that the id exists). No keys configured: local development mode, said loudly.

Each route group lives in its own module; `create_app` builds what they share (`Served`: the memory, the
key ring, the metrics), the lifespan with its background tasks, and includes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
from typing import Any

from fastapi import FastAPI

from memoryx.api.memory import Memory
from memoryx.core import timeparse
from memoryx.lifecycle.retention import start_retention_loop
from memoryx.lifecycle.schedule import (
    start_consolidate_loop,
    start_daily_loop,
    start_replay_loop,
    stop_background_task,
)
from memoryx.runtime.webhooks import attach_server_events
from memoryx.server import guard
from memoryx.server.audit_routes import audit_router
from memoryx.server.auth import HEADER
from memoryx.server.bulk_routes import bulk_router
from memoryx.server.consolidate_routes import consolidate_router
from memoryx.server.errors import install_error_handlers
from memoryx.server.health_routes import API_VERSION, health_router
from memoryx.server.judgment_routes import judgment_router
from memoryx.server.langserve_routes import add_graph_routes, add_review_routes
from memoryx.server.mcp import mount_mcp
from memoryx.server.mem0_routes import mem0_router
from memoryx.server.memory_routes import memory_router
from memoryx.server.metrics import count_requests
from memoryx.server.profile_routes import profile_router
from memoryx.server.purge_routes import purge_router
from memoryx.server.rollback_routes import rollback_router
from memoryx.server.served import Served
from memoryx.server.ui_routes import register_ui
from memoryx.settings import Settings, get_settings
from memoryx.stores.vectors import read_ahead_shards

log = logging.getLogger("memoryx.server")

__all__ = ["API_VERSION", "create_app"]


def create_app(memory: Any = None, settings: Settings | None = None, *, bound_host: str | None = None) -> FastAPI:
    """The FastAPI app. `memory`: a `memoryx.Memory` to serve (not closed on shutdown); None builds one from
    `settings` (default: MEMORYX_* environment) at startup and closes it at shutdown. `bound_host`: the
    address `memoryx serve` listens on, an allowed Host besides the localhost names (settings.allowed_hosts)."""
    settings = settings or (memory.settings if memory is not None else get_settings())
    served = Served(settings, memory)
    app = FastAPI(title="MemoryX", version=API_VERSION, lifespan=_lifespan(served),
                  description="Long-term memory for LLM chatbots and agents (mem0-compatible REST API, "
                              "plus LangServe routes for the add and search graphs).")
    app.state.served = served
    install_error_handlers(app)
    # a key on every route but /healthz (docs, schemas, metrics too), body size cap, strict JSON
    # in local development mode (no keys) also the Host header (DNS rebinding) and JSON-only writes
    guard.install(app, keys=served.keys, max_body_bytes=settings.max_request_bytes,
                  hosts=guard.allowed_hosts(settings.allowed_hosts, bound_host),
                  check_hosts=served.keys.dev_mode or bool(settings.allowed_hosts))
    count_requests(app, served.metrics)

    app.include_router(health_router(served))
    rest = memory_router(served)
    app.include_router(rest)
    app.include_router(audit_router(served))  # findings, batch verify, report: before /v1/judgments/{trace_id}
    app.include_router(judgment_router(served))
    app.include_router(mem0_router(served, beside=rest))  # mem0's routes, with and without their trailing slash
    app.include_router(purge_router(served))  # POST /v1/purge: every trace of a scope
    app.include_router(consolidate_router(served))  # POST /v1/consolidate, /v1/runs/{run_id}/end, restore
    app.include_router(rollback_router(served))  # POST /v1/judgments/{trace_id}/rollback
    app.include_router(bulk_router(served))  # POST /v1/memories/batch
    app.include_router(profile_router(served))  # GET /v1/profiles/{user_id}, /v1/groups/{group_id}/profile
    add_graph_routes(app, served)  # LangServe /graphs/add and /graphs/search
    mount_mcp(app, served.keys, served.mem)  # MCP over streamable HTTP at /mcp, same keys
    add_review_routes(app, served)  # LangServe /graphs/add_review and /graphs/resume
    register_ui(app, served)  # the judgment review page at /ui (+ its read routes under /v1/ui), same keys
    return app


def _lifespan(served: Served):
    """Open the memory (unless one was given), start the background tasks, and undo both at shutdown."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        # a server goes on searching after it opens its vector shards: their files read ahead into the page
        # cache, those of a memory it was given (already open) too
        read_ahead_shards()
        owned = False
        if served.memory is None:
            served.memory = await asyncio.to_thread(Memory, served.settings)
            owned = True
        # the date reader's tables, built before the first request naming a date would wait for them
        threading.Thread(target=timeparse.warm, name="memoryx-warm-dates", daemon=True).start()
        # the sidecar indexes' stores and encoders, opened before the first search would wait for them
        warming = threading.Thread(target=_warm_sidecars, args=(served.memory,), name="memoryx-warm-sidecars",
                                   daemon=True)
        warming.start()
        if served.keys.dev_mode:
            _dev_mode_banner()
        else:
            log.info("MemoryX server: API keys required (%s)", HEADER)
        memory = served.memory
        # the projection outbox, replayed periodically (with the runs of a dead worker resumed)
        replay = start_replay_loop(memory.services, getattr(memory, "resume_unfinished_runs", None))
        retention = start_retention_loop(memory)  # raw inputs, judgments, checkpoints past retention
        # memory events -> Prometheus counters and, when configured, webhooks
        detach_events = attach_server_events(memory.services.sql.events, served.settings, served.metrics.count_event)
        consolidating = start_consolidate_loop(memory)  # every MEMORYX_CONSOLIDATE_INTERVAL_S, when set
        daily = start_daily_loop(memory)  # audit scan, daily report, schedule.daily: MEMORYX_DAILY_JOB_INTERVAL_S
        try:
            yield
        finally:
            await stop_background_task(daily)
            await stop_background_task(consolidating)
            detach_events()
            await stop_background_task(replay)
            await stop_background_task(retention)
            await asyncio.to_thread(warming.join, 30)  # it opens a store of the memory about to close
            if owned and served.memory is not None:
                served.memory.close()
                served.memory = None

    return lifespan


def _warm_sidecars(memory: Any) -> None:
    """Open the memory's sidecar indexes and load their encoders where they hold memories: the multilingual one
    where an owner has written CJK text, the companion one (a CLI command that never needs them does not pay for
    them: only the server warms them)."""
    for index in memory.services.vectors.sidecars():
        try:
            index.warm()
        except Exception:  # noqa: BLE001 - the first search that needs the index opens it again and reports it
            log.warning("could not open a sidecar index at startup (%s)", type(index).__name__, exc_info=True)


def _dev_mode_banner() -> None:
    line = "=" * 78
    msg = (f"\n{line}\n  MemoryX server in LOCAL DEVELOPMENT MODE: no API keys configured, every request is\n"
           f"  allowed for every user. Set MEMORYX_API_KEYS='{{\"<key>\": [\"<user_id>\"]}}' before exposing it.\n{line}")
    log.warning("LOCAL DEVELOPMENT MODE: no API keys configured (MEMORYX_API_KEYS); every request is allowed for every user")
    print(msg, file=sys.stderr, flush=True)
