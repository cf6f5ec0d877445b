"""The messages of an add, as every door hands them in: normalised to {"role", "content", "timestamp"?,
"name"?} dicts, checked against the limits (each refusal names its setting), and long ones split. The add
graph's validate_input and bulk ingest both read input through here, so both refuse the same things."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from memoryx.core.instants import instant
from memoryx.core.runs import AGENT_MEMORY_MODES
from memoryx.errors import InvalidInputError

ROLES = ("user", "assistant", "system", "tool")
_LC_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _timestamp(value: Any, where: str) -> str | None:
    """A message's timestamp kept as given when it is an ISO string (the words the model is shown), read by
    core.instants either way: a time outside years 1-9999 in UTC is refused here, before any node reads it."""
    if value is None or value == "":
        return None
    field = f"{where}: timestamp"
    if isinstance(value, datetime):
        return instant(value, field).isoformat()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value / 1000.0 if abs(value) > 1e11 and abs(value) < 1e15 else value  # epoch ms or s
        return instant(seconds, field).isoformat()
    if isinstance(value, str):
        instant(value, field)
        return value.strip()
    raise InvalidInputError(f"{where}: timestamp must be an ISO-8601 string, a datetime or epoch seconds, "
                            f"got {type(value).__name__}")


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
    if message.get("user_id"):  # a group chat participant's id (memoryx.ingest.speakers)
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
