"""An add run's state read the same way by every step and by bulk ingest: its scopes (the caller's, the
assistant's own), deterministic ids, the config of a model call, a change marker and step timing."""

from __future__ import annotations

import time
import uuid

from memoryx.core.scope import Scope

# Namespace of MemoryX's deterministic ids (uuid5(trace_id/op)): a replayed run writes the same ids.
ID_NAMESPACE = uuid.UUID("8f6b1d2e-3c4a-5b6c-9d8e-7f6a5b4c3d2e")


def derive_scope(state: dict) -> Scope:
    """The caller's scope from the input ids (ScopeError when none is given): validate_input derives it
    once into the state's "scope"."""
    return Scope(user_id=state.get("user_id") or None, agent_id=state.get("agent_id") or None,
                 run_id=state.get("run_id") or None, group_id=state.get("group_id") or None)


def scope_of(state: dict) -> Scope:
    """The run's scope, as validate_input put it in the state (derived from the ids for a state built by
    hand, as in node tests)."""
    return state.get("scope") or derive_scope(state)


AGENT_MEMORY_MODES = ("tenant", "global")


def agent_memory_mode(state: dict) -> str:
    """Where the assistant's own memories go: "tenant" (default) or "global" (validate_input resolves the
    caller's option against MEMORYX_AGENT_MEMORY into the state)."""
    return "global" if state.get("agent_memory") == "global" else "tenant"


def agent_scope_of(state: dict) -> Scope:
    """Where the assistant's own memories live. Learned in a user's conversation they belong to that user's
    tenancy (user + agent + run: no other user's add ever sees them); only when the caller asked for
    agent_memory="global" do they live with the agent alone, shared by every user of the agent."""
    if agent_memory_mode(state) == "global":
        return Scope(agent_id=state.get("agent_id"), run_id=state.get("run_id") or None,
                     group_id=state.get("group_id") or None)
    return scope_of(state)


def keeps_agent_facts(state: dict) -> bool:
    """Agent memories are kept apart only when both a user and an agent are named."""
    return bool(state.get("agent_id")) and bool(state.get("user_id"))


def scope_for_owner(state: dict, owner: str | None) -> Scope:
    if owner == "agent" and keeps_agent_facts(state):
        return agent_scope_of(state)
    return scope_of(state)


def is_agent_memory(record: dict) -> bool:
    """An assistant's own memory (execute_ops marks them with metadata owner="agent")."""
    return (record.get("metadata") or {}).get("owner") == "agent"


def same_tenant(record: dict, scope: Scope) -> bool:
    """True when a stored record lies in `scope` AND in the same tenancy: its user is the scope's user (None
    for the agent-global scope). The stores treat an unset field as a wildcard, so Scope(agent_id=bot) alone
    matches every user's (user, bot) memories; this is the check that keeps them apart. A group chat's scope
    is one tenancy: every participant's memories in the group (Scope.match keeps other groups and
    private memories out)."""
    if scope.group_id is not None and scope.user_id is None:
        return scope.contains(record)
    return scope.contains(record) and record.get("user_id") == scope.user_id


def deterministic_id(trace_id: str, key: str) -> str:
    """uuid5 of (trace id, position): the same run replayed after a crash creates no second copy."""
    return str(uuid.uuid5(ID_NAMESPACE, f"{trace_id}/{key}"))


def llm_config(state: dict, step: str, model_name: str) -> dict:
    """Config of one model call: LangSmith run name, tags and metadata (trace id, user, model)."""
    trace_id = state.get("trace_id") or ""
    tags = [f"memoryx:{step}", f"trace_id:{trace_id}", f"model:{model_name}"]
    if state.get("user_id"):
        tags.append(f"user_id:{state['user_id']}")
    return {
        "run_name": f"{step}_llm",
        "tags": tags,
        "metadata": {"trace_id": trace_id, "user_id": state.get("user_id"), "agent_id": state.get("agent_id"),
                     "run_id": state.get("run_id"), "model": model_name, "memoryx_step": step},
    }


def change_marker(sql) -> int | None:
    """A number that changes whenever any memory is added, updated or deleted (the newest history row).
    None when unknown (callers then assume that something changed)."""
    try:
        return sql.last_change_seq()
    except Exception:  # noqa: BLE001 - a missing marker only costs a re-search
        return None


def elapsed_ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)


def held_back(op: dict, why: str) -> dict:
    """A judge's UPDATE or DELETE that a rule holds back (an immutable memory, a much less confident new
    statement): the UPDATE becomes an ADD of the new text beside the memory, the DELETE becomes NONE; the
    reason says why."""
    if op.get("event") == "UPDATE":
        return {**op, "event": "ADD", "id": None, "old_memory": None,
                "reason": f"{op.get('reason') or ''} [{why}: added beside it instead of updating it]".strip()}
    return {**op, "event": "NONE", "reason": f"{op.get('reason') or ''} [{why}: not deleted]".strip()}
