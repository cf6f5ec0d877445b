"""Values as the graph stores them: epoch-ms times, bounded strings, id lists, batches."""

from __future__ import annotations

import logging
import time
from datetime import datetime, timezone
from typing import Any, Iterable

from memoryx.errors import InvalidInputError

log = logging.getLogger(__name__)

BATCH = 500  # rows per UNWIND statement


def now_ms() -> int:
    return int(time.time() * 1000)


def to_ms(value: Any) -> int | None:
    """Epoch ms from int/float ms, a datetime (naive = UTC) or an ISO-8601 string; None stays None."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise InvalidInputError(f"not a time: {value!r}")
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise InvalidInputError(f"not an ISO-8601 time: {value!r}") from exc
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return int(value.timestamp() * 1000)
    raise InvalidInputError(f"not a time: {value!r}")


def clip(value: Any, limit: int, what: str) -> Any:
    """Bound the size of stored strings: FalkorDB's Bolt cannot send a record over 64 KB."""
    if isinstance(value, str) and len(value) > limit:
        log.warning("graph %s longer than %d characters stored clipped (%d characters)", what, limit, len(value))
        return value[:limit]
    return value


def unique_ids(values: Iterable[Any], what: str) -> list[str]:
    """Non-empty string ids, duplicates dropped, order kept."""
    out = []
    for v in values or []:
        if not isinstance(v, str) or not v:
            raise InvalidInputError(f"{what} must be non-empty strings, got {v!r}")
        out.append(v)
    return list(dict.fromkeys(out))


def chunks(rows: list, size: int = BATCH) -> Iterable[list]:
    for i in range(0, len(rows), size):
        yield rows[i:i + size]
