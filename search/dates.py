"""Dates and periods named in a query or a memory, without a model.

* `query_period(query)`: the period a query is about ("on 9 May 2023", "in July 2023", "2023年5月", "in May",
  "5月", "last week", "last summer", "昨天", "上个月", "去年", "先月"), the words it was read from and whether the
  reading is confident enough to filter on; `time_window(query)` is its [start, end) in epoch
  seconds. Relative periods are read by the same core as the dates in facts (memoryx.core.timeparse).
* `checked_time_range(value)`: a caller's range ((start, end), {"start", "end"} or a period in words).
* `asks_when(query)`: the query asks for a time ("when ...", "什么时候", "いつ").
* `states_time(text)`: a memory states a time (yesterday, last week, 2023, 昨天 ...): what a "when" question
  wants back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from memoryx.core import lexicon
from memoryx.core.caseless import Caseless
from memoryx.core.filters import to_epoch
from memoryx.core.timeparse import MONTHS, find_times
from memoryx.errors import InvalidInputError

# a question asking for a time ("when ...", "how long ago", "what year", "什么时候", "いつ") and a memory stating one
# ("yesterday", "last week", "2023", "昨天", "先月"): phrase patterns of each language in the lexicon
_WHEN_RE = lexicon.pattern("search.asks_when", flags=re.I)
_TIME_TEXT = Caseless(lexicon.pattern("search.states_time", flags=re.I))  # read on every candidate's text


def asks_when(query: str) -> bool:
    return bool(_WHEN_RE.search(query))


def states_time(text: str) -> bool:
    return bool(_TIME_TEXT.search(text))


_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_NAMES})\.?,?\s*(\d{{4}})?\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s*(\d{{4}}))?", re.I)
_MONTH_YEAR = re.compile(rf"\b({_MONTH_NAMES})\.?,?\s+(\d{{4}})\b", re.I)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_ISO_MONTH = re.compile(r"\b(\d{4})-(\d{1,2})\b(?!-)")
# the month names are core.timeparse's (the same the relative periods are read with); the words around dates are
# the lexicon's: 2023年5月9日 / 2023年 (written so in Chinese and Japanese), "in 2023", "before" / 之前 / まで
_CJK_DATE = lexicon.pattern("search.ymd_date")
_CJK_YEAR = lexicon.pattern("search.ymd_year")
_YEAR = lexicon.pattern("search.year", flags=re.I)
_BEFORE = lexicon.pattern("search.before_date", flags=re.I)
_AFTER = lexicon.pattern("search.after_date", flags=re.I)


_BARE_MONTH = re.compile(rf"\b(?:in|during|since|of|last)\s+({_MONTH_NAMES})\b(?!\s+\d)", re.I)
_CJK_MONTH = lexicon.pattern("search.md_month")  # 5月, 五月
_CN_MONTHS = {numeral: int(n) for numeral, n in lexicon.mapping("search.month_number").items()}


def _latest_month(month: int, now: datetime) -> tuple[datetime, datetime]:
    """"in May" without a year: the latest May that has begun."""
    return month_window(now.year if now.month >= month else now.year - 1, month)


def _relative_window(query: str, now: datetime) -> tuple[tuple[datetime, datetime], re.Match] | None:
    """A relative period (yesterday, last week, 上个月, 先月, 三天前, last summer ...) read by memoryx.core.timeparse, with
    the words it was read from: a named day is that day; longer periods are widened by a day before and after
    (timezones, week starts), by a week after for a month or longer (events are often told a few days after)."""
    refs = find_times(query, now)
    if not refs:
        return None
    ref = refs[0]
    m = _Span.find(query, ref.expression)
    if ref.granularity == "day":
        return (ref.start, ref.end), m
    after = timedelta(days=7) if ref.granularity in ("month", "season", "year") else timedelta(days=1)
    return (ref.start - timedelta(days=1), ref.end + after), m


@dataclass(frozen=True)
class _Span:
    """Where a relative period's words are in the query, read like a match (group(0), start(), end())."""

    text: str
    at: int

    @classmethod
    def find(cls, query: str, words: str) -> _Span | None:
        at = query.find(words)
        return None if at < 0 else cls(words, at)

    def group(self, index: int = 0) -> str:
        return self.text

    def start(self) -> int:
        return self.at

    def end(self) -> int:
        return self.at + len(self.text)


def _safe_date(y: int, m: int, d: int) -> datetime | None:
    try:
        return datetime(y, m, d, tzinfo=timezone.utc)
    except ValueError:
        return None


def month_window(y: int, m: int) -> tuple[datetime, datetime]:
    """The month, plus a week: events of a month are often told a few days after it ends."""
    start = datetime(y, m, 1, tzinfo=timezone.utc)
    end = datetime(y + (m == 12), m % 12 + 1, 1, tzinfo=timezone.utc)
    return start, end + timedelta(days=7)


@dataclass(frozen=True)
class QueryPeriod:
    """A period a query names: [start, end) epoch seconds, the words it was read from, and whether the reading is
    confident enough to filter on (`confident`): an explicit date, month or year, a relative period ("last
    summer", "去年", "先月", "yesterday") or a month in a clear temporal phrase ("in May", "during March"), not
    qualified by before / after / since / until (those widen or open the period: a ranking signal only), and not
    "today" / "tonight" (a question about now, not about a day's events)."""

    start: float
    end: float
    text: str
    confident: bool
    relative: bool = False  # read from the present ("last summer", "去年"), not written out ("July 2023")

    @property
    def window(self) -> tuple[float, float]:
        return self.start, self.end


_QUALIFIER_BEFORE = lexicon.pattern("search.bounded_before", flags=re.I)  # "before" May 2023, "since" ...
_QUALIFIER_AFTER = lexicon.pattern("search.bounded_after")  # 2023年"以前", 去年"から"
_NOT_A_PERIOD = lexicon.words("search.not_a_period")  # a question about now, not about a day's events


def _qualified(query: str, m: re.Match) -> bool:
    """The period is bounded on one side only ("before May 2023", "2023年以前", "去年から")."""
    return bool(_QUALIFIER_BEFORE.search(query[max(0, m.start() - 14): m.start()])
                or _QUALIFIER_AFTER.search(query[m.end(): m.end() + 4]))


def query_period(query: str, now: datetime | None = None) -> QueryPeriod | None:
    """The period a query is about, or None; `time_window` gives its [start, end).

    A named day covers that day +- 1 day (timezones, "the day before"); "before <day>" covers the two weeks up
    to it and "after <day>" the two weeks from it; a month covers the month plus a week (events are told a few
    days later); a year the whole year plus two weeks. Relative periods (yesterday, last week, 上周, 先週 ...)
    are taken from `now`.
    """
    now = now or datetime.now(timezone.utc)
    year_default = now.year

    def around(day: datetime, span: re.Match) -> tuple[datetime, datetime]:
        before = query[max(0, span.start() - 14) : span.start()]
        if _BEFORE.search(before):
            return day - timedelta(days=14), day + timedelta(days=1)
        if _AFTER.search(before):
            return day, day + timedelta(days=15)
        return day - timedelta(days=1), day + timedelta(days=2)

    def found(win: tuple[datetime, datetime], m: re.Match, confident: bool = True,
              relative: bool = False) -> QueryPeriod:
        return QueryPeriod(win[0].timestamp(), win[1].timestamp(), m.group(0).strip(),
                           confident and not _qualified(query, m), relative)

    for rx, order in ((_ISO_DATE, "ymd"), (_CJK_DATE, "ymd"), (_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy")):
        for m in rx.finditer(query):
            if order == "ymd":
                y, mo, d = m.group(1), m.group(2), m.group(3)
                if d is None:  # 2023年5月
                    return found(month_window(int(y), int(mo)), m) if 1 <= int(mo) <= 12 else None
                day = _safe_date(int(y), int(mo), int(d))
            elif order == "dmy":
                d, mon, y = m.group(1), m.group(2), m.group(3)
                day = _safe_date(int(y) if y else year_default, MONTHS[mon.lower()], int(d))
            else:
                mon, d, y = m.group(1), m.group(2), m.group(3)
                if mon.lower() == "may" and not y and not query[m.end(1):].lstrip()[:1].isdecimal():
                    continue
                day = _safe_date(int(y) if y else year_default, MONTHS[mon.lower()], int(d))
            if day is not None:
                return found(around(day, m), m)
    m = _MONTH_YEAR.search(query) or _ISO_MONTH.search(query)
    if m:
        if m.re is _ISO_MONTH:
            y, mo = int(m.group(1)), int(m.group(2))
        else:
            y, mo = int(m.group(2)), MONTHS[m.group(1).lower()]
        if 1 <= mo <= 12:
            return found(month_window(y, mo), m)
    m = _CJK_YEAR.search(query) or _YEAR.search(query)
    if m:
        y = int(m.group(1) or m.group(2))
        # "since 2023" reads the year as where a period starts: not the year itself
        since = m.re is _YEAR and m.group(0).lower().startswith("since")
        return found((datetime(y, 1, 1, tzinfo=timezone.utc), datetime(y + 1, 1, 15, tzinfo=timezone.utc)), m,
                     confident=not since)
    relative = _relative_window(query, now)
    if relative is not None:
        (start, end), m = relative
        return found((start, end), m, confident=m.group(0).lower() not in _NOT_A_PERIOD, relative=True)
    m = _BARE_MONTH.search(query)
    if m and not (m.group(1).lower() == "may" and not m.group(0).lower().startswith(("in", "during", "since"))):
        # "in May" / "during March" / "last June" are clear; "since May" opens the period, "of March" is a name
        return found(_latest_month(MONTHS[m.group(1).lower()], now), m,
                     confident=m.group(0).lower().split()[0] in ("in", "during", "last"), relative=True)
    m = _CJK_MONTH.search(query)
    if m:
        token = m.group(1)
        return found(_latest_month(int(token) if token.isdigit() else _CN_MONTHS[token], now), m, relative=True)
    return None


def time_window(query: str, now: datetime | None = None) -> tuple[float, float] | None:
    """The period a query is about, as [start, end) epoch seconds, or None (see `query_period`)."""
    period = query_period(query, now)
    return period.window if period is not None else None


TIME_FILTER_MODES = ("auto", "strict", "off")


def checked_time_filter(value: Any) -> str:
    """A query_time_filter value: auto | strict | off."""
    if not isinstance(value, str) or value.lower() not in TIME_FILTER_MODES:
        raise InvalidInputError(f"query_time_filter must be one of {', '.join(TIME_FILTER_MODES)}; got {value!r}")
    return value.lower()


def checked_reference_time(now: Any, as_of: Any) -> tuple[datetime | None, bool]:
    """A search's reference time and whether later events are hidden: `now` (the question is asked then) or
    `as_of` (asked then, and the memory as it stood: events after it left out); (None, False) for the clock."""
    if now is not None and as_of is not None:
        raise InvalidInputError("pass either now or as_of, not both: as_of is now that also hides later events")
    value = as_of if as_of is not None else now
    if value is None:
        return None, False
    return datetime.fromtimestamp(to_epoch(value, what="now" if as_of is None else "as_of"), tz=timezone.utc), \
        as_of is not None


_OPEN_START, _OPEN_END = -1e11, 1e11  # an open end of a caller's range (years -1200 .. 5100): finite for JSON


def checked_time_range(value: Any, now: datetime | None = None) -> tuple[float, float] | None:
    """A caller's time range as [start, end) epoch seconds, or None.

    Accepted: `(start, end)` / `[start, end]` / `{"start": ..., "end": ...}` with ISO-8601 strings, datetimes
    or epoch seconds, either end None (open); or a period in words read like a query's ("last summer",
    "2023年5月", "上个月", "先月"). InvalidInputError says what is wrong."""
    if value is None:
        return None
    if isinstance(value, str):
        window = time_window(value, now)
        if window is None:
            raise InvalidInputError(f"time_range {value!r} names no period this parser reads; pass (start, end) "
                                    f"as ISO-8601 times instead, e.g. ('2023-05-01', '2023-06-01').")
        return window
    if isinstance(value, dict) and set(value) <= {"start", "end"}:
        start, end = value.get("start"), value.get("end")
    elif isinstance(value, (list, tuple)) and len(value) == 2:
        start, end = value
    else:
        raise InvalidInputError(f"time_range must be (start, end), {{'start', 'end'}} or a period in words; got {value!r}")
    lo = _OPEN_START if start is None else to_epoch(start, what="time_range start")
    hi = _OPEN_END if end is None else to_epoch(end, what="time_range end")
    if hi <= lo:
        raise InvalidInputError(f"time_range end must come after its start; got {value!r}")
    return lo, hi
