"""The request guard of the HTTP server, in front of every route (a pure ASGI middleware):

- **a key on every route** when keys are configured: REST, LangServe (schemas and playground included),
  /metrics; only the `OPEN_PATHS` answer without one: /healthz, the API's documentation (/docs, /redoc and the
  /openapi.json they load, which describe routes and hold no data; a browser cannot send a key with them)
  and /favicon.ico (browsers ask for it on every page, with no key). The routes still
  check the key's scopes themselves; this is the floor for routes that have no scope (schemas, metrics).
- **body size**: more than MEMORYX_MAX_REQUEST_BYTES (by Content-Length or as the body streams) is a 413
  before any route parses it.
- **strict JSON**: Python's json module accepts NaN and Infinity, which are not JSON; a stored NaN broke
  every later listing of its user. A JSON body holding them is a 422 here, whatever route it was sent to.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from memoryx.server.auth import KeyRing, request_key

OPEN_PATHS = frozenset({"/healthz", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json", "/favicon.ico"})


def _reply(status: int, type_: str, message: str, headers: dict | None = None) -> JSONResponse:
    return JSONResponse({"error": {"type": type_, "message": message}}, status_code=status, headers=headers)


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def strict_json_loads(body: bytes | str) -> Any:
    """json.loads refusing NaN / Infinity / -Infinity (ValueError)."""
    return json.loads(body, parse_constant=_no_constants)


class _TooLarge(Exception):
    pass


class RequestGuard:
    def __init__(self, app, *, keys: KeyRing, max_body_bytes: int):
        self.app = app
        self.keys = keys
        self.max_body_bytes = int(max_body_bytes)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request = Request(scope)
        if not self.keys.dev_mode and scope["path"] not in OPEN_PATHS:
            try:
                self.keys.authenticate(request_key(request))
            except HTTPException as exc:
                return await _reply(exc.status_code, exc.detail["type"], exc.detail["message"], exc.headers)(scope, receive, send)
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            return await self._too_large(scope, receive, send)
        try:
            body = await self._read_body(receive)
        except _TooLarge:
            return await self._too_large(scope, receive, send)
        if body and "json" in request.headers.get("content-type", "json"):
            try:
                strict_json_loads(body)
            except ValueError as exc:
                if "is not valid JSON" in str(exc):
                    return await _reply(422, "invalid_input", f"Invalid request body: {exc} (NaN and Infinity are "
                                        "not JSON numbers; send null or a string).")(scope, receive, send)
                # plain malformed JSON: the route answers with its own validation error

        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # http.disconnect after the body

        return await self.app(scope, replay, send)

    async def _read_body(self, receive) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                raise _TooLarge
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        return b"".join(chunks)

    async def _too_large(self, scope, receive, send):
        return await _reply(413, "request_too_large", f"Request body larger than {self.max_body_bytes} bytes "
                            "(MEMORYX_MAX_REQUEST_BYTES); split it into several requests.")(scope, receive, send)


def install(app, *, keys: KeyRing, max_body_bytes: int) -> None:
    """Put the guard in front of the app (outermost: before routing, metrics and error handlers)."""
    app.add_middleware(RequestGuard, keys=keys, max_body_bytes=max_body_bytes)
