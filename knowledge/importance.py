"""How much a memory matters, and how sure we are of it.

Importance is reasoned from four factors, each in [0, 1], stored beside the memory
(`importance_factors`) so that ranking, forgetting and `explain` read the same numbers:

    importance = 0.25 x scarcity + 0.35 x impact + 0.20 x recency + 0.20 x certainty

* scarcity  = 1 - the highest cosine similarity between the fact and the owner's existing memories (a fact
  the user has said five times adds little that is new; the first mention of an allergy adds a lot);
* impact    = by memory type: a preference shapes every later conversation (0.9), a fact is base
  information (0.8), semantic knowledge is useful reference (0.7), an event may matter once (0.5); then the
  wording rules of the extraction decider's patterns: a fact about the user's life (born, married, died,
  diagnosed, allergic, their name, work, home, family) at least 0.85, small talk and trivia (greetings,
  thanks and reactions; meals, coffee, weather, traffic, TV, errands; 天气, 吃什么, 无聊) 0.2 — a preference
  keeps 0.9 (`impact_by` says which);
* recency   = 1 - age / 30 days of the event the fact is about (a replayed chat log from last year is news
  from last year), floored at 0. It is a property of time, not of the fact: the stored score holds it as of
  ingest (when it is 1.0 for anything said today), and every decision reads it again at its own clock
  (`importance_at`: a consolidation pass promoting to long-term, `explain`), from the event time kept in the
  factors (`event_at`);
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

from memoryx.core.chitchat import is_chitchat
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


# the extraction decider's rule patterns (personal facts 0.85, casual chat 0.2), in English, Chinese, Japanese
LIFE_IMPACT = 0.85
CASUAL_IMPACT = 0.2
_LIFE_EVENT = re.compile(
    r"\b(born|birth|pregnan\w*|married|marry|wedding|divorc\w*|engaged|died|passed away|funeral|diagnos\w*|"
    r"allerg\w*|surgery|cancer|diabetes|disabilit\w*|my name|name is|called me|graduat\w*|retired|adopted|"
    r"moved to|lives? in|living in|works? (?:as|at|for)|working (?:as|at|for)|job as|hired|promoted|"
    r"lost (?:my|his|her) job)\b"
    r"|出生|生了|怀孕|结婚|离婚|订婚|去世|过世|葬礼|诊断|确诊|过敏|手术|我叫|名字|住在|搬到|搬家|在.{1,12}工作|毕业|退休|领养"
    r"|生まれ|妊娠|結婚|離婚|婚約|亡くな|葬式|診断|アレルギー|手術|名前|住んで|引っ越|で働|卒業|退職",
    re.IGNORECASE)
_CASUAL = re.compile(
    r"\b(breakfast|lunch|dinner|brunch|snack|sandwich|burger|pizza|coffee|latte|cappuccino|ate|eaten|drank|"
    r"weather|rain(?:ed|ing|y)?|sunny|cloudy|traffic|commute|bored|boring|nap(?:ped)?|tv|netflix|"
    r"watched (?:a|an|the|some)? ?(?:movie|film|show|video|episode)s?|socks|groceries|laundry|errands?)\b"
    r"|天气|吃什么|无聊|早饭|午饭|晚饭|早餐|午餐|晚餐|咖啡|下雨|堵车|看电视|看了.{0,6}电影|买菜|洗衣服|午睡"
    r"|天気|昼ご飯|朝ご飯|晩ご飯|ランチ|コーヒー|退屈|暇|雨が|渋滞|テレビ|昼寝|洗濯",
    re.IGNORECASE)
_FAMILY = re.compile(
    r"\b(?:my|user's|his|her) (?:wife|husband|son|daughter|mother|mom|mum|father|dad|sister|brother|kids?|children|"
    r"child|partner|girlfriend|boyfriend|grand\w+|parents?)\b"
    r"|妻子|(?<!大)丈夫|老婆|老公|女儿|儿子|孩子|父亲|母亲|爸爸|妈妈|哥哥|姐姐|弟弟|妹妹|男朋友|女朋友"
    r"|息子|娘|子供|父親|母親|お父さん|お母さん|主人|彼氏",
    re.IGNORECASE)


_SPEAKER = re.compile(r"^[A-Z][\w'-]{0,30}:\s+")  # "Caroline: ..." (a speaker's turn kept as said)
_REACTION = re.compile(r"^(?:hey|hi|hello|thanks|thank you|thx|wow|whoa|cool|congrats|congratulations|glad|nice|great|"
                       r"awesome|amazing|sounds|good to|see you|take care|bye|lol|haha|aww*|omg|yeah|yep|sure|ok|okay|"
                       r"totally|same|you too|me too|that's (?:great|awesome|amazing|cool|nice|sweet|so))\b"
                       r"|^(?:谢谢|哇|哈哈|好的|不错|太好了|恭喜|你好|嗨)|^(?:ありがとう|すごい|いいね|おめでとう|こんにちは)", re.I)
SMALL_TALK_WORDS = 14  # a reaction longer than this says something of its own


def _small_talk(text: str) -> bool:
    """A greeting, thanks or reaction ("Thanks, Melanie. That's really sweet"), not a statement."""
    text = _SPEAKER.sub("", text.strip())
    return is_chitchat(text) or (bool(_REACTION.match(text)) and len(text.split()) <= SMALL_TALK_WORDS)


def impact(memory_type: str | None, text: str = "") -> float:
    return impact_of(memory_type, text)[0]


def impact_of(memory_type: str | None, text: str = "") -> tuple[float, str]:
    """(impact, how it was decided: "type", "rule:life" or "rule:casual"). A life event wins over trivia
    ("I ate cake at my wedding"); a family member alone does not ("my son had pizza" is trivia)."""
    base = IMPACT.get(str(memory_type or "").lower(), DEFAULT_IMPACT)
    if str(memory_type or "").lower() == "preference" or not text:
        return base, "type"
    if _LIFE_EVENT.search(text):
        return max(base, LIFE_IMPACT), "rule:life"
    if _CASUAL.search(text) or _small_talk(text):
        return min(base, CASUAL_IMPACT), "rule:casual"
    if _FAMILY.search(text):
        return max(base, LIFE_IMPACT), "rule:life"
    return base, "type"


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
    weight, impact_by = impact_of(memory_type, text)
    factors = {"scarcity": round(scarcity(max_similarity), 3), "impact": weight, "impact_by": impact_by,
               "recency": round(recency(event_time, now), 3), "certainty": round(sure, 3), "certainty_by": by}
    if event_time is not None:  # recency is read again from here at every decision (importance_at)
        factors["event_at"] = _utc(event_time).isoformat()
    return weighted(factors), factors


def _utc(when: datetime) -> datetime:
    return when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when.astimezone(timezone.utc)


def _when(value: Any) -> datetime | None:
    """A stored time (ISO text, epoch seconds or datetime) as an aware datetime, None when unreadable."""
    if isinstance(value, datetime):
        return _utc(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), timezone.utc)
    if isinstance(value, str) and value:
        try:
            return _utc(datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            return None
    return None


def importance_at(memory: dict, now: float | datetime | None = None) -> float:
    """The memory's importance as of `now`: its stored factors with recency read again from the event time
    (`event_at`, else valid_at, else created_at). A memory without factors (infer=False, an import), or whose
    stored score the factors no longer give (set by a tool, `update_importance`, `classify`), keeps its score:
    someone chose that number."""
    stored = float(memory.get("importance") or 0.0)
    factors = memory.get("importance_factors")
    if not isinstance(factors, dict) or not all(k in factors for k in WEIGHTS) or factors.get("given_by"):
        return stored
    if abs(weighted(factors) - stored) > 0.002:
        return stored
    event = _when(factors.get("event_at")) or _when(memory.get("valid_at")) or _when(memory.get("created_at"))
    clock = _when(now) if now is not None else None
    return weighted({**factors, "recency": recency(event, clock) if event is not None else factors["recency"]})


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
