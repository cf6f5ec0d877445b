"""review: optional human approval of the proposed operations (Context.review / MEMORYX_REVIEW).

The graph interrupts here (langgraph `interrupt()`, visible in LangGraph Studio) with
`{"trace_id", "operations": [...], "facts": [...], "instructions"}` and resumes with
`Command(resume=...)` where the value is one of:

- True or {"approved": True}: execute the proposed operations as they are (langgraph cannot resume with
  a bare None: `Command(resume=None)` is not a resume);
- False, [] or {"approved": False}: execute nothing;
- a list of operations, or {"operations": [...]}: the approved/edited list. Each item needs "event"
  (ADD/UPDATE/DELETE/NONE); ADD/UPDATE need "text"; UPDATE/DELETE need the real "id" of a live memory of
  this run's scope and tenancy. A client's "owner" is ignored: an ADD is the user's unless its "fact_index"
  names one of the run's agent facts, and UPDATE/DELETE change a memory in place (never move it). An invalid list executes nothing: the graph interrupts again with the same payload plus
  "error" (what was wrong); resume again with a fixed list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langgraph.types import interrupt

from memoryx.core.runs import same_tenant, scope_for_owner
from memoryx.errors import InvalidInputError, NotFoundError
from memoryx.nodes.retrieve_similar import all_facts
from memoryx.runtime.context import Context, services_of
from memoryx.state import AddState, Operation

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

INSTRUCTIONS = ("Resume with Command(resume=True) to approve, Command(resume=[]) to reject all, or "
                "Command(resume=[...edited operations...]) with events ADD/UPDATE/DELETE/NONE, text and real ids.")


def _run_memory(services, state: dict, memory_id: str) -> dict | None:
    """A live memory the run may change: in the scope of one of its owners and in the same tenancy (the
    same user; None for the agent-global scope). None otherwise (missing or another scope's)."""
    for owner in ("user", "agent"):
        scope = scope_for_owner(state, owner)
        try:
            row = services.sql.get_memory(memory_id, scope=scope)
        except NotFoundError:
            continue
        if same_tenant(row, scope):
            return row
    return None


def _approved_ops(value: Any, proposed: list[dict], state: dict, services) -> tuple[list[Operation], list[str]]:
    if value is None or value is True:
        return list(proposed), ["approved as proposed"]
    if value is False:
        return [], ["rejected all operations"]
    if isinstance(value, dict):
        if "operations" in value:
            value = value["operations"]
        elif value.get("approved") is True:
            return list(proposed), ["approved as proposed"]
        elif value.get("approved") is False:
            return [], ["rejected all operations"]
        else:
            raise InvalidInputError("Review resume value must be a list of operations, {'operations': [...]}, "
                                    "{'approved': bool}, True/False or None.", trace_id=state.get("trace_id"))
    if not isinstance(value, list):
        raise InvalidInputError(f"Review resume value must be a list of operations, got {type(value).__name__}.",
                                trace_id=state.get("trace_id"))
    facts = all_facts(state)
    ops: list[Operation] = []
    for i, item in enumerate(value):
        where = f"operations[{i}]"
        if not isinstance(item, dict):
            raise InvalidInputError(f"{where} must be a dict", trace_id=state.get("trace_id"))
        event = str(item.get("event", "")).upper()
        if event not in ("ADD", "UPDATE", "DELETE", "NONE"):
            raise InvalidInputError(f"{where}: event must be ADD, UPDATE, DELETE or NONE, got {item.get('event')!r}",
                                    trace_id=state.get("trace_id"))
        text = item.get("text") if isinstance(item.get("text"), str) else None
        fact_index = item.get("fact_index") if isinstance(item.get("fact_index"), int) and 0 <= item["fact_index"] < len(facts) else None
        # No "owner" is read from the item: execute_ops takes the owner (hence the scope) from the run's own
        # fact at fact_index, so an edit cannot write into, or move a memory to, another scope.
        if event in ("ADD", "UPDATE") and not (text and text.strip()):
            raise InvalidInputError(f"{where}: {event} needs a non-empty 'text'", trace_id=state.get("trace_id"))
        old = None
        memory_id = item.get("id")
        if event in ("UPDATE", "DELETE") or (event == "NONE" and memory_id):
            if not isinstance(memory_id, str):
                raise InvalidInputError(f"{where}: {event} needs the real 'id' of an existing memory",
                                        trace_id=state.get("trace_id"))
            row = _run_memory(services, state, memory_id)
            if row is None:
                raise InvalidInputError(f"{where}: memory {memory_id!r} does not exist in this scope",
                                        trace_id=state.get("trace_id"))
            old = row["memory"]
        ops.append(Operation(event=event, text=(text or old or "").strip(), id=memory_id if event != "ADD" else None,
                             old_memory=old if event in ("UPDATE", "DELETE") else None,
                             reason=str(item.get("reason") or "") + " [review] approved by a human", fact_index=fact_index))
    return ops, [f"human review: {len(ops)} operation(s) approved or edited (of {len(proposed)} proposed)"]


def review(state: AddState, runtime: Runtime[Context]) -> dict:
    services = services_of(runtime)
    proposed = list(state.get("operations") or [])
    payload = {"trace_id": state.get("trace_id"), "operations": proposed, "facts": all_facts(state),
               "instructions": INSTRUCTIONS}
    value = interrupt(payload)
    while True:
        try:
            ops, notes = _approved_ops(value, proposed, state, services)
            break
        except InvalidInputError as exc:
            # Ask again, showing the problem. (Raising would make langgraph replay the same bad resume value
            # on every later resume of this thread.) Replays are deterministic: interrupt i returns resume i.
            value = interrupt({**payload, "error": str(exc)})
    services.sql.save_judgment(state["trace_id"], parsed_operations=[dict(o) for o in ops], status="running",
                               reasoning="\n".join([f"[{o['event']}] {o['reason']}" for o in ops] + notes))
    # (execute_ops writes the final record with these operations and notes)
    return {"operations": ops, "review_notes": notes}
