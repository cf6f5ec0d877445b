"""The add and search graphs as plain Runnables bound to live services, for LangServe.

LangServe calls `invoke/ainvoke/batch/stream/astream` with only (input, config). The MemoryX graphs need
their stores through `context=Context(services=...)`, so `ServiceBoundGraph` forwards every call to the
compiled graph with that context, and applies the caller's tenancy (the `Principal` that the server's
per-request config modifier puts into `config["configurable"]`): each input's ids are granted by
`authorize` (memoryx.core.authorization) and replaced by the granted scope's.
The add route's trace ids are the server's (`server_trace_id`).
"""

from __future__ import annotations

import uuid
from typing import Any, AsyncIterator, Callable, Iterator

from fastapi import HTTPException
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config

from memoryx.core.authorization import WRITES, Action, Requested, authorize, authorize_messages
from memoryx.errors import InvalidInputError, ScopeError
from memoryx.server.auth import id_value

PRINCIPAL_KEY = "memoryx_principal"


def with_principal(config: dict, principal: Any) -> dict:
    """`config` carrying the caller's Principal: what a route's per-request config modifier returns."""
    return {**config, "configurable": {**(config.get("configurable") or {}), PRINCIPAL_KEY: principal}}


class TenancyError(PermissionError):
    """The input's scope is not one the caller's API key may touch."""


def _checked(call: Callable[[], Any]) -> Any:
    """Run a Principal check, turning its HTTP errors into MemoryX errors (a Runnable may be used outside
    HTTP; the server maps them back: 403, 400 and 422)."""
    try:
        return call()
    except HTTPException as exc:
        message = exc.detail.get("message") if isinstance(exc.detail, dict) else str(exc.detail)
        if exc.status_code == 403:
            raise TenancyError(message) from None
        if exc.status_code == 400:
            raise ScopeError(message) from None
        raise InvalidInputError(message) from None


def apply_principal(input: Any, config: RunnableConfig | None, *, action: Action = Action.WRITE,
                     agent_scope_ok: bool = True) -> Any:
    if not isinstance(input, dict):
        return input
    principal = (config or {}).get("configurable", {}).get(PRINCIPAL_KEY)
    if principal is None:  # in-process use without a caller: the ids are still checked (a list is a 422)
        for name in ("user_id", "agent_id", "run_id", "group_id"):
            _checked(lambda name=name: id_value(name, input.get(name)))
        return input
    scope = authorize(principal, action, Requested.of(input))
    if action in WRITES:
        authorize_messages(principal, input.get("messages"), input.get("participants"))
    if input.get("agent_memory") == "global":
        agent = input.get("agent_id") if scope is None else scope.agent_id
        if agent is None:
            raise ScopeError('agent_memory="global" needs an agent_id.')
        if not principal.can(None, agent):
            raise TenancyError(f'agent_memory="global" writes memories every user of agent {agent!r} shares; it '
                               "needs an agent key (no users) or an admin key.")
    if principal.all_access or scope is None:
        return input
    if scope.no_user and not agent_scope_ok:
        # a scope without a user matches every user's records in the graph's reads, and its streamed state
        # is not filtered per record, so these routes serve user and group scopes only
        raise TenancyError("This route needs a user_id for a non-admin key; the agent's global memories are "
                           "listed and searched through the REST routes (/v1/memories...).")
    out = {**input, "user_id": scope.user_id, "agent_id": scope.agent_id, "run_id": scope.run_id}
    if scope.group_id is not None:
        out["group_id"] = scope.group_id
    return out


def server_trace_id(input: dict) -> dict:
    """Trace ids are the server's: a client-chosen one could name another tenant's run (its checkpoint
    thread and judgment record), so it is refused, and every run gets a fresh one."""
    if input.get("trace_id") is not None:
        raise InvalidInputError("trace_id is chosen by the server; omit it (the result carries the run's trace_id).")
    return {**input, "trace_id": str(uuid.uuid4())}


def _clean_config(config: RunnableConfig | None) -> RunnableConfig:
    config = ensure_config(config)
    configurable = {k: v for k, v in (config.get("configurable") or {}).items() if k != PRINCIPAL_KEY}
    return {**config, "configurable": configurable}


class ServiceBoundGraph(Runnable[dict, dict]):
    """A compiled graph that always runs with `context=make_context()`."""

    def __init__(self, graph: Any, make_context: Callable[[], Any], *, name: str | None = None,
                 prepare: Callable[[dict], dict] | None = None, agent_scope_ok: bool = True,
                 action: Action = Action.WRITE):
        self.graph = graph
        self.make_context = make_context
        self.prepare = prepare
        self.agent_scope_ok = agent_scope_ok  # False: non-admin keys must name a user (see apply_principal)
        self.action = action  # what authorize() is asked for each input
        self.name = name or getattr(graph, "name", None) or "memoryx-graph"

    # --- schemas: those of the graph ------------------------------------------------------------------

    @property
    def InputType(self) -> Any:  # noqa: N802 - Runnable API
        return self.graph.InputType

    @property
    def OutputType(self) -> Any:  # noqa: N802
        return self.graph.OutputType

    def get_input_schema(self, config: RunnableConfig | None = None):
        return self.graph.get_input_schema(config)

    def get_output_schema(self, config: RunnableConfig | None = None):
        return self.graph.get_output_schema(config)

    # --- execution ------------------------------------------------------------------------------------

    def _prepare(self, input: Any, config: RunnableConfig | None) -> tuple[Any, RunnableConfig]:
        input = apply_principal(input, config, action=self.action, agent_scope_ok=self.agent_scope_ok)
        if self.prepare is not None and isinstance(input, dict):
            input = self.prepare(input)
        return input, _clean_config(config)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> dict:
        input, config = self._prepare(input, config)
        return self.graph.invoke(input, config, context=self.make_context())

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> dict:
        input, config = self._prepare(input, config)
        return await self.graph.ainvoke(input, config, context=self.make_context())

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[dict]:
        input, config = self._prepare(input, config)
        yield from self.graph.stream(input, config, context=self.make_context(), stream_mode="values")

    async def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[dict]:
        input, config = self._prepare(input, config)
        async for chunk in self.graph.astream(input, config, context=self.make_context(), stream_mode="values"):
            yield chunk
