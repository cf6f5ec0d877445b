"""Entities and relations of memory texts, read by the graph model: ONE call with both tools bound
(extract_entities + establish_relationships), a second only when the model answered entities but no
relations; JSON mode as the fallback or by setting (`settings.graph_extraction_mode`: tools / json / auto).
Every relation carries the id of the memory it came from (the model numbers them; a text match attributes
relations left unnumbered). Used by the add graph's extract_relations step and by Memory.update."""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from memoryx.core.text import normalize_name
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
    ToolsUnavailable,
    check_deadline,
    collect_tool_calls,
    message_json,
    message_text,
    time_left,
    tools_or_json,
)
from memoryx.models.step_calls import ask_or_fail
from memoryx.prompts.graph import (
    ENTITIES_HEADER,
    EXTRACT_GRAPH_JSON_PROMPT,
    EXTRACT_GRAPH_PROMPT,
    EXTRACT_RELATIONS_PROMPT,
    MEMORIES_HEADER,
    RETRY_GRAPH_JSON_PROMPT,
    USER_ID_HEADER,
)

log = logging.getLogger(__name__)


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
    return ask_or_fail(llm, messages, _read_json_answer, what="Graph extraction", retry_prompt=RETRY_GRAPH_JSON_PROMPT,
                       attempts=attempts, trace_id=trace_id, config=config, deadline=deadline, raw_cap=raw_cap)


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
