"""update_profile: keep the user (and group) profiles in step with the memories this add run wrote.

Runs after execute_ops (and after store_raw, where it has nothing to read: raw turns are not facts). For each
memory the run added or updated, the rules of memoryx.knowledge.profiles read profile values from its text ("User lives
in Shanghai" -> home = Shanghai, with the memory id); the subject is the memory's own user (in a group chat,
the participant the fact is attributed to), and a memory written in a group also makes its user a member of
the group's profile. Memories the run deleted stop backing the values they gave. With MEMORYX_PROFILE_MODEL
the facts no rule covers go to one model call (prompts/profile.py); a failed call is logged and skipped: the
profile is an index over the memories, never a reason to fail an add.

Idempotent: a run replayed after a crash appends no memory id twice (stores/sql/profiles.py).

Cost: the rules read the executed rows' texts in the state; a run whose memories name no profile
attribute (and deleted none, outside a group, without the profile model) touches no store at all. Otherwise
one transaction reads whose memories they are (four columns by id), the profile rows the changes can touch
(never the whole profile) and writes the changes.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from langchain_core.messages import HumanMessage, SystemMessage

from memoryx.core.runs import elapsed_ms, is_agent_memory
from memoryx.knowledge.profiles import ProfileChange, group_subject, profile_changes, user_subject
from memoryx.models.llm_io import RetriesExhausted, extract_json, message_text
from memoryx.models.step_calls import ask_or_fall_back, run_options
from memoryx.prompts.profile import PROFILE_PROMPT, RETRY_PROFILE_PROMPT, ProfileUpdates, profile_input
from memoryx.runtime.context import Context, services_of
from memoryx.state import AddState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

log = logging.getLogger(__name__)


def _model_changes(services, state: dict, rows: list[dict]) -> list[tuple[dict, ProfileChange]]:
    llm = services.extraction_llm
    messages = [SystemMessage(content=PROFILE_PROMPT), HumanMessage(content=profile_input([r["memory"] for r in rows]))]
    reply = ask_or_fall_back(llm, messages, lambda a: ProfileUpdates.model_validate(extract_json(message_text(a))),
                             step="update_profile", retry_prompt=RETRY_PROFILE_PROMPT, fallback="profile model step skipped",
                             trace_id=state.get("trace_id"), **run_options(llm, state, "update_profile", services.settings))
    if isinstance(reply, RetriesExhausted):
        return []
    return [(rows[u.fact], ProfileChange(u.op, u.field, u.value)) for u in reply.value.usable(len(rows))]


def _executed_ids(state: dict) -> tuple[list[tuple[str, str]], list[str]]:
    """([(id, text)] the run added or updated, [ids] it deleted), from the executed rows in the state."""
    executed = state.get("executed") or []
    written = [(r["id"], r.get("memory") or "") for r in executed if r.get("event") in ("ADD", "UPDATE") and r.get("id")]
    deleted = [r["id"] for r in executed if r.get("event") == "DELETE" and r.get("id")]
    return written, deleted


def profile_rows_of(services, state: dict, sources: dict[str, dict] | None = None,
                    found: dict[str, list[ProfileChange]] | None = None) -> tuple[dict[str, list[dict]], dict[str, list[str]], int]:
    """({subject: change rows}, {subject: deleted memory ids}, model calls) of the run's executed operations.

    The texts are the executed rows' own (what execute_ops wrote); `sources` ({id: user_id, group_id,
    metadata, deleted}: SQLStore.profile_sources) says whose each memory is (read when not given); `found`
    the rule changes per memory id (computed when not given)."""
    written, deleted = _executed_ids(state)
    if sources is None:
        sources = services.sql.profile_sources([mid for mid, _ in written] + deleted)
    if found is None:
        found = {mid: profile_changes(text) for mid, text in written}
    changes: dict[str, list[dict]] = {}
    uncovered: list[dict] = []
    for mid, text in dict(written).items():
        src = sources.get(mid)
        if src is None or src["deleted"] or is_agent_memory(src) or not src.get("user_id"):
            continue  # gone meanwhile, or an assistant's own memory: it says nothing about the user
        row = {**src, "id": mid, "memory": text}
        if row.get("group_id"):
            # a group's memory says who takes part in the group; the participant's own profile is private
            # (written from their own conversations only), so whoever may write to the group cannot change it
            member = (row.get("metadata") or {}).get("name") or row["user_id"]
            changes.setdefault(group_subject(row["group_id"]), []).append(
                ProfileChange("add", "member", member).as_row(mid))
            continue
        rules = found.get(mid) or []
        changes.setdefault(user_subject(row["user_id"]), []).extend(c.as_row(mid) for c in rules)
        if not rules:
            uncovered.append(row)
    calls = 0
    if uncovered and services.settings.profile_model:
        calls = 1
        for row, change in _model_changes(services, state, uncovered):
            changes.setdefault(user_subject(row["user_id"]), []).append(change.as_row(row["id"], source="model"))
    forgotten: dict[str, list[str]] = {}
    for mid in deleted:
        src = sources.get(mid)
        if src is not None and src.get("user_id") and not src.get("group_id"):
            forgotten.setdefault(user_subject(src["user_id"]), []).append(mid)
    return changes, forgotten, calls


def _write(services, changes: dict[str, list[dict]], forgotten: dict[str, list[str]]) -> None:
    for subject, ids in forgotten.items():
        services.sql.forget_profile_memories(subject, ids)
    for subject, rows in changes.items():
        if rows:
            services.sql.apply_profile_changes(subject, rows)


def update_profile(state: AddState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    if not services.settings.profiles or not state.get("executed"):
        return {"timings": {"update_profile": elapsed_ms(start)}}
    written, deleted = _executed_ids(state)
    found = {mid: profile_changes(text) for mid, text in written}
    ask_model = bool(services.settings.profile_model) and any(not f for f in found.values())
    if not deleted and not ask_model and not state.get("group_id") and not any(found.values()):
        # no profile attribute in what the run wrote: no read, no write. (A memory written in a
        # group chat already made its user a member when it was first written.)
        return {"timings": {"update_profile": elapsed_ms(start)}, "model_calls": {"update_profile": 0}}
    if ask_model:  # the model call runs outside any transaction
        changes, forgotten, calls = profile_rows_of(services, state, found=found)
        with services.sql.transaction():
            _write(services, changes, forgotten)
    else:  # whose memories they are, the values they touch and the writes: one transaction
        with services.sql.transaction():
            changes, forgotten, calls = profile_rows_of(services, state, found=found)
            _write(services, changes, forgotten)
    return {"timings": {"update_profile": elapsed_ms(start)}, "model_calls": {"update_profile": calls}}
