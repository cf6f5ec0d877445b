"""Input checks and small value helpers shared by the SQL store's concept modules (no database access)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from typing import Any

from memoryx.core.scope import SCOPE_FIELDS, Scope
from memoryx.errors import InvalidInputError, ScopeError

UTC = timezone.utc
_ID_CHUNK = 500  # keeps IN (...) lists far below SQLite's and PostgreSQL's bound-parameter limits


def utc_now() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return str(uuid.uuid4())


def iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None


def as_utc(value: datetime | str | None, name: str = "time") -> datetime | None:
    """Accept aware/naive datetimes (naive = UTC) and ISO strings; everything stored is UTC."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise InvalidInputError(f"{name} must be an ISO-8601 time, got {value!r}") from exc
    if not isinstance(value, datetime):
        raise InvalidInputError(f"{name} must be a datetime or ISO-8601 string, got {type(value).__name__}")
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def require_scope(scope: Any) -> Scope:
    if not isinstance(scope, Scope):
        raise ScopeError(f"A Scope is required (e.g. Scope(user_id='alice')), got {type(scope).__name__}")
    return scope


def clean_text(text: Any, what: str = "text") -> str:
    if not isinstance(text, str):
        raise InvalidInputError(f"{what} must be a string, got {type(text).__name__}")
    # PostgreSQL rejects NUL in text columns; it never carries meaning in a memory.
    text = text.replace("\x00", "").strip()
    if not text:
        raise InvalidInputError(f"{what} is empty; pass non-blank text")
    return text


def check_metadata(metadata: Any) -> dict:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidInputError(f"metadata must be a dict, got {type(metadata).__name__}")
    try:  # strict JSON: NaN / Infinity are not JSON, and a stored NaN breaks every later read of the scope
        json.dumps(metadata, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"metadata must be strict JSON (no NaN or Infinity, string keys): {exc}") from exc
    return metadata


def check_importance(importance: Any) -> float:
    try:
        value = float(importance)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"importance must be a number in [0, 1], got {importance!r}") from exc
    if not 0.0 <= value <= 1.0:
        raise InvalidInputError(f"importance must be in [0, 1], got {value}")
    return value


def id_chunks(ids: Iterable[str]) -> Iterator[list[str]]:
    items = list(dict.fromkeys(ids))  # unique, order kept
    for i in range(0, len(items), _ID_CHUNK):
        yield items[i:i + _ID_CHUNK]


def scope_where(model: Any, scope: Scope | None) -> list:
    """Exact match on the fields the scope sets, and no group unless it names one (Scope.match: the same
    rule the vector and graph stores use)."""
    if scope is None:
        return []
    return [getattr(model, k) == v if v is not None else getattr(model, k).is_(None)
            for k, v in require_scope(scope).match().items()]


def scope_dict(row: Any) -> dict:
    return {k: getattr(row, k) for k in SCOPE_FIELDS}
