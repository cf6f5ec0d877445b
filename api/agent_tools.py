"""Structured memory tools for agents: the model builds memories itself.

- create_memory(subject, memory_type, topic, object, attributes, importance): one memory, written as given
  (no extraction model, no judge): "我 / 事件 / 吃饭 / 白米饭 / {时间: 今天}" becomes "用户吃饭白米饭（时间：今天
  （2025-11-05））" with memory_type episodic, metadata {kind, subject, topic, object, attributes, event_time,
  time_expression} and valid_at = that day.
- link_memories(source_memory_description, target_memory_description, relation): a typed memory ↔ memory
  link (causes, follows, part_of, contradicts, supports, same_topic; words such as 因为 or "led to" name a
  type); each memory named by description or id, found by the tool, which asks back when a description fits
  several (memoryx.api.linking).
- update_importance(memory_id, importance).
- search_memories(query, memory_types, time_range, max_results, expand_depth): hybrid search filtered by kind
  and event time; `expand_depth` walks the entity graph and the memory links that many hops.

The scope comes from `make_memory_tools` (bound, or the run's config): never from the model. Ids outside the
scope are "not found". Used through memoryx.api.tools.make_memory_tools.
"""

from __future__ import annotations

import asyncio
import re
from typing import Annotated, Any, Callable

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolArg, StructuredTool

from memoryx.api.linking import link_described
from memoryx.core.scope import Scope
from memoryx.core.timeparse import annotate, base_time
from memoryx.errors import MemoryXError

# the seed's four kinds (and their Chinese / Japanese names) -> (kind, memory_type)
KINDS = {"event": "episodic", "fact": "semantic", "relation": "semantic", "opinion": "semantic",
         "preference": "preference"}
_KIND_NAMES = {"事件": "event", "事实": "fact", "关系": "relation", "观点": "opinion", "偏好": "preference",
               "出来事": "event", "事実": "fact", "関係": "relation", "意見": "opinion", "好み": "preference"}
_SELF = {"我": "用户", "i": "User", "me": "User", "user": "User", "用户": "用户", "私": "ユーザー", "ユーザー": "ユーザー"}
_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def kind_of(name: str) -> str:
    kind = _KIND_NAMES.get(name.strip(), name.strip().lower())
    if kind not in KINDS:
        raise ValueError(f"memory_type must be one of event, fact, relation, opinion, preference "
                         f"(事件, 事实, 关系, 观点); got {name!r}")
    return kind


def kinds_filter(kinds: list[str]) -> dict:
    """Memories of these kinds: created by the tools (metadata.kind), or extracted ones (no kind) whose
    memory_type matches (an event is episodic)."""
    types = sorted({KINDS[k] for k in kinds})
    return {"OR": [{"kind": {"in": kinds}}, {"AND": [{"kind": {"nin": list(KINDS)}}, {"memory_type": {"in": types}}]}]}


def render(subject: str, topic: str, obj: str | None, attributes: dict | None, now: Any = None) -> tuple[str, dict]:
    """(memory text, time metadata) of a structured memory. Relative times in attribute values are made
    absolute from `now`; the first one found is the memory's event time (metadata event_start)."""
    cjk = bool(_CJK.search(f"{subject}{topic}{obj or ''}"))
    who = _SELF.get(subject.strip().lower(), subject.strip())
    parts = [who, topic.strip(), (obj or "").strip()]
    head = "".join(parts) if cjk else " ".join(p for p in parts if p)
    time_meta: dict = {}
    attrs: list[str] = []
    for key, value in (attributes or {}).items():
        text, refs = annotate(str(value), base_time(now))
        if refs and not time_meta:
            time_meta = refs[0].as_metadata()
        attrs.append(f"{key}：{text}" if cjk else f"{key}: {text}")
    if attrs:
        head += f"（{'；'.join(attrs)}）" if cjk else f" ({'; '.join(attrs)})"
    return head, time_meta


def _line(m: dict) -> str:
    return f"[{m.get('id')}] {m.get('memory')}" + (f" (when: {m['valid_at'][:10]})" if m.get("valid_at") else "")


def _fmt(results: list[dict], linked: tuple[list[dict], list[dict]]) -> str:
    """The matches, then the memories linked to them (not already listed) and the links themselves."""
    if not results:
        return "No matching memories."
    links, others = linked
    lines = [_line(m) for m in results]
    if links:
        lines += ["linked:"] + [_line(m) for m in others]
        lines += [f"link: [{k['source_id']}] -{k['relation']}-> [{k['target_id']}]" for k in links]
    return "\n".join(lines)


def structured_tools(memory: Any, scope_of: Callable[[RunnableConfig | None], dict], *, is_async: bool,
                     search_limit: int = 5) -> list[BaseTool]:
    """create_memory, link_memories, update_importance and search_memories over `memory`'s stores; `scope_of`
    turns the run's config into the scope (the caller's, see memoryx.api.tools)."""
    services = memory.services

    def owned(memory_id: str, scope: dict) -> dict:
        # the same NotFoundError for "missing" and "someone else's": never confirms another tenant's ids
        return services.sql.get_memory(memory_id, scope=Scope(**scope))

    def do_create(subject: str, memory_type: str, topic: str, object: str | None, attributes: dict | None,
                  importance: float, scope: dict) -> str:
        try:
            kind = kind_of(memory_type)
        except ValueError as exc:
            return f"Could not create: {exc}"
        if not subject.strip() or not topic.strip():
            return "Could not create: subject and topic are required."
        text, time_meta = render(subject, topic, object, attributes)
        meta = {"kind": kind, "subject": subject, "topic": topic, "source": "agent_tool",
                **({"object": object} if object else {}), **({"attributes": attributes} if attributes else {}),
                **time_meta}
        sc = Scope(**scope)
        try:
            with services.sql.scope_lock(sc):
                dup = services.sql.find_by_hash(sc, services.sql.memory_hash(text))
                if dup is not None:
                    return f"Already known: [{dup['id']}] {dup['memory']}"
                row = services.sql.insert_memory(scope=sc, text=text, category=kind, importance=importance,
                                                 memory_type=KINDS[kind], metadata=meta, actor="agent",
                                                 valid_at=time_meta.get("event_start"))
            services.projector.sync_memories([row["id"]])
        except MemoryXError as exc:
            return f"Could not create: {exc}"
        return f"Created [{row['id']}]: {text}"

    def do_link(source: str, target: str, relation: str, importance: float, scope: dict) -> str:
        try:
            out = link_described(services, Scope(**scope), source, target, relation, importance=importance)
        except MemoryXError as exc:
            return f"Could not link: {exc}"
        if out["status"] == "ask":  # not written: the model asks the user or calls again with an id
            return f"Not linked yet. {out['question']}"
        link, a, b = out["link"], out["source"], out["target"]
        return f"Linked [{link['source_id']}] {a['memory']} -{link['relation']}-> [{link['target_id']}] {b['memory']}."

    def do_importance(memory_id: str, importance: float, scope: dict) -> str:
        try:
            row = owned(memory_id, scope)
            row = services.sql.update_memory(memory_id, text=row["memory"], importance=importance, actor="agent")
            services.projector.sync_memories([memory_id])
        except MemoryXError as exc:
            return f"Could not update: {exc}"
        return f"Importance of [{memory_id}] is now {row['importance']:.2f}."

    def search_args(query: str, memory_types: list[str] | None, time_range: dict | None, max_results: int,
                    expand_depth: int, scope: dict) -> dict:
        kinds = [kind_of(t) for t in memory_types or []]
        period = None
        if time_range:
            period = (time_range.get("start"), time_range.get("end")) if isinstance(time_range, dict) else time_range
        return {"query": query, **scope, "limit": max(1, min(int(max_results), 50)),
                "filters": kinds_filter(kinds) if kinds else None, "time_range": period,
                "expand_depth": max(0, min(int(expand_depth), 2))}

    def linked(found: dict, depth: int) -> tuple[list[dict], list[dict]]:
        ids = [m["id"] for m in found.get("results") or []]
        links = services.sql.memory_links(ids, depth=depth) if ids and depth > 0 else []
        more = {e for k in links for e in (k["source_id"], k["target_id"])} - set(ids)
        return links, services.sql.get_memories(sorted(more)) if more else []

    # --- the tools: docstrings are what the model reads ------------------------------------------------

    def create_memory(subject: str, memory_type: str, topic: str, object: str | None = None,
                      attributes: dict[str, str] | None = None, importance: float = 0.5,
                      config: Annotated[RunnableConfig, InjectedToolArg] = None) -> str:
        """Create one memory. subject: who ('我'/'I' = the user, or a name); memory_type: event (事件, an action
        at a time), fact (事实, a lasting state), relation (关系, between people), opinion (观点); topic: what is
        done or the state ('吃饭', 'moved'); object: what it is about ('白米饭'); attributes: extra details
        such as {'时间': '昨天', '地点': '超市'} (relative times are made absolute); importance 0..1 (0.3 daily
        trifle, 0.5 normal, 0.8 important, 1.0 key). Returns the new memory's id."""
        return do_create(subject, memory_type, topic, object, attributes, importance, scope_of(config))

    def link_memories(source_memory_description: str, target_memory_description: str, relation: str,
                      importance: float = 0.6, config: Annotated[RunnableConfig, InjectedToolArg] = None) -> str:
        """Link two existing memories, e.g. a cause and its effect. Name each by a short description ('我今天
        不开心', 'my trip to Paris') or by its id: the tool finds them, and asks back with the candidates when a
        description fits several (then call again with the id). relation: one of causes, follows, part_of,
        contradicts, supports, same_topic (or a word for one: 因为 / 导致 / because / led to -> causes, 然后 /
        then -> follows, 基于 / based on -> supports, 相关 / related -> same_topic)."""
        return do_link(source_memory_description, target_memory_description, relation, importance, scope_of(config))

    def update_importance(memory_id: str, importance: float,
                          config: Annotated[RunnableConfig, InjectedToolArg] = None) -> str:
        """Change how important a memory is (0..1), e.g. when the user says it matters a lot."""
        return do_importance(memory_id, importance, scope_of(config))

    def search_memories(query: str, memory_types: list[str] | None = None, time_range: dict[str, str] | None = None,
                        max_results: int = search_limit, expand_depth: int = 1,
                        config: Annotated[RunnableConfig, InjectedToolArg] = None) -> str:
        """Search memories to answer a question or recall the past. memory_types: only these kinds (event,
        fact, relation, opinion); time_range: {'start': '2025-11-01', 'end': '2025-11-05'} (ISO dates) when
        the events happened; expand_depth: 0 = direct matches only, 1-2 = also memories linked to them."""
        try:
            args = search_args(query, memory_types, time_range, max_results, expand_depth, scope_of(config))
            found = memory.search(**args)
            return _fmt(found.get("results") or [], linked(found, args["expand_depth"]))
        except (MemoryXError, ValueError) as exc:
            return f"Could not search: {exc}"

    async def acreate_memory(subject: str, memory_type: str, topic: str, object: str | None = None,
                             attributes: dict[str, str] | None = None, importance: float = 0.5,
                             config: Annotated[RunnableConfig, InjectedToolArg] = None) -> str:
        return await asyncio.to_thread(do_create, subject, memory_type, topic, object, attributes, importance,
                                       scope_of(config))

    async def alink_memories(source_memory_description: str, target_memory_description: str, relation: str,
                             importance: float = 0.6, config: Annotated[RunnableConfig, InjectedToolArg] = None) -> str:
        return await asyncio.to_thread(do_link, source_memory_description, target_memory_description, relation,
                                       importance, scope_of(config))

    async def aupdate_importance(memory_id: str, importance: float,
                                 config: Annotated[RunnableConfig, InjectedToolArg] = None) -> str:
        return await asyncio.to_thread(do_importance, memory_id, importance, scope_of(config))

    async def asearch_memories(query: str, memory_types: list[str] | None = None,
                               time_range: dict[str, str] | None = None, max_results: int = search_limit,
                               expand_depth: int = 1, config: Annotated[RunnableConfig, InjectedToolArg] = None) -> str:
        try:
            args = search_args(query, memory_types, time_range, max_results, expand_depth, scope_of(config))
            found = await memory.search(**args)
            links = await asyncio.to_thread(linked, found, args["expand_depth"])
            return _fmt(found.get("results") or [], links)
        except (MemoryXError, ValueError) as exc:
            return f"Could not search: {exc}"

    pairs = [(create_memory, acreate_memory), (link_memories, alink_memories),
             (update_importance, aupdate_importance), (search_memories, asearch_memories)]
    out: list[BaseTool] = []
    for sync_fn, async_fn in pairs:
        description = " ".join((sync_fn.__doc__ or "").split())
        if is_async:  # the coroutine has no docstring: the description and schema come from the sync twin
            tool = StructuredTool.from_function(coroutine=async_fn, name=sync_fn.__name__, description=description,
                                                args_schema=StructuredTool.from_function(sync_fn).args_schema)
        else:
            tool = StructuredTool.from_function(func=sync_fn, name=sync_fn.__name__, description=description)
        out.append(tool)
    return out
