"""Relative dates in a text, made absolute from a reference time (a message's timestamp, else now).

"I went to Paris yesterday" said on 2023-05-08 is about 2023-05-07; "我三天前去了北京" on the same day about
2023-05-05; "先週" about the week of 2023-05-01. `find_times(text, base)` finds the expressions (English,
Chinese, Japanese) and resolves each to a period (`TimeRef`: the original words, [start, end) in UTC and a
granularity: day, weekend, week, month, season or year). `annotate(text, base)` keeps the words and appends
the date: "User went to Paris yesterday (2023-05-07)".

Finding is done by rules (a sentence is not a date: a date library would read "May" in "I may go" as a
month); resolving is done by `dateparser` (many languages, relative expressions, maintained), after a small
rule layer rewrites what it does not read: Chinese numerals (三天前 -> 3天前), synonyms (上星期 -> 上周,
昨晚 -> 昨天, 前年 -> 2年前), weekdays of a named week (上周一), weekends and seasons (northern hemisphere).
The period comes from the expression's unit, not from the library (which reads "上个月" as a day).
Query periods (memoryx.search.dates) reuse the same core.
"""

from __future__ import annotations

import calendar
import re
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import Any

__all__ = ["MONTHS", "WEEKDAYS", "WARMED", "TimeRef", "annotate", "base_time", "find_times", "first_date",
           "leading_time", "mentions_time", "names_date", "resolve", "warm"]

MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
MONTHS["sept"] = 9
WEEKDAYS = {d.lower() for d in calendar.day_name}


@dataclass(frozen=True)
class TimeRef:
    expression: str  # the original words, e.g. "yesterday", "三天前"
    start: datetime  # UTC, inclusive
    end: datetime  # UTC, exclusive
    granularity: str  # day | weekend | week | month | season | year

    @property
    def label(self) -> str:
        """The absolute date as written after the expression: 2023-05-07, 2023-05, 2023, week of 2023-05-01."""
        d = self.start
        if self.granularity == "day":
            return d.strftime("%Y-%m-%d")
        if self.granularity == "month":
            return d.strftime("%Y-%m")
        if self.granularity == "year":
            return d.strftime("%Y")
        if self.granularity == "season":
            return f"{d:%Y-%m} to {(self.end - timedelta(days=1)):%Y-%m}"
        return f"{self.granularity} of {d:%Y-%m-%d}"

    def as_metadata(self) -> dict:
        return {"event_time": self.label, "time_expression": self.expression,
                "event_start": self.start.isoformat(), "event_end": self.end.isoformat()}


# ---- reference time ------------------------------------------------------------------------------------

def base_time(value: Any = None) -> datetime:
    """A message timestamp (ISO string, "2023-05-08 13:56 UTC (Monday)", LoCoMo's "1:56 pm on 8 May, 2023",
    epoch seconds, datetime) as an aware UTC datetime; now when absent or unreadable."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), tz=timezone.utc)
    if isinstance(value, str) and value.strip():
        text = re.sub(r"\s*\([A-Za-z]+\)\s*$", "", value.strip())  # our prompt's "(Monday)"
        try:
            return base_time(datetime.fromisoformat(text.replace("Z", "+00:00")))
        except ValueError:
            pass
        parsed = _parser(("en",)).get_date_data(text).date_obj
        if parsed is not None:
            return base_time(parsed)
    return datetime.now(timezone.utc)


# ---- finding --------------------------------------------------------------------------------------------

_CN_NUM = "零〇一二两兩三四五六七八九十百几幾"
_EN_NUM = r"\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a few|a couple of|couple of|several"
_UNITS_EN = r"days?|weeks?|months?|years?"
_DAYS_EN = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12,
            "春天": 3, "夏天": 6, "秋天": 9, "冬天": 12, "春": 3, "夏": 6, "秋": 9, "冬": 12}

_EXPRESSIONS = re.compile(
    "|".join([
        # English
        r"\b(?:the day before yesterday|the day after tomorrow|yesterday|today|tonight|tomorrow|last night)\b",
        rf"\b(?:last|this|next|past) (?:week(?:end)?|month|year|spring|summer|fall|autumn|winter|{_DAYS_EN})\b",
        rf"\b(?:{_EN_NUM}) (?:{_UNITS_EN}) (?:ago|later|from now)\b",
        rf"\bin (?:{_EN_NUM}) (?:{_UNITS_EN})\b(?! ago)",  # "did I take part in a month ago" is no future
        # Chinese
        r"大前天|前天|昨天|昨晚|昨夜|今天|今晚|明天|后天|大后天",
        r"(?:上|下|这|本)(?:个)?(?:周|星期|礼拜)[一二三四五六日天]?",
        r"(?:去年|今年|明年)?(?:春天|夏天|秋天|冬天)",  # before 去年: the longer expression wins
        r"(?:上|下|这|本)个?月|去年|前年|今年|明年|后年",
        rf"[\d{_CN_NUM}]+\s*(?:天|日|周|星期|个月|個月|ヶ月|か月|カ月|年|週間)\s*(?:以前|之前|前|以后|之后|后|後)",
        # Japanese
        r"一昨日|昨日|今日|明日|明後日|一昨年|昨年|来年|先週|今週|来週|先月|今月|来月",
    ]),
    re.I,
)
_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


def first_date(text: str) -> datetime | None:
    """The first ISO day written in `text` ("moved on 2023-05-07"): a model that made the date absolute."""
    for m in _ISO_DAY.finditer(text or ""):
        try:
            return datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), tzinfo=timezone.utc)
        except ValueError:
            continue
    return None


def find_times(text: str, base: Any = None) -> list[TimeRef]:
    """The relative dates in `text`, resolved from `base` (see `base_time`), in order of appearance."""
    if not text:
        return []
    ref = base_time(base)
    out: list[TimeRef] = []
    for m in _EXPRESSIONS.finditer(text):
        if m.group(0) in ("今日", "明日") and _followed_by_month_day(text, m):  # part of a date, not a word
            continue
        found = resolve(m.group(0), ref)
        if found is not None:
            out.append(found)
    return out


def mentions_time(text: str) -> bool:
    """The text names a relative date this module reads (no resolving)."""
    return bool(text) and _EXPRESSIONS.search(text) is not None


_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
# a date or a time said as such: "on the 14th of jan", "June 3rd", "due in March", "at 3pm", "on Fridays"
_NAMED_DATE = re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH_NAMES})\b"
                         rf"|\b(?:{_MONTH_NAMES})\s+\d{{1,2}}(?:st|nd|rd|th)?\b"
                         rf"|\b(?:in|by|since|until|till|from|due)\s+(?:early\s+|late\s+|mid-?)?(?:{_MONTH_NAMES})\b"
                         r"|\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b", re.I)


def names_date(text: str) -> bool:
    """The text names a date, a clock time or a weekday as such ("exam is on the 14th of jan", "at 3pm"), not
    relative to a day (`mentions_time`)."""
    return bool(text) and _NAMED_DATE.search(text) is not None


def leading_time(text: str) -> tuple[str, str] | None:
    """(expression, rest) when `text` starts with a relative date: "Yesterday, I went ..." -> ("Yesterday",
    "I went ..."); "昨天我去了北京" -> ("昨天", "我去了北京"). None otherwise."""
    m = _EXPRESSIONS.match(text or "")
    if not m:
        return None
    rest = text[m.end():].lstrip(" ,、，")
    return (m.group(0), rest) if rest else None


def _followed_by_month_day(text: str, m: re.Match) -> bool:
    return bool(re.match(r"\s*\d", text[m.end():]))


# ---- resolving ------------------------------------------------------------------------------------------

def _cn_number(s: str) -> int | None:
    digits = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9, "几": 3, "幾": 3}
    if s.isdigit():
        return int(s)
    total, current = 0, 0
    for ch in s:
        if ch in digits:
            current = digits[ch]
        elif ch == "十":
            total += (current or 1) * 10
            current = 0
        elif ch == "百":
            total += (current or 1) * 100
            current = 0
        else:
            return None
    return total + current


_EN_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
             "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a few": 3, "a couple of": 2,
             "couple of": 2, "several": 3}
_SYNONYMS = [(re.compile(p), r) for p, r in [
    (r"昨晚|昨夜", "昨天"), (r"今晚", "今天"), (r"(上|下)个?(星期|礼拜)", r"\1周"), (r"(这|本)个?(周|星期|礼拜)", "本周"),
    (r"这个?月", "本月"), (r"^前年$|^一昨年$", "2年前"), (r"^后年$", "2年后"), (r"以前|之前", "前"),
    (r"以后|之后", "后"), (r"個月", "个月"), (r"^last night$", "yesterday"), (r"^tonight$", "today"),
    (r"^past ", "last "),
]]


def _unit_of(expr: str) -> str:
    e = expr.lower()
    if re.search(r"weekend", e):
        return "weekend"
    if re.search(r"spring|summer|fall|autumn|winter|春|夏|秋|冬", e):
        return "season"
    if re.search(r"week|周|星期|礼拜|週", e) and not re.search(rf"{_DAYS_EN}|[周期拜][一二三四五六日天]", e):
        return "week"
    if re.search(r"month|月", e):
        return "month"
    if re.search(r"year|年", e):
        return "year"
    return "day"


@lru_cache(maxsize=4)
def _parser(languages: tuple[str, ...]):
    import dateparser  # imported on first use: ~0.3 s, not paid by processes that never parse a date

    return dateparser.DateDataParser(languages=list(languages))


def _point(expr: str, ref: datetime) -> datetime | None:
    """dateparser's reading of one (rewritten) expression, relative to `ref`."""
    import dateparser

    naive = ref.astimezone(timezone.utc).replace(tzinfo=None)
    settings = {"RELATIVE_BASE": naive, "PREFER_DATES_FROM": "past", "RETURN_AS_TIMEZONE_AWARE": False}
    found = dateparser.parse(expr, languages=["en", "zh", "ja"], settings=settings)
    return None if found is None else found.replace(tzinfo=timezone.utc)


def _day(dt: datetime) -> datetime:
    return datetime(dt.year, dt.month, dt.day, tzinfo=timezone.utc)


def _period(point: datetime, unit: str) -> tuple[datetime, datetime]:
    day = _day(point)
    if unit == "week":
        start = day - timedelta(days=day.weekday())
        return start, start + timedelta(days=7)
    if unit == "month":
        start = day.replace(day=1)
        return start, (start + timedelta(days=32)).replace(day=1)
    if unit == "year":
        return day.replace(month=1, day=1), day.replace(year=day.year + 1, month=1, day=1)
    return day, day + timedelta(days=1)


def _season(expr: str, ref: datetime) -> tuple[datetime, datetime] | None:
    """Three months from the season's first month (spring 3, summer 6, autumn 9, winter 12; northern
    hemisphere). "last summer": the latest one that has ended; "this": the one of this year; "next": the next
    one not yet begun; a bare season: the latest one that has begun."""
    e = expr.lower()
    month = next((m for name, m in _SEASONS.items() if name in e), None)
    if month is None:
        return None
    begun = ref.year if ref.month >= month else ref.year - 1  # the latest one that has begun

    def span(year: int) -> tuple[datetime, datetime]:
        end_year, end_month = (year + 1, month - 9) if month + 3 > 12 else (year, month + 3)
        return datetime(year, month, 1, tzinfo=timezone.utc), datetime(end_year, end_month, 1, tzinfo=timezone.utc)

    if re.search(r"^(last|past)", e):
        year = begun if span(begun)[1] <= ref else begun - 1
    elif e.startswith("去年"):
        year = ref.year - 1
    elif re.search(r"^(next|明年)", e):
        year = ref.year + 1 if e.startswith("明年") else (begun + 1)
    elif re.search(r"^(this|今年)", e):
        year = ref.year - 1 if month == 12 and ref.month < 3 else ref.year
    else:
        year = begun
    return span(year)


def _weekday_of_week(expr: str, ref: datetime) -> datetime | None:
    """上周一 / 下周五 / 这周日: that weekday of the named week (weeks start on Monday)."""
    m = re.match(r"(上|下|这|本)个?(?:周|星期|礼拜)([一二三四五六日天])$", expr)
    if not m:
        return None
    shift = {"上": -7, "下": 7}.get(m.group(1), 0)
    monday = _day(ref) - timedelta(days=ref.weekday()) + timedelta(days=shift)
    return monday + timedelta(days="一二三四五六日".find(m.group(2).replace("天", "日")))


def resolve(expression: str, base: Any = None) -> TimeRef | None:
    """One expression ("yesterday", "三天前", "先週", "last summer") as a period from `base`; None if unread."""
    ref = base_time(base)
    expr = expression.strip()
    unit = _unit_of(expr)
    if unit == "season":
        span = _season(expr, ref)
        return None if span is None else TimeRef(expression, span[0], span[1], "season")
    if unit == "weekend":  # the Saturday and Sunday of the week named
        shift = {"last": -7, "past": -7, "next": 7}.get(expr.lower().split()[0], 0)
        monday = _day(ref) - timedelta(days=ref.weekday()) + timedelta(days=shift)
        return TimeRef(expression, monday + timedelta(days=5), monday + timedelta(days=7), "weekend")
    rewritten = expr
    for rx, repl in _SYNONYMS:
        rewritten = rx.sub(repl, rewritten)
    point = _weekday_of_week(rewritten, ref)
    if point is None:
        rewritten = re.sub(rf"[{_CN_NUM}]+(?=\s*[天日周星个個ヶかカ年週])",
                           lambda m: str(_cn_number(m.group(0)) or m.group(0)), rewritten)
        rewritten = re.sub(rf"^(in )?({'|'.join(sorted(_EN_WORDS, key=len, reverse=True))}) ",
                           lambda m: f"{m.group(1) or ''}{_EN_WORDS[m.group(2).lower()]} ", rewritten, flags=re.I)
        rewritten = re.sub(r"(\d+) (\w+) from now$", r"in \1 \2", rewritten)
        rewritten = re.sub(r"(\d+) (\w+) later$", r"in \1 \2", rewritten)
        point = _point(rewritten, ref)
    if point is None:
        return None
    start, end = _period(point, unit)
    return TimeRef(expression, start, end, unit)


def annotate(text: str, base: Any = None) -> tuple[str, list[TimeRef]]:
    """`text` with each relative date followed by its absolute date, and the dates found.

    "User went to Paris yesterday" -> "User went to Paris yesterday (2023-05-07)". An expression already
    followed by a date (a model that did it itself) is left as it is."""
    refs = find_times(text, base)
    if not refs:
        return text, []
    out, pos = [], 0
    for ref in refs:
        i = text.find(ref.expression, pos)
        if i < 0:
            continue
        j = i + len(ref.expression)
        out.append(text[pos:j])
        if not re.match(r"\s*[（(]\s*\d{4}", text[j:]):
            cjk = bool(re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", ref.expression))
            out.append(f"（{ref.label}）" if cjk else f" ({ref.label})")
        pos = j
    out.append(text[pos:])
    return "".join(out), refs


WARMED = threading.Event()  # set once `warm` has read a date of each language


def warm() -> None:
    """Read one relative date of each language, so that the date library builds its tables (its patterns and
    timezone expressions: ~0.15-0.4 s of CPU) now, not in the first search or add that names a date; a server calls
    it at startup, on a thread of its own."""
    base = datetime(2024, 5, 1, 12, tzinfo=timezone.utc)
    for expression in ("3 days ago", "三天前", "3日前"):
        resolve(expression, base)
    WARMED.set()
