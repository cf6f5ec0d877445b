"""build_episodes: the add graph's episode step. How turns become episodes: memoryx.knowledge.episode_memories;
each participant's episode of a group conversation: memoryx.knowledge.perspectives.

Entered when episodes are kept for every conversation (MEMORYX_EPISODES, off by default) or the add is a group
conversation whose messages name their speakers (MEMORYX_PARTICIPANT_EPISODES, on by default): the unit of a
group conversation is then the group's own (Scope without the user: one conversation, whoever sent the add),
and once it has two participants each of them gets their episode in their own scope. The episodes written are
noted in the run's judgment record."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from memoryx.core.runs import elapsed_ms, scope_of
from memoryx.knowledge.episode_memories import record_turns
from memoryx.knowledge.episodes import stored_turns
from memoryx.nodes.graph_relations import note_in_judgment
from memoryx.runtime.context import Context, services_of
from memoryx.state import AddState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime


def _turns(state: AddState) -> list[dict]:
    return [m for m in state.get("normalized_messages") or [] if m.get("role") in ("user", "assistant")
            and str(m.get("content") or "").strip()]


def group_conversation(state: AddState, settings) -> bool:
    """A group add whose messages name a speaker (name or user_id), with per-participant episodes on."""
    scope = state.get("scope")
    group = getattr(scope, "group_id", None) if scope is not None else (state.get("group_id") or None)
    return bool(settings.participant_episodes and group and any(m.get("name") or m.get("user_id") for m in _turns(state)))


def keeps_episodes(state: AddState, settings) -> bool:
    return bool(settings.episodes or group_conversation(state, settings))


def _note(written: list[dict]) -> str:
    units = [e for e in written if not e.get("user_id")]
    own = [f"{e.get('speaker') or e['user_id']} -> {e['id']} ({e['event']}, user {e['user_id']})"
           for e in written if e.get("user_id")]
    out = f"episodes: {len(units)} conversation unit(s) " + ", ".join(f"{e['id']} ({e['event']})" for e in units)
    return out + ("; one per participant: " + "; ".join(own) if own else "")


def build_episodes(state: AddState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    messages = _turns(state)
    if not keeps_episodes(state, services.settings) or not messages:
        return {"timings": {"build_episodes": elapsed_ms(start)}}
    scope = scope_of(state)
    if group_conversation(state, services.settings):  # the conversation is the group's, not the sender's
        scope = replace(scope, user_id=None)
    new = stored_turns(messages, time.time())
    facts = [] if state.get("infer") is False else \
        [r for r in state.get("executed") or [] if r.get("event") in ("ADD", "UPDATE") and r.get("id")]
    episodes, calls = record_turns(services, state, scope, new, facts)
    if episodes:
        note_in_judgment(services, state, _note(episodes))
    return {"episodes": episodes, "timings": {"build_episodes": elapsed_ms(start)},
            "model_calls": {"build_episodes": calls}}
