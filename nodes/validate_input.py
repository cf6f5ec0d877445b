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
  assistant's own memories go (nodes/add_common.agent_scope_of).
- a trace id is generated when the caller gave none; the raw input is saved under it (idempotent).
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timezone
from typing import Any

from langgraph.runtime import Runtime

from memoryx.runtime.context import Context, services_of
from memoryx.errors import InvalidInputError
from memoryx.nodes.add_common import AGENT_MEMORY_MODES, derive_scope, elapsed_ms
from memoryx.state import AddState

ROLES = ("user", "assistant", "system", "tool")
_LC_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _timestamp(value: Any, where: str) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).isoformat()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value / 1000.0 if value > 1e11 else value  # epoch ms or s
        try:
            return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat()
        except (OverflowError, OSError, ValueError) as exc:  # NaN, inf, year 300000
            raise InvalidInputError(f"{where}: timestamp {value!r} is not a valid epoch time") from exc
    if isinstance(value, str):
        text = value.strip()
        try:  # a date the temporal search can use, not free text (and bounded: ISO dates are short)
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00")) if len(text) <= 64 else None
        except ValueError:
            parsed = None
        if parsed is None:
            raise InvalidInputError(f"{where}: timestamp must be an ISO-8601 date such as 2025-05-01T10:00:00Z, got {text[:64]!r}")
        return text
    raise InvalidInputError(f"{where}: timestamp must be an ISO-8601 string, a datetime or epoch seconds, got {type(value).__name__}")


def _content(value: Any, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # multimodal parts: keep the text ones
        parts = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") in (None, "text") and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    raise InvalidInputError(f"{where}: content must be a string, got {type(value).__name__}")


def _one(message: Any, index: int) -> dict:
    where = f"messages[{index}]"
    if hasattr(message, "type") and hasattr(message, "content") and not isinstance(message, dict):  # LangChain message
        role = _LC_ROLES.get(message.type)
        if role is None:
            raise InvalidInputError(f"{where}: unsupported message type {message.type!r}; use one of {', '.join(ROLES)}")
        out = {"role": role, "content": _content(message.content, where)}
        if getattr(message, "name", None):
            out["name"] = message.name
        return out
    if not isinstance(message, dict):
        raise InvalidInputError(f"{where} must be a dict with 'role' and 'content', got {type(message).__name__}")
    role = message.get("role")
    if role not in ROLES:
        raise InvalidInputError(f"{where}: invalid role {role!r}; roles are {', '.join(ROLES)}")
    if "content" not in message:
        raise InvalidInputError(f"{where}: missing 'content'")
    out = {"role": role, "content": _content(message.get("content"), where)}
    ts = _timestamp(message.get("timestamp", message.get("created_at")), where)
    if ts:
        out["timestamp"] = ts
    if message.get("name"):
        if not isinstance(message["name"], str):
            raise InvalidInputError(f"{where}: name must be a string")
        out["name"] = message["name"]
    if message.get("user_id"):  # a group chat participant's id (issue 13: memoryx.ingest.speakers)
        if not isinstance(message["user_id"], str) or not message["user_id"].strip():
            raise InvalidInputError(f"{where}: user_id must be a non-empty string")
        out["user_id"] = message["user_id"].strip()
    return out


def check_limits(messages: list[dict], metadata: dict, settings) -> None:
    """The per-field caps of an add (InvalidInputError naming the setting to raise)."""
    if len(messages) > settings.max_messages:
        raise InvalidInputError(f"{len(messages)} messages exceed the limit of {settings.max_messages} per add "
                                f"(MEMORYX_MAX_MESSAGES); split the conversation into several add() calls.")
    for i, m in enumerate(messages):
        if len(m.get("name") or "") > settings.max_name_chars:
            raise InvalidInputError(f"messages[{i}]: name is {len(m['name'])} characters; the limit is "
                                    f"{settings.max_name_chars} (MEMORYX_MAX_NAME_CHARS).")
    check_metadata_size(metadata, settings.max_metadata_bytes)


def check_metadata_size(metadata: Any, limit: int) -> None:
    """Metadata must be strict JSON (NaN / Infinity refused) and at most `limit` bytes serialised."""
    if metadata is None:
        return
    try:
        size = len(json.dumps(metadata, allow_nan=False, ensure_ascii=False).encode())
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"metadata must be strict JSON (no NaN or Infinity, string keys): {exc}") from exc
    if size > limit:
        raise InvalidInputError(f"metadata is {size} bytes as JSON; the limit is {limit} (MEMORYX_MAX_METADATA_BYTES).")


def resolve_agent_memory(value: Any, default: str) -> str:
    mode = default if value is None or value == "" else value
    if mode not in AGENT_MEMORY_MODES:
        raise InvalidInputError(f"agent_memory must be one of {', '.join(AGENT_MEMORY_MODES)}, got {value!r}.")
    return mode


def normalize_messages(messages: Any) -> list[dict]:
    """Messages as a list of {"role", "content", "timestamp"?, "name"?} dicts (InvalidInputError otherwise)."""
    if messages is None:
        return []
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, dict) or (hasattr(messages, "type") and hasattr(messages, "content")):
        messages = [messages]
    if not isinstance(messages, (list, tuple)):
        raise InvalidInputError(f"messages must be a string or a list of {{'role', 'content'}} dicts, got {type(messages).__name__}")
    return [_one(m, i) for i, m in enumerate(messages)]


def split_long(text: str, limit: int) -> list[str]:
    """Chunks of at most `limit` characters, cut at the last whitespace of each window when there is one."""
    chunks: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = rest.rfind(" ", int(limit * 0.6), limit + 1)
        if cut <= 0:
            cut = max(rest.rfind(p, int(limit * 0.6), limit) for p in ("。", "\n", ".", "，", ","))
            cut = cut + 1 if cut > 0 else limit
        chunks.append(rest[:cut].strip())
        rest = rest[cut:]
    if rest.strip():
        chunks.append(rest.strip())
    return [c for c in chunks if c]


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
