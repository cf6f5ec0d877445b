"""Dates in one place: every date or time a caller hands in (search `now` / `as_of` / `start` / `end` /
`time_range`, message timestamps, an audit's `since`, mem0's `expiration_date`, consolidate's `now`, filter
values on time fields) is read here, into one supported range, or refused naming the field.

The range is what Python's datetime, the SQL stores and the vector payloads all hold: years 1 to 9999, in UTC
*after* the offset is applied ("0001-01-01T00:00:00+14:00" is in year 0 in UTC: refused, where datetime
itself would overflow later, deep inside a store, as a 500). A number is epoch seconds within the same range
(NaN and infinities are not instants; a JSON number as large as 1e300 is not one either). What is refused is
an InvalidInputError (a 422 at every door) whose message names the field and the range, so a caller knows
what to send instead.
"""

from __future__ import annotations

import math
from datetime import date, datetime, timedelta, timezone
from typing import Any

from memoryx.errors import InvalidInputError

__all__ = ["MAX_EPOCH", "MIN_EPOCH", "RANGE", "day_after", "epoch_of", "instant", "span_back"]

UTC = timezone.utc
MIN_INSTANT = datetime(1, 1, 1, tzinfo=UTC)
MAX_INSTANT = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
MIN_EPOCH = MIN_INSTANT.timestamp()  # -62135596800.0
MAX_EPOCH = 253402300799.0  # 9999-12-31T23:59:59Z: the last whole second (a float cannot hold the microseconds)
RANGE = "years 1 to 9999 in UTC (epoch seconds -62135596800 to 253402300799)"
MAX_TEXT = 64  # an ISO date is short; a longer string is not one


def _refuse(field: str, value: Any, why: str) -> InvalidInputError:
    shown = repr(value)[:80]
    return InvalidInputError(f"{field}: {shown} {why}; send an ISO-8601 time such as '2024-05-01T12:00:00Z' or "
                             f"epoch seconds, within {RANGE}.")


def instant(value: Any, field: str) -> datetime:
    """An ISO-8601 string, an aware or naive (UTC) datetime, a date, or epoch seconds, as an aware UTC datetime
    within the supported range; InvalidInputError naming `field` otherwise."""
    if isinstance(value, bool) or value is None:
        raise _refuse(field, value, "is not a time")
    if isinstance(value, (int, float)):
        seconds = float(value) if not isinstance(value, int) or abs(value) < 2**62 else math.inf
        if not math.isfinite(seconds) or not MIN_EPOCH <= seconds <= MAX_EPOCH:
            raise _refuse(field, value, "is outside the supported range")
        try:  # from year 1, not fromtimestamp: no platform limit on negative epochs
            return MIN_INSTANT + timedelta(seconds=seconds - MIN_EPOCH)
        except OverflowError:
            raise _refuse(field, value, "is outside the supported range") from None
    if isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_TEXT:
            raise _refuse(field, value, "is not an ISO-8601 time (too long)")
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            value = datetime.fromisoformat(text)
        except ValueError:
            raise _refuse(field, value, "is not an ISO-8601 time") from None
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if not isinstance(value, datetime):
        raise _refuse(field, type(value).__name__, "is not a time")
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # the offset moves it before year 1 or past year 9999
        raise _refuse(field, value.isoformat(), "is outside the supported range once its offset is applied") from None


def epoch_of(value: Any, field: str) -> float:
    """`instant` as epoch seconds."""
    return instant(value, field).timestamp()


def day_after(day: date, field: str) -> datetime:
    """The start of the day after `day` (an inclusive end date), capped at the end of the range: 9999-12-31
    has no next day in datetime, yet it is a fine last day."""
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    return start + timedelta(days=1) if start.date() < MAX_INSTANT.date() else MAX_INSTANT


def span_back(now: datetime, amount: float, unit_minutes: float, field: str) -> datetime:
    """`now` minus a span ("7d"), refused when it reaches before year 1."""
    minutes = amount * unit_minutes
    if not math.isfinite(minutes) or minutes > (now - MIN_INSTANT).total_seconds() / 60:
        raise _refuse(field, f"{amount:g}", "reaches back past year 1")
    return now - timedelta(minutes=minutes)
