"""The judgment review page: static files at /ui and the few read routes it needs beyond /v1 (under /v1/ui).

The page itself is plain HTML/CSS/JS shipped in server/ui/ (no asset from the internet). It holds no data:
every figure comes from the REST API with the `X-API-Key` the reviewer typed in, so tenancy is the API's,
enforced by the same KeyRing as every other route. The routes here only add what the page needs and /v1
lacks: who the key is, judgments filtered by event / verification / status / date, the runs waiting for
review, the event mix per day, a user's entities and relations, and which runs were rolled back (the page's
"Roll back this run" button itself posts to /v1/judgments/{trace_id}/rollback).
"""

from __future__ import annotations

from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any, Iterator, Literal

from fastapi import APIRouter, FastAPI, Query
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException
from starlette.routing import Mount, Route, Router

from memoryx.core.authorization import Action, Principal
from memoryx.core.scope import Scope
from memoryx.errors import InvalidInputError, NotFoundError
from memoryx.server.served import Served, grant

UI_DIR = Path(__file__).with_name("ui")
EVENTS = ("ADD", "UPDATE", "DELETE", "NONE")
PAGE = 200  # judgments read per store call while filtering
SCAN_CAP = 20_000  # most judgments one listing reads: a filter that matches little stays bounded
PREVIEW_CHARS = 200


def register_ui(app: FastAPI, served: Served) -> None:
    """Serve the page at /ui and its routes at /v1/ui (the app's keys and memory)."""
    app.include_router(_router(served))
    app.add_middleware(PageFiles)  # outermost: the page's files load before a key is typed


class PageFiles:
    """GET/HEAD of /ui and /ui/* answered from the shipped files, in front of the request guard (which asks
    a key of every other path): the shell carries no data, so the sign-in form can load; every figure it
    shows comes from /v1 routes that need the key. Anything else passes through to the app."""

    def __init__(self, app):
        self.app = app
        self.files = Router(routes=[Route("/ui", lambda request: RedirectResponse("/ui/")),
                                    Mount("/ui", StaticFiles(directory=UI_DIR, html=True))])

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if (path == "/ui" or path.startswith("/ui/")) and scope.get("method") in ("GET", "HEAD"):
            send = _with_page_headers(send)
            try:
                return await self.files(scope, receive, send)
            except HTTPException as exc:  # outside the app: its error handlers are not there to answer
                reply = JSONResponse({"error": {"type": "not_found" if exc.status_code == 404 else "http_error",
                                                "message": f"No page file at {path}."}}, status_code=exc.status_code)
                return await reply(scope, receive, send)
        return await self.app(scope, receive, send)


# The page loads only its own files and talks only to its own origin: no inline script or style, no frame
# around it (clickjacking a "Roll back this run" button), no sniffing of a JSON answer as HTML, no URL (a
# trace id) sent to another site as a referrer.
PAGE_HEADERS = {
    "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
                               "frame-ancestors 'none'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def _with_page_headers(send):
    async def sending(message):
        if message["type"] == "http.response.start":
            present = {k.lower() for k, _ in message.get("headers", [])}
            extra = [(k.encode(), v.encode()) for k, v in PAGE_HEADERS.items() if k.encode() not in present]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return sending


# --------------------------------------------------------------------------------------------------------
# helpers (pure: the tests call them without a server)
# --------------------------------------------------------------------------------------------------------


def operations_of(judgment: dict) -> list[dict]:
    """The decided operations of a judgment (parsed_operations is a list, or {"memory": [...]} in old rows)."""
    ops = judgment.get("parsed_operations")
    ops = ops.get("memory", []) if isinstance(ops, dict) else ops
    return [op for op in ops or [] if isinstance(op, dict)]


def consolidation_counts(judgment: dict) -> dict[str, int]:
    """What a consolidation record decided, by kind (its parsed_operations is a dict of lists)."""
    ops = judgment.get("parsed_operations")
    if judgment.get("operation_type") != "CONSOLIDATE" or not isinstance(ops, dict):
        return {}
    kinds = ("merges", "contradictions", "summaries", "archives", "entity_merges", "links", "promotions")
    return {k: len(ops.get(k) or []) for k in kinds if ops.get(k)}


def event_counts(judgment: dict) -> dict[str, int]:
    counts = Counter(str(op.get("event", "")).upper() for op in operations_of(judgment))
    return {e: counts[e] for e in EVENTS if counts[e]}


def _day(value: str | None) -> str | None:
    return value[:10] if isinstance(value, str) and len(value) >= 10 else None


def summary(judgment: dict) -> dict:
    """One row of the judgment list: the fields to scan, not the whole record."""
    text = judgment.get("input_content") or ""
    return {
        **{k: judgment.get(k) for k in ("trace_id", "user_id", "agent_id", "run_id", "group_id", "status", "model_name",
                                        "latency_ms", "created_at", "is_verified", "verification_result",
                                        "execution_success")},
        "operation_type": judgment.get("operation_type") or "MEMORY_UPDATE",
        "events": event_counts(judgment),
        "consolidation": consolidation_counts(judgment),
        "input_preview": text[:PREVIEW_CHARS] + ("…" if len(text) > PREVIEW_CHARS else ""),
    }


def matches(judgment: dict, *, event: str | None, verified: bool | None, status: str | None,
            since: str | None, until: str | None) -> bool:
    if event and not event_counts(judgment).get(event):
        return False
    if verified is not None and bool(judgment.get("is_verified")) != verified:
        return False
    if status and judgment.get("status") != status:
        return False
    day = _day(judgment.get("created_at"))
    if since and (day is None or day < since):
        return False
    return not (until and (day is None or day > until))


def _iso_day(name: str, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise InvalidInputError(f"{name} must be a date as YYYY-MM-DD, got {value!r}.") from None


# --------------------------------------------------------------------------------------------------------
# the routes
# --------------------------------------------------------------------------------------------------------


def _router(served: Served) -> APIRouter:
    router = APIRouter(prefix="/v1/ui", tags=["review page"])
    auth, mem, keys = served.auth, served.mem, served.keys

    def scopes(principal: Principal, user_id: str | None) -> list[Scope | None]:
        """The scopes a listing reads, each granted by `authorize`: the user asked for, else everything (admin)
        or each of the key's users (agents, groups) in turn."""
        if user_id is None and not principal.all_access:
            for field, held in (("user_id", principal.users), ("agent_id", principal.agents),
                                ("group_id", principal.groups)):
                if len(held) > 1:
                    return [grant(principal, Action.JUDGMENTS, **{field: v}) for v in sorted(held)]
                if held:
                    break
        return [grant(principal, Action.JUDGMENTS, user_id=user_id)]

    def judgments(principal: Principal, user_id: str | None, since: str | None = None) -> Iterator[dict]:
        """Visible judgments, newest first, read page by page and merged across the key's scopes."""
        sql = mem().services.sql
        streams = [_pages(sql, scope, since) for scope in scopes(principal, user_id)]
        heads = [next(s, None) for s in streams]
        seen = 0
        while any(h is not None for h in heads) and seen < SCAN_CAP:
            i = max((i for i, h in enumerate(heads) if h is not None),
                    key=lambda i: (heads[i].get("created_at") or "", heads[i].get("id") or ""))
            row, heads[i] = heads[i], next(streams[i], None)
            seen += 1
            if principal.can_record(row):
                yield row

    @router.get("/me")
    def whoami(principal: Principal = auth):
        """Who the key is: the page shows only what this allows (the API enforces it either way)."""
        return {"name": principal.name, "admin": principal.all_access, "users": sorted(principal.users),
                "agents": sorted(principal.agents), "dev_mode": keys.dev_mode}

    @router.get("/users")
    def users(principal: Principal = auth):
        """User ids for the page's user picker: the key's own, or (admin) those of recent judgments."""
        if not principal.all_access:
            return {"users": sorted(principal.users)}
        found = {r.get("user_id") for r, _ in zip(judgments(principal, None), range(2000)) if r.get("user_id")}
        return {"users": sorted(found)}

    @router.get("/judgments")
    def list_filtered(user_id: str | None = Query(None, min_length=1),
                      event: Literal["ADD", "UPDATE", "DELETE", "NONE"] | None = None,
                      verified: bool | None = None,
                      status: Literal["running", "done", "failed", "awaiting_review"] | None = None,
                      since: str | None = Query(None, description="First day (YYYY-MM-DD, UTC), inclusive."),
                      until: str | None = Query(None, description="Last day (YYYY-MM-DD, UTC), inclusive."),
                      limit: int = Query(50, ge=1, le=500), offset: int = Query(0, ge=0, le=1_000_000_000),
                      principal: Principal = auth):
        """Judgment summaries, newest first, filtered (the newest SCAN_CAP judgments are searched)."""
        since, until = _iso_day("since", since), _iso_day("until", until)
        out: list[dict] = []
        skipped = 0
        for row in judgments(principal, user_id, since):
            if not matches(row, event=event, verified=verified, status=status, since=since, until=until):
                continue
            if skipped < offset:
                skipped += 1
                continue
            out.append(summary(row))
            if len(out) >= limit:
                break
        links = mem().services.sql.rollback_links([r["trace_id"] for r in out]) if out else {"rolled_back": {}}
        for r in out:
            r["rolled_back_by"] = links["rolled_back"].get(r["trace_id"])
        return {"results": out}

    @router.get("/judgments/{trace_id}/rollback-links")
    def rollback_links(trace_id: str, principal: Principal = auth):
        """For the detail view: the rollback that undid this run (`rolled_back_by`) and, for a rollback
        record, the run it undid (`rollback_of`); null when there is none."""
        record = mem().judgments(trace_id)
        if not principal.can_record(record):  # the same words as a missing one: never confirm other tenants' ids
            raise NotFoundError(f"No judgment with trace_id {trace_id!r}; list them with GET /v1/judgments.")
        links = mem().services.sql.rollback_links([trace_id])
        return {"trace_id": trace_id, "rolled_back_by": links["rolled_back"].get(trace_id),
                "rollback_of": links["rollbacks"].get(trace_id)}

    @router.get("/reviews")
    def pending_reviews(user_id: str | None = Query(None, min_length=1), limit: int = Query(100, ge=1, le=500),
                        principal: Principal = auth):
        """Add runs stopped at the review interrupt (judgment status awaiting_review) with the operations
        they wait on; approve, edit or reject each with POST /v1/reviews/{trace_id}."""
        out = []
        for row in judgments(principal, user_id):
            if row.get("status") == "awaiting_review":
                out.append({**summary(row), "input_content": row.get("input_content"),
                            "extracted_facts": row.get("extracted_facts") or [],
                            "pending_operations": operations_of(row)})
                if len(out) >= limit:
                    break
        return {"results": out}

    @router.get("/timeline")
    def timeline(user_id: str | None = Query(None, min_length=1),
                 since: str | None = Query(None, description="First day (YYYY-MM-DD, UTC), inclusive."),
                 principal: Principal = auth):
        """Per day: decided operations by event, judgments, verified and correct ones, and each judgment's
        latency (for the charts; accuracy and percentiles over all time come from /v1/judgments/stats)."""
        since = _iso_day("since", since)
        days: dict[str, dict] = {}
        points = []
        for row in judgments(principal, user_id, since):
            day = _day(row.get("created_at"))
            if day is None:
                continue
            d = days.setdefault(day, {"date": day, **{e: 0 for e in EVENTS}, "judgments": 0, "verified": 0,
                                      "correct": 0})
            d["judgments"] += 1
            for e, n in event_counts(row).items():
                d[e] += n
            if row.get("is_verified"):
                d["verified"] += 1
                d["correct"] += row.get("verification_result") == "CORRECT"
            if row.get("latency_ms") is not None:
                points.append({"created_at": row["created_at"], "latency_ms": row["latency_ms"],
                               "model_name": row.get("model_name")})
        return {"days": [days[k] for k in sorted(days)], "latency": points[::-1]}

    @router.get("/graph")
    def user_graph(user_id: str | None = Query(None, min_length=1), include_invalid: bool = False,
                   principal: Principal = auth):
        """A user's entities and relations (from the SQL truth the graph database projects)."""
        scope = grant(principal, Action.LIST, user_id=user_id)
        if scope is None or scope.user_id is None:
            raise InvalidInputError("user_id is required: pick the user whose graph to draw.")
        sql = mem().services.sql
        return {"user_id": scope.user_id, "entities": principal.visible(sql.list_entities(scope)),
                "relations": principal.visible(sql.list_relations(scope, include_invalid=include_invalid))}

    return router


def _pages(sql: Any, scope: Scope | None, since: str | None) -> Iterator[dict]:
    """Judgments of one scope, newest first, a page at a time; stops at the first one before `since`."""
    offset = 0
    while True:
        page = sql.list_judgments(scope, limit=PAGE, offset=offset)
        for row in page:
            if since and (_day(row.get("created_at")) or "") < since:
                return
            yield row
        if len(page) < PAGE:
            return
        offset += PAGE


__all__ = ["register_ui", "operations_of", "event_counts", "consolidation_counts", "summary", "matches", "UI_DIR"]
