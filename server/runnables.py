"""The add and search graphs as plain Runnables bound to live services, for LangServe.

LangServe calls `invoke/ainvoke/batch/stream/astream` with only (input, config). The MemoryX graphs need
their stores through `context=Context(services=...)`, so `ServiceBoundGraph` forwards every call to the
compiled graph with that context, and applies the caller's tenancy (the `Principal` that the server's
per-request config modifier puts into `config["configurable"]`) to the input's user_id.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Callable, Iterator

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config

PRINCIPAL_KEY = "memoryx_principal"


class TenancyError(PermissionError):
    """The input's scope is not one the caller's API key may touch."""


def _apply_principal(input: Any, config: RunnableConfig | None) -> dict:
    if not isinstance(input, dict):
        return input
    principal = (config or {}).get("configurable", {}).get(PRINCIPAL_KEY)
    if principal is None:
        return input
    user_id = input.get("user_id")
    if principal.admin:
        return input
    if user_id is None and len(principal.users) == 1:
        return {**input, "user_id": next(iter(principal.users))}
    if not principal.can(user_id):
        raise TenancyError(f"This API key may not access user_id {user_id!r}.")
    return input


def _clean_config(config: RunnableConfig | None) -> RunnableConfig:
    config = ensure_config(config)
    configurable = {k: v for k, v in (config.get("configurable") or {}).items() if k != PRINCIPAL_KEY}
    return {**config, "configurable": configurable}


class ServiceBoundGraph(Runnable[dict, dict]):
    """A compiled graph that always runs with `context=make_context()`."""

    def __init__(self, graph: Any, make_context: Callable[[], Any], *, name: str | None = None,
                 prepare: Callable[[dict], dict] | None = None):
        self.graph = graph
        self.make_context = make_context
        self.prepare = prepare
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
        input = _apply_principal(input, config)
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
