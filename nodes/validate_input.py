"""validate_input: normalise what the caller sent, refuse what cannot be processed, keep the raw input.

- messages: a string (one user message), one {"role", "content"} dict, a list of such dicts (optional
  "timestamp" and "name"), or LangChain messages. Roles: user, assistant, system, tool; anything else is an
  InvalidInputError (a ValueError).
- empty or whitespace-only input: no error, an empty result, nothing written.
- larger than MEMORYX_MAX_INPUT_CHARS in total: InvalidInputError naming the limit; single messages longer
  than MEMORYX_MAX_MESSAGE_CHARS are split into chunks (on whitespace where possible).
- limits, each refused with an InvalidInputError naming its setting: MEMORYX_MAX_MESSAGES messages,
  a `name` of at most MEMORYX_MAX_NAME_CHARS, a `timestamp` that parses as an ISO-8601 date (or a datetime /
  finite epoch number), metadata that is strict JSON (no NaN/Infinity) of at most MEMORYX_MAX_METADATA_BYTES.
- agent_memory ("tenant" or "global", default MEMORYX_AGENT_MEMORY) is resolved into the state: where the
  assistant's own memories go (memoryx.core.runs.agent_scope_of).
- a trace id is generated when the caller gave none; the raw input is saved under it (idempotent).
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING

from memoryx.core.runs import derive_scope, elapsed_ms
from memoryx.errors import InvalidInputError
from memoryx.ingest.messages import check_limits, normalize_messages, resolve_agent_memory, split_long
from memoryx.runtime.context import Context, services_of
from memoryx.state import AddState

if TYPE_CHECKING:
    from langgraph.runtime import Runtime


def validate_input(state: AddState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    services = services_of(runtime)
    settings = services.settings
    scope = derive_scope(state)  # ScopeError when no user/agent/run id: the one place the ids are checked
    metadata = state.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise InvalidInputError(f"metadata must be a dict, got {type(metadata).__name__}")
    trace_id = state.get("trace_id") or str(uuid.uuid4())
    agent_memory = resolve_agent_memory(state.get("agent_memory"), settings.agent_memory)

    messages = normalize_messages(state.get("messages"))
    check_limits(messages, metadata, settings)
    total = sum(len(m["content"]) for m in messages)
    if total > settings.max_input_chars:
        raise InvalidInputError(
            f"Input of {total} characters exceeds the limit of {settings.max_input_chars} characters "
            f"(MEMORYX_MAX_INPUT_CHARS); split the conversation into several add() calls or raise the limit.",
            trace_id=trace_id,
        )
    normalized: list[dict] = []
    for m in messages:
        if not m["content"].strip():
            continue
        if len(m["content"]) > settings.max_message_chars:
            for chunk in split_long(m["content"], settings.max_message_chars):
                normalized.append({**m, "content": chunk})
        else:
            normalized.append({**m, "content": m["content"].strip()})

    if normalized:
        services.sql.save_raw_input(trace_id=trace_id, scope=scope, messages=messages, metadata=metadata)
    return {"trace_id": trace_id, "scope": scope, "normalized_messages": normalized, "metadata": metadata,
            "agent_memory": agent_memory,
            "timings": {"validate_input": elapsed_ms(start)}}
