"""The payloads of vector points (the same in both backends, so one filter translator serves both): a memory's
(`memory_payload`) and an entity's (`entity_payload`), each with the scope fields its item sets (at least one).
stores/vectors/base.py documents the memory payload's fields."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from memoryx.core.filters import to_epoch
from memoryx.core.scope import SCOPE_FIELDS
from memoryx.core.text import normalize_name
from memoryx.errors import InvalidInputError


def _iso(value: Any) -> tuple[str, float]:
    if value is None:
        value = datetime.now(timezone.utc)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value.isoformat(), value.timestamp()
    if isinstance(value, str):
        return value, to_epoch(value, what="created_at")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        dt = datetime.fromtimestamp(float(value), tz=timezone.utc)
        return dt.isoformat(), float(value)
    raise InvalidInputError(f"created_at/updated_at must be an ISO string or datetime, got {value!r}")


def _json_safe(obj: Any) -> Any:
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        raise InvalidInputError(f"metadata must be a dict, got {type(obj).__name__}")
    try:
        json.dumps(obj)
        return obj
    except (TypeError, ValueError):
        return json.loads(json.dumps(obj, default=str))


def memory_payload(item: dict) -> dict:
    created_at, created_ts = _iso(item.get("created_at"))
    upd = item.get("updated_at")
    updated_at, updated_ts = _iso(upd) if upd is not None else (created_at, created_ts)
    payload: dict[str, Any] = {
        "id": str(item["id"]),
        "text": item.get("text") if item.get("text") is not None else item.get("memory", ""),
        "memory_type": item.get("memory_type") or "fact",
        "category": item.get("category"),
        "importance": float(item["importance"]) if item.get("importance") is not None else 0.5,
        "created_at": created_at,
        "created_ts": created_ts,
        "updated_at": updated_at,
        "updated_ts": updated_ts,
        "metadata": _json_safe(item.get("metadata")),
    }
    if item.get("hash"):
        payload["hash"] = item["hash"]
    if item.get("valid_at"):  # when the event happened (a replayed message's time), if not created_at
        payload["valid_at"], payload["valid_ts"] = _iso(item["valid_at"])
    if item.get("status"):  # consolidation: search leaves merged/archived points out by this field
        payload["status"] = item["status"]
    if item.get("script"):  # a point of the multilingual index: the script of its text (multilingual.py)
        payload["script"] = item["script"]
    return _with_scope(payload, item, "Memory")


def entity_payload(item: dict) -> dict:
    name = item.get("name") or ""
    payload: dict[str, Any] = {
        "id": str(item["id"]),
        "name": name,
        "normalized_name": normalize_name(name),
        "entity_type": item.get("entity_type") or "entity",
    }
    return _with_scope(payload, item, "Entity")


def _with_scope(payload: dict, item: dict, kind: str) -> dict:
    """The payload with the item's scope fields; every point needs at least one."""
    scope = {k: item[k] for k in SCOPE_FIELDS if item.get(k)}
    if not scope:
        raise InvalidInputError(f"{kind} {item.get('id')!r} has no user_id/agent_id/run_id/group_id; every point needs a scope")
    payload.update(scope)
    return payload
