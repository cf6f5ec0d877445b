"""The Python API: `Memory` and `AsyncMemory`, mem0-compatible in names and result shapes.

    from memoryx import Memory
    with Memory() as m:                       # embedded defaults under MEMORYX_DATA_DIR (.memoryx)
        m.add("I live in Berlin and I love sushi", user_id="alice")
        m.search("where does alice live?", user_id="alice")     # {"results": [...], "relations": [...]}

`add` and `search` run the LangGraph workflows (memoryx.graphs.add / memoryx.graphs.search) with the live
stores injected through `context=Context(services=...)`; the add graph is compiled with the configured
checkpointer and every run's thread id is its trace id, so a run interrupted for human review can be resumed
with `resume_add(trace_id, operations)`. The other methods go straight to the system of record (SQL) and
then bring the projections (vectors, graph) in step.

`AsyncMemory` (memoryx.async_memory) has the same methods as coroutines: graphs run with `ainvoke`, the
(synchronous) stores are called through `asyncio.to_thread`. What both share lives in memoryx.memory_core.
"""

from __future__ import annotations

from typing import Any

from memoryx.async_memory import AsyncMemory
from memoryx.mem0_config import settings_from_config
from memoryx.memory_core import RESUME_RUN_NAME, SEARCH_RUN_NAME, MemoryFront, _check_id, _optional_scope, scope_arg
from memoryx.errors import NotFoundError
from memoryx.scope import Scope

__all__ = ["AsyncMemory", "Memory", "settings_from_config"]


class Memory(MemoryFront):
    """Long-term memory, mem0-compatible. See the module docstring.

    Args:
        settings: a `Settings`, a config dict (flat settings or mem0 style), or None for MEMORYX_* env.
        llm: a LangChain chat model used for every role (or per role: extraction_llm, judgment_llm, graph_llm).
        embeddings: a LangChain `Embeddings`.
        services: already built `memoryx.services.Services` to share (not closed by `close()`).
        **overrides: individual settings fields, e.g. `data_dir="/tmp/mx"`, `review=True`.
    """

    # --- graphs -------------------------------------------------------------------------------------

    def add(self, messages, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
            metadata: dict | None = None, infer: bool = True, trace_id: str | None = None,
            review: bool | None = None) -> dict:
        """Remember what matters in `messages` (a string or a list of {"role", "content"} dicts).

        Returns `{"results": [{"id", "memory", "event", "previous_memory"?}], "relations": {...}, "trace_id"}`.
        With review on (settings.review or review=True) nothing is written yet: the result has
        `"status": "awaiting_review"` and `"pending_operations"`; approve or edit them with `resume_add`.
        """
        core = self._core
        inp, config = core.add_input(messages, user_id, agent_id, run_id, metadata, infer, trace_id)
        graph = core.add_graph()
        core.check_review(graph, review)
        out = graph.invoke(inp, config, context=core.context(review=review))
        return core.finish_add(out, inp["trace_id"], lambda: self._snapshot(graph, config))

    def resume_add(self, trace_id: str, operations: list[dict] | None = None) -> dict:
        """Continue an add run paused for review. `operations`: the approved (possibly edited) list; None
        approves the pending ones as they are, [] rejects them all."""
        from langgraph.types import Command

        core = self._core
        graph = core.add_graph()
        config = core.run_config(_check_id(trace_id, "trace_id"), RESUME_RUN_NAME)
        snapshot = self._snapshot(graph, config)
        if snapshot is None or not snapshot.next:
            raise NotFoundError(f"No add run awaiting review with trace_id {trace_id!r}.")
        resume = {"operations": operations} if operations is not None else {"approved": True}
        out = graph.invoke(Command(resume=resume), config, context=core.context())
        return core.finish_add(out, trace_id, lambda: self._snapshot(graph, config))

    @staticmethod
    def _snapshot(graph, config):
        try:
            return graph.get_state(config)
        except ValueError:  # no checkpointer
            return None

    def search(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None, limit: int = 10, filters: dict | None = None,
               threshold: float | None = None, mode: str | None = None, expand_depth: int | None = None,
               relation_types: list[str] | None = None, include_invalid: bool | None = None) -> dict:
        """Memories relevant to `query`, best first: `{"results": [{"id", "memory", "score", ...}], "relations": [...]}`."""
        core = self._core
        inp = core.search_input(query, user_id, agent_id, run_id, limit, filters, threshold,
                                {"mode": mode, "expand_depth": expand_depth, "relation_types": relation_types,
                                 "include_invalid": include_invalid})
        out = core.search_graph().invoke(inp, {"run_name": SEARCH_RUN_NAME}, context=core.context())
        return dict(out.get("result") or {"results": [], "relations": []})

    def get_context(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
                    run_id: str | None = None, max_tokens: int = 1000, limit: int = 20) -> dict:
        """A prompt-ready block of the memories relevant to `query`, within `max_tokens`."""
        found = self.search(query, user_id=user_id, agent_id=agent_id, run_id=run_id, limit=limit)
        return self._core.get_context(query, user_id, agent_id, run_id, max_tokens, limit, found)

    # --- records ------------------------------------------------------------------------------------

    def get(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None) -> dict:
        """One memory by id. With a scope, a memory outside it is reported as not found."""
        return self._core.get(memory_id, _optional_scope(user_id, agent_id, run_id))

    def get_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                limit: int = 100, filters: dict | None = None) -> dict:
        """`{"results": [...]}`: the scope's memories, newest first."""
        return self._core.get_all(user_id, agent_id, run_id, limit, filters)

    def update(self, memory_id: str, text: str, metadata: dict | None = None) -> dict:
        """Replace a memory's text (and metadata). Its relations are extracted again from the new text:
        those it no longer yields are invalidated, new ones added (as an UPDATE in the add graph does)."""
        return self._core.update(memory_id, text, metadata)

    def delete(self, memory_id: str) -> dict:
        return self._core.delete(memory_id)

    def delete_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> dict:
        return self._core.delete_all(user_id, agent_id, run_id)

    def history(self, memory_id: str) -> list[dict]:
        """Events of one memory, oldest first: {"event", "old_memory", "new_memory", "trace_id", "created_at", ...}."""
        return self._core.history(memory_id)

    def reset(self) -> None:
        """Delete every memory, entity, relation, judgment and history row of every scope."""
        self._core.reset()

    # --- judgments ----------------------------------------------------------------------------------

    def judgments(self, trace_id: str) -> dict:
        return self._core.judgment(trace_id)

    def list_judgments(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                       limit: int = 50, offset: int = 0) -> list[dict]:
        return self._core.list_judgments(user_id, agent_id, run_id, limit, offset)

    def verify(self, trace_id: str, result: str, notes: str | None = None) -> dict:
        return self._core.verify(trace_id, result, notes)

    def judgment_stats(self, *, user_id: str | None = None, agent_id: str | None = None,
                       run_id: str | None = None) -> dict:
        return self._core.judgment_stats(user_id, agent_id, run_id)

    def reindex(self, scope: Scope | dict | None = None, *, user_id: str | None = None,
                agent_id: str | None = None, run_id: str | None = None) -> dict:
        """Rebuild the vector and graph projections of a scope (all scopes when None) from SQL."""
        return self._core.reindex(scope_arg(scope, user_id, agent_id, run_id))

    # --- lifecycle ----------------------------------------------------------------------------------

    def close(self) -> None:
        """Release the stores; stops the embedded graph server this instance started."""
        self._core.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
