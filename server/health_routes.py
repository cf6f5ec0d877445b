"""`GET /healthz` (open, for load balancers: each store probed, 503 while starting or degraded) and
`GET /metrics` (Prometheus: every tenant's figures, so an admin key's only, as `authorize` decides) and
`GET /favicon.ico` (open: browsers ask for it, without a key, on every page: /docs and the review page)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, JSONResponse, Response

from memoryx.core.authorization import Action, Principal
from memoryx.server.served import Served, grant

FAVICON = Path(__file__).with_name("ui") / "favicon.svg"
API_VERSION = "0.1.0"  # the REST API's version: in /healthz and the OpenAPI document


def health_router(served: Served) -> APIRouter:
    router = APIRouter(tags=["ops"])

    @router.get("/healthz")
    def healthz():
        m = served.memory
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
                             "auth": "dev" if served.keys.dev_mode else "api_keys"}, status_code=200 if ok else 503)

    @router.get("/metrics")
    def prometheus_metrics(principal: Principal = served.auth):
        grant(principal, Action.METRICS)
        return Response(served.metrics.render(), media_type=served.metrics.content_type)

    @router.get("/favicon.ico", include_in_schema=False)
    def favicon():
        return FileResponse(FAVICON, media_type="image/svg+xml")

    return router
