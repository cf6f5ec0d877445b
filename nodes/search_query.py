"""analyze_query: the first node of the search graph. No model is called by default.

It validates the scope and the filters, normalises the query, and writes the search `plan`:

* ``tokens``      keyword tokens (memoryx.text.tokenize: CJK-aware, the same tokenizer as the index)
* ``entity_candidates`` the query's word n-grams (Latin) and character n-grams (Chinese/Japanese/Korean):
                  graph_recall matches them exactly (normalised) against the scope's entities with
                  `SQLStore.find_entities_by_names` - one SQL query, no model, in parallel with the embedding
* ``names``       the capitalised words of the query that look like names (ranking adds the graph entities)
* ``time_window`` [start, end) epoch seconds when the query names a date or a period ("on 9 May 2023",
                  "in July 2023", "2023年5月", "last week", "昨天", "先週"), else None
* ``when``        True when the query asks for a time ("when ...", "什么时候", "いつ")
* ``mode`` / ``expand_depth`` / ``graph``: the query planner (seed 002 §12.3.4). ``expand_depth`` counts
  hops from the entities named in the query: 0 = no graph path, 1 = the relations of those entities,
  2 = plus the relations of the entities they reach. ``fast``: depth 0 (dense + keyword only); ``deep``:
  depth 2; ``auto``: the graph path runs when the query names known entities, with the configured depth
  (MEMORYX_GRAPH_EXPAND_DEPTH, default 1), raised to 2 for causal / relational questions ("why ...",
  "related to ...", "为什么", "有关", "なぜ"). An explicit ``expand_depth`` input wins in auto and deep mode.

An optional model step rewrites the query (and lists extra entity names / keywords) when the input says
``rewrite: true`` or the setting ``search_rewrite`` is on; a model failure falls back to the plain query.
"""

from __future__ import annotations

import calendar
import json
import logging
import re
import time
import unicodedata
from datetime import datetime, timedelta, timezone
from typing import Any

from langgraph.runtime import Runtime

from memoryx.context import Context, context_of, services_of
from memoryx.errors import InvalidInputError
from memoryx.filters import parse_filters
from memoryx.scope import Scope
from memoryx.state import SearchState
from memoryx.text import CJK_CLASS, tokenize

log = logging.getLogger(__name__)

MAX_LIMIT = 1000
MAX_ENTITY_CANDIDATES = 400

# --------------------------------------------------------------------------------------------- helpers


def scope_of(state: dict) -> Scope:
    """The caller's scope; ScopeError (with the fields to pass) when none is given."""
    return Scope(user_id=state.get("user_id") or None, agent_id=state.get("agent_id") or None,
                 run_id=state.get("run_id") or None)


def search_limit(state: dict) -> int:
    limit = state.get("limit")
    if limit is None:
        return 10
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInputError(f"limit must be an integer between 1 and {MAX_LIMIT}, got {limit!r}")
    return limit


def normalize_query(query: Any) -> str:
    if query is None:
        return ""
    if not isinstance(query, str):
        raise InvalidInputError(f"query must be a string, got {type(query).__name__}")
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", query)).strip()



_CJK_RUN = re.compile(f"[{CJK_CLASS}]+")
_LATIN_WORD = re.compile(rf"(?:(?![{CJK_CLASS}])[^\W_])+(?:['’.\-](?:(?![{CJK_CLASS}])[^\W_])+)*")


def entity_candidates(query: str, max_words: int = 4, max_chars: int = 8) -> list[str]:
    """Word n-grams (1..4 words) and CJK character n-grams (1..8 chars) of the query: every string that could
    be an entity name, to be matched exactly (after normalisation) against the scope's entities."""
    text = unicodedata.normalize("NFKC", query)
    out: dict[str, None] = {}
    # latin-like words, kept in order; possessive 's removed ("Melanie's" -> "Melanie")
    words = [re.sub(r"['’]s$", "", w) for w in _LATIN_WORD.findall(text)]
    for n in range(1, max_words + 1):
        for i in range(len(words) - n + 1):
            out[" ".join(words[i : i + n])] = None
    for run in _CJK_RUN.findall(text):
        for n in range(1, min(max_chars, len(run)) + 1):
            for i in range(len(run) - n + 1):
                out[run[i : i + n]] = None
    cands = [c for c in out if c.strip()]
    return cands[:MAX_ENTITY_CANDIDATES]


_QUESTION_WORDS = {
    "what", "when", "where", "who", "whom", "whose", "why", "which", "how", "did", "does", "do", "is", "are",
    "was", "were", "can", "could", "would", "should", "will", "has", "have", "had", "tell", "show", "find",
    "list", "give", "i", "my", "me", "we", "our", "you", "your", "the", "a", "an", "in", "on", "at", "of",
    "and", "or", "to", "for", "with", "from", "about", "it", "this", "that", "please", "remind", "recall",
    "in", "during", "since", "after", "before", "last", "next", "yesterday", "today", "tomorrow",
}
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_MONTHS["sept"] = 9
_WEEKDAYS = {d.lower() for d in calendar.day_name}


def proper_names(query: str) -> list[str]:
    """Capitalised words of a Latin-script query that look like names ("Caroline", "New York")."""
    out: dict[str, None] = {}
    for m in re.finditer(r"\b[A-Z][\w’'\-]*(?:\s+[A-Z][\w’'\-]*)*", query):
        phrase = re.sub(r"['’]s$", "", m.group(0))
        parts = [p for p in phrase.split() if p.lower() not in _QUESTION_WORDS and p.lower() not in _MONTHS
                 and p.lower() not in _WEEKDAYS]
        if parts:
            out[" ".join(parts)] = None
    return list(out)


# question cues ---------------------------------------------------------------------------------------

_WHEN_RE = re.compile(
    r"^\s*(when|what (year|month|day|date|time)|how long (ago|since|before|after)?|since when|at what time)\b"
    r"|\bwhen\b|什么时候|何时|哪一?天|哪一?年|几月|几号|几点|多久|いつ|何時|何日|何年|何月", re.I)
_DEEP_RE = re.compile(
    r"\b(why|because|cause[sd]?|reason|related|relationship|connected|connection|linked|associated)\b"
    r"|为什么|为何|因为|所以|原因|导致|有关|关于|相关|联系|関係|なぜ|どうして|理由|原因", re.I)


def asks_when(query: str) -> bool:
    return bool(_WHEN_RE.search(query))


# dates and periods -----------------------------------------------------------------------------------

_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_NAMES})\.?,?\s*(\d{{4}})?\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s*(\d{{4}}))?", re.I)
_MONTH_YEAR = re.compile(rf"\b({_MONTH_NAMES})\.?,?\s+(\d{{4}})\b", re.I)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_ISO_MONTH = re.compile(r"\b(\d{4})-(\d{1,2})\b(?!-)")
_CJK_DATE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(?:(\d{1,2})\s*[日号])?")
_CJK_YEAR = re.compile(r"(\d{4})\s*年")
_YEAR = re.compile(r"\b(?:in|of|during|since|year)\s+((?:19|20)\d{2})\b|^((?:19|20)\d{2})$", re.I)
_BEFORE = re.compile(r"\b(before|prior to|until|by)\s*$|之前|以前|前に|まで", re.I)
_AFTER = re.compile(r"\b(after|since|following)\s*$|之后|以后|後に|以降", re.I)

_RELATIVE = [
    (re.compile(r"\byesterday\b|昨天|昨日", re.I), lambda now: (_day(now) - timedelta(days=1), _day(now))),
    (re.compile(r"\btoday\b|今天|今日", re.I), lambda now: (_day(now), _day(now) + timedelta(days=1))),
    (re.compile(r"\b(last|past) week\b|上周|上星期|先週", re.I),
     lambda now: (_day(now) - timedelta(days=14), _day(now) + timedelta(days=1))),
    (re.compile(r"\bthis week\b|这周|本周|今週", re.I), lambda now: (_day(now) - timedelta(days=7), _day(now) + timedelta(days=1))),
    (re.compile(r"\b(last|past) month\b|上个月|上月|先月", re.I),
     lambda now: (_day(now) - timedelta(days=62), _day(now) + timedelta(days=1))),
    (re.compile(r"\b(last|past) year\b|去年|昨年", re.I),
     lambda now: (datetime(now.year - 1, 1, 1, tzinfo=timezone.utc), datetime(now.year, 1, 15, tzinfo=timezone.utc))),
]


def _day(dt: datetime) -> datetime:
    return datetime(dt.year, dt.month, dt.day, tzinfo=timezone.utc)


def _safe_date(y: int, m: int, d: int) -> datetime | None:
    try:
        return datetime(y, m, d, tzinfo=timezone.utc)
    except ValueError:
        return None


def _month_window(y: int, m: int) -> tuple[datetime, datetime]:
    start = datetime(y, m, 1, tzinfo=timezone.utc)
    end = datetime(y + (m == 12), m % 12 + 1, 1, tzinfo=timezone.utc)
    # events of a month are often told a few days after it ends
    return start, end + timedelta(days=7)


def time_window(query: str, now: datetime | None = None) -> tuple[float, float] | None:
    """The period a query is about, as [start, end) epoch seconds, or None.

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

    def pack(win: tuple[datetime, datetime]) -> tuple[float, float]:
        return win[0].timestamp(), win[1].timestamp()

    for rx, order in ((_ISO_DATE, "ymd"), (_CJK_DATE, "ymd"), (_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy")):
        for m in rx.finditer(query):
            if order == "ymd":
                y, mo, d = m.group(1), m.group(2), m.group(3)
                if d is None:  # 2023年5月
                    return pack(_month_window(int(y), int(mo))) if 1 <= int(mo) <= 12 else None
                day = _safe_date(int(y), int(mo), int(d))
            elif order == "dmy":
                d, mon, y = m.group(1), m.group(2), m.group(3)
                day = _safe_date(int(y) if y else year_default, _MONTHS[mon.lower()], int(d))
            else:
                mon, d, y = m.group(1), m.group(2), m.group(3)
                if mon.lower() == "may" and not y and not re.match(r"\s*\d", query[m.end(1):]):
                    continue
                day = _safe_date(int(y) if y else year_default, _MONTHS[mon.lower()], int(d))
            if day is not None:
                return pack(around(day, m))
    m = _MONTH_YEAR.search(query) or _ISO_MONTH.search(query)
    if m:
        if m.re is _ISO_MONTH:
            y, mo = int(m.group(1)), int(m.group(2))
        else:
            y, mo = int(m.group(2)), _MONTHS[m.group(1).lower()]
        if 1 <= mo <= 12:
            return pack(_month_window(y, mo))
    m = _CJK_YEAR.search(query) or _YEAR.search(query)
    if m:
        y = int(m.group(1) or m.group(2))
        return pack((datetime(y, 1, 1, tzinfo=timezone.utc), datetime(y + 1, 1, 15, tzinfo=timezone.utc)))
    for rx, window in _RELATIVE:
        if rx.search(query):
            return pack(window(now))
    return None


# ------------------------------------------------------------------------------------------- the node


def _setting(settings: Any, name: str, default: Any) -> Any:
    value = getattr(settings, name, None)
    return default if value is None else value


def plan_mode(state: dict, ctx: Context, settings: Any, query: str) -> tuple[str, int]:
    """(mode, expand_depth) - the query planner of seed 002 §12.3.4 (the graph path runs when depth > 0 and
    the query names entities of the scope)."""
    mode = (state.get("mode") or getattr(ctx, "search_mode", None) or settings.search_mode or "auto").lower()
    if mode not in ("fast", "deep", "auto"):
        raise InvalidInputError(f"mode must be one of fast, deep, auto; got {state.get('mode')!r}")
    explicit = state.get("expand_depth")
    if explicit is not None:
        if isinstance(explicit, bool) or not isinstance(explicit, int) or not 0 <= explicit <= 2:
            raise InvalidInputError(f"expand_depth must be 0, 1 or 2; got {explicit!r}")
    configured = getattr(ctx, "graph_expand_depth", None)
    configured = settings.graph_expand_depth if configured is None else configured
    if mode == "fast":
        depth = 0
    elif mode == "deep":
        depth = 2 if explicit is None else explicit
    else:
        depth = configured if explicit is None else explicit
        if explicit is None and depth > 0 and _DEEP_RE.search(query):
            depth = 2
    return mode, max(0, min(2, int(depth)))


def _rewrite(services: Any, query: str) -> dict:
    """Optional model step: {"query": rewritten, "entities": [...], "keywords": [...]} (best effort)."""
    from langchain_core.messages import HumanMessage, SystemMessage

    llm = services.extraction_llm
    prompt = (
        "Rewrite the user's question into a short search query for a personal memory store, in the question's "
        "own language. Also list the names of people, places, organisations or things it mentions, and a few "
        'extra keywords (synonyms). Answer with JSON only: {"query": "...", "entities": ["..."], '
        '"keywords": ["..."]}'
    )
    msg = llm.invoke([SystemMessage(content=prompt), HumanMessage(content=query)])
    text = msg.content if isinstance(msg.content, str) else json.dumps(msg.content)
    m = re.search(r"\{.*\}", text, re.S)
    data = json.loads(m.group(0)) if m else {}
    if not isinstance(data, dict):
        return {}
    out: dict = {}
    if isinstance(data.get("query"), str) and data["query"].strip():
        out["query"] = data["query"].strip()
    for key in ("entities", "keywords"):
        vals = data.get(key)
        if isinstance(vals, list):
            out[key] = [v.strip() for v in vals if isinstance(v, str) and v.strip()][:20]
    return out


def analyze_query(state: SearchState, runtime: Runtime[Context]) -> dict:
    start = time.perf_counter()
    scope = scope_of(state)  # ScopeError first: a search without a scope is always refused
    limit = search_limit(state)
    parse_filters(state.get("filters"))  # InvalidInputError naming a bad operator, before any store is read
    threshold = state.get("threshold")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
        raise InvalidInputError(f"threshold must be a number, got {threshold!r}")
    relation_types = state.get("relation_types")
    if relation_types is not None and (not isinstance(relation_types, list)
                                       or not all(isinstance(r, str) and r.strip() for r in relation_types)):
        raise InvalidInputError(f"relation_types must be a list of relation names, got {relation_types!r}")

    query = normalize_query(state.get("query"))
    if not query:
        return {"plan": {"empty": True, "limit": limit, "scope": scope.as_dict()},
                "timings": {"analyze_query": _ms(start)}}

    services = services_of(runtime)
    ctx = context_of(runtime)
    settings = services.settings

    rewritten: dict = {}
    if state.get("rewrite") or _setting(settings, "search_rewrite", False):
        try:
            rewritten = _rewrite(services, query)
        except Exception as exc:  # the plain query still works
            log.warning("query rewriting failed, searching with the plain query: %s", exc)

    graph_available = services.graph is not None and getattr(ctx, "graph_enabled", True)
    mode, depth = plan_mode(state, ctx, settings, query)
    # The entity lookup itself runs in graph_recall, in parallel with the query embedding.
    candidates = entity_candidates(query) + list(rewritten.get("entities") or [])
    window = time_window(query)
    keyword_text = " ".join([rewritten.get("query") or query, *rewritten.get("keywords", [])])
    plan = {
        "query": query,
        "semantic_query": rewritten.get("query") or query,
        "keyword_query": keyword_text,
        "tokens": tokenize(keyword_text),
        "entity_candidates": candidates,
        "names": proper_names(query),
        "time_window": list(window) if window else None,
        "when": asks_when(query),
        "mode": mode,
        "expand_depth": depth,
        "graph": graph_available and depth > 0,
        "limit": limit,
        "scope": scope.as_dict(),
        "rewritten": bool(rewritten),
        "reranker": bool(getattr(settings, "reranker", None)),
    }
    return {"plan": plan, "timings": {"analyze_query": _ms(start)}}


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)
