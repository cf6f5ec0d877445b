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
from typing import TYPE_CHECKING

from memoryx.core.runs import elapsed_ms, llm_config, scope_of
from memoryx.core.scope import same_scope
from memoryx.errors import ModelOutputError, NotFoundError
from memoryx.knowledge.graph_extraction import extract_graph
from memoryx.models.factory import model_name_of
from memoryx.models.llm_io import (
    TimeBudgetSpent,
    cap_text,
    run_deadline,
)
from memoryx.runtime.context import Context, context_of, services_of
from memoryx.state import AddState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

log = logging.getLogger(__name__)

CHANGED_EVENTS = ("ADD", "UPDATE")


# --- helpers shared by the three graph nodes ----------------------------------------------------------------


def graph_active(runtime: Runtime[Context] | None) -> bool:
    """The graph steps run only with a graph store and the run's graph switch on."""
    return services_of(runtime).graph is not None and context_of(runtime).graph_enabled


def self_name(state: AddState) -> str:
    """The entity that self-references ("I", "我", "私") resolve to: the user's id."""
    return state.get("user_id") or "user"


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
