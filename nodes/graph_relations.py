"""Step 5 of the add graph: entities and relations of the memories written in this run.

Input is the memory texts that changed in this run (ADD and UPDATE results of execute_ops); nothing is
asked of the model when nothing changed. Entities and relations come from ONE model call with both tools
bound (extract_entities + establish_relationships); a second call is made only when the model answered
with entities but no relations. Mode (`settings.graph_extraction_mode`):

* ``tools``: function calling only (a model without `bind_tools`, or a failing call, is an error);
* ``json``: a JSON answer, parsed leniently, with one retry that shows the model its parse error;
* ``auto``: tools, falling back to JSON mode when binding or calling the tools fails or the model
  answers with neither tool calls nor readable JSON.

So extraction costs one call normally and at most two. A degenerate answer (cut off at the output cap,
empty, `{}`, repetition) is unreadable like any other; an extraction that fails is noted in the run's
judgment record before its ModelOutputError is raised (the memories are written already); once the add
run's time budget is spent no call starts: the step is skipped and the record says so. Every relation carries the id of the memory it came
from (the model numbers them; a text match attributes relations the model left unnumbered), so UPDATE and
DELETE of that memory can later cascade to exactly its relations.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from memoryx.runtime.context import Context, context_of, services_of
from memoryx.errors import ModelOutputError, NotFoundError
from memoryx.models.factory import model_name_of
from memoryx.models.graph_tools import (
    ESTABLISH_RELATIONSHIPS,
    EXTRACT_ENTITIES,
    EXTRACTION_TOOLS,
    EstablishRelationships,
    bind_graph_tools,
    parse_entity_items,
    parse_relation_items,
    resolve_self,
)
from memoryx.models.llm_io import (
    RetriesExhausted,
    TimeBudgetSpent,
    ToolsUnavailable,
    call_with_retry,
    cap_text,
    check_deadline,
    collect_tool_calls,
    message_json,
    message_text,
    run_deadline,
    time_left,
    tools_or_json,
)
from memoryx.prompts.graph import (
    ENTITIES_HEADER,
    EXTRACT_GRAPH_JSON_PROMPT,
    EXTRACT_GRAPH_PROMPT,
    EXTRACT_RELATIONS_PROMPT,
    MEMORIES_HEADER,
    RETRY_GRAPH_JSON_PROMPT,
    USER_ID_HEADER,
)
from memoryx.nodes.add_common import elapsed_ms, llm_config, scope_of
from memoryx.core.scope import SCOPE_FIELDS, Scope
from memoryx.state import AddState
from memoryx.core.text import normalize_name

log = logging.getLogger(__name__)

CHANGED_EVENTS = ("ADD", "UPDATE")


# --- helpers shared by the three graph nodes ----------------------------------------------------------------


def graph_active(runtime: Runtime[Context] | None) -> bool:
    """The graph steps run only with a graph store and the run's graph switch on."""
    return services_of(runtime).graph is not None and context_of(runtime).graph_enabled


def self_name(state: AddState) -> str:
    """The entity that self-references ("I", "我", "私") resolve to: the user's id."""
    return state.get("user_id") or "user"


def same_scope(record: dict, scope: Scope) -> bool:
    """Exactly this scope: every scope field equal, unset ones unset."""
    return all((record.get(k) or None) == getattr(scope, k) for k in SCOPE_FIELDS)


def changed_memories(state: AddState, sql) -> list[dict]:
    """The ADD/UPDATE results of this run (the input of extraction and conflict detection) whose memory
    lives in the run's own scope: the assistant's memories, kept in the agent scope, are not part of the
    user's graph."""
    items = [e for e in state.get("executed") or []
             if e.get("event") in CHANGED_EVENTS and e.get("id") and (e.get("memory") or "").strip()]
    if not items:
        return []
    scope = scope_of(state)
    rows = {r["id"]: r for r in sql.get_memories([e["id"] for e in items])}
    return [e for e in items if e["id"] in rows and same_scope(rows[e["id"]], scope)]


def note_in_judgment(services, state: AddState, note: str) -> None:
    """Append "[memoryx] note" to the reasoning of this run's judgment record (written by execute_ops before
    the graph steps run); a run without a record (a node called on its own) has nowhere to note it."""
    trace_id = state.get("trace_id")
    if not trace_id:
        return
    try:
        reasoning = services.sql.get_judgment(trace_id).get("reasoning") or ""
        services.sql.save_judgment(trace_id, reasoning=(reasoning + "\n" if reasoning else "") + f"[memoryx] {note}")
    except NotFoundError:
        pass
    except Exception as exc:  # noqa: BLE001 - the note must not hide the step's own outcome
        log.warning("could not note %r in judgment %s: %s", note[:200], trace_id, exc)


def step_failure_note(step: str, exc: ModelOutputError, cap: int) -> str:
    """What a failed graph step leaves in the judgment record: the problem and the capped raw answers."""
    raw = getattr(exc, "raw", None) or getattr(exc.__cause__, "raw", None) or ""
    return f"{step} failed: {exc}" + (f" | raw answers: {cap_text(raw, cap)}" if raw else "")


# --- the node ------------------------------------------------------------------------------------------------


def extract_relations(state: AddState, runtime: Runtime[Context]) -> dict:
    """Entities and relations of this run's changed memories, each relation attributed to its memory."""
    started = time.perf_counter()
    if not graph_active(runtime):
        return {"entities": [], "relations": []}
    services = services_of(runtime)
    memories = changed_memories(state, services.sql)
    if not memories:
        return {"entities": [], "relations": []}
    user_id = self_name(state)
    llm = services.graph_llm
    settings = services.settings
    try:
        entities, relations = extract_graph(
            llm, memories, user_id, mode=settings.graph_extraction_mode, trace_id=state.get("trace_id"),
            config=llm_config(state, "extract_relations", model_name_of(llm)),
            deadline=run_deadline(settings.add_time_budget_s), raw_cap=settings.llm_raw_answer_cap,
        )
    except TimeBudgetSpent as exc:  # the memories stand; their graph is left out of this run
        note_in_judgment(services, state, f"graph extraction skipped: {exc.problem}")
        return {"entities": [], "relations": [], "timings": {"extract_relations": elapsed_ms(started)}}
    except ModelOutputError as exc:
        note_in_judgment(services, state, step_failure_note("graph extraction", exc, settings.llm_raw_answer_cap))
        raise
    return {"entities": entities, "relations": relations, "timings": {"extract_relations": elapsed_ms(started)}}


def extract_graph(llm, memories: list[dict], user_id: str, *, mode: str = "auto", trace_id: str | None = None,
                  config: dict[str, Any] | None = None, deadline: float | None = None,
                  raw_cap: int = 4000) -> tuple[list[dict], list[dict]]:
    """(entities, relations) of the memories: [{"name", "entity_type"}], [{"source", "relation",
    "destination", "memory_id"}]. Self-references are the user id; duplicates and self-loops are dropped.
    No call starts after `deadline` (epoch seconds): TimeBudgetSpent."""
    listing = "\n".join(f"[{i}] {m['memory'].strip()}" for i, m in enumerate(memories))
    user_msg = f"{USER_ID_HEADER} {user_id}\n{MEMORIES_HEADER}\n{listing}"
    raw_entities, raw_relations = _ask(llm, user_msg, user_id, mode, trace_id, config or {}, deadline, raw_cap)
    return _finish(raw_entities, raw_relations, memories, user_id)


# --- model calls ---------------------------------------------------------------------------------------------


def _ask(llm, user_msg: str, user_id: str, mode: str, trace_id: str | None, config: dict,
         deadline: float | None, raw_cap: int) -> tuple[list, list]:
    return tools_or_json(
        mode, lambda: _ask_tools(llm, user_msg, user_id, config, deadline),
        lambda attempts: _ask_json(llm, user_msg, user_id, config, attempts=attempts, trace_id=trace_id,
                                   deadline=deadline, raw_cap=raw_cap),
        step="Graph extraction", trace_id=trace_id,
        when_no_call=lambda: ([], []),  # a tool-calling model that calls nothing found nothing
    )


def _ask_tools(llm, user_msg: str, user_id: str, config: dict, deadline: float | None) -> tuple[list, list]:
    check_deadline(deadline, "graph extraction")
    system = EXTRACT_GRAPH_PROMPT.format(user_id=user_id)
    try:
        bound = bind_graph_tools(llm, EXTRACTION_TOOLS)
    except Exception as exc:  # NotImplementedError for models without tool calling, or a provider refusal
        raise ToolsUnavailable(f"{type(exc).__name__}: {exc}") from exc
    try:
        answer = bound.invoke([SystemMessage(system), HumanMessage(user_msg)], config=config)
    except Exception as exc:
        raise ToolsUnavailable(f"{type(exc).__name__}: {exc}") from exc

    calls = collect_tool_calls(answer)
    if not calls:
        # Some models answer the JSON shape in the text instead of calling the tools: take it.
        parsed = _parse_json_answer(message_json(answer))
        if parsed is not None:
            return parsed
        raise ToolsUnavailable("the model answered without a tool call", no_call=True)
    entities, relations, got_relations = [], [], False
    for call in calls:
        if call["name"] == EXTRACT_ENTITIES:
            entities += parse_entity_items(call["args"])
        elif call["name"] == ESTABLISH_RELATIONSHIPS:
            got_relations = True
            relations += parse_relation_items(call["args"])
        else:  # an unnamed or misnamed call: read whatever shape it has
            entities += parse_entity_items(call["args"]) if _looks_like_entities(call["args"]) else []
            found = parse_relation_items(call["args"])
            got_relations = got_relations or bool(found)
            relations += found
    left = time_left(deadline)
    if not got_relations and len(entities) >= 2 and (left is None or left > 0):
        relations = _ask_relations(llm, user_msg, user_id, entities, config)
    return entities, relations


def _ask_relations(llm, user_msg: str, user_id: str, entities: list[dict], config: dict) -> list[dict]:
    """Second (and last) call: the model gave entities only; ask for the relations among them."""
    listing = ", ".join(f"{e['name']} ({e['entity_type']})" for e in entities)
    messages = [SystemMessage(EXTRACT_RELATIONS_PROMPT.format(user_id=user_id)),
                HumanMessage(f"{user_msg}\n{ENTITIES_HEADER} {listing}")]
    try:
        try:
            bound = bind_graph_tools(llm, [EstablishRelationships], tool_choice=ESTABLISH_RELATIONSHIPS)
        except Exception:  # tool_choice unsupported by this provider: bind without it
            bound = bind_graph_tools(llm, [EstablishRelationships])
        answer = bound.invoke(messages, config=config)
    except Exception as exc:
        log.warning("graph extraction: relation call failed, keeping entities only: %s", exc)
        return []
    relations = []
    for call in collect_tool_calls(answer):
        relations += parse_relation_items(call["args"])
    if not relations:
        parsed = _parse_json_answer(message_json(answer))
        relations = parsed[1] if parsed else []
    return relations


def _ask_json(llm, user_msg: str, user_id: str, config: dict, *, attempts: int, trace_id: str | None,
              deadline: float | None = None, raw_cap: int = 4000) -> tuple[list, list]:
    messages = [SystemMessage(EXTRACT_GRAPH_JSON_PROMPT.format(user_id=user_id)), HumanMessage(user_msg)]
    try:
        return call_with_retry(llm, messages, _read_json_answer, retry_prompt=RETRY_GRAPH_JSON_PROMPT,
                               attempts=attempts, config=config, deadline=deadline, raw_cap=raw_cap).value
    except TimeBudgetSpent:
        raise
    except RetriesExhausted as exc:
        if exc.call_failed:
            raise ModelOutputError(f"Graph extraction {exc.problem}", trace_id=trace_id) from exc
        raise ModelOutputError(f"Graph extraction: unparseable model output after {attempts} attempt(s): "
                               f"{exc.problem}", trace_id=trace_id) from exc


def _read_json_answer(answer) -> tuple[list, list]:
    """(entities, relations) of a JSON-mode answer; ValueError naming the problem when it has neither."""
    parsed = _parse_json_answer(message_json(answer))
    if parsed is not None:
        return parsed
    calls = collect_tool_calls(answer)  # a JSON-mode model may still have emitted tool calls: read them
    if calls:
        ents = [e for c in calls if c["name"] == EXTRACT_ENTITIES for e in parse_entity_items(c["args"])]
        rels = [r for c in calls if c["name"] != EXTRACT_ENTITIES for r in parse_relation_items(c["args"])]
        return ents, rels
    raise ValueError(f"the answer is not a JSON object with 'entities' and 'relations': {message_text(answer)[:300]!r}")


def _looks_like_entities(args) -> bool:
    return isinstance(args, dict) and isinstance(args.get("entities"), list) and all(
        isinstance(i, dict) and "entity" in i and "destination" not in i for i in args["entities"]
    )


def _parse_json_answer(data) -> tuple[list, list] | None:
    """(entities, relations) from a JSON-mode answer, or None when it has neither key."""
    if isinstance(data, list):  # a bare list of relations
        rels = parse_relation_items(data)
        return ([], rels) if rels or not data else None
    if not isinstance(data, dict) or not any(k in data for k in ("entities", "relations", "relationships")):
        return None
    entities = parse_entity_items(data.get("entities") or []) if _entities_only(data.get("entities")) else []
    relations = parse_relation_items(data.get("relations", data.get("relationships")) or [])
    return entities, relations


def _entities_only(items) -> bool:
    return isinstance(items, list) and not any(isinstance(i, dict) and "destination" in i for i in items)


# --- post-processing ------------------------------------------------------------------------------------------


def _finish(raw_entities: list[dict], raw_relations: list[dict], memories: list[dict],
            user_id: str) -> tuple[list[dict], list[dict]]:
    types: dict[str, str] = {}
    for e in raw_entities:
        name = resolve_self(e["name"], user_id)
        key = normalize_name(name)
        if key and (key not in types or types[key] == "entity"):
            types[key] = "person" if name == user_id else e["entity_type"]
    relations, seen = [], set()
    for r in raw_relations:
        source, destination = resolve_self(r["source"], user_id), resolve_self(r["destination"], user_id)
        s_key, d_key = normalize_name(source), normalize_name(destination)
        key = (s_key, r["relation"], d_key)
        if not s_key or not d_key or s_key == d_key or key in seen:
            continue
        seen.add(key)
        memory = _attribute(r, source, destination, memories)
        relations.append({"source": source, "relation": r["relation"], "destination": destination,
                          "memory_id": memory["id"]})
    entities, named = [], set()
    for r in relations:  # an entity is kept when a relation uses it: anything else would be an orphan
        for name in (r["source"], r["destination"]):
            key = normalize_name(name)
            if key not in named:
                named.add(key)
                etype = "person" if name == user_id else types.get(key, "entity")
                entities.append({"name": name, "entity_type": etype})
    return entities, relations


def _attribute(relation: dict, source: str, destination: str, memories: list[dict]) -> dict:
    """The memory a relation came from: the model's number when valid, else the memory whose text names
    the destination (then the source), else the first one."""
    index = relation.get("memory")
    if isinstance(index, int) and 0 <= index < len(memories):
        return memories[index]
    if len(memories) == 1:
        return memories[0]
    best, best_score = memories[0], 0
    dest_key, src_key = normalize_name(destination), normalize_name(source)
    for m in memories:
        text = normalize_name(m["memory"])
        score = (2 if dest_key and dest_key in text else 0) + (1 if src_key and src_key in text else 0)
        if score > best_score:
            best, best_score = m, score
    return best
