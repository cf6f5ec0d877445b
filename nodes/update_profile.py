"""update_profile: keep the user (and group) profiles in step with the memories this add run wrote.

Runs after execute_ops (and after store_raw, where it has nothing to read: raw turns are not facts). For each
memory the run added or updated, the rules of memoryx.profiles read profile values from its text ("User lives
in Shanghai" -> home = Shanghai, with the memory id); the subject is the memory's own user (in a group chat,
the participant the fact is attributed to), and a memory written in a group also makes its user a member of
the group's profile. Memories the run deleted stop backing the values they gave. With MEMORYX_PROFILE_MODEL
the facts no rule covers go to one model call (prompts/profile.py); a failed call is logged and skipped: the
profile is an index over the memories, never a reason to fail an add.

Idempotent: a run replayed after a crash appends no memory id twice (stores/sql/profiles.py).
"""

from __future__ import annotations

import logging
import time

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from memoryx.context import Context, services_of
from memoryx.models.factory import model_name_of
from memoryx.models.llm_io import RetriesExhausted, call_with_retry, extract_json, message_text, run_deadline
from memoryx.nodes.add_common import elapsed_ms, is_agent_memory, llm_config
from memoryx.profiles import ProfileChange, group_subject, profile_changes, user_subject
from memoryx.prompts.profile import PROFILE_PROMPT, RETRY_PROFILE_PROMPT, ProfileUpdates, profile_input
from memoryx.state import AddState

log = logging.getLogger(__name__)


def _model_changes(services, state: dict, rows: list[dict]) -> list[tuple[dict, ProfileChange]]:
    llm = services.extraction_llm
    name = model_name_of(llm)
    messages = [SystemMessage(content=PROFILE_PROMPT), HumanMessage(content=profile_input([r["memory"] for r in rows]))]
    try:
        reply = call_with_retry(llm, messages, lambda a: ProfileUpdates.model_validate(extract_json(message_text(a))),
                                retry_prompt=RETRY_PROFILE_PROMPT, config=llm_config(state, "update_profile", name),
                                deadline=run_deadline(services.settings.add_time_budget_s),
                                raw_cap=services.settings.llm_raw_answer_cap)
    except RetriesExhausted as exc:
        log.warning("profile model step skipped (trace %s): %s", state.get("trace_id"), exc.problem)
        return []
    return [(rows[u.fact], ProfileChange(u.op, u.field, u.value)) for u in reply.value.usable(len(rows))]


def profile_rows_of(services, state: dict) -> tuple[dict[str, list[dict]], dict[str, list[str]], int]:
    """({subject: change rows}, {subject: deleted memory ids}, model calls) of the run's executed operations."""
    executed = state.get("executed") or []
    written = [r["id"] for r in executed if r.get("event") in ("ADD", "UPDATE") and r.get("id")]
    deleted = [r["id"] for r in executed if r.get("event") == "DELETE" and r.get("id")]
    changes: dict[str, list[dict]] = {}
    uncovered: list[dict] = []
    for row in services.sql.get_memories(written):
        if is_agent_memory(row) or not row.get("user_id"):
            continue  # an assistant's own memories say nothing about the user
        subject = user_subject(row["user_id"])
        found = profile_changes(row["memory"])
        changes.setdefault(subject, []).extend(c.as_row(row["id"]) for c in found)
        if not found:
            uncovered.append(row)
        if row.get("group_id"):
            member = (row.get("metadata") or {}).get("name") or row["user_id"]
            changes.setdefault(group_subject(row["group_id"]), []).append(
                ProfileChange("add", "member", member).as_row(row["id"]))
    calls = 0
    if uncovered and services.settings.profile_model:
        calls = 1
        for row, change in _model_changes(services, state, uncovered):
            changes.setdefault(user_subject(row["user_id"]), []).append(change.as_row(row["id"], source="model"))
    forgotten: dict[str, list[str]] = {}
    for row in services.sql.get_memories_any(deleted):
        if row.get("user_id"):
            forgotten.setdefault(user_subject(row["user_id"]), []).append(row["id"])
    return changes, forgotten, calls


def update_profile(state: AddState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    if not services.settings.profiles or not state.get("executed"):
        return {"timings": {"update_profile": elapsed_ms(start)}}
    changes, forgotten, calls = profile_rows_of(services, state)
    for subject, ids in forgotten.items():
        services.sql.forget_profile_memories(subject, ids)
    for subject, rows in changes.items():
        if rows:
            services.sql.apply_profile_changes(subject, rows)
    return {"timings": {"update_profile": elapsed_ms(start)}, "model_calls": {"update_profile": calls}}
