"""Step 7 of the add graph: reconcile the knowledge graph with this run (SQL first, then projections).

Order of work: every read and the one model call happen first, then the writes, so a failing model call
leaves nothing half-written and a replay after a crash converges (invalidating twice is a no-op, adding a
valid relation twice returns the first).

1. DELETE cascade: the valid relations of every memory DELETEd in this run are invalidated.
2. UPDATE delta: the valid relations of every memory UPDATEd in this run that the new text
   no longer yields are invalidated (relations it still yields stay as they are).
3. Conflicts: the valid relations around the linked entities (and the user's own entity), minus those
   already handled and those identical to new ones, go to the graph model with the new memories and the
   new relations; the delete_graph_memory tool (or a JSON answer) names the outdated ones: invalidated.
   No existing relation to show: no model call. The add run's time budget spent: no call, nothing
   invalidated by a conflict, noted in the judgment record (so is a failure, before its error is raised).
4. New relations are added with their memory id and the run's trace id.
5. Entities of the cascaded relations left without a valid relation are removed: SQL rows (with the
   invalidated relations that reference them), graph nodes and entity vectors.

Relations are soft-invalidated (valid=false, invalidated_at, invalidated_by=trace id). A relation outdated
by a conflict stays as history in SQL and in the graph (searchable with include_invalid), its entities too;
a memory's cascade (UPDATE/DELETE) removes what became orphaned. The result is `graph_changes`, in the shape this project returns as mem0's "relations":
{"added_entities": [{"source", "relationship", "destination"}], "deleted_entities": [same]} — one flat
list of dicts each (mem0 itself nests the added ones in per-call lists and names the end "target").
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from langchain_core.messages import HumanMessage, SystemMessage

from memoryx.core.runs import elapsed_ms, llm_config, scope_of
from memoryx.core.text import normalize_name
from memoryx.errors import ModelOutputError
from memoryx.knowledge.memory_graph import (
    change_of,
    delete_orphans,
    deleted_memory_cascade,
    empty_changes,
    relations_with_ids,
    updated_memory_delta,
)
from memoryx.knowledge.memory_graph import (
    relation_key as _key,
)
from memoryx.models.factory import model_name_of
from memoryx.models.graph_tools import (
    DELETE_GRAPH_MEMORY,
    DELETE_TOOLS,
    bind_graph_tools,
    normalize_relation,
    parse_relation_items,
    resolve_self,
)
from memoryx.models.llm_io import (
    TimeBudgetSpent,
    ToolsUnavailable,
    check_deadline,
    collect_tool_calls,
    message_json,
    run_deadline,
    tools_or_json,
)
from memoryx.models.step_calls import ask_or_fail
from memoryx.nodes.graph_relations import changed_memories, graph_active, note_in_judgment, self_name, step_failure_note
from memoryx.prompts.graph import (
    DELETE_RELATIONS_JSON_PROMPT,
    DELETE_RELATIONS_PROMPT,
    EXISTING_HEADER,
    NEW_INFO_HEADER,
    NEW_RELATIONS_HEADER,
    RETRY_DELETE_JSON_PROMPT,
    USER_ID_HEADER,
)
from memoryx.runtime.context import Context, services_of
from memoryx.state import AddState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

log = logging.getLogger(__name__)

MAX_CANDIDATES = 50  # existing relations shown to the model at most


def resolve_graph_conflicts(state: AddState, runtime: Runtime[Context]) -> dict:
    started = time.perf_counter()
    if not graph_active(runtime):
        return {"graph_changes": empty_changes()}
    services = services_of(runtime)
    sql, scope, trace_id = services.sql, scope_of(state), state.get("trace_id")
    executed = state.get("executed") or []
    linked: dict = state.get("linked_entities") or {}

    # new relations with entity ids (relations whose ends could not be linked are dropped)
    new = relations_with_ids(linked, state.get("relations") or [])
    new_keys = {_key(n) for n in new}

    # --- reads: one read transaction, the relations in one statement ---
    cascades = [(op["event"], op["id"]) for op in executed if op.get("event") in ("DELETE", "UPDATE") and op.get("id")]
    with sql.transaction(write=False):
        # 3 (read): the valid relations around the linked entities and the user's own entity in this scope
        of_memories, existing = sql.relations_of_run(
            scope, memory_ids=[memory_id for _, memory_id in cascades],
            entity_ids=[row["id"] for row in linked.values()], entity_names=[self_name(state)])
        # 1 + 2: memory cascades; their entities are checked for orphans at the end
        by_memory: dict[str, list[dict]] = {}
        for row in of_memories:
            by_memory.setdefault(row["memory_id"], []).append(row)
        to_invalidate: dict[str, dict] = {}
        cascaded_entities: set[str] = set()
        for event, memory_id in cascades:
            if event == "DELETE":
                rows, ends = deleted_memory_cascade(by_memory.get(memory_id, []))
            else:
                rows, ends = updated_memory_delta(by_memory.get(memory_id, []), new_keys)
            to_invalidate.update((row["id"], row) for row in rows)
            cascaded_entities |= ends
        candidates = [r for r in existing if r["id"] not in to_invalidate and _key(r) not in new_keys]
        memories = changed_memories(state, sql) if candidates else []  # only the model call needs them
    existing_keys = {_key(r) for r in existing}
    if candidates and memories:
        candidates = _rank(candidates, new)[:MAX_CANDIDATES]
        try:
            for row in _ask_conflicts(services, state, candidates, new, memories):
                to_invalidate[row["id"]] = row
        except TimeBudgetSpent as exc:  # the new relations still go in; no existing one is judged outdated
            note_in_judgment(services, state, f"graph conflict detection skipped: {exc.problem}")
        except ModelOutputError as exc:
            note_in_judgment(services, state, step_failure_note("graph conflict detection", exc,
                                                                services.settings.llm_raw_answer_cap))
            raise

    # --- writes, under the scope lock: concurrent runs of this user must not delete as an orphan an entity
    # this run links to, nor add what another run just removed. One SQL transaction, then the
    # projection of what it committed. ---
    with sql.scope_lock(scope):
        with sql.transaction():
            new, ends, recreated = _ensure_entities(services, scope, linked, new)
            # a relation to invalidate that a concurrent run removed meanwhile (with its orphan entities) is skipped
            invalidated, added_rows = sql.change_relations(scope=scope, invalidate=list(to_invalidate), add=new,
                                                           trace_id=trace_id, ends=ends)
            # orphans: entities of cascaded relations and entities linked in this run but
            # left unused (an end of a relation just added is used: not checked). Ends of
            # conflict-invalidated relations stay, so "lived in Berlin" remains as history.
            used = {e for r in added_rows if r["valid"] for e in (r["source_id"], r["target_id"])}
            orphans = delete_orphans(sql, (cascaded_entities | {row["id"] for row in linked.values()}) - used)
        services.projector.project_recorded(
            sql.recorded_intents(), entities={**recreated, **{o: None for o in orphans}},
            relations=invalidated + added_rows)

    changes = {
        "added_entities": [change_of(r) for r in added_rows if _key(r) not in existing_keys],
        "deleted_entities": [change_of(r) for r in invalidated],
    }
    return {"graph_changes": changes, "timings": {"resolve_graph_conflicts": elapsed_ms(started)}}


def _ensure_entities(services, scope, linked: dict,
                     new: list[dict]) -> tuple[list[dict], dict[str, dict], dict[str, dict]]:
    """Re-create linked entities that a concurrent run removed as orphans since link_entities (same id, or
    the id of an entity of that name created meanwhile). SQL only, in the caller's transaction; returns
    (`new` with the ids in force, {id: row} of every end of `new` as read or written here,
    {id: row} of the entities written, for the caller to project)."""
    wanted = {row["id"]: row for row in linked.values()}
    used = {e for n in new for e in (n["source_id"], n["target_id"])}
    present = {r["id"]: r for r in services.sql.get_entities(list(used))} if used else {}
    remap: dict[str, str] = {}
    written: dict[str, dict] = {}
    for entity_id in used - present.keys():
        row = wanted[entity_id]
        again = services.sql.upsert_entity(scope=scope, name=row["name"], entity_type=row.get("entity_type") or "entity",
                                           entity_id=entity_id)
        remap[entity_id] = again["id"]
        written[again["id"]] = again
    ends = {**present, **written}
    if not remap:
        return new, ends, written
    return [{**n, "source_id": remap.get(n["source_id"], n["source_id"]), "target_id": remap.get(n["target_id"], n["target_id"])}
            for n in new], ends, written


def _rank(candidates: list[dict], new: list[dict]) -> list[dict]:
    """Most likely conflicts first: same source and relation name as a new relation, then relations that
    touch a new relation's entities, then the rest; newest first within each group."""
    same = {(n["source_id"], n["relation"]) for n in new}
    ends = {e for n in new for e in (n["source_id"], n["target_id"])}

    def group(row: dict) -> int:
        if (row["source_id"], row["relation"]) in same:
            return 0
        return 1 if {row["source_id"], row["target_id"]} & ends else 2

    newest_first = sorted(candidates, key=lambda r: r.get("created_at") or "", reverse=True)
    return sorted(newest_first, key=group)  # stable: keeps newest first inside a group


def _ask_conflicts(services, state: AddState, candidates: list[dict], new: list[dict],
                   memories: list[dict]) -> list[dict]:
    """The candidate rows the graph model names as outdated (one call; JSON fallback in auto mode)."""
    user_id = self_name(state)
    existing_txt = "\n".join(f"[r{i}] {r['source']} -- {r['relation']} -- {r['target']}" for i, r in enumerate(candidates))
    new_txt = "\n".join(f"{n['source']} -- {n['relation']} -- {n['target']}" for n in new) or "(none)"
    info_txt = "\n".join(f"- {m['memory'].strip()}" for m in memories)
    user_msg = (f"{USER_ID_HEADER} {user_id}\n{EXISTING_HEADER}\n{existing_txt}\n"
                f"{NEW_INFO_HEADER}\n{info_txt}\n{NEW_RELATIONS_HEADER}\n{new_txt}")
    mode, trace_id, llm = services.settings.graph_extraction_mode, state.get("trace_id"), services.graph_llm
    config = llm_config(state, "resolve_graph_conflicts", model_name_of(llm))
    deadline, raw_cap = run_deadline(services.settings.add_time_budget_s), services.settings.llm_raw_answer_cap
    # JSON mode proper gets one retry; a fallback after a failed tool call gets one attempt (call budget)
    named = tools_or_json(
        mode, lambda: _delete_by_tools(llm, user_id, user_msg, config, deadline),
        lambda attempts: _delete_by_json(llm, user_id, user_msg, config, trace_id, attempts=attempts,
                                         deadline=deadline, raw_cap=raw_cap),
        step="Graph conflict detection", trace_id=trace_id,
    )
    return _match(named, candidates, user_id)


def _delete_by_tools(llm, user_id: str, user_msg: str, config: dict, deadline: float | None) -> list[dict]:
    check_deadline(deadline, "graph conflict detection")
    try:
        bound = bind_graph_tools(llm, DELETE_TOOLS)
        messages = [SystemMessage(DELETE_RELATIONS_PROMPT.format(user_id=user_id)), HumanMessage(user_msg)]
        answer = bound.invoke(messages, config=config)
    except Exception as exc:
        raise ToolsUnavailable(f"{type(exc).__name__}: {exc}") from exc
    calls = collect_tool_calls(answer)
    named = [r for c in calls if c["name"] in (DELETE_GRAPH_MEMORY, "") for r in parse_relation_items(c["args"])]
    if not calls:  # no call: nothing outdated, unless the text carries the JSON form
        data = message_json(answer)
        named = parse_relation_items(data.get("delete", [])) if isinstance(data, dict) else []
    return named


def _delete_by_json(llm, user_id: str, user_msg: str, config: dict, trace_id: str | None, *, attempts: int,
                    deadline: float | None = None, raw_cap: int = 4000) -> list[dict]:
    messages = [SystemMessage(DELETE_RELATIONS_JSON_PROMPT.format(user_id=user_id)), HumanMessage(user_msg)]
    return ask_or_fail(llm, messages, _read_deletions, what="Graph conflict detection",
                       retry_prompt=RETRY_DELETE_JSON_PROMPT, attempts=attempts, trace_id=trace_id, show_answer=True,
                       config=config, deadline=deadline, raw_cap=raw_cap)


def _read_deletions(answer) -> list[dict]:
    """The triples a JSON-mode answer names as outdated; ValueError when it names none in a usable form."""
    data = message_json(answer)
    if isinstance(data, dict) and isinstance(data.get("delete", data.get("relations")), list):
        return parse_relation_items(data.get("delete", data.get("relations")))
    if isinstance(data, list):
        return parse_relation_items(data)
    calls = collect_tool_calls(answer)
    if calls:
        return [r for c in calls for r in parse_relation_items(c["args"])]
    raise ValueError('it is not a JSON object {"delete": [...]}')


def _match(named: list[dict], candidates: list[dict], user_id: str) -> list[dict]:
    """Candidate rows matching the named triples (normalised names; relation names as normalised by the
    parser). Anything else the model names, including the new relations, is ignored."""
    index: dict[tuple[str, str, str], list[dict]] = {}
    for row in candidates:
        key = (normalize_name(row["source"] or ""), normalize_relation(row["relation"]), normalize_name(row["target"] or ""))
        index.setdefault(key, []).append(row)
    out = []
    for item in named:
        key = (normalize_name(resolve_self(item["source"], user_id)), item["relation"],
               normalize_name(resolve_self(item["destination"], user_id)))
        out += index.get(key, [])
    return out

