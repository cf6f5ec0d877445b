"""Memory tools for agent-managed memory, as LangChain tools: add (with an optional memory type and
importance), search, update and forget (with a reason kept in the judgment log), and
the structured set (`make_memory_tools(..., structured=True)`, on by default):
create_memory(subject, memory_type, topic, object, attributes, importance), link_memories(a, b, relation),
update_importance(memory_id, importance) and search_memories(query, memory_types, time_range, max_results,
expand_depth). Relative times in attributes ("昨天", "last week") get their absolute date (memoryx.core.timeparse)
and become the memory's valid_at.

The scope (user_id / agent_id / run_id) is never chosen by the model:

- bound at construction: `make_memory_tools(memory, user_id="alice")`, or
- injected per run: `make_memory_tools(memory)` and call the agent with
  `config={"configurable": {"user_id": "alice"}}` (also "agent_id", and "memoryx_run_id" since LangGraph
  servers keep their own run id under "run_id"); the tools read it through an injected `RunnableConfig`
  argument that is not part of the schema the model sees.

Update and forget only touch memories inside that scope (an id from another scope is "not found").

    from langchain.agents import create_agent      # or langgraph.prebuilt.create_react_agent
    agent = create_agent(model, tools=make_memory_tools(memory, user_id="alice"))
"""

from __future__ import annotations

import inspect
import json
from typing import Annotated, Any, Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolArg, StructuredTool

from memoryx.api.agent_tools import structured_tools
from memoryx.api.kinds import check_kind
from memoryx.core.scope import Scope
from memoryx.errors import MemoryXError, NotFoundError, ScopeError

__all__ = ["make_memory_tools"]

MemoryType = Literal["episodic", "semantic", "preference", "fact"]


def _fmt(memories: list[dict]) -> str:
    if not memories:
        return "No matching memories."
    return "\n".join(f"[{m.get('id')}] {m.get('memory')}" for m in memories)


def make_memory_tools(memory: Any, *, user_id: str | None = None, agent_id: str | None = None,
                      run_id: str | None = None, search_limit: int = 5, infer: bool = True,
                      group_id: str | None = None, structured: bool = True) -> list[BaseTool]:
    """add_memory, search_memory, update_memory and forget_memory bound to `memory` (a `Memory` or
    `AsyncMemory`) and to a scope (see the module docstring); with `structured`, also create_memory,
    link_memories, update_importance and search_memories (memoryx.api.agent_tools)."""
    bound = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id, "group_id": group_id}
    if any(bound.values()):
        Scope(**bound)  # validate now, not at the first tool call
    is_async = inspect.iscoroutinefunction(memory.add)  # AsyncMemory

    def scope_of(config: RunnableConfig | None) -> dict:
        if any(bound.values()):
            return dict(bound)
        configurable = (config or {}).get("configurable") or {}
        # "run_id" in configurable is the LangGraph server's own run id: ours is "memoryx_run_id"
        scope = {"user_id": configurable.get("user_id"), "agent_id": configurable.get("agent_id"),
                 "run_id": configurable.get("memoryx_run_id"), "group_id": configurable.get("group_id")}
        if not any(scope.values()):
            raise ScopeError("Memory tools need a scope: bind it with make_memory_tools(memory, user_id=...) "
                             "or pass config={'configurable': {'user_id': ...}}.")
        return scope

    def check_owned(memory_record: dict, scope: dict) -> None:
        if not Scope(**scope).contains(memory_record):
            raise NotFoundError("No memory with that id in this conversation's memory.")

    # --- sync implementations -------------------------------------------------------------------------

    def add_memory(content: str, memory_type: MemoryType | None = None, importance: float | None = None,
                   config: Annotated[RunnableConfig, InjectedToolArg] = None) -> str:
        """Remember something about the user for future conversations. Use for lasting facts, preferences
        and plans, stated in one sentence. Optionally say what kind it is (memory_type: episodic = an event,
        semantic = lasting knowledge, preference, fact) and how much it matters (importance 0..1: 0.3 a daily
        trifle, 0.5 normal, 0.8 important, 1.0 key); left out, MemoryX decides."""
        try:
            check_kind(memory_type, importance)
            result = memory.add([{"role": "user", "content": content}], **scope_of(config), infer=infer)
            for memory_id in _written(result) if memory_type is not None or importance is not None else []:
                memory.classify(memory_id, memory_type=memory_type, importance=importance)
        except MemoryXError as exc:
            return f"Could not remember: {exc}"
        return _summarise_add(result)

    def search_memory(query: str, limit: int = search_limit,
                      config: Annotated[RunnableConfig, InjectedToolArg] = None) -> str:
        """Search long-term memory for what is known about the user. Returns memories with their ids."""
        found = memory.search(query, **scope_of(config), limit=max(1, min(int(limit), 50)))
        return _fmt(found.get("results") or [])

    def update_memory(memory_id: str, content: str,
                      config: Annotated[RunnableConfig, InjectedToolArg] = None) -> str:
        """Replace the text of one memory (id from search_memory) when the user corrects it."""
        scope = scope_of(config)
        try:
            check_owned(memory.get(memory_id), scope)
            result = memory.update(memory_id, content)
        except MemoryXError as exc:
            return f"Could not update: {exc}"
        return f"Updated [{memory_id}]: {result.get('memory', content)}"

    def forget_memory(memory_id: str, reason: str | None = None,
                      config: Annotated[RunnableConfig, InjectedToolArg] = None) -> str:
        """Forget one memory (id from search_memory) when the user asks to, or when it is wrong. Say why in
        `reason` ("the user asked", "no longer true", "privacy"): it is kept in the judgment log."""
        scope = scope_of(config)
        try:
            check_owned(memory.get(memory_id), scope)
            memory.delete(memory_id, reason=reason or "user_request")
        except MemoryXError as exc:
            return f"Could not forget: {exc}"
        return f"Forgot [{memory_id}]."

    # --- async implementations (AsyncMemory) ----------------------------------------------------------

    async def aadd_memory(content: str, memory_type: MemoryType | None = None, importance: float | None = None,
                          config: Annotated[RunnableConfig, InjectedToolArg] = None) -> str:
        try:
            check_kind(memory_type, importance)
            result = await memory.add([{"role": "user", "content": content}], **scope_of(config), infer=infer)
            for memory_id in _written(result) if memory_type is not None or importance is not None else []:
                await memory.classify(memory_id, memory_type=memory_type, importance=importance)
        except MemoryXError as exc:
            return f"Could not remember: {exc}"
        return _summarise_add(result)

    async def asearch_memory(query: str, limit: int = search_limit,
                             config: Annotated[RunnableConfig, InjectedToolArg] = None) -> str:
        found = await memory.search(query, **scope_of(config), limit=max(1, min(int(limit), 50)))
        return _fmt(found.get("results") or [])

    async def aupdate_memory(memory_id: str, content: str,
                             config: Annotated[RunnableConfig, InjectedToolArg] = None) -> str:
        scope = scope_of(config)
        try:
            check_owned(await memory.get(memory_id), scope)
            result = await memory.update(memory_id, content)
        except MemoryXError as exc:
            return f"Could not update: {exc}"
        return f"Updated [{memory_id}]: {result.get('memory', content)}"

    async def aforget_memory(memory_id: str, reason: str | None = None,
                             config: Annotated[RunnableConfig, InjectedToolArg] = None) -> str:
        scope = scope_of(config)
        try:
            check_owned(await memory.get(memory_id), scope)
            await memory.delete(memory_id, reason=reason or "user_request")
        except MemoryXError as exc:
            return f"Could not forget: {exc}"
        return f"Forgot [{memory_id}]."

    pairs = [(add_memory, aadd_memory), (search_memory, asearch_memory), (update_memory, aupdate_memory),
             (forget_memory, aforget_memory)]
    tools: list[BaseTool] = []
    for sync_fn, async_fn in pairs:
        if is_async:
            tool = StructuredTool.from_function(coroutine=async_fn, name=sync_fn.__name__,
                                                description=sync_fn.__doc__.strip())
            # the coroutine's signature has no docstring; keep the sync one's schema (same arguments)
        else:
            tool = StructuredTool.from_function(func=sync_fn, name=sync_fn.__name__,
                                                description=sync_fn.__doc__.strip())
        tools.append(tool)
    if structured:
        tools.extend(structured_tools(memory, scope_of, is_async=is_async, search_limit=search_limit))
    return tools


def _written(result: dict) -> list[str]:
    """The ids an add wrote (added or updated): what a caller's memory_type / importance applies to."""
    return [r["id"] for r in result.get("results") or [] if r.get("event") in ("ADD", "UPDATE") and r.get("id")]


def _summarise_add(result: dict) -> str:
    items = result.get("results") or []
    if result.get("status") == "awaiting_review":
        return f"Waiting for human review (trace {result.get('trace_id')})."
    if not items:
        return "Nothing new to remember (already known)."
    return "; ".join(f"{i.get('event')}: {i.get('memory')}" for i in items)


def tool_schema(tool: BaseTool) -> dict:
    """The JSON schema the model sees (handy to check that no scope field leaks into it)."""
    return json.loads(json.dumps(tool.tool_call_schema.model_json_schema()))
