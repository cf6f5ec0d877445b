"""build_episodes: the add graph's episode step (MEMORYX_EPISODES, off by default). How turns become
episodes: memoryx.knowledge.episode_memories."""

from __future__ import annotations

import time

from langgraph.runtime import Runtime

from memoryx.core.runs import elapsed_ms, scope_of
from memoryx.knowledge.episode_memories import record_turns
from memoryx.knowledge.episodes import stored_turns
from memoryx.runtime.context import Context, services_of
from memoryx.state import AddState


def build_episodes(state: AddState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    messages = [m for m in state.get("normalized_messages") or [] if m.get("role") in ("user", "assistant")
                and str(m.get("content") or "").strip()]
    if not services.settings.episodes or not messages:
        return {"timings": {"build_episodes": elapsed_ms(start)}}
    scope = scope_of(state)
    new = stored_turns(messages, time.time())
    facts = [] if state.get("infer") is False else \
        [r for r in state.get("executed") or [] if r.get("event") in ("ADD", "UPDATE") and r.get("id")]
    episodes, calls = record_turns(services, state, scope, new, facts)
    return {"episodes": episodes, "timings": {"build_episodes": elapsed_ms(start)},
            "model_calls": {"build_episodes": calls}}
