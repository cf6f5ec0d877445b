"""How much a memory matters, and how sure we are of it.

Importance is reasoned from four factors, each in [0, 1], stored beside the memory
(`importance_factors`) so that ranking, forgetting and `explain` read the same numbers:

    importance = 0.25 x scarcity + 0.35 x impact + 0.20 x recency + 0.20 x certainty

* scarcity  = 1 - the highest cosine similarity between the fact and the owner's existing memories (a fact
  the user has said five times adds little that is new; the first mention of an allergy adds a lot);
* impact    = by memory type: a preference shapes every later conversation (0.9), a fact is base
  information (0.8), semantic knowledge is useful reference (0.7), an event may matter once (0.5);
* recency   = 1 - age / 30 days of the event the fact is about (a replayed chat log from last year is news
  from last year), floored at 0;
* certainty = how definite the statement is: the extraction model's judgment when it gives one, else a
  rule over hedging words in Chinese, English and Japanese ("maybe", "可能", "かもしれない").

Confidence is the certainty of the statement times the reliability of its source (the user about
themselves > the assistant about the user, or what a participant says of someone else). Conflict
resolution reads it: a newer statement replaces an older one unless it is much less confident
(`overrides`).
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from typing import Any

from memoryx.core.runs import held_back

WEIGHTS = {"scarcity": 0.25, "impact": 0.35, "recency": 0.20, "certainty": 0.20}
IMPACT = {"preference": 0.9, "fact": 0.8, "semantic": 0.7, "episodic": 0.5}
DEFAULT_IMPACT = 0.5
RECENCY_DAYS = 30.0

# certainty by rule, when the model gave none
CERTAIN = 0.9
HEDGED = 0.5
GUESSED = 0.3
_HEDGES = re.compile(
    r"\b(maybe|perhaps|probably|possibly|might|may be|i think|i guess|i suppose|not sure|kind of|sort of|"
    r"likely|seems?|considering|thinking about|planning to consider)\b"
    r"|可能|也许|或许|大概|好像|似乎|应该是|不确定|说不定|考虑|打算考虑"
    r"|かもしれ|たぶん|多分|おそらく|と思う|みたい|らしい|ような気が|検討",
    re.IGNORECASE)
_GUESSES = re.compile(r"\b(no idea|i don't know|not sure at all)\b|不知道|猜|わからない|分からない", re.IGNORECASE)
_QUESTION = re.compile(r"[?？]\s*$")

# source reliability: who said it about whom
SOURCE_RELIABILITY = {"user": 1.0, "agent": 0.8, "speaker": 0.9, "inferred": 0.7}
# a newer statement loses to an older one only when this much less confident
CONFIDENCE_MARGIN = 0.2


def _clip(value: float) -> float:
    return max(0.0, min(1.0, float(value)))


def scarcity(max_similarity: float | None) -> float:
    """1 - the highest similarity to the owner's existing memories (1.0 when there are none)."""
    if max_similarity is None or not math.isfinite(max_similarity):
        return 1.0
    return _clip(1.0 - max(0.0, max_similarity))


def impact(memory_type: str | None) -> float:
    return IMPACT.get(str(memory_type or "").lower(), DEFAULT_IMPACT)


def recency(event_time: datetime | None, now: datetime | None = None) -> float:
    """1 for an event of today, falling linearly to 0 at RECENCY_DAYS old (undated: today)."""
    if event_time is None:
        return 1.0
    now = now or datetime.now(timezone.utc)
    if event_time.tzinfo is None:
        event_time = event_time.replace(tzinfo=timezone.utc)
    age_days = max(0.0, (now - event_time).total_seconds() / 86400.0)
    return _clip(1.0 - age_days / RECENCY_DAYS)


def rule_certainty(text: str) -> float:
    """Certainty of a statement by its wording: a guess or a question < hedged < plain."""
    if _GUESSES.search(text) or _QUESTION.search(text):
        return GUESSED
    if _HEDGES.search(text):
        return HEDGED
    return CERTAIN


def certainty(text: str, judged: Any = None) -> tuple[float, str]:
    """(certainty, how it was decided: "model" or "rule"). A readable number from the model wins."""
    if isinstance(judged, (int, float)) and not isinstance(judged, bool) and math.isfinite(float(judged)):
        value = float(judged)
        return _clip(value / 10.0 if 1.0 < value <= 10.0 else value), "model"
    return rule_certainty(text), "rule"


def weighted(factors: dict[str, float]) -> float:
    return round(sum(WEIGHTS[k] * _clip(factors.get(k, 0.0)) for k in WEIGHTS), 3)


def evaluate(text: str, memory_type: str | None, *, max_similarity: float | None,
             event_time: datetime | None = None, judged_certainty: Any = None,
             now: datetime | None = None) -> tuple[float, dict]:
    """(importance, factors) of one fact. `factors` holds the four numbers and `certainty_by`."""
    sure, by = certainty(text, judged_certainty)
    factors = {"scarcity": round(scarcity(max_similarity), 3), "impact": impact(memory_type),
               "recency": round(recency(event_time, now), 3), "certainty": round(sure, 3), "certainty_by": by}
    return weighted(factors), factors


def source_of(fact: dict) -> str:
    """Who vouches for a fact: the user about themselves, the assistant, a named speaker of a group chat."""
    if fact.get("owner") == "agent":
        return "agent"
    if fact.get("speaker"):
        return "speaker"
    return "user"


def confidence(certainty_value: float, source: str) -> float:
    return round(_clip(certainty_value) * SOURCE_RELIABILITY.get(source, SOURCE_RELIABILITY["inferred"]), 3)


def overrides(new_confidence: float | None, old_confidence: float | None, *,
              margin: float = CONFIDENCE_MARGIN) -> bool:
    """Whether a newer statement may replace an older one: yes, unless it is much less confident."""
    if new_confidence is None or old_confidence is None:
        return True
    return new_confidence + margin >= old_confidence


def guard_confidence(operations: list[dict], facts: list[dict], candidates: list[dict], *,
                     margin: float = CONFIDENCE_MARGIN) -> tuple[list[dict], list[str]]:
    """Operations with every UPDATE/DELETE that a much less confident fact would make of a more confident
    memory replaced: the UPDATE becomes an ADD beside the old memory (both statements stay, each with its
    confidence), the DELETE becomes NONE. A note per change, for the judgment record."""
    held = {c["id"]: c.get("confidence") for c in candidates if c.get("id")}
    out, notes = [], []
    for op in operations:
        fi = op.get("fact_index")
        fact = facts[fi] if isinstance(fi, int) and 0 <= fi < len(facts) else {}
        old, new = held.get(op.get("id")), fact.get("confidence")
        if op.get("event") in ("UPDATE", "DELETE") and not overrides(new, old, margin=margin):
            event = op["event"]
            why = f"the new statement (confidence {new}) is much less sure than memory {op['id']} ({old})"
            op = held_back(op, why)
            notes.append(f"{why}: the judge's {event} was not applied")
        out.append(op)
    return out, notes
