"""judge: ADD / UPDATE / DELETE / NONE for every new fact, with the reason written before the decision.

- No similar memory at all: every fact is an ADD, decided by rule, without a model call (mem0 asks the model
  anyway; the answer can only be ADD).
- Parsing is robust: <think> blocks and code fences stripped, prose around the JSON tolerated, the
  decisions validated with a pydantic schema; a degenerate answer (cut off at the output cap, empty, `{}`,
  repetition) is unreadable too; on failure ONE retry shows the model its error; a second failure raises
  ModelOutputError carrying the trace id, with the judgment saved as failed (facts and capped raw answers).
- The add run's time budget spent (settings.add_time_budget_s): no (further) model call; every fact is
  ADDed by rule, and the record says why. Unusable answers of extraction and judgment are listed in the
  record's notes either way.
- The model only ever sees small integer ids. An id it invents never crashes the run and never touches
  another memory: an UPDATE with an unknown id becomes an ADD of its text, a DELETE or NONE with an unknown id
  is dropped; a memory may be targeted once; an agent fact may not touch a user memory (and vice versa).
  Every correction is recorded in the operation's reason ("[memoryx] ...").
- A contradiction never loses the new fact: a fact left with no ADD/UPDATE/NONE (e.g. only a DELETE, or
  forgotten by the model) is ADDed.
- The judgment record is written: facts, candidates, raw answer, parsed operations with
  reasons, model, latency, status.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memoryx.core.runs import elapsed_ms, keeps_agent_facts, scope_of
from memoryx.core.text import fact_key
from memoryx.ingest.add_options import effective_instructions, guard_immutable, immutable_ids
from memoryx.ingest.instructions import exclusion_notes
from memoryx.knowledge.importance import guard_confidence
from memoryx.models.factory import model_name_of
from memoryx.models.llm_io import (
    RetriesExhausted,
    TimeBudgetSpent,
    extract_json,
    message_text,
    unusable_notes,
)
from memoryx.models.step_calls import ask_in_run
from memoryx.nodes.extract_facts import fail_run
from memoryx.nodes.retrieve_similar import all_facts
from memoryx.prompts.facts import format_conversation
from memoryx.prompts.judge import RETRY_PROMPT, format_judge_input, judge_system_prompt
from memoryx.runtime.context import Context, context_of, services_of
from memoryx.state import AddState, Operation

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

EVENTS = ("ADD", "UPDATE", "DELETE", "NONE")
_EVENT_ALIASES = {"IGNORE": "NONE", "NOOP": "NONE", "NO_CHANGE": "NONE", "NOCHANGE": "NONE", "SKIP": "NONE",
                  "KEEP": "NONE", "INSERT": "ADD", "CREATE": "ADD", "NEW": "ADD", "REMOVE": "DELETE", "MODIFY": "UPDATE"}
NOTE = "[memoryx]"


class Decision(BaseModel):
    """One decision of the judge (schema-validated)."""

    model_config = ConfigDict(extra="ignore")
    fact: int | None = None
    reason: str = ""
    event: Literal["ADD", "UPDATE", "DELETE", "NONE"]
    id: str | None = None
    text: str | None = None
    old_memory: str | None = None

    @field_validator("event", mode="before")
    @classmethod
    def _event(cls, value: Any) -> Any:
        if isinstance(value, str):
            v = value.strip().upper().replace(" ", "_")
            return _EVENT_ALIASES.get(v, v)
        return value

    @field_validator("id", mode="before")
    @classmethod
    def _id(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and value.strip().lower() in ("", "null", "none", "new")):
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                return str(int(value))
            except (ValueError, OverflowError):  # NaN, Infinity: no memory has that id
                return str(value)
        return str(value).strip()

    @field_validator("fact", mode="before")
    @classmethod
    def _fact(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip()
            return int(value) if value.isdigit() else None
        return value


class Decisions(BaseModel):
    operations: list[Decision] = Field(default_factory=list)


def parse_decisions(raw: str) -> list[Decision]:
    """Decisions of a judge answer; ValueError with a readable message when it does not fit the schema."""
    data = extract_json(raw)
    if isinstance(data, dict):
        items = next((data[k] for k in ("operations", "memory", "decisions", "memories", "results") if k in data), None)
        if items is None:
            raise ValueError('the JSON object has no "operations" list')
    else:
        items = data
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and "event" not in item:
            for alt in ("type", "operation", "action", "op"):
                if alt in item:
                    item["event"] = item[alt]
                    break
            if "text" not in item and "memory" in item:
                item["text"] = item["memory"]
    try:
        return Decisions(operations=items).operations
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        raise ValueError(f"the decisions do not match the schema ({problems})") from exc


def resolve_decisions(decisions: list[Decision], facts: list[dict], candidates: list[dict]) -> tuple[list[Operation], list[str]]:
    """Turn the model's decisions into operations on REAL ids, with every safety rule applied.

    Returns (operations, notes). Never raises on content: unknown ids and conflicts are corrected and noted.
    """
    by_ref = {c["ref"]: c for c in candidates}
    by_real = {c["id"]: c for c in candidates}
    ops: list[Operation] = []
    notes: list[str] = []
    targeted: set[str] = set()
    n = len(facts)

    def note(msg: str) -> str:
        notes.append(msg)
        return f" {NOTE} {msg}"

    for d in decisions:
        fact_index = d.fact if d.fact is not None and 0 <= d.fact < n else None
        if fact_index is None and d.event in ("ADD", "UPDATE") and d.text:
            key = fact_key(d.text)
            fact_index = next((i for i, f in enumerate(facts) if fact_key(f["text"]) == key), None)
        fact = facts[fact_index] if fact_index is not None else None
        owner = (fact or {}).get("owner", "user")
        reason = (d.reason or "").strip()
        text = (d.text or "").strip() or None

        if d.event == "ADD":
            text = text or (fact["text"] if fact else None)
            if not text:
                note(f"dropped an ADD without text (fact {d.fact})")
                continue
            ops.append(Operation(event="ADD", text=text, reason=reason, id=None, old_memory=None, fact_index=fact_index))
            continue

        cand = by_ref.get(d.id) if d.id is not None else None
        if cand is None and d.id in by_real:  # a model that echoed a real id
            cand = by_real[d.id]
        problem = None
        if cand is None:
            problem = f"unknown id {d.id!r}"
        elif fact is not None and cand.get("owner", "user") != owner:
            problem = f"id {d.id!r} belongs to the {cand.get('owner', 'user')}'s memories, not the {owner}'s"
        elif cand["id"] in targeted:
            problem = f"memory {d.id!r} was already targeted by an earlier decision"
        if problem:
            if d.event == "UPDATE" and (text or fact):
                new_text = text or fact["text"]
                ops.append(Operation(event="ADD", text=new_text, reason=reason + note(f"UPDATE of {problem}: added as a new memory instead"),
                                     id=None, old_memory=None, fact_index=fact_index))
            else:
                note(f"{d.event} of {problem}: dropped (no memory touched)")
            continue

        targeted.add(cand["id"])
        if d.event == "UPDATE":
            new_text = text or (fact["text"] if fact else None)
            if not new_text:
                note(f"UPDATE of {d.id!r} without text: dropped")
                targeted.discard(cand["id"])
                continue
            ops.append(Operation(event="UPDATE", text=new_text, reason=reason, id=cand["id"], old_memory=cand["memory"],
                                 fact_index=fact_index))
        elif d.event == "DELETE":
            ops.append(Operation(event="DELETE", text=cand["memory"], reason=reason, id=cand["id"], old_memory=cand["memory"],
                                 fact_index=fact_index))
        else:
            ops.append(Operation(event="NONE", text=cand["memory"], reason=reason, id=cand["id"], old_memory=None,
                                 fact_index=fact_index))

    # a contradiction never loses the new fact; neither does a model that forgot a fact
    kept = {op["fact_index"] for op in ops if op["event"] in ("ADD", "UPDATE", "NONE") and op.get("fact_index") is not None}
    kept_texts = {fact_key(op["text"]) for op in ops if op["event"] in ("ADD", "UPDATE")}
    for i, fact in enumerate(facts):
        if i in kept or fact_key(fact["text"]) in kept_texts:
            continue
        deleted = any(op["event"] == "DELETE" and op.get("fact_index") == i for op in ops)
        why = "it contradicted a memory that was deleted, and the new fact must not be lost" if deleted \
            else "the model gave no decision that keeps this fact"
        ops.append(Operation(event="ADD", text=fact["text"], reason=f"{NOTE} added: {why}.", id=None, old_memory=None,
                             fact_index=i))
        notes.append(f"fact {i} added: {why}")
    return ops, notes


def judge(state: AddState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    ctx = context_of(runtime)
    facts = all_facts(state)
    candidates = state.get("candidates") or []
    trace_id = state["trace_id"]
    calls = 0

    if not candidates:
        ops = [Operation(event="ADD", text=f["text"], reason="No similar memory exists in this scope: new information.",
                         id=None, old_memory=None, fact_index=i) for i, f in enumerate(facts)]
        raw, model_name, latency, notes = "", "rule:no-similar-memories", 0.0, []
    else:
        show_owner = keeps_agent_facts(state)
        memories = [{"id": c["ref"], "text": c["memory"], **({"owner": c["owner"]} if show_owner else {})} for c in candidates]
        fact_items = [{"fact": i, "text": f["text"], **({"owner": f.get("owner", "user")} if show_owner else {})}
                      for i, f in enumerate(facts)]
        custom = effective_instructions(services.settings, state.get("instructions")).get("update_prompt")
        prompt = [SystemMessage(content=judge_system_prompt(custom)), HumanMessage(content=format_judge_input(memories, fact_items))]
        llm = services.judgment_llm
        model_name = model_name_of(llm)
        settings = services.settings
        try:
            reply = ask_in_run(llm, prompt, lambda answer: parse_decisions(message_text(answer)), state=state,
                               step="judge", settings=settings, retry_prompt=RETRY_PROMPT, retry_call_errors=True)
        except TimeBudgetSpent as exc:  # what was extracted is kept: every fact is ADDed by rule
            raw, latency, calls = exc.raw, exc.latency_ms, exc.calls
            ops, notes = added_by_rule(facts, f"no judgment: {exc.problem}")
        except RetriesExhausted as exc:
            raise fail_run(services, state, "judge", exc.problem, exc.raw, model_name, exc.latency_ms) from exc
        else:
            raw, latency, calls = reply.raw, reply.latency_ms, reply.calls
            ops, notes = resolve_decisions(reply.value, facts, candidates)
        notes = [f"judgment answer {n}" for n in unusable_notes(raw)] + notes
    notes = [f"extraction answer {n}" for n in unusable_notes(state.get("extraction_response"))] + notes
    notes += exclusion_notes(state.get("excluded_facts") or [])  # the project's excludes (extract_facts)
    decided = state.get("extraction_decision")
    if decided:  # why the conversation was worth remembering at all
        notes.insert(0, f"extraction decision: {decided['decision']} ({decided['by']}): {decided['reason']}")
    if candidates:  # mem0's immutable option, enforced in code whatever the model answered
        # retrieve_similar read the flag with the rows; a run checkpointed before it did reads it here
        frozen = ({c["id"] for c in candidates if c["immutable"]} if all("immutable" in c for c in candidates)
                  else immutable_ids(services.sql, candidates))
        ops, frozen_notes = guard_immutable(ops, frozen)
        notes += frozen_notes
        # newer wins, unless it is much less confident than what it would replace
        ops, unsure_notes = guard_confidence(ops, facts, candidates)
        notes += unsure_notes

    record = judgment_record(state, facts, candidates, ops, notes, raw=raw, model_name=model_name, latency_ms=latency)
    if ctx.review:  # the run pauses for a human: the record must be visible now
        services.sql.save_judgment(trace_id, scope=scope_of(state), **record, status="awaiting_review")
    # otherwise execute_ops writes the whole record once, with the executed operations (one write, not two)
    return {"operations": ops, "llm_response": raw,
            "judgment": {"model_name": model_name, "latency_ms": latency, "notes": notes, "record": record},
            "timings": {"judge": elapsed_ms(start)}, "model_calls": {"judge": calls}}


def added_by_rule(facts: list[dict], why: str) -> tuple[list[Operation], list[str]]:
    """Every fact ADDed without a judgment (the model could not be asked): the facts are never lost."""
    ops = [Operation(event="ADD", text=f["text"], reason=f"{NOTE} added by rule ({why}).", id=None, old_memory=None,
                     fact_index=i) for i, f in enumerate(facts)]
    return ops, [f"every fact added by rule: {why}"]


def judgment_record(state: dict, facts: list[dict], candidates: list[dict], ops: list, notes: list[str], *,
                    raw: str, model_name: str, latency_ms: float) -> dict:
    """The fields of the judgment record known after the judgment."""
    return dict(
        operation_type="MEMORY_UPDATE",
        input_content=format_conversation(state.get("normalized_messages") or []),
        extracted_facts=facts,
        existing_memories=[{k: c[k] for k in ("ref", "id", "memory", "owner", "score") if k in c} for c in candidates],
        llm_response=raw, parsed_operations=[dict(op) for op in ops],
        reasoning="\n".join([f"[{op['event']}] {op['reason']}" for op in ops] + [f"{NOTE} {n}" for n in notes]),
        model_name=model_name, latency_ms=latency_ms, error_message=None, execution_success=None)
