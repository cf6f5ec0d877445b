"""The request guard of the HTTP server, in front of every route (a pure ASGI middleware):

- **a key on every route** when keys are configured: REST, LangServe (schemas and playground included),
  /metrics; only the `OPEN_PATHS` answer without one: /healthz, the API's documentation (/docs, /redoc and the
  /openapi.json they load, which describe routes and hold no data; a browser cannot send a key with them)
  and /favicon.ico (browsers ask for it on every page, with no key). The routes still
  check the key's scopes themselves; this is the floor for routes that have no scope (schemas, metrics).
- **body size**: more than MEMORYX_MAX_REQUEST_BYTES (by Content-Length or as the body streams) is a 413
  before any route parses it.
- **the browser's reach** (a page the user visits can send simple cross-site POSTs to localhost, and DNS
  rebinding can point its own name at it): a POST, PUT or PATCH must say `Content-Type: application/json`
  (415 otherwise; a body without a Content-Type is taken as JSON only when keys are configured, since a
  request carrying a key header is never a simple cross-site one), and in local development mode the Host
  header must be one of the allowed hosts (400 otherwise): localhost names and the bound address unless
  MEMORYX_ALLOWED_HOSTS / `memoryx serve --allowed-hosts` say otherwise.
- **strict JSON**: Python's json module accepts NaN and Infinity, which are not JSON; a stored NaN broke
  every later listing of its user. A JSON body holding them is a 422 here, whatever route it was sent to and
  however its Content-Type is spelled (`Application/JSON` too). So is a body that is not JSON at all (invalid
  UTF-8 included), one nested deeper than MAX_JSON_DEPTH, a string holding a lone surrogate (no store can
  encode it) and an integer beyond 64 bits (no store can hold it): every malformed request gets a 4xx
  before a route, LangServe or a store sees it.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from memoryx.server.auth import KeyRing, request_key

OPEN_PATHS = frozenset({"/healthz", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json", "/favicon.ico"})
MAX_JSON_DEPTH = 64  # far beyond any request shape here; Python's parser itself gives up near 1,000
INT64_MAX = 2**63 - 1


def _reply(status: int, type_: str, message: str, headers: dict | None = None) -> JSONResponse:
    return JSONResponse({"error": {"type": type_, "message": message}}, status_code=status, headers=headers)


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def strict_json_loads(body: bytes | str) -> Any:
    """json.loads refusing NaN / Infinity / -Infinity (ValueError)."""
    return json.loads(body, parse_constant=_no_constants)


def json_problem(value: Any) -> str | None:
    """What makes a parsed JSON value unfit for the stores (None: nothing), without recursion."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return f"JSON nested deeper than {MAX_JSON_DEPTH} levels; flatten the request."
        if isinstance(item, dict):
            for key, child in item.items():
                if not _encodable(key):
                    return "a key holds a lone surrogate (\\ud800-\\udfff); send valid Unicode text."
                stack.append((child, depth + 1))
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, str):
            if not _encodable(item):
                return "a string holds a lone surrogate (\\ud800-\\udfff); send valid Unicode text."
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) > INT64_MAX:
            return "an integer is beyond 64 bits; send a smaller number."
    return None


def langserve_problem(path: str, method: str, body: Any) -> str | None:
    """LangServe reads `input` / `inputs` without checking the body's shape (a 500): checked here."""
    if method != "POST" or not path.startswith("/graphs/"):
        return None
    if path.endswith("/batch"):
        if not isinstance(body, dict) or not isinstance(body.get("inputs"), list):
            return 'a batch body is {"inputs": [...]}.'
    elif path.endswith(("/invoke", "/stream")):
        if not isinstance(body, dict) or "input" not in body:
            return 'the body is {"input": {...}}.'
    configs = (dict, list) if path.endswith("/batch") else dict
    if isinstance(body, dict) and body.get("config") is not None and not isinstance(body["config"], configs):
        return "config must be an object (or, for /batch, a list of them)."
    if isinstance(body, dict) and body.get("kwargs") is not None and not isinstance(body["kwargs"], dict):
        return "kwargs must be an object."
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_json(content_type: str | None) -> bool:
    """A JSON media type, whatever its casing or parameters (a missing one is taken as JSON)."""
    media = (content_type or "application/json").split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


class _TooLarge(Exception):
    pass


LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "testserver")  # testserver: Starlette's in-process test client
_WRITES = frozenset({"POST", "PUT", "PATCH"})


def allowed_hosts(configured: list[str] | None, bound_host: str | None) -> frozenset[str] | None:
    """The Host names the server answers; None: any ('*' configured)."""
    if configured:
        return None if "*" in configured else frozenset(h.strip().lower().strip("[]") for h in configured)
    hosts = set(LOCAL_HOSTS)
    if bound_host and bound_host not in ("0.0.0.0", "::"):
        hosts.add(bound_host.lower().strip("[]"))
    return frozenset(hosts)


def host_name(header: str) -> str:
    """The name of a Host header without its port: 'localhost:8000' -> 'localhost', '[::1]:80' -> '::1'."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class RequestGuard:
    def __init__(self, app, *, keys: KeyRing, max_body_bytes: int, hosts: frozenset[str] | None = None,
                 check_hosts: bool = False):
        self.app = app
        self.keys = keys
        self.max_body_bytes = int(max_body_bytes)
        self.hosts = hosts
        self.check_hosts = check_hosts and hosts is not None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request = Request(scope)
        if self.check_hosts and host_name(request.headers.get("host", "")) not in self.hosts:
            return await _reply(400, "host_not_allowed", f"Host {request.headers.get('host', '')!r} is not served here; "
                                "add it with --allowed-hosts (MEMORYX_ALLOWED_HOSTS) if it is yours.")(scope, receive, send)
        if scope.get("method") in _WRITES and scope["path"] not in OPEN_PATHS:
            content_type = request.headers.get("content-type")
            if (content_type is None and self.keys.dev_mode) or (content_type is not None and not is_json(content_type)):
                return await _reply(415, "unsupported_media_type", "Send the request as Content-Type: "
                                    "application/json.")(scope, receive, send)
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
        if scope["path"].startswith("/graphs/") and scope.get("method") == "POST" and not body.strip():
            return await _reply(422, "invalid_input", 'Invalid request body: the body is empty; send {"input": ...} '
                                '(or {"inputs": [...]} to /batch).')(scope, receive, send)
        if body and is_json(request.headers.get("content-type")):
            problem = None
            try:
                parsed = strict_json_loads(body)
                problem = json_problem(parsed) or langserve_problem(scope["path"], scope.get("method"), parsed)
            except RecursionError:
                problem = f"JSON nested deeper than {MAX_JSON_DEPTH} levels; flatten the request."
            except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
                if "is not valid JSON" in str(exc):
                    problem = f"{exc} (NaN and Infinity are not JSON numbers; send null or a string)."
                elif isinstance(exc, UnicodeDecodeError):
                    problem = "the body is not valid UTF-8; send JSON encoded as UTF-8."
                else:
                    problem = f"the body is not valid JSON ({exc})."
            if problem is not None:
                return await _reply(422, "invalid_input", f"Invalid request body: {problem}")(scope, receive, send)

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


def install(app, *, keys: KeyRing, max_body_bytes: int, hosts: frozenset[str] | None = None,
            check_hosts: bool = False) -> None:
    """Put the guard in front of the app (outermost: before routing, metrics and error handlers)."""
    app.add_middleware(RequestGuard, keys=keys, max_body_bytes=max_body_bytes, hosts=hosts, check_hosts=check_hosts)
