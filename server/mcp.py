"""MemoryX as an MCP server (official `mcp` SDK): the same memory over stdio and streamable HTTP.

    memoryx mcp --user-id alice                 # stdio, for desktop assistants and IDEs
    memoryx serve                               # streamable HTTP at /mcp, behind MEMORYX_API_KEYS

Tools: memory_add, memory_search, memory_get_context, memory_update, memory_forget, memory_link. The MCP spec
(2025-11-25, SEP-986) allows dots in tool names, but several clients (Windsurf, GitHub Copilot CLI) and the
model APIs behind them validate names against ^[a-zA-Z0-9_-]{1,64}$ and refuse `memory.add`; underscores
work everywhere.

Scope: who may be touched comes from the transport, never from the model; `authorize`
(memoryx.core.authorization) grants each call's scope, as for every other door. Over HTTP the API key of the
request (X-API-Key or `Authorization: Bearer <key>`, as for REST) is checked before the MCP layer sees the request and
its `Principal` travels in the ASGI scope; over stdio it is the user ids the server was started with. A
tool's optional `user_id` only picks one of those users.
"""

from __future__ import annotations

import contextlib
from typing import Annotated, Any, Callable, Literal

import anyio
from fastapi import HTTPException
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, Field
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from memoryx.api.linking import link_described
from memoryx.core.authorization import Action, Principal, Requested, authorize, stdio_principal
from memoryx.core.scope import Scope
from memoryx.errors import MemoryXError, NotFoundError
from memoryx.server.auth import KeyRing, request_key
from memoryx.server.served import call_args, context_in, search_in
from memoryx.stores.vectors import read_ahead_shards

PRINCIPAL_SCOPE_KEY = "memoryx.principal"
MCP_PATH = "/mcp"

INSTRUCTIONS = (
    "Long-term memory of the user. Call memory_search (or memory_get_context for a prompt-ready block) "
    "before answering questions that may depend on what the user said earlier; call memory_add with the "
    "new turns of the conversation when the user shares facts, preferences or plans worth keeping. "
    "Use memory_update / memory_forget only when the user asks to correct or forget something."
)


class ChatMessage(BaseModel):
    role: Literal["user", "assistant", "system"] = Field(description="Who said it.")
    content: str = Field(min_length=1, description="What was said, verbatim.")


UserId = Annotated[str | None, Field(
    description="The user whose memory to use. Omit it unless your access covers several users; it can "
                "only name a user you are allowed to access.")]


def _message(exc: BaseException) -> str:
    if isinstance(exc, HTTPException):
        detail = exc.detail
        return str(detail.get("message")) if isinstance(detail, dict) else str(detail)
    return str(exc.args[0]) if exc.args else type(exc).__name__


def build_mcp_server(memory: Callable[[], Any], principal_of: Callable[[Context], Principal]) -> MCPServer:
    """The MCP server over `memory()` (a `Memory`, or the CLI's HTTP client with the same methods).
    `principal_of(ctx)`: who is calling, from the transport."""
    server = MCPServer("memoryx", instructions=INSTRUCTIONS)

    def scope_for(ctx: Context, user_id: str | None, action: Action) -> Scope:
        """The scope the call acts on: granted by `authorize` for the transport's principal, whatever the model
        asked (its user_id only narrows the grant)."""
        principal = principal_of(ctx)
        if principal.all_access and user_id is None:
            raise ToolError("user_id is required: this access covers every user; name the one to act for.")
        try:
            return authorize(principal, action, Requested(user_id=user_id))
        except MemoryXError as exc:
            raise ToolError(_message(exc)) from None

    async def run(fn: Callable[[], Any]) -> Any:
        try:  # the memory is synchronous (and may open on first use): keep the event loop free
            return await anyio.to_thread.run_sync(fn)
        except MemoryXError as exc:
            raise ToolError(_message(exc)) from None

    async def owned(ctx: Context, memory_id: str, user_id: str | None, action: Action) -> None:
        """A memory outside the granted scope is reported as not found (its existence is not revealed)."""
        scope = scope_for(ctx, user_id, action)
        missing = ToolError(f"No memory with id {memory_id!r}; find ids with memory_search.")
        try:
            record = await anyio.to_thread.run_sync(lambda: memory().get(memory_id))
        except NotFoundError:
            raise missing from None
        if not principal_of(ctx).can_record(record) or not scope.contains(record):
            raise missing

    @server.tool(name="memory_add", description=(
        "Remember what matters in a conversation: facts, preferences and plans are extracted from the messages "
        "and merged with what is already known (new facts added, changed ones updated, contradicted ones "
        "removed). Pass the recent turns, not the whole history. Returns each change with its memory id."))
    async def memory_add(
        messages: Annotated[str | list[ChatMessage], Field(min_length=1, description="What to remember: a plain text said by the user (e.g. \"I moved to Berlin\"), or the conversation turns, oldest first.")],
        ctx: Context,
        user_id: UserId = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Optional labels stored with the memories, e.g. {\"source\": \"chat\"}.")] = None,
        memory_type: Annotated[Literal["episodic", "semantic", "preference", "fact"] | None, Field(description=(
            "What kind of memory this is, when you know: episodic (an event at a time), semantic (lasting "
            "knowledge), preference (a like or dislike), fact (a stable fact about the user)."))] = None,
        importance: Annotated[float | None, Field(ge=0, le=1, description=(
            "How much it matters, 0 to 1 (0.3 a daily trifle, 0.5 normal, 0.8 important, 1.0 key); "
            "MemoryX reasons one itself when left out."))] = None,
    ) -> dict[str, Any]:
        msgs = messages if isinstance(messages, str) else [m.model_dump() for m in messages]
        scope = scope_for(ctx, user_id, Action.WRITE)

        def add() -> dict:
            result = memory().add(msgs, **call_args(scope), metadata=metadata)
            if memory_type is not None or importance is not None:  # the caller's judgment on what this call wrote
                for item in result.get("results") or []:
                    if item.get("event") in ("ADD", "UPDATE") and item.get("id"):
                        row = memory().classify(item["id"], memory_type=memory_type, importance=importance)
                        item.update(memory_type=row.get("memory_type"), importance=row.get("importance"))
            return result

        return await run(add)

    @server.tool(name="memory_search", description=(
        "Find the memories relevant to a question or topic, best first, with their ids and scores (and "
        "related facts from the knowledge graph). Use it before answering anything that may depend on "
        "earlier conversations."))
    async def memory_search(
        query: Annotated[str, Field(min_length=1, max_length=8000, description="What to look for, in natural language.")],
        ctx: Context,
        user_id: UserId = None,
        limit: Annotated[int, Field(ge=1, le=100, description="How many memories to return at most.")] = 10,
        memory_types: Annotated[list[str] | None, Field(description=(
            "Only memories of these types, e.g. [\"semantic\"] for stated facts, [\"episodic\"] for conversation "
            "turns; all types when left out."))] = None,
        now: Annotated[str | None, Field(description=(
            "The date the question is asked at (ISO-8601), when it is not today: 'last week' and 'currently' "
            "are read from it."))] = None,
    ) -> dict[str, Any]:
        scope = scope_for(ctx, user_id, Action.SEARCH)
        return await run(lambda: search_in(memory(), principal_of(ctx), scope, query, limit=limit,
                                           memory_types=memory_types, now=now))

    @server.tool(name="memory_get_context", description=(
        "A ready-to-use text block of what is known about the user that is relevant to a query, within a "
        "token budget: put it in your context before answering."))
    async def memory_get_context(
        query: Annotated[str, Field(min_length=1, max_length=8000, description="The question or topic of the conversation.")],
        ctx: Context,
        user_id: UserId = None,
        max_tokens: Annotated[int, Field(ge=16, le=100000, description="Budget of the block, in tokens.")] = 1000,
    ) -> dict[str, Any]:
        scope = scope_for(ctx, user_id, Action.SEARCH)
        return await run(lambda: context_in(memory(), principal_of(ctx), scope, query, max_tokens, 20))

    @server.tool(name="memory_update", description=(
        "Correct one memory: replace its text when the user says it is wrong or has changed. Take the id "
        "from memory_search."))
    async def memory_update(
        memory_id: Annotated[str, Field(min_length=1, description="Id of the memory, from memory_search.")],
        text: Annotated[str, Field(min_length=1, description="The corrected fact, as a short sentence.")],
        ctx: Context,
        user_id: UserId = None,
    ) -> dict[str, Any]:
        await owned(ctx, memory_id, user_id, Action.WRITE)
        return await run(lambda: memory().update(memory_id, text))

    @server.tool(name="memory_forget", description=(
        "Forget one memory for good, when the user asks you to (or to protect their privacy). Take the id from "
        "memory_search; say why in `reason`: it is kept in the judgment log."))
    async def memory_forget(
        memory_id: Annotated[str, Field(min_length=1, description="Id of the memory, from memory_search.")],
        ctx: Context,
        user_id: UserId = None,
        reason: Annotated[str | None, Field(max_length=1000, description=(
            "Why it is forgotten, e.g. \"the user asked\", \"no longer true\", \"privacy\"."))] = None,
    ) -> dict[str, Any]:
        await owned(ctx, memory_id, user_id, Action.DELETE)
        return await run(lambda: memory().delete(memory_id, reason=reason or "user_request"))

    @server.tool(name="memory_link", description=(
        "Link two memories, e.g. a cause and its effect. Name each by a short description (\"I was unhappy "
        "today\", \"I broke a plate\") or its id: the memories are found for you; when a description fits "
        "several, nothing is linked and the candidates come back (status \"ask\"): ask the user or call again "
        "with an id."))
    async def memory_link(
        source: Annotated[str, Field(min_length=1, max_length=2000, description="The first memory (e.g. the cause): a description or an id.")],
        target: Annotated[str, Field(min_length=1, max_length=2000, description="The second memory (e.g. the effect): a description or an id.")],
        relation: Annotated[str, Field(min_length=1, max_length=64, description=(
            "causes, follows, part_of, contradicts, supports or same_topic (or a word for one: because, led to, "
            "then, based on, related; 因为, 导致, 然后, 相关)."))],
        ctx: Context,
        user_id: UserId = None,
    ) -> dict[str, Any]:
        scope = scope_for(ctx, user_id, Action.WRITE)
        principal = principal_of(ctx)  # candidates and links only among the records the caller may see
        return await run(lambda: link_described(memory().services, scope, source, target, relation, actor="mcp",
                                                allowed=principal.can_record))

    return server


# --------------------------------------------------------------------------------------------------------
# stdio: `memoryx mcp`
# --------------------------------------------------------------------------------------------------------


def run_stdio(memory: Callable[[], Any], user_ids: list[str]) -> None:
    """Serve `memory()` over stdio for the given users (the only ones the model may touch)."""
    if not user_ids:
        raise ValueError("memoryx mcp needs the user(s) it serves: --user-id alice (or MEMORYX_MCP_USER_ID=alice).")
    principal = stdio_principal(user_ids)
    read_ahead_shards()  # a session's server goes on searching: the shards it opens are read ahead
    build_mcp_server(memory, lambda ctx: principal).run("stdio")


# --------------------------------------------------------------------------------------------------------
# streamable HTTP: mounted by the FastAPI app at /mcp
# --------------------------------------------------------------------------------------------------------


class _KeyGate:
    """ASGI: the API key is checked before the MCP layer reads the request; the caller's Principal goes into
    the ASGI scope, where the tools read it back from the request that carries the call."""

    def __init__(self, keys: KeyRing, handle):
        self.keys = keys
        self.handle = handle

    async def __call__(self, scope, receive, send):
        try:  # X-API-Key, or Authorization: Bearer KEY (what MCP clients send)
            principal = self.keys.authenticate(request_key(Request(scope)))
        except HTTPException as exc:
            body = {"error": {"type": "unauthorized", "message": _message(exc)}}
            await JSONResponse(body, status_code=exc.status_code, headers=exc.headers)(scope, receive, send)
            return
        await self.handle({**scope, PRINCIPAL_SCOPE_KEY: principal}, receive, send)


def _http_principal(ctx: Context) -> Principal:
    request = ctx.request_context.request
    principal = request.scope.get(PRINCIPAL_SCOPE_KEY) if request is not None else None
    if principal is None:  # never reached through the gate; refuse rather than guess
        raise ToolError("Not authenticated.")
    return principal


def mount_mcp(app, keys: KeyRing, memory: Callable[[], Any]) -> None:
    """Serve MCP over streamable HTTP at /mcp of `app` (a FastAPI app), behind `keys`."""
    server = build_mcp_server(memory, _http_principal)
    # Stateless: every POST stands alone (no session affinity behind a load balancer, and the key is checked
    # on each request). DNS-rebinding protection matters only when no key guards the server (dev mode).
    security = None if keys.dev_mode else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    server.streamable_http_app(streamable_http_path=MCP_PATH, stateless_http=True, json_response=True,
                               transport_security=security)
    manager = server.session_manager
    app.router.routes.append(Route(MCP_PATH, endpoint=_KeyGate(keys, manager.handle_request)))

    inner = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(a):  # the MCP session manager lives as long as the app
        async with inner(a) as state, manager.run():
            yield state

    app.router.lifespan_context = lifespan
