"""Contradictions among one owner's live memories (pure functions): two memories that give one subject and
one single-valued relation incompatible values — "User lives in Berlin" / "User lives in Munich", "User
likes sushi" / "User no longer likes sushi", "用户在阿里工作" / "用户在腾讯工作" — are resolved by the seeds' rule:
the later event time wins (valid_at, else when it was written), then the higher confidence, then the higher
importance. The loser is superseded (archived, restorable, rolled back with its pass) with the reason, and a
`contradicts` link goes from the winner to it.

What counts as one relation is a closed set of statement shapes (where the user lives, works, their name and
age, "X's favourite Y is Z", likes and dislikes), in English, Chinese and Japanese: a relation outside it is
never guessed (two hobbies are not a contradiction). Values are compatible when one contains the other
("Berlin" / "Berlin, Germany"). The add graph's judge already replaces a contradicted memory when it sees
both; this catches what got past it (two adds judged apart, an import, infer=False).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CONTRADICTS = "contradicts"  # memoryx.core.link_types

_DATE_NOTE = re.compile(r"\s*[(（][^)）]*\d{4}[^)）]*[)）]")  # "(2026-11)" the extraction adds to relative dates
_TRAIL = re.compile(r"[\s.。!！,，;；]+$")
_NOW = re.compile(r"^(?:now|currently|still)\s+|\s+(?:now|currently|these days|recently|today|yesterday|"
                  r"last (?:week|month|year)|this (?:week|month|year)|in \d{4}|since \d{4})$", re.I)

# (relation, pattern with groups s = subject, v = value, optional n = negation), first match wins
_SHAPES: list[tuple[str, re.Pattern]] = [
    ("lives in", re.compile(r"^(?P<s>.+?) (?:now |currently |still )?(?:lives|is living|has moved|moved) (?:in|to) "
                            r"(?P<v>.+)$", re.I)),
    ("works at", re.compile(r"^(?P<s>.+?) (?:now |currently |still )?(?:works|is working) (?:at|for) "
                            r"(?P<v>.+?)(?: as .+)?$", re.I)),
    ("name", re.compile(r"^(?P<s>.+?)'s name is (?P<v>.+)$", re.I)),
    ("age", re.compile(r"^(?P<s>.+?) is (?P<v>\d{1,3})(?: years old)?$", re.I)),
    ("favourite {k}", re.compile(r"^(?P<s>.+?)'s (?:favou?rite) (?P<k>[\w ]+?) is (?P<v>.+)$", re.I)),
    ("likes {v}", re.compile(r"^(?P<s>.+?) (?P<n>no longer likes|doesn't like|does not like|dislikes|hates|"
                             r"stopped liking|likes|loves|enjoys) (?P<v>.+)$", re.I)),
    ("lives in", re.compile(r"^(?P<s>.+?)(?:现在)?(?:住在|搬到了?|搬去了?)(?P<v>.+)$")),
    ("works at", re.compile(r"^(?P<s>.+?)(?:现在)?在(?P<v>.+?)(?:工作|上班)$")),
    ("name", re.compile(r"^(?P<s>.+?)(?:的名字是|名叫|叫做|叫)(?P<v>(?![了过着])[^，,。、\s]{1,12})$")),  # not 叫了外卖
    ("likes {v}", re.compile(r"^(?P<s>.+?)(?P<n>不再喜欢|不喜欢|讨厌|喜欢)(?P<v>.+)$")),
    ("lives in", re.compile(r"^(?P<s>.+?)は(?P<v>.+?)に住んで(?:いる|います)$")),
    ("works at", re.compile(r"^(?P<s>.+?)は(?P<v>.+?)で働いて(?:いる|います)$")),
    ("name", re.compile(r"^(?P<s>.+?)の名前は(?P<v>.+)$")),
    ("likes {v}", re.compile(r"^(?P<s>.+?)は(?:もう)?(?P<v>.+?)が(?P<n>好きではない|嫌い|大好き|好き)$")),
]
_NEGATIVE = re.compile(r"no longer|doesn't|does not|dislikes|hates|stopped|不再|不喜欢|讨厌|好きではない|嫌い", re.I)


@dataclass(frozen=True)
class Statement:
    subject: str
    relation: str
    value: str  # normalised; for likes, "yes" / "no"


def _clean(text: str) -> str:
    return _NOW.sub("", _TRAIL.sub("", _DATE_NOTE.sub("", text))).strip().strip("\"'“”")


def statement(text: str) -> Statement | None:
    """The (subject, relation, value) a memory states, when it has one of the known shapes."""
    text = _clean(text or "")
    for relation, pattern in _SHAPES:
        m = pattern.match(text)
        if m is None:
            continue
        groups = m.groupdict()
        subject, value = _clean(groups["s"]).casefold(), _clean(groups["v"])
        if not subject or not value or len(subject) > 60:
            continue
        if "{v}" in relation:  # a like: the thing is the relation, the polarity the value
            negative = bool(_NEGATIVE.search(groups["n"] or ""))
            relation, value = relation.format(v=value.casefold()), ("no" if negative else "yes")
        elif "{k}" in relation:
            relation = relation.format(k=groups["k"].casefold())
        return Statement(subject, relation, value.casefold())
    return None


def compatible(a: str, b: str) -> bool:
    return a == b or a in b or b in a


def rank_key(memory: dict) -> tuple:
    """Highest wins: the later event time, then the confidence, then the importance (then the newer id)."""
    when = str(memory.get("valid_at") or memory.get("created_at") or "")
    return (when, float(memory.get("confidence") or 0.0), float(memory.get("importance") or 0.0),
            str(memory.get("created_at") or ""), memory["id"])


def contradictions(memories: list[dict], skip: set[str] = frozenset()) -> list[dict]:
    """[{"winner", "loser", "subject", "relation", "values": [winner's, loser's], "reason"}] among `memories`
    (one owner's, {"id", "memory", "memory_type", "valid_at", "created_at", "confidence", "importance",
    "status", "metadata"}). Summaries and immutable memories are never superseded (one may still win). The
    shapes are states, so an event ("User moved to Munich") counts as what it makes true."""
    groups: dict[tuple[str, str], list[tuple[dict, Statement]]] = {}
    for m in memories:
        meta = m.get("metadata") or {}
        if m["id"] in skip or m.get("status") not in ("active", "staged") or meta.get("abstraction"):
            continue
        st = statement(m.get("memory") or "")
        if st is not None:
            groups.setdefault((st.subject, st.relation), []).append((m, st))
    out = []
    for (subject, relation), items in sorted(groups.items()):
        items.sort(key=lambda x: rank_key(x[0]), reverse=True)
        winner, top = items[0]
        for loser, st in items[1:]:
            if compatible(top.value, st.value) or (loser.get("metadata") or {}).get("immutable"):
                continue
            why = _why(winner, loser)
            out.append({"winner": winner["id"], "loser": loser["id"], "subject": subject, "relation": relation,
                        "values": [top.value, st.value], "texts": [winner["memory"], loser["memory"]],
                        "reason": f"contradicts [{winner['id']}] on {subject!r} {relation}: "
                                  f"{top.value!r} vs {st.value!r}; {why}"})
    return out


def _why(winner: dict, loser: dict) -> str:
    w, lo = rank_key(winner), rank_key(loser)
    if w[0] != lo[0]:
        return f"the later statement wins ({w[0][:19]} > {lo[0][:19]})"
    if w[1] != lo[1]:
        return f"same time: the more confident wins ({w[1]} > {lo[1]})"
    if w[2] != lo[2]:
        return f"same time and confidence: the more important wins ({w[2]} > {lo[2]})"
    return "same time, confidence and importance: the one written later wins"


def superseded_ids(state: dict) -> set[str]:
    """The memories a pass supersedes (its other steps leave them alone)."""
    return {c["loser"] for c in state.get("contradictions") or []}


__all__ = ["CONTRADICTS", "Statement", "compatible", "contradictions", "rank_key", "statement", "superseded_ids"]
