"""Errors as JSON, never a stack trace: MemoryX errors map to HTTP statuses, each body says what to do next."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from memoryx.errors import (
    AccessDeniedError,
    AddFailedError,
    ConcurrencyError,
    InvalidInputError,
    MemoryXError,
    ModelOutputError,
    NotFoundError,
    ScopeError,
    StoreUnavailableError,
)
from memoryx.server.runnables import TenancyError

log = logging.getLogger("memoryx.server")


_STATUS: list[tuple[type, int, str]] = [
    (AccessDeniedError, 403, "forbidden"),
    (ScopeError, 400, "scope_error"),
    (InvalidInputError, 422, "invalid_input"),
    (NotFoundError, 404, "not_found"),
    (StoreUnavailableError, 503, "store_unavailable"),
    (ConcurrencyError, 503, "busy"),
    (ModelOutputError, 502, "model_output_error"),
    (AddFailedError, 500, "add_failed"),  # undone before the answer: retrying is safe
]


def _error(status: int, type_: str, message: str, **extra: Any) -> JSONResponse:
    body = {"error": {"type": type_, "message": message, **{k: v for k, v in extra.items() if v is not None}}}
    headers = {"Retry-After": "5"} if status == 503 else None
    return JSONResponse(body, status_code=status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
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
