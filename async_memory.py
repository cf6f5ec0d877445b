"""`AsyncMemory`: the Python API for asyncio, same methods and result shapes as `memoryx.Memory`.

Graphs run natively with `ainvoke` (the add graph with an async checkpointer on the same database or file as
Memory's, so a run paused by one front end can be resumed by the other); the synchronous stores are called
through `asyncio.to_thread`.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from memoryx.checkpointing import make_async_checkpointer
from memoryx.errors import NotFoundError
from memoryx.memory_core import RESUME_RUN_NAME, SEARCH_RUN_NAME, MemoryFront, _check_id, _optional_scope, scope_arg
from memoryx.scope import Scope
from memoryx.settings import Settings

__all__ = ["AsyncMemory"]


class AsyncMemory(MemoryFront):
    """`Memory` for asyncio. Graphs run natively with `ainvoke`; store calls run in worker threads.

    Construct it directly (the stores open synchronously, once) or with `await AsyncMemory.create(...)`
    to keep the event loop free while the embedded stores start.
    """

    def __init__(self, settings: Settings | dict | None = None, **kwargs: Any):
        super().__init__(settings, **kwargs)
        self._agraph = None
        self._asaver = None
        self._asaver_close = None
        self._alock: asyncio.Lock | None = None

    @classmethod
    async def create(cls, settings: Settings | dict | None = None, **kwargs: Any) -> "AsyncMemory":
        return await asyncio.to_thread(cls, settings, **kwargs)

    async def _add_graph(self):
        """The add graph compiled with an async checkpointer when one is configured."""
        if self._alock is None:
            self._alock = asyncio.Lock()
        async with self._alock:
            if self._agraph is None:
                self._agraph = await self._compile_async()
        return self._agraph

    async def _compile_async(self):
        from memoryx.graphs.add import compile_add_graph

        self._asaver, self._asaver_close = await make_async_checkpointer(self._core.settings)
        return compile_add_graph(self._asaver)

    # --- graphs -------------------------------------------------------------------------------------

    async def add(self, messages, *, user_id: str | None = None, agent_id: str | None = None,
                  run_id: str | None = None, metadata: dict | None = None, infer: bool = True,
                  trace_id: str | None = None, review: bool | None = None) -> dict:
        core = self._core
        inp, config = core.add_input(messages, user_id, agent_id, run_id, metadata, infer, trace_id)
        graph = await self._add_graph()
        core.check_review(graph, review)
        out = await graph.ainvoke(inp, config, context=core.context(review=review))
        snapshot = await self._snapshot(graph, config)
        return core.finish_add(out, inp["trace_id"], lambda: snapshot)

    async def resume_add(self, trace_id: str, operations: list[dict] | None = None) -> dict:
        from langgraph.types import Command

        core = self._core
        graph = await self._add_graph()
        config = core.run_config(_check_id(trace_id, "trace_id"), RESUME_RUN_NAME)
        snapshot = await self._snapshot(graph, config)
        if snapshot is None or not snapshot.next:
            raise NotFoundError(f"No add run awaiting review with trace_id {trace_id!r}.")
        resume = {"operations": operations} if operations is not None else {"approved": True}
        out = await graph.ainvoke(Command(resume=resume), config, context=core.context())
        snapshot = await self._snapshot(graph, config)
        return core.finish_add(out, trace_id, lambda: snapshot)

    @staticmethod
    async def _snapshot(graph, config):
        try:
            return await graph.aget_state(config)
        except (ValueError, NotImplementedError):
            try:
                return await asyncio.to_thread(graph.get_state, config)
            except ValueError:
                return None

    async def search(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
                     run_id: str | None = None, limit: int = 10, filters: dict | None = None,
                     threshold: float | None = None, mode: str | None = None, expand_depth: int | None = None,
                     relation_types: list[str] | None = None, include_invalid: bool | None = None) -> dict:
        core = self._core
        inp = core.search_input(query, user_id, agent_id, run_id, limit, filters, threshold,
                                {"mode": mode, "expand_depth": expand_depth, "relation_types": relation_types,
                                 "include_invalid": include_invalid})
        out = await core.search_graph().ainvoke(inp, {"run_name": SEARCH_RUN_NAME}, context=core.context())
        return dict(out.get("result") or {"results": [], "relations": []})

    async def get_context(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
                          run_id: str | None = None, max_tokens: int = 1000, limit: int = 20) -> dict:
        found = await self.search(query, user_id=user_id, agent_id=agent_id, run_id=run_id, limit=limit)
        return await asyncio.to_thread(self._core.get_context, query, user_id, agent_id, run_id, max_tokens,
                                       limit, found)

    # --- records ------------------------------------------------------------------------------------

    async def get(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                  run_id: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.get, memory_id, _optional_scope(user_id, agent_id, run_id))

    async def get_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                      limit: int = 100, filters: dict | None = None) -> dict:
        return await asyncio.to_thread(self._core.get_all, user_id, agent_id, run_id, limit, filters)

    async def update(self, memory_id: str, text: str, metadata: dict | None = None) -> dict:
        return await asyncio.to_thread(self._core.update, memory_id, text, metadata)

    async def delete(self, memory_id: str) -> dict:
        return await asyncio.to_thread(self._core.delete, memory_id)

    async def delete_all(self, *, user_id: str | None = None, agent_id: str | None = None,
                         run_id: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.delete_all, user_id, agent_id, run_id)

    async def history(self, memory_id: str) -> list[dict]:
        return await asyncio.to_thread(self._core.history, memory_id)

    async def reset(self) -> None:
        await asyncio.to_thread(self._core.reset)

    async def judgments(self, trace_id: str) -> dict:
        return await asyncio.to_thread(self._core.judgment, trace_id)

    async def list_judgments(self, *, user_id: str | None = None, agent_id: str | None = None,
                             run_id: str | None = None, limit: int = 50, offset: int = 0) -> list[dict]:
        return await asyncio.to_thread(self._core.list_judgments, user_id, agent_id, run_id, limit, offset)

    async def verify(self, trace_id: str, result: str, notes: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.verify, trace_id, result, notes)

    async def judgment_stats(self, *, user_id: str | None = None, agent_id: str | None = None,
                             run_id: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.judgment_stats, user_id, agent_id, run_id)

    async def reindex(self, scope: Scope | dict | None = None, *, user_id: str | None = None,
                      agent_id: str | None = None, run_id: str | None = None) -> dict:
        return await asyncio.to_thread(self._core.reindex, scope_arg(scope, user_id, agent_id, run_id))

    # --- lifecycle ----------------------------------------------------------------------------------

    async def close(self) -> None:
        closer, self._asaver_close, self._asaver = self._asaver_close, None, None
        if closer is not None:
            with contextlib.suppress(Exception):
                res = closer()
                if asyncio.iscoroutine(res):
                    await res
        await asyncio.to_thread(self._core.close)

    async def __aenter__(self) -> "AsyncMemory":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()
